"""``localize`` latency on a large index, graph hops included (the target: p95 at
most 1 s on a 20,000-file index), against hybrid search on the same texts in the same run.

    python -m bench.search.bench_localize_latency --repo KEY [--texts 30] [--rounds 2]

Read-only: it indexes nothing and writes nothing (it may run against a stack that another
benchmark owns). The issue texts are built from the index itself so that every part has
work to do: for each text, three chunks of the repository found by a BM25 search give a
title naming a symbol, a traceback whose frames are their ``path:line`` and some prose,
padded to 1-30 kB with log lines. Each text is asked once to warm up, then timed
``--rounds`` times in-process (the product's function, as the HTTP route and the MCP tool
call it): ``localize`` with the call-graph hops on (callees and callers 0.2, the re-rank
off; the runs of ``bench/results/localize-latency.log`` had them on by default),
``localize`` with the re-rank as well,
and hybrid ``search_answer`` (k=200, the chunks ``localize`` ranks). Prints p50/p95/max
per method and the ratio of ``localize`` to search.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.harness.records import emit

# the size of the index, read once (the benchmark's only statement; it writes nothing)
FILE_COUNT = "MATCH (f:File {repo: $repo}) RETURN count(f) AS n"
SEEDS = ("error value result", "parse config file", "handler request response", "cache key")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def texts(es: Any, settings: Any, repo: str, n: int) -> list[str]:
    from semgraph.search.query import search_answer

    hits = []
    for seed in SEEDS:
        hits += search_answer(es, settings, None, seed, repo=repo, k=200, mode="bm25").hits
    hits = [h for h in hits if h.symbol]
    rng = random.Random(28)
    out = []
    for i in range(n):
        picked = rng.sample(hits, 3)
        name = str(picked[-1].symbol).rsplit(".", 1)[-1]
        text = f"{name} fails with a ValueError when the input is empty\n\n"
        text += "Calling it on an empty list raises instead of returning nothing.\n\n"
        text += "Traceback (most recent call last):\n"
        for h in picked:
            function = str(h.symbol).rsplit(".", 1)[-1]
            text += f'  File "/srv/app/{h.path}", line {h.start_line + 1}, in {function}\n'
            text += f"    {h.snippet.splitlines()[0] if h.snippet else 'pass'}\n"
        text += "ValueError: empty input\n\n"
        size = (1_000, 5_000, 30_000)[i % 3]
        line = 0
        while len(text) < size:
            line += 1
            text += f"2026-01-01 00:00:{line % 60:02d} INFO step {line} of the run\n"
        out.append(text[:size])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--texts", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    from semgraph.config import load_settings
    from semgraph.db import connect_graph, connect_search
    from semgraph.localize.locate import LocalizeOptions, localize
    from semgraph.search.embed import Embedder
    from semgraph.search.query import search_answer

    settings = load_settings()
    es = connect_search(settings)
    graph = connect_graph(settings)
    embedder = Embedder(settings)
    files = graph.query("bench files", FILE_COUNT, repo=args.repo)[0]["n"]
    asked = texts(es, settings, args.repo, args.texts)
    hops = LocalizeOptions(callees=0.2, callers=0.2)  # the graph hops on: the target
    rerank = LocalizeOptions(callees=0.2, callers=0.2, rerank=0.5)
    methods: dict[str, Callable[[str], object]] = {
        "localize": lambda t: localize(
            es, graph, settings, embedder, t, repo=args.repo, options=hops
        ),
        "localize+rerank": lambda t: localize(
            es, graph, settings, embedder, t, repo=args.repo, options=rerank
        ),
        "search": lambda t: search_answer(es, settings, embedder, t, repo=args.repo, k=200),
    }
    for text in asked[:3]:
        for call in methods.values():
            call(text)  # warm-up: the model, the caches of both stores
    p95s: dict[str, float] = {}
    try:
        for method, call in methods.items():
            times = []
            for _ in range(args.rounds):
                for text in asked:
                    started = time.perf_counter()
                    call(text)
                    times.append(time.perf_counter() - started)
            p50, p95 = statistics.median(times), percentile(times, 0.95)
            p95s[method] = p95
            print(
                f"{method:<16} files {files} n={len(times):<4} p50 {p50 * 1000:7.1f} ms  "
                f"p95 {p95 * 1000:7.1f} ms  max {max(times) * 1000:7.1f} ms",
                flush=True,
            )
            emit(
                "localize.latency",
                method=method,
                files=files,
                n=len(times),
                p50_s=round(p50, 4),
                p95_s=round(p95, 4),
                max_s=round(max(times), 4),
            )
        ratio = p95s["localize"] / p95s["search"]
        print(f"localize p95 / search p95 (same run): {ratio:.2f}x")
    finally:
        es.close()
        graph.close()


if __name__ == "__main__":
    main()
