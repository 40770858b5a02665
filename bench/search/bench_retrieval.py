"""Retrieval evaluation: recall@5 and MRR@10 of BM25 alone, kNN alone and the hybrid, on two
evaluations, asked through the product's own search (:func:`semgraph.search.query.search`,
the path ``GET /search`` takes) on indexes built by the product's own indexing path.

    python -m bench.search.bench_retrieval [--only own|outside|csn] [--verbose]

- **own**: this repository's ``src/semgraph`` against the hand-written 36 queries below
  (file path suffix + symbol qualified-name suffix), identifier queries and questions by
  meaning. A query whose target no longer exists in the code is reported and left out.
- **outside**: public repositories at pinned commits with every docstring and comment
  removed (:mod:`bench.search.eval_corpus`), queried with the first sentence of each function's
  documentation and with natural questions written from reading the code; split into a
  tuning half and a test half by the hash of the query id. Reported per half, per
  repository and overall, with a paired bootstrap 95 % interval of hybrid minus the best
  single retriever.
- **csn**: CodeSearchNet's method on about forty packages that training never saw (Python,
  JavaScript, Go, Java; :mod:`bench.search.eval_csn`), queried with the first sentence of each
  function's documentation; reported per half and per language (the record's ``kind``),
  with recall@1 and @10 besides.

Needs the local stack (``SEMGRAPH_ES_URL``), the fetched repositories (``--mirrors``) and, for
csn, its built folder (``--csn``, built there when it holds no queries).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bench.harness.records import emit
from semgraph.model import FileFacts

ROOT = Path(__file__).resolve().parents[2]

# (query, [(path suffix, symbol suffix), ...]) -- any listed target in the top k is a hit
QUERIES: list[tuple[str, list[tuple[str, str]]]] = [
    # identifiers
    ("flip_alias", [("search/index.py", "SearchIndex.flip_alias")]),
    ("cause_chain", [("errors.py", "cause_chain")]),
    ("malloc_trim", [("semgraph/memory.py", "malloc_trim")]),
    ("detect_kind", [("graph/dialect.py", "detect_kind")]),
    ("splitIdentifier", [("search/split.py", "split_identifier")]),
    ("content_hash", [("semgraph/model.py", "content_hash")]),
    ("load_settings", [("config.py", "load_settings")]),
    ("JsonFormatter", [("logs.py", "JsonFormatter")]),
    ("gc_orphans", [("search/index.py", "SearchIndex.gc_orphans")]),
    ("vector_key", [("search/embed.py", "vector_key")]),
    ("module_name", [("semgraph/model.py", "module_name")]),
    ("search_errors", [("db.py", "search_errors")]),
    ("minmax_fusion", [("search/query.py", "minmax_fusion")]),
    ("connect_graph", [("db.py", "connect_graph")]),
    ("split_lines", [("indexer/chunking.py", "split_lines")]),
    # meaning
    (
        "point the repository alias at the new index and delete the old one",
        [("search/index.py", "SearchIndex.flip_alias")],
    ),
    (
        "translate elasticsearch client exceptions into our own error types",
        [("db.py", "search_errors")],
    ),
    ("fuse two rankings by their normalised scores", [("search/query.py", "minmax_fusion")]),
    (
        "delete staging indexes left behind by crashed runs",
        [
            ("search/index.py", "SearchIndex.gc_orphans"),
            ("search/index.py", "SearchIndex.orphaned_staging"),
        ],
    ),
    (
        "give freed heap memory back to the operating system",
        [("semgraph/memory.py", "malloc_trim")],
    ),
    ("resident set size of the current process", [("semgraph/memory.py", "rss_bytes")]),
    (
        "break camelCase and snake_case names into words",
        [
            ("search/split.py", "split_identifier"),
            ("search/split.py", "_camel_parts"),
            ("search/split.py", "identifier_words"),
        ],
    ),
    ("sha256 of the model id and the embedded text", [("search/embed.py", "vector_key")]),
    ("use cuda when a GPU is visible otherwise the cpu", [("search/backend.py", "resolve_device")]),
    ("messages of an exception and all its causes", [("errors.py", "cause_chain")]),
    ("write one JSON object per log line", [("logs.py", "JsonFormatter")]),
    (
        "tell Memgraph from Neo4j by the server agent string",
        [("graph/dialect.py", "detect_kind")],
    ),
    ("check that the elasticsearch url has a scheme and a host", [("config.py", "_check_es_url")]),
    ("build the settings from environment variables", [("config.py", "load_settings")]),
    ("show the lines of code that mention the query words", [("search/query.py", "snippet")]),
    (
        "fetch stored vectors by their keys from the live index",
        [("search/loader.py", "lookup_vectors")],
    ),
    (
        "cut a file into chunks aligned to symbols and bounded in lines",
        [("indexer/chunking.py", "chunk_lines"), ("indexer/chunking.py", "_Chunker")],
    ),
    (
        "dotted module path of a source file",
        [("semgraph/model.py", "module_name")],
    ),
    (
        "raise when the bulk response reports rejected documents",
        [("search/loader.py", "bulk")],
    ),
    (
        "load the sentence transformers model once per process",
        [("search/backend.py", "load_backend")],
    ),
    (
        "fingerprint of the model files that does not depend on where it is installed",
        [("search/model_files.py", "model_fingerprint")],
    ),
]


def matches(path: str, symbol: str | None, target: tuple[str, str]) -> bool:
    want_path, want_symbol = target
    if not path.endswith(want_path) or not symbol:
        return False
    return symbol.endswith("." + want_symbol) or f".{want_symbol}." in symbol


def parse_sources() -> list[FileFacts]:
    from semgraph.config import load_settings
    from semgraph.indexer.extract import ExtractOptions, extract_file

    settings = load_settings()
    options = ExtractOptions(settings.chunk_max_lines, settings.chunk_max_chars)
    paths = sorted((ROOT / "src" / "semgraph").rglob("*.py"))
    return [extract_file(str(p.relative_to(ROOT)), p.read_bytes(), options) for p in paths]


def own_queries(files: list[FileFacts]) -> list[Any]:
    """The hand-written queries as :class:`bench.search.eval_run.Query`, each target resolved to
    the chunks' exact (path, symbol) pairs in today's code."""
    from bench.search.eval_corpus import half
    from bench.search.eval_run import Query, spans

    symbols = {(f.path, s.qualified_name) for f in files for s in f.symbols}
    out = []
    for i, (q, targets) in enumerate(QUERIES):
        exact = spans(files, [(p, s) for p, s in symbols for t in targets if matches(p, s, t)])
        if not exact:
            print(f"left out (target no longer in the code): {q!r}")
            continue
        out.append(Query(f"own:{i}", "bench-retrieval", q, exact, "own", half(f"own:{i}")))
    return out


def _slices(name: str, queries: list[Any]) -> list[tuple[str, str, str, list[int]]]:
    """(half, repo, kind, query indexes) of every slice reported: the outside evaluation's
    halves, repositories and kinds, the csn evaluation's halves and languages (its kind)."""
    slices: list[tuple[str, str, str, list[int]]] = []
    halves = ["all"] + (["tune", "test"] if name in ("outside", "csn") else [])
    repos = sorted({q.repo for q in queries}) if name == "outside" else []
    kinds = sorted({q.kind for q in queries}) if name in ("outside", "csn") else []
    for sub in halves:
        picked = [i for i, q in enumerate(queries) if sub in ("all", q.half)]
        slices.append((sub, "all", "all", picked))
        for repo in repos:
            slices.append((sub, repo, "all", [i for i in picked if queries[i].repo == repo]))
        for kind in kinds:
            slices.append((sub, "all", kind, [i for i in picked if queries[i].kind == kind]))
    return slices


def report(
    name: str, queries: list[Any], ranks: dict[str, list[int | None]], *, verbose: bool
) -> None:
    """Print and emit recall@5 / MRR@10 per mode for every slice of ``queries``, and the
    bootstrap of hybrid against the best single retriever."""
    from bench.search.eval_run import bootstrap_diff, mrr, recall

    for sub, repo, kind, picked in _slices(name, queries):
        if not picked:
            continue
        cells = []
        for mode in ranks:
            got = [ranks[mode][i] for i in picked]
            r5, m10 = round(recall(got), 3), round(mrr(got), 3)
            r1, r10 = round(recall(got, 1), 3), round(recall(got, 10), 3)
            cells.append(f"{mode} {r5:.3f}/{m10:.3f}")
            if name == "csn":
                cells[-1] = f"{mode} {r1:.3f}/{r5:.3f}/{r10:.3f}/{m10:.3f}"
            emit(
                "retrieval.eval",
                eval=name,
                half=sub,
                repo=repo,
                kind=kind,
                mode=mode,
                n=len(picked),
                recall5=r5,
                mrr10=m10,
                recall1=r1,
                recall10=r10,
            )
        head = f"{name} {sub:<4} {repo:<14} {kind:<10} n={len(picked):<4} "
        print(head + "  ".join(cells))
        if repo == "all" and kind == "all" and {"bm25", "knn", "hybrid"} <= set(ranks):
            best = max(("bm25", "knn"), key=lambda m: recall([ranks[m][i] for i in picked]))
            diff, lo, hi = bootstrap_diff(
                [ranks["hybrid"][i] for i in picked], [ranks[best][i] for i in picked]
            )
            print(f"  hybrid - {best}: {diff:+.3f} (95 % CI {lo:+.3f} .. {hi:+.3f})")
            emit(
                "retrieval.bootstrap",
                eval=name,
                half=sub,
                best=best,
                n=len(picked),
                diff=round(diff, 3),
                lo=round(lo, 3),
                hi=round(hi, 3),
            )
    if verbose:
        for mode in ranks:
            for q, r in zip(queries, ranks[mode], strict=True):
                if r is None or r > 5:
                    print(f"  {mode} miss ({r}): {q.id} {q.text!r}")


def own_eval(es: Any, settings: Any, embedder: Any, verbose: bool) -> None:
    from bench.search.eval_run import build_index, drop_index, run_queries

    files = parse_sources()
    queries = own_queries(files)
    repo_key = "bench-retrieval"
    try:
        chunks = build_index(es, settings, embedder, repo_key, files)
        print(f"own: {len(files)} files, {chunks} chunks, {len(queries)} queries")
        emit("retrieval.corpus", eval="own", files=len(files), chunks=chunks, queries=len(queries))
        ranks = run_queries(es, settings, embedder, queries, lambda q: repo_key)
        report("own", queries, ranks, verbose=verbose)
    finally:
        drop_index(es, settings, repo_key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["own", "outside", "csn"])
    parser.add_argument("--mirrors", type=Path, default=None)
    parser.add_argument("--csn", type=Path, default=None, help="csn folder (eval_csn build)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    from bench.search.eval_csn_run import csn_eval
    from bench.search.eval_outside import outside_eval
    from bench.search.eval_run import CachedEmbedder
    from semgraph.config import load_settings
    from semgraph.db import connect_search

    settings = load_settings()
    es = connect_search(settings)
    embedder = CachedEmbedder(settings, settings.state_dir / "bench-vectors.sqlite")
    emit("retrieval.model", model_id=embedder.model_id, model_dir=str(embedder.model_dir))
    try:
        if args.only in (None, "own"):
            own_eval(es, settings, embedder, args.verbose)
        if args.only in (None, "outside"):
            outside_eval(es, settings, embedder, args.mirrors, args.verbose, report)
        if args.only in (None, "csn"):
            if args.only is None:
                print("csn: run it on its own, --only csn (about 20 minutes)")
            else:
                csn_eval(es, settings, embedder, args.csn, args.verbose, report)
        print(f"vectors: {embedder.hits} from the cache, {embedder.misses} embedded")
    finally:
        es.close()


if __name__ == "__main__":
    main()
