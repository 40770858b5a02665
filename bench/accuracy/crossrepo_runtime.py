"""A second oracle for the cross-repository accuracy (``bench_crossrepo``): where jedi and
semgraph name different definitions for one site, Python itself decides. The site's dotted
name (as the link step reads it, :func:`semgraph.xrepo.pypi.python_name`) is imported
from the libraries' sources and looked up with ``getattr``, which follows the real method
resolution order; the definition found is the file and name ``inspect`` reports.

jedi walks bases depth first, so a mixin's base can shadow a later base's override (flask's
``URLSafeTimedSerializer(URLSafeSerializerMixin, TimedSerializer)``: ``loads`` is
``TimedSerializer.loads`` at run time, ``Serializer.loads`` to jedi).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

_LOOKUP = r"""
import importlib, inspect, json, sys
out = []
for name in json.loads(sys.argv[1]):
    parts = name.split(".")
    obj, cut = None, len(parts)
    while cut > 0:
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
            break
        except ImportError:
            cut -= 1
    try:
        for part in parts[cut:]:
            obj = getattr(obj, part)
        obj = inspect.unwrap(obj)
        out.append([inspect.getsourcefile(obj), obj.__name__])
    except Exception as exc:  # the name is no attribute: no answer
        out.append([None, type(exc).__name__])
print(json.dumps(out))
"""


def runtime_targets(names: list[str], roots: dict[str, Path]) -> list[tuple[str, str] | None]:
    """(repository/path, name) of each dotted name's definition at run time; ``roots`` maps
    each library repository to its checkout (its ``src`` on the path)."""
    path = ":".join(str(r / "src") for r in roots.values())
    done = subprocess.run(
        [sys.executable, "-c", _LOOKUP, json.dumps(names)],
        env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out: list[tuple[str, str] | None] = []
    for source, name in json.loads(done.stdout):
        found = None
        for repo, root in roots.items():
            if source and Path(source).resolve().is_relative_to(root.resolve()):
                found = (f"{repo}/{Path(source).resolve().relative_to(root.resolve())}", name)
        out.append(found)
    return out


def adjudicate(
    graph: Any, ours: set[tuple[Any, ...]], oracle: set[tuple[Any, ...]], roots: dict[str, Path]
) -> dict[str, Any]:
    """Each site where the two disagree, decided at run time; the figures with the decided
    edges counted for whoever was right."""
    false = sorted(ours - oracle)
    sites: list[str] = []
    for path, line, _, _ in false:
        rows = graph.query(
            "xrepo site",
            "MATCH (a:Symbol {repo: 'flask', path: $path})-[e:CALLS_EXTERNAL]->(m) "
            "WHERE e.line = $line RETURN m.name AS module, e.local AS local, e.rest AS rest",
            path=path.removeprefix("flask/"),
            line=line,
        )
        r = rows[0] if rows else {"module": "", "local": "", "rest": ""}
        root = r["module"].split(".")[0]
        head = r["local"] if r["local"] == root else f"{r['module']}.{r['local']}"
        sites.append(f"{head}.{r['rest']}" if r["rest"] else head)
    found = runtime_targets(sites, roots) if sites else []
    confirmed = {e for e, t in zip(false, found, strict=True) if t == (e[2], e[3])}
    refuted = {o for o in oracle - ours for e in confirmed if (o[0], o[1]) == (e[0], e[1])}
    agreed = len(ours & oracle) + len(confirmed)
    return {
        "decided": [
            {"edge": list(e), "site": s, "runtime": list(t) if t else None}
            for e, s, t in zip(false, sites, found, strict=True)
        ],
        "confirmed": len(confirmed),
        "oracle_refuted": len(refuted),
        "precision_decided": round(agreed / len(ours), 4) if ours else 0.0,
        "recall_decided": round(agreed / len(oracle - refuted | confirmed), 4) if oracle else 0.0,
    }
