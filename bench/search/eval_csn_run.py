"""The CodeSearchNet-style evaluation's run: the stripped packages that
:mod:`bench.search.eval_csn` built (built first when the folder holds no queries), each
indexed through the product as the outside evaluation's repositories are, and every
docstring query ranked in each mode (scored by :func:`bench.search.bench_retrieval.report`,
sliced by half and by language).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness.records import emit
from bench.search import eval_csn
from bench.search.eval_run import Query, build_index, drop_index, run_queries, spans


def repo_key(slug: str) -> str:
    return "csn-" + slug.replace("+", "-").replace("/", "-").lower()


def parse_copy(base: Path) -> list[Any]:
    """A stripped package's files, parsed and chunked as a run does (its git directory left
    out)."""
    from semgraph.config import load_settings
    from semgraph.indexer.extract import ExtractOptions, extract_file

    settings = load_settings()
    options = ExtractOptions(settings.chunk_max_lines, settings.chunk_max_chars)
    paths = sorted(
        p for p in base.rglob("*") if p.is_file() and ".git" not in p.relative_to(base).parts
    )
    return [extract_file(str(p.relative_to(base)), p.read_bytes(), options) for p in paths]


def load_queries(folder: Path, files: dict[str, list[Any]]) -> list[Query]:
    """The built queries, each target resolved to its lines in the stripped copy; the
    language is the query's kind."""
    out = []
    for line in (folder / "queries.jsonl").read_text("utf-8").splitlines():
        raw = json.loads(line)
        pairs = [tuple(t.split("::", 1)) for t in raw["targets"]]
        targets = spans(files[raw["repo"]], [(p, s) for p, s in pairs])
        out.append(Query(raw["id"], raw["repo"], raw["query"], targets, raw["lang"], raw["half"]))
    return out


def csn_eval(
    es: Any,
    settings: Any,
    embedder: Any,
    folder: Path | None,
    verbose: bool,
    report: Callable[..., None],
) -> None:
    folder = folder or settings.state_dir / "eval-csn"
    if not (folder / "queries.jsonl").is_file():
        eval_csn.build(folder, eval_csn.PER_PACKAGE, record=False)
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    packages = [p for p in manifest["packages"] if p["queries"]]  # none: nothing to ask
    files = {p["repo"]: parse_copy(folder / p["repo"]) for p in packages}
    queries = load_queries(folder, files)
    missing = [q.id for q in queries if not q.targets]
    if missing:
        raise SystemExit(f"queries whose targets are not in the stripped copies: {missing[:10]}")
    try:
        for p in packages:
            chunks = build_index(es, settings, embedder, repo_key(p["repo"]), files[p["repo"]])
            n = sum(q.repo == p["repo"] for q in queries)
            print(
                f"csn {p['registry']} {p['name']}@{p['version']}: {len(files[p['repo']])} files, "
                f"{chunks} chunks, {n} queries"
            )
            emit(
                "retrieval.corpus",
                eval="csn",
                repo=p["repo"],
                version=p["version"],
                files=len(files[p["repo"]]),
                chunks=chunks,
                queries=n,
            )
        ranks = run_queries(es, settings, embedder, queries, lambda q: repo_key(q.repo))
        report("csn", queries, ranks, verbose=verbose)
    finally:
        for p in packages:
            drop_index(es, settings, repo_key(p["repo"]))
