"""How much a fork's first index reuses from the shared vector store (issue 20).

    python -m bench.firstindex.bench_reuse [--source DIR] [--subdir src]

Makes a repository from ``--source`` (default: this repository's ``src/`` at HEAD, a git
snapshot), indexes it with the real job (``Reindex``: checkout, parse, resolve, embedding +
staging index, graph publish) on the stack named by ``SEMGRAPH_*``, then makes a "fork": a
copy under another path (so another repository key, no live index of its own) with three
commits of changes (a function added to three files, one function's body edited, a file
added and a file deleted) and gives it its first index. Both runs start with no vector
store and no live index of the fork; the origin's run fills the store.

Prints ``reuse.run`` per index (chunks, embedded, from the store, deduplicated, the embed
phase) and ``reuse.summary``: the share of the fork's chunks whose vector came from the
store and the fork's embed phase over the origin's (same content size, same run).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness.records import emit

ROOT = Path(__file__).resolve().parents[2]
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]


def snapshot(source: Path, subdir: str, dest: Path) -> str:
    """``subdir`` of ``source``'s HEAD as a fresh one-commit repository; returns the commit."""
    dest.mkdir(parents=True)
    paths = [subdir] if subdir else []
    archive = subprocess.run(
        ["git", "archive", "HEAD", *paths], cwd=source, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=source, check=True, capture_output=True
    )
    commit = head.stdout.decode().strip()
    _commit(dest, f"snapshot of {subdir or '.'} at {commit}", init=True)
    return commit


def _commit(repo: Path, message: str, init: bool = False) -> None:
    if init:
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", message], cwd=repo, check=True)


def fork(origin: Path, dest: Path) -> dict[str, Any]:
    """A copy of ``origin`` with three commits of changes; returns what changed."""
    shutil.copytree(origin, dest, symlinks=True)
    py = sorted(p for p in dest.rglob("*.py") if ".git" not in p.parts and p.stat().st_size)
    big = sorted(py, key=lambda p: -p.stat().st_size)
    added_to = big[:3]
    for i, path in enumerate(added_to):
        path.write_text(path.read_text() + f"\n\ndef fork_added_{i}(x):\n    return [x] * {i}\n")
    _commit(dest, "fork: a function added to three files")
    edited = big[3]
    lines = edited.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("return "))
    lines[at] = lines[at].rstrip("\n") + "  # changed in the fork\n"
    edited.write_text("".join(lines))
    _commit(dest, "fork: one function's body edited")
    (dest / "fork_extra.py").write_text("def fork_extra():\n    return 'fork'\n")
    deleted = big[-1]
    deleted.unlink()
    _commit(dest, "fork: a file added and a file deleted")
    rel = [str(p.relative_to(dest)) for p in (*added_to, edited, deleted)]
    return {
        "added_function_to": rel[:3],
        "edited": rel[3],
        "deleted": rel[4],
        "added": "fork_extra.py",
    }


def changed_chunks(es: Any, settings: Any, repo_key: str, paths: list[str]) -> int:
    """Chunks of the fork's changed files in its live index (at most what must be embedded)."""
    from semgraph.search.index import SearchIndex

    alias = SearchIndex(es, settings).alias_name(repo_key)
    return int(es.count(index=alias, query={"terms": {"path": paths}})["count"])


def index(settings: Any, graph: Any, es: Any, repo: Path) -> dict[str, Any]:
    from semgraph.indexer.pipeline import Reindex
    from semgraph.indexer.request import ReindexRequest

    load = round(os.getloadavg()[0], 2)
    started = time.perf_counter()
    result = Reindex(settings, graph, es, ReindexRequest(source=str(repo))).run()
    wall = time.perf_counter() - started
    stats = result.stats.get("index", {})
    return {
        "status": result.status,
        "repo_key": result.repo_key,
        "wall_s": round(wall, 2),
        "embed_index_s": round(result.phases_s.get("embed_index", 0.0), 2),
        "files": stats.get("files"),
        "chunks": stats.get("chunks"),
        "embedded": stats.get("embedded"),
        "store_reused": stats.get("store_reused"),
        "reused": stats.get("reused"),
        "deduplicated": stats.get("deduplicated"),
        "store_written": stats.get("store_written"),
        "store_errors": stats.get("store_errors"),
        "store_s": stats.get("store_seconds"),
        "load_1m": load,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--source", type=Path, default=ROOT)
    parser.add_argument("--subdir", default="src")
    args = parser.parse_args()

    from bench.firstindex.peers import wipe, wipe_search
    from semgraph.config import load_settings
    from semgraph.db import connect_graph, connect_search
    from semgraph.graph.schema import SCHEMA
    from semgraph.search.embed import Embedder
    from semgraph.search.vectorstore import store_name

    settings = load_settings()
    with (
        tempfile.TemporaryDirectory(prefix="semgraph-bench-reuse-") as tmp,
        connect_graph(settings) as graph,
        contextlib.closing(connect_search(settings)) as es,
    ):
        wipe(graph.driver)
        graph.ensure_schema(SCHEMA)
        wipe_search()
        es.options(ignore_status=404).indices.delete(index=store_name(settings.search_index_prefix))
        origin = Path(tmp) / "origin"
        commit = snapshot(args.source, args.subdir, origin)
        changes = fork(origin, Path(tmp) / "fork")
        embedder = Embedder(settings)
        emit(
            "reuse.repo",
            source=f"{args.source.name}/{args.subdir} @{commit}",
            model_id=embedder.model_id[:16],
            backend=os.environ.get("SEMGRAPH_EMBEDDING_BACKEND", "default"),
            **changes,
        )
        runs = {}
        for name in ("origin", "fork"):
            runs[name] = r = index(settings, graph, es, Path(tmp) / name)
            if name == "fork":
                paths = [*changes["added_function_to"], changes["edited"], changes["added"]]
                r["changed_chunks"] = changed_chunks(es, settings, r["repo_key"], paths)
            emit("reuse.run", repo=name, **r)
            print(
                f"{name}: {r['chunks']} chunks, {r['embedded']} embedded, {r['store_reused']} "
                f"from the store, {r['deduplicated']} deduplicated; embed phase "
                f"{r['embed_index_s']} s (load {r['load_1m']})",
                flush=True,
            )
    o, f = runs["origin"], runs["fork"]
    share = (f["store_reused"] or 0) / max(1, f["chunks"] or 0)
    ratio = f["embed_index_s"] / max(o["embed_index_s"], 1e-9)
    emit(
        "reuse.summary",
        fork_chunks=f["chunks"],
        fork_store_reused=f["store_reused"],
        fork_embedded=f["embedded"],
        fork_changed_chunks=f["changed_chunks"],
        store_share_pct=round(100 * share, 1),
        embed_ratio=round(ratio, 4),
        origin_embed_s=o["embed_index_s"],
        fork_embed_s=f["embed_index_s"],
    )
    print(
        f"\nthe fork's first index: {share:.1%} of {f['chunks']} chunks from the store, "
        f"{f['embedded']} embedded; embed phase {f['embed_index_s']} s = {ratio:.3f}x the "
        f"origin's {o['embed_index_s']} s"
    )


if __name__ == "__main__":
    main()
