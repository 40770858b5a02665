"""Package identity in the graph: a publish rewrites the repository's
``PROVIDES`` and ``DEPENDS_ON`` edges from its manifests (:mod:`semgraph.manifests`), in the
publish's own transaction. They are a handful of rows, so every form of the publish (first,
full, delta) writes them the same way and a delta stays equal to a full publish. The
statements are in :mod:`semgraph.xrepo.queries`.
"""

from __future__ import annotations

from typing import Any

from semgraph.db import Tx
from semgraph.manifests import Identity
from semgraph.xrepo import queries as q


def package_key(ecosystem: str, name: str) -> str:
    return f"{ecosystem}:{name}"


def identity_rows(ident: Identity) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    provides = [
        {
            "key": package_key(p.ecosystem, p.name),
            "ecosystem": p.ecosystem,
            "name": p.name,
            "manifest": p.manifest,
            "modules": list(p.modules),
            "exports": list(p.exports),
        }
        for p in ident.provides
    ]
    depends = [
        {
            "key": package_key(d.ecosystem, d.name),
            "ecosystem": d.ecosystem,
            "name": d.name,
            "spec": d.spec,
            "manifest": d.manifest,
        }
        for d in ident.depends
    ]
    return provides, depends


def identity_state(provides: list[dict[str, Any]], depends: list[dict[str, Any]]) -> list[str]:
    """The rows as comparable strings, as ``PACKAGES_BEFORE`` reads them back."""
    return sorted(
        [
            f"P|{r['key']}|{r['manifest']}|{''.join(m + ',' for m in r['modules'])}|"
            f"{''.join(x + ',' for x in r['exports'])}"
            for r in provides
        ]
        + [f"D|{r['key']}|{r['manifest']}|{r['spec']}" for r in depends]
    )


def publish_packages(tx: Tx, repo_key: str, ident: Identity) -> bool:
    """Replace the repository's package edges when they changed (a push that leaves the
    manifests alone reads one row and writes nothing); True when they changed (its links
    must then be made again in full)."""
    before = tx.run(q.PACKAGES_BEFORE, repo=repo_key).single()
    before_state = sorted(before["state"]) if before is not None else []
    before_keys = set(before["keys"]) if before is not None else set()
    provides, depends = identity_rows(ident)
    if identity_state(provides, depends) == before_state:
        return False
    tx.run(q.PACKAGES_CLEAR, repo=repo_key).single()
    if provides:
        tx.run(q.PACKAGES_PROVIDES, repo=repo_key, rows=provides).single()
    if depends:
        tx.run(q.PACKAGES_DEPENDS, repo=repo_key, rows=depends).single()
    now_keys = {r["key"] for r in provides} | {r["key"] for r in depends}
    gone = sorted(before_keys - now_keys)
    if gone:
        tx.run(q.PACKAGES_SWEEP, keys=gone).single()
    return True
