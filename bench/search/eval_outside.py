"""The outside evaluation's run: build the stripped copies (:mod:`bench.search.eval_corpus`), index
each repository through the product, load the docstring queries and the written questions,
and rank every query in each mode (scored by :func:`bench.search.bench_retrieval.report`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness.records import emit
from bench.search import eval_corpus
from bench.search.eval_run import Query, build_index, drop_index, run_queries, spans


def repo_key(repo: str) -> str:
    return "eval-" + repo.replace("/", "-").lower()


def load_queries(files: dict[str, list[Any]]) -> list[Query]:
    """The docstring queries and the written questions, with their halves and their targets'
    lines in the stripped copies."""
    out: list[Query] = []
    for line in eval_corpus.QUERIES.read_text("utf-8").splitlines():
        raw = json.loads(line)
        targets = spans(files[raw["repo"]], [_target(t) for t in raw["targets"]])
        out.append(
            Query(
                raw["id"],
                raw["repo"],
                raw["query"],
                targets,
                "docstring",
                eval_corpus.half(raw["id"]),
            )
        )
    for i, raw in enumerate(json.loads(eval_corpus.QUESTIONS.read_text("utf-8"))):
        qid = f"{raw['repo']}:question:{i}"
        targets = spans(files[raw["repo"]], [_target(t) for t in raw["targets"]])
        out.append(
            Query(qid, raw["repo"], raw["query"], targets, "question", eval_corpus.half(qid))
        )
    return out


def _target(text: str) -> tuple[str, str]:
    path, _, symbol = text.partition("::")
    return path, symbol


def parse_copies(root: Path) -> dict[str, list[Any]]:
    """repo -> the stripped copy's files, parsed and chunked as a run does."""
    from semgraph.config import load_settings
    from semgraph.indexer.extract import ExtractOptions, extract_file

    settings = load_settings()
    options = ExtractOptions(settings.chunk_max_lines, settings.chunk_max_chars)
    out: dict[str, list[Any]] = {}
    for source in eval_corpus.load_sources():
        base = root / source.repo.replace("/", "+")
        paths = sorted(p for p in base.rglob("*") if p.is_file())
        out[source.repo] = [
            extract_file(str(p.relative_to(base)), p.read_bytes(), options) for p in paths
        ]
    return out


def outside_eval(
    es: Any,
    settings: Any,
    embedder: Any,
    mirrors: Path | None,
    verbose: bool,
    report: Callable[..., None],
) -> None:
    copies = settings.state_dir / "eval-stripped"
    eval_corpus.build(mirrors or eval_corpus.DEFAULT_MIRRORS, copies)
    files = parse_copies(copies)
    queries = load_queries(files)
    missing = [q.id for q in queries if not q.targets]
    if missing:
        raise SystemExit(f"queries whose targets are not in the stripped copies: {missing[:10]}")
    try:
        for source in eval_corpus.load_sources():
            chunks = build_index(es, settings, embedder, repo_key(source.repo), files[source.repo])
            mine = [q for q in queries if q.repo == source.repo]
            print(
                f"outside {source.repo}@{source.commit[:12]}: {len(files[source.repo])} files, "
                f"{chunks} chunks, {len(mine)} queries"
            )
            emit(
                "retrieval.corpus",
                eval="outside",
                repo=source.repo,
                commit=source.commit,
                files=len(files[source.repo]),
                chunks=chunks,
                queries=sum(q.kind == "docstring" for q in mine),
                questions=sum(q.kind == "question" for q in mine),
            )
        ranks = run_queries(es, settings, embedder, queries, lambda q: repo_key(q.repo))
        report("outside", queries, ranks, verbose=verbose)
    finally:
        for source in eval_corpus.load_sources():
            drop_index(es, settings, repo_key(source.repo))
