"""MCP benchmark: p50/p99 latency of each tool through a real MCP client, and the largest
answers in tokens.

    python -m bench.interfaces.bench_mcp [--files 20000] [--shard-files 2000] [--calls 200]
                              [--search-files 0]

The graph tools (find_definition, callers, callees at depth 1, impact, index_status) run on
``--files`` synthetic files of ``bench.synth``, parsed, resolved and published to the Bolt
server of the current settings as ``bench_graph`` does, but as repositories of
``--shard-files`` files, one transaction each: publishing 20,000 files in one transaction
needs a 12 GiB server heap (bench/NOTES.md), more than a shared test machine has. The calls
name one of those repositories; the name index they look up holds all 20,000 files' symbols.
search_code and get_snippet run on the same 20,000 files: each repository's parsed files
are loaded into its search index through the product's own path (staging index, loader,
alias flip; :mod:`bench.synth.vectors`), but the real model, about a tenth of a second per
chunk on a CPU, would take hours over them, so the DOCUMENT VECTORS ARE SYNTHETIC (hash-seeded,
normalised, the model's size): what is measured is latency, not retrieval quality. The query
text is still embedded by the real model inside the tool, as in production. search_code is
timed twice: scoped to the one repository the other calls name, and over every repository
(all 20,000 files). ``--search-files N`` (N > 0) is the older mode instead: a second synthetic
repository of N files indexed end to end by ``semgraph index`` with the real model.
The figures name the size they were measured on and whether the vectors were synthetic.
Every call goes through the SDK's in-process client (JSON-RPC messages, argument
validation, the answer's JSON), not through a socket. Then the largest answers are asked for
on purpose (the most common short name, the most-called symbol at 200 rows and at depth 5, a
400-line snippet) and their size in tokens (the embedding model's tokenizer) is printed next
to the 20,000-token bound. Every figure is measured, none assumed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from bench.harness.records import emit

TARGET_P99_MS = 100.0  # find_definition, callers, callees at depth 1
TOKEN_BOUND = 20_000


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def publish_synthetic(
    settings: Any,
    graph: Any,
    tmp: Path,
    n_files: int,
    shard: int,
    seed: int,
    search: Any = None,
) -> list[str]:
    """``n_files`` synthetic files published as repositories of ``shard`` files each, one
    transaction per repository (a single 20,000-file transaction needs a 12 GiB heap, see
    NOTES.md); returns their keys. With ``search`` (an ES client), each repository's chunks
    are also loaded into its search index with synthetic document vectors."""
    from bench.synth import generate
    from semgraph.graph.writer import GraphWriter, RepoInfo
    from semgraph.indexer.parse import parse_repository
    from semgraph.indexer.spill import SpillReader
    from semgraph.resolve.resolver import resolve

    keys = []
    vectors = None
    if search is not None:
        from bench.synth.vectors import HashVectors

        vectors = HashVectors(settings)
    t0 = time.monotonic()
    for i in range((n_files + shard - 1) // shard):
        key = f"bench-mcp-{n_files}-s{i}"
        size = min(shard, n_files - i * shard)
        source = generate(tmp / f"graph-repo-{i}", size, seed=seed + i)
        spill_path = tmp / f"spill-{i}" / "bench.spill"
        parse_repository(settings, source, spill_path)
        spill = SpillReader(spill_path)
        with resolve(spill.__iter__, key, tmp / f"resolve-{i}") as res:
            GraphWriter(graph, settings).publish(
                RepoInfo(key, "synthetic", "main", "c" * 40),
                res,
                run_id=f"{key}-run",
                fingerprint="bench",
                now=time.time(),
            )
        keys.append(key)
        print(f"published {key}: {size} files, {time.monotonic() - t0:.1f} s so far", flush=True)
        if vectors is not None:
            from bench.synth.vectors import DOC_VECTORS, index_spill

            stats = index_spill(settings, search, key, f"{key}-run", spill_path, vectors)
            print(
                f"search index of {key}: {stats['files']} files, {stats['docs']} chunks "
                f"({DOC_VECTORS} document vectors) in {stats['seconds']} s, "
                f"{time.monotonic() - t0:.1f} s so far",
                flush=True,
            )
    return keys


def index_search_repo(tmp: Path, n_files: int, seed: int) -> str:
    from bench.synth import generate

    source = generate(tmp / "search-repo", n_files, seed=seed, small=True)
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "semgraph", "index", str(source), "--json"],
        env={**os.environ},
        capture_output=True,
        text=True,
        timeout=3600,
        check=True,
    )
    key = str(json.loads(done.stdout)["run"]["repo"])
    print(f"indexed {n_files} files end to end in {time.monotonic() - t0:.1f} s", flush=True)
    return key


async def timed(
    call: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]],
    tool: str,
    args_list: list[dict[str, Any]],
    files: int,
    doc_vectors: str | None = None,
) -> dict[str, Any]:
    latency: list[float] = []
    tokens: list[int] = []
    errors = 0
    await call(tool, args_list[0])  # warm: the first search loads the embedding model
    for args in args_list:
        t0 = time.perf_counter()
        body = await call(tool, args)
        latency.append((time.perf_counter() - t0) * 1000)
        errors += "error" in body
        tokens.append(int(body.get("tokens", 0)))
    row = {
        "tool": tool,
        "label": args_list[0].get("_label", tool),
        "files": files,
        "calls": len(args_list),
        "errors": errors,
        "p50_ms": round(_pct(latency, 50), 2),
        "p99_ms": round(_pct(latency, 99), 2),
        "max_tokens": max(tokens),
    }
    if doc_vectors is not None:
        row["doc_vectors"] = doc_vectors  # "synthetic": latency only, not quality
    emit("mcp.tool", **row)
    return row


async def measure(args: argparse.Namespace, tmp: Path) -> None:
    from mcp import Client
    from mcp.types import TextContent

    from semgraph.config import load_settings
    from semgraph.db import connect_graph, connect_search
    from semgraph.graph.schema import SCHEMA
    from semgraph.mcp.backend import Backend
    from semgraph.mcp.server import build_server
    from semgraph.mcp.tokens import TokenCounter
    from semgraph.mcp.tools import Tools
    from semgraph.queue.store import JobStore

    settings = load_settings()
    graph = connect_graph(settings)
    search = connect_search(settings)
    graph.ensure_schema(SCHEMA)
    old_mode = args.search_files > 0
    keys = publish_synthetic(
        settings,
        graph,
        tmp,
        args.files,
        args.shard_files,
        args.seed,
        search=None if old_mode else search,
    )
    key = keys[0]  # the queries name one repository; the graph holds all of them
    if old_mode:
        small = index_search_repo(tmp, args.search_files, args.seed + 1)
        search_files, shard_files, doc_vectors = args.search_files, args.search_files, "model"
    else:
        small = key
        search_files = args.files
        shard_files = min(args.shard_files, args.files)
        doc_vectors = "synthetic"
    backend = Backend(settings, graph, search, JobStore(graph, settings), TokenCounter(settings))
    rng = random.Random(args.seed)
    names = [
        str(r["name"])
        for r in graph.query(
            "bench names",
            "MATCH (s:Symbol {repo: $repo}) WHERE s.kind <> 'module' "
            "RETURN s.qualified_name AS name",
            repo=key,
        )
    ]
    top = graph.query(
        "bench most called",
        "MATCH (c:Symbol)-[:CALLS]->(s:Symbol {repo: $repo}) "
        "RETURN s.qualified_name AS name, count(c) AS n ORDER BY n DESC LIMIT 1",
        repo=key,
    )[0]
    common = graph.query(
        "bench common name",
        "MATCH (s:Symbol {repo: $repo}) RETURN s.name AS name, count(*) AS n "
        "ORDER BY n DESC LIMIT 1",
        repo=key,
    )[0]
    files = graph.query(
        "bench small files",
        "MATCH (f:File {repo: $repo}) RETURN f.path AS path ORDER BY f.path",
        repo=small,
    )
    async with Client(build_server(Tools(backend))) as client:

        async def call(tool: str, a: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool(tool, {k: v for k, v in a.items() if k[0] != "_"})
            block = result.content[0]
            assert isinstance(block, TextContent)
            body: dict[str, Any] = json.loads(block.text)
            return body

        picks = [rng.choice(names) for _ in range(args.calls)]
        rows = [
            await timed(
                call, "find_definition", [{"name": n, "repo": key} for n in picks], args.files
            ),
            await timed(call, "callers", [{"name": n, "repo": key} for n in picks], args.files),
            await timed(call, "callees", [{"name": n, "repo": key} for n in picks], args.files),
            await timed(
                call,
                "impact",
                [{"name": n, "repo": key, "summary": True} for n in picks],
                args.files,
            ),
            await timed(
                call,
                "impact",
                [{"name": n, "repo": key, "_label": "impact (rows)"} for n in picks],
                args.files,
            ),
            await timed(call, "index_status", [{"repo": key}] * args.calls, args.files),
            await timed(
                call,
                "get_snippet",
                [{"repo": small, "path": rng.choice(files)["path"]} for _ in range(args.calls)],
                shard_files,
                doc_vectors,
            ),
            await timed(
                call,
                "search_code",
                [
                    {
                        "text": f"{rng.choice(names).rsplit('.', 1)[-1]} value",
                        "repo": small,
                        "_label": "search_code (1 repo)",
                    }
                    for _ in range(max(20, args.calls // 4))
                ],
                shard_files,
                doc_vectors,
            ),
            await timed(
                call,
                "search_code",
                [
                    {
                        "text": f"{rng.choice(names).rsplit('.', 1)[-1]} value",
                        "_label": "search_code (all)",
                    }
                    for _ in range(max(20, args.calls // 4))
                ],
                search_files,
                doc_vectors,
            ),
        ]
        largest = {
            "find_definition (most common name, 200 rows)": (
                "find_definition",
                {"name": common["name"], "repo": key, "limit": 200},
            ),
            "callers (most called, 200 rows)": (
                "callers",
                {"name": top["name"], "repo": key, "limit": 200},
            ),
            "impact (most called, depth 5, 200 rows)": (
                "impact",
                {"name": top["name"], "repo": key, "depth": 5, "limit": 200},
            ),
            "get_snippet (400 lines)": (
                "get_snippet",
                {"repo": small, "path": files[0]["path"], "end_line": 400},
            ),
            "search_code (200 rows)": ("search_code", {"text": "value", "limit": 200}),
        }
        biggest = 0
        for label, (tool, a) in largest.items():
            body = await call(tool, a)
            rows_n = body.get("returned", len(body.get("rows", [])))
            biggest = max(biggest, int(body.get("tokens", 0)))
            emit(
                "mcp.largest",
                label=label,
                tool=tool,
                tokens=body.get("tokens"),
                rows=rows_n,
                total=body.get("total"),
                cut_to_fit=bool(body.get("cut_to_fit_tokens")),
            )
    report(rows, biggest, doc_vectors)
    for k in keys:
        graph.query("bench cleanup", "MATCH (n) WHERE n.repo = $r DETACH DELETE n", r=k)
        graph.query("bench cleanup", "MATCH (n:Repository {key: $r}) DETACH DELETE n", r=k)
        if not old_mode:
            from bench.synth.vectors import delete_indexes

            delete_indexes(settings, search, k)
    graph.close()
    search.close()


def report(rows: list[dict[str, Any]], biggest: int, doc_vectors: str) -> None:
    print(
        f"\nload {os.getloadavg()[0]:.2f}; target: p99 <= {TARGET_P99_MS} ms for "
        "find_definition, callers and callees at depth 1"
    )
    for r in rows:
        mark = ""
        if r["tool"] in ("find_definition", "callers", "callees"):
            mark = " (target met)" if r["p99_ms"] <= TARGET_P99_MS else " (TARGET MISSED)"
        if r.get("doc_vectors") == "synthetic":
            mark = " (synthetic doc vectors)"
        print(
            f"  {r['label']:<20} {r['files']:>6} files  p50 {r['p50_ms']:>8} ms  "
            f"p99 {r['p99_ms']:>8} ms  "
            f"max {r['max_tokens']} tokens  errors {r['errors']}{mark}"
        )
    print(f"  largest answer asked for: {biggest} tokens (bound {TOKEN_BOUND})")
    if doc_vectors == "synthetic":
        print(
            "  search_code / get_snippet: the search index holds every synthetic file's real "
            "chunks, but their document vectors are synthetic (hash-seeded): these figures "
            "are latency, not retrieval quality; query texts are embedded by the real model"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--shard-files", type=int, default=2_000, help="files per repository")
    parser.add_argument(
        "--search-files",
        type=int,
        default=0,
        help="N > 0: search_code/get_snippet on a separate N-file repository indexed with the "
        "real model (older mode); 0: on the --files graph with synthetic document vectors",
    )
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="semgraph-bench-mcp-") as tmp:
        anyio.run(measure, args, Path(tmp))


if __name__ == "__main__":
    main()
