"""Retrieval evaluation: recall@5 of BM25 alone, kNN alone and their RRF fusion.

    python -m bench.bench_retrieval [--k 5] [--verbose]

Corpus: this repository's own ``src/semgraph``, parsed and chunked by the indexer's
``extract_file`` (same options as a reindex), loaded into a staging index behind an alias
exactly as a run does. Queries: the hand-written set below, each with the chunk(s) it should
find (file path suffix + symbol qualified-name suffix): identifier queries and questions by
meaning. A query whose target no longer exists in the code is reported and left out. Needs
the local stack (``SEMGRAPH_ES_URL``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.records import emit
from semgraph.model import FileFacts

ROOT = Path(__file__).resolve().parents[1]

# (query, [(path suffix, symbol suffix), ...]) -- any listed target in the top k is a hit
QUERIES: list[tuple[str, list[tuple[str, str]]]] = [
    # identifiers
    ("flip_alias", [("search/index.py", "SearchIndex.flip_alias")]),
    ("cause_chain", [("errors.py", "cause_chain")]),
    ("malloc_trim", [("indexer/memory.py", "malloc_trim")]),
    ("detect_kind", [("graph/dialect.py", "detect_kind")]),
    ("splitIdentifier", [("search/split.py", "split_identifier")]),
    ("content_hash", [("indexer/model.py", "content_hash")]),
    ("load_settings", [("config.py", "load_settings")]),
    ("JsonFormatter", [("logs.py", "JsonFormatter")]),
    ("gc_orphans", [("search/index.py", "SearchIndex.gc_orphans")]),
    ("vector_key", [("search/embed.py", "vector_key")]),
    ("module_name", [("indexer/model.py", "module_name")]),
    ("search_errors", [("db.py", "search_errors")]),
    ("rrf", [("search/query.py", "rrf")]),
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
    ("reciprocal rank fusion of two rankings", [("search/query.py", "rrf")]),
    (
        "delete staging indexes left behind by crashed runs",
        [
            ("search/index.py", "SearchIndex.gc_orphans"),
            ("search/index.py", "SearchIndex.orphaned_staging"),
        ],
    ),
    ("give freed heap memory back to the operating system", [("indexer/memory.py", "malloc_trim")]),
    ("resident set size of the current process", [("indexer/memory.py", "rss_bytes")]),
    (
        "break camelCase and snake_case names into words",
        [
            ("search/split.py", "split_identifier"),
            ("search/split.py", "_camel_parts"),
            ("search/split.py", "identifier_words"),
        ],
    ),
    ("sha256 of the model id and the embedded text", [("search/embed.py", "vector_key")]),
    ("use cuda when a GPU is visible otherwise the cpu", [("search/embed.py", "resolve_device")]),
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
        [("indexer/model.py", "module_name")],
    ),
    (
        "raise when the bulk response reports rejected documents",
        [("search/loader.py", "bulk")],
    ),
    ("load the sentence transformers model once per process", [("search/embed.py", "_load")]),
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    from semgraph.config import load_settings
    from semgraph.db import connect_search
    from semgraph.search.embed import Embedder
    from semgraph.search.index import SearchIndex
    from semgraph.search.query import search

    settings = load_settings()
    es = connect_search(settings)
    manager = SearchIndex(es, settings)
    embedder = Embedder(settings)
    repo_key = "bench-retrieval"
    files = parse_sources()
    chunks = [(f.path, c.symbol) for f in files for c in f.chunks]
    queries = [
        (q, targets)
        for q, targets in QUERIES
        if any(matches(p, s, t) for p, s in chunks for t in targets)
    ]
    for q, _ in QUERIES:
        if q not in {qq for qq, _ in queries}:
            print(f"left out (target no longer in the code): {q!r}")
    print(f"{len(files)} files, {len(chunks)} chunks, {len(queries)} queries, k={args.k}")
    emit("retrieval.corpus", files=len(files), chunks=len(chunks), queries=len(queries), k=args.k)
    try:
        for info in manager.list_indexes():
            if info.meta.get("repo") == repo_key:
                manager.delete_index(info.name)
        staging = manager.create_staging(repo_key, "eval", embedder.dims)
        stats = manager.index_files(staging, repo_key, "eval", files, embedder)
        manager.refresh(staging)
        manager.flip_alias(repo_key, staging)
        print(f"indexed in {stats.embed_seconds + stats.bulk_seconds:.1f}s")
        emit("retrieval.indexed", seconds=round(stats.embed_seconds + stats.bulk_seconds, 1))
        recall: dict[str, float] = {}
        for mode in ("bm25", "knn", "hybrid"):
            found = 0
            for q, targets in queries:
                hits = search(es, settings, embedder, q, repo=repo_key, k=args.k, mode=mode)
                ok = any(matches(h.path, h.symbol, t) for h in hits for t in targets)
                found += ok
                if args.verbose and not ok:
                    got = ", ".join(f"{h.symbol}" for h in hits[:3])
                    print(f"  {mode} miss: {q!r} -> {got}")
            recall[mode] = found / len(queries)
            print(f"recall@{args.k} {mode:<6}: {recall[mode]:.3f} ({found}/{len(queries)})")
            emit(
                "retrieval.recall",
                mode=mode,
                k=args.k,
                recall=round(recall[mode], 3),
                found=found,
                total=len(queries),
            )
        print(
            f"ratio hybrid / bm25: {recall['hybrid'] / max(recall['bm25'], 1e-9):.2f}; "
            f"hybrid / knn: {recall['hybrid'] / max(recall['knn'], 1e-9):.2f}"
        )
    finally:
        for info in manager.list_indexes():
            if info.meta.get("repo") == repo_key:
                manager.delete_index(info.name)
        es.close()


if __name__ == "__main__":
    main()
