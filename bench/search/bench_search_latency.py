"""Search latency through HTTP, short and long queries (issue 28: search p95 must stay
where it is; an issue text must answer, not be refused).

    python -m bench.search.bench_search_latency [--rounds 3] [--long-max-chars N] [--repo KEY]

Indexes this repository's ``src/semgraph`` (the product's indexing path, vectors from the
benchmark cache), serves the real web app (uvicorn in a thread) and times, one request at a
time after a warm-up: the hand-written queries of ``bench.search.bench_retrieval`` (short: an
identifier or a sentence), bug-describing commit messages with the test code they added
(``bench.search.eval_long``, 0.4-7 kB) and a 30 kB issue text (a traceback and a log). Long texts
go by ``POST /search``; a build without it (before issue 28) gets them by ``GET`` cut to
``--long-max-chars`` (its 2,000-character limit). Prints p50/p95/max per kind and mode.
With ``--repo`` the queries go to that repository's existing index instead (for example the
20,000-file dense repository of ``bench_pushphases``), which is neither built nor dropped.
"""

from __future__ import annotations

import argparse
import statistics
import time

import httpx

from bench.harness.records import emit

REPO = "bench-latency"
TRACE = (
    "Traceback (most recent call last):\n"
    '  File "src/semgraph/search/query.py", line 180, in search_answer\n'
    "    responses = _run_msearch(es, targets, bodies)\n"
    "elasticsearch.BadRequestError: search_phase_execution_exception\n"
)


def issue_30k() -> str:
    text = "Search fails for a long query with a traceback\n\n" + TRACE
    n = 0
    while len(text) < 30_000:
        n += 1
        text += f"2026-01-01 00:00:{n % 60:02d} WARNING retry {n} of the search after a flip\n"
    return text[:30_000]


def long_texts() -> list[str]:
    from bench.search.eval_long import commits, git

    files = set(git("pallets/click", "ls-tree", "-r", "--name-only", "HEAD").split())
    return [*[q.long for q in commits("pallets/click", files) if q.long][:20], issue_30k()]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(client: httpx.Client, text: str, mode: str, long_max: int, repo: str = REPO) -> float:
    started = time.perf_counter()
    body: dict[str, str | int] = {"q": text, "repo": repo, "mode": mode, "k": 10}
    resp = client.post("/search", json=body)
    if resp.status_code == 405:  # a build without POST /search
        resp = client.get("/search", params={**body, "q": text[:long_max]})
    elapsed = time.perf_counter() - started
    if resp.status_code != 200:
        raise SystemExit(f"search answered {resp.status_code}: {resp.text[:200]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--long-max-chars", type=int, default=2000)
    parser.add_argument("--repo", default=None, help="an indexed repository's key: query it")
    args = parser.parse_args()
    repo = args.repo or REPO

    from bench.search.bench_retrieval import QUERIES, parse_sources
    from bench.search.eval_run import CachedEmbedder, build_index, drop_index
    from semgraph.config import load_settings
    from semgraph.db import connect_graph, connect_search
    from semgraph.search.index import SearchIndex
    from semgraph.web.app import create_app
    from semgraph.web.fixtures import serve_in_thread

    settings = load_settings()
    unlimited = settings.model_copy(update={"read_rate_per_s": 0, "read_max_concurrent": 10_000})
    es = connect_search(settings)
    graph = connect_graph(settings)
    embedder = CachedEmbedder(settings, settings.state_dir / "bench-vectors.sqlite")
    kinds: dict[str, list[str]] = {"short": [q for q, _ in QUERIES], "long": long_texts()}
    try:
        if args.repo is None:
            build_index(es, settings, embedder, REPO, parse_sources())
        else:
            count = es.count(index=SearchIndex(es, settings).alias_name(repo))["count"]
            print(f"repository {repo}: {count} chunks indexed", flush=True)
            emit("search.latency_index", repo=repo, chunks=count)
        with (
            # a latency bench: one client asks as fast as it can, no per-token rate limit
            serve_in_thread(create_app(unlimited, graph=graph, search=es)) as url,
            httpx.Client(base_url=url, timeout=120) as client,
        ):
            for text in kinds["short"][:3]:  # warm-up: the model loads on the first query
                timed(client, text, "hybrid", args.long_max_chars, repo)
            for kind, texts in kinds.items():
                for mode in ("hybrid", "bm25"):
                    times = [
                        timed(client, text, mode, args.long_max_chars, repo)
                        for _ in range(args.rounds)
                        for text in texts
                    ]
                    p50, p95 = statistics.median(times), percentile(times, 0.95)
                    chars = statistics.median(len(t) for t in texts)
                    print(
                        f"{kind:<5} {mode:<6} n={len(times):<4} chars p50 {chars:>6.0f}  "
                        f"p50 {p50 * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms  "
                        f"max {max(times) * 1000:7.1f} ms"
                    )
                    emit(
                        "search.latency",
                        kind=kind,
                        mode=mode,
                        repo=repo,
                        n=len(times),
                        p50_s=round(p50, 4),
                        p95_s=round(p95, 4),
                    )
    finally:
        if args.repo is None:
            drop_index(es, settings, REPO)
        es.close()
        graph.close()


if __name__ == "__main__":
    main()
