"""Console benchmark (issue 29): each page's time and size at scale.

    python -m bench.interfaces.bench_console [--files 20000] [--shard-files 2000] [--jobs 10000]
                                  [--lines 5000] [--callers 500] [--repeats 30]

What is built, against the stack of the current settings:

* ``--files`` synthetic files published as repositories of ``--shard-files`` each, with their
  chunks in the search index (synthetic document vectors; the query is embedded by the real
  model): ``bench.interfaces.bench_mcp.publish_synthetic``;
* ``--jobs`` jobs in the queue (one per repository key, a tenth of them failed);
* one repository indexed end to end by ``semgraph index`` holding a ``--lines``-line file
  whose functions all call one ``target`` (``--callers`` callers).

Then every page is fetched ``--repeats`` times over loopback from a ``semgraph serve``
application running in this process (uvicorn in a thread): the time is the request's wall
time seen by the client (server time plus about a millisecond of client), the size the
HTML's bytes. Baselines measured in the same run: ``GET /healthz`` and the JSON API calls
that answer the same question (``GET /jobs``, ``GET /search``, ``GET /graph/callers``).
Target: p95 <= 300 ms for every page; no page grows without bound (lists are paged, the
graph is capped). Every figure is measured, none assumed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness.records import emit

TARGET_P95_MS = 300.0
ADMIN = "bench-console-admin-token-0123"


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def big_repo(root: Path, lines: int, callers: int) -> Path:
    """A repository whose ``big.py`` has ``lines`` lines of ``callers`` functions that call
    ``core.target``."""
    root.mkdir(parents=True)
    (root / "core.py").write_text("def target(x):\n    return x + 1\n")
    per = max(4, lines // callers)
    out = ["from core import target", ""]
    for i in range(callers):
        body = [f"def caller_{i}(x):"]
        body += [f"    x = x * {j + 2} + {i}" for j in range(per - 3)]
        body += ["    return target(x)", ""]
        out += body
    text = "\n".join(out[:lines]) + "\n"
    (root / "big.py").write_text(text)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
    }
    env["GIT_COMMITTER_EMAIL"] = "b@b"
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "big"]):
        subprocess.run(["git", *cmd], cwd=root, env=env, check=True)
    return root


def index(path: Path) -> str:
    import json

    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "semgraph", "index", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=3600,
        check=True,
    )
    key = str(json.loads(done.stdout)["run"]["repo"])
    print(f"indexed {path.name} end to end in {time.monotonic() - t0:.1f} s", flush=True)
    return key


def fill_queue(store: Any, n: int, keys: list[str]) -> None:
    from semgraph.queue.models import EnqueueRequest, FailureKind

    t0 = time.monotonic()
    batch = 500
    for start in range(0, n, batch):
        reqs = [
            EnqueueRequest(repo_key=f"bench-console-q{i}", kind="bench-console")
            for i in range(start, min(n, start + batch))
        ]
        store.enqueue_many(reqs, now=time.time())
    for _ in range(n // 10):  # a tenth failed, with an error text to filter by
        job = store.claim("bench-console-w", ["bench-console"], now=time.time())
        if job is None:
            break
        store.fail(
            job.id,
            str(job.claim_token),
            now=time.time(),
            message="bench failure: checkout",
            kind=FailureKind.ERROR,
        )
    print(f"queue filled with {n} jobs in {time.monotonic() - t0:.1f} s ({keys[:1]})", flush=True)


def pages(search_key: str, big: str) -> list[tuple[str, str, str]]:
    """(name, page path, the JSON API call or health check it compares with)."""
    q = "sum the values of a list"
    return [
        ("queue", "/console/queue", "/jobs?limit=50"),
        (
            "queue filtered by error text",
            "/console/queue?error=checkout&status=failed",
            "/jobs?status=failed&limit=50",
        ),
        ("queue page 100", "/console/queue?offset=4950", "/jobs?limit=50"),
        ("workers", "/console/workers", "/healthz"),
        ("repositories", "/console/repos", "/repos"),
        ("charts (24 h)", "/console/charts", "/jobs?limit=50"),
        (
            "search, one repository",
            f"/console/search?q={q}&repo={search_key}",
            f"/search?q={q}&repo={search_key}&k=20",
        ),
        ("search, every repository", f"/console/search?q={q}", f"/search?q={q}&k=20"),
        (
            "file view (first 400 of the big file's lines)",
            f"/console/file?repo={big}&path=big.py",
            "/healthz",
        ),
        (
            "file view (lines 2401-2800)",
            f"/console/file?repo={big}&path=big.py&start=2401",
            "/healthz",
        ),
        (
            "symbol page (500 callers)",
            f"/console/symbol?repo={big}&name=core.target",
            f"/graph/callers?repo={big}&name=core.target&limit=200",
        ),
        (
            "graph view, 1 hop (500 callers)",
            f"/console/graph?repo={big}&name=core.target",
            f"/graph/callers?repo={big}&name=core.target&limit=1000",
        ),
        (
            "graph view, 2 hops",
            f"/console/graph?repo={big}&name=core.target&depth=2",
            f"/graph/callers?repo={big}&name=core.target&depth=2&limit=1000",
        ),
    ]


def time_get(client: Any, path: str, repeats: int) -> tuple[list[float], int, int]:
    times = []
    size = status = 0
    client.get(path)  # warm (the embedding model loads on the first search)
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = client.get(path)
        times.append((time.perf_counter() - t0) * 1000)
        size, status = len(r.content), r.status_code
    return times, size, status


def measure(args: argparse.Namespace, tmp: Path) -> None:
    import httpx

    from bench.interfaces.bench_mcp import publish_synthetic
    from semgraph.config import load_settings
    from semgraph.db import connect_graph, connect_search
    from semgraph.queue.store import JobStore
    from semgraph.web.app import create_app
    from semgraph.web.fixtures import serve_in_thread

    settings = load_settings().model_copy(update={"api_token": ADMIN})
    graph, es = connect_graph(settings), connect_search(settings)
    graph.query("bench reset", "MATCH (n) DETACH DELETE n")
    keys = publish_synthetic(settings, graph, tmp, args.files, args.shard_files, 7, search=es)
    big = index(big_repo(tmp / "big", args.lines, args.callers))
    fill_queue(JobStore(graph, settings), args.jobs, keys)
    app = create_app(settings, graph=graph, search=es)
    with (
        serve_in_thread(app) as base,
        httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=120
        ) as client,
    ):
        for name, page, api in pages(keys[0], big):
            load_1m = os.getloadavg()[0]
            times, size, status = time_get(client, page, args.repeats)
            api_times, api_size, _ = time_get(client, api, args.repeats)
            emit(
                "console.page",
                page=name,
                path=page,
                status=status,
                p50_ms=round(_pct(times, 50), 1),
                p95_ms=round(_pct(times, 95), 1),
                bytes=size,
                baseline=api.split("?")[0],
                baseline_p50_ms=round(_pct(api_times, 50), 1),
                baseline_p95_ms=round(_pct(api_times, 95), 1),
                baseline_bytes=api_size,
                repeats=args.repeats,
                files=args.files,
                jobs=args.jobs,
                lines=args.lines,
                callers=args.callers,
                load_1m=round(load_1m, 2),
            )
    graph.close()
    es.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--shard-files", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--callers", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-console-") as tmp:
        measure(args, Path(tmp))


if __name__ == "__main__":
    main()
