"""Rows of the localisation evaluation (``bench/search/eval_localize.py``: file Acc@1/3/5/10 and
function Acc@5/10 of BM25, kNN, hybrid, ``localize`` and its ablations, each half, the text
as sent and cut to the old 2,000-character bound) and of its latency benchmark
(``bench/search/bench_localize_latency.py``: p50/p95 per method on one indexed repository).

Targets: on the test half, ``localize`` file Acc@5 >= 85 % as sent and function
Acc@10 >= 60 %; ``localize`` p95 <= 1 s on a 20,000-file index, graph hops included.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.harness import records
from bench.harness.figures import Figure, num, ok
from bench.search.eval_localize_score import complete, summarize

FILE_AT5_TARGET = 85.0
FUNC_AT10_TARGET = 60.0
LATENCY_P95_TARGET_S = 1.0
LATENCY_FILES = 20_000
TRUNCATED = ("bm25", "knn", "hybrid", "localize")  # as bench.search.eval_localize asks them
# the evaluation's `localize` is the defaults of the run that asked it (the call-graph hops
# were on, 0.2 each, until session 11 turned them off); `loc-hops` is without them in every
# run, which is what the product serves by default (semgraph.localize.rank)
LABELS = {
    "localize": "localize, the asking run's defaults",
    "loc-hops": "localize without graph hops (the product default)",
}


def figures_localize(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    # the targets are read on the whole evaluation (``--summary LOG`` scores a log whose runs
    # were resumed or added to); one run's own records are a part of it, shown without them
    summary = [r for r in records.read(out, "localize.summary") if num(r, "n", "file@5")]
    whole = bool(summary)
    if not summary:
        rows = [
            r
            for r in records.read(out, "localize.eval")
            if {"id", "text", "method", "half"} <= set(r)
        ]
        summary = summarize(complete(rows, TRUNCATED))
    if not summary:
        return []
    figs: list[Figure] = []
    best = {
        (s["half"], s["text"]): max(
            (
                t["file@5"]
                for t in summary
                if (t["half"], t["text"]) == (s["half"], s["text"])
                and t["method"] in ("bm25", "knn", "hybrid")
            ),
            default=0.0,
        )
        for s in summary
    }
    for s in summary:
        headline = whole and s["half"] == "test" and s["text"] == "sent" and s["method"] in LABELS
        target, verdict = "-", ""
        if headline:
            target = f"file@5 >= {FILE_AT5_TARGET:.0f} %, func@10 >= {FUNC_AT10_TARGET:.0f} %"
            verdict = ok(s["file@5"] >= FILE_AT5_TARGET and s["func@10"] >= FUNC_AT10_TARGET)
        figs.append(
            Figure(
                f"{LABELS.get(s['method'], s['method'])} file Acc@1/3/5/10, func Acc@5/10; "
                f"{s['half']} half, text "
                f"{s['text']} ({s['n']} commits, {s['func_n']} with a function answer)",
                f"{s['file@1']:.1f} / {s['file@3']:.1f} / {s['file@5']:.1f} / "
                f"{s['file@10']:.1f} %; {s['func@5']:.1f} / {s['func@10']:.1f} %",
                f"{best[(s['half'], s['text'])]:.1f} % best search file@5",
                "-",
                target,
                verdict,
            )
        )
    return figs


def figures_localize_latency(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    figs: list[Figure] = []
    latency = [r for r in records.read(out, "localize.latency") if num(r, "p50_s", "p95_s", "n")]
    search = next((r for r in latency if r.get("method") == "search"), None)
    for r in latency:
        files = int(r.get("files") or 0)
        headline = r.get("method") == "localize" and files >= LATENCY_FILES
        ratio = (
            f"{r['p95_s'] / search['p95_s']:.2f}x"
            if search and r is not search and search["p95_s"]
            else "-"
        )
        figs.append(
            Figure(
                f"{r.get('method')} p95 (p50), {files:,} files, {r['n']} texts",
                f"{r['p95_s'] * 1000:.0f} ms ({r['p50_s'] * 1000:.0f})",
                f"{search['p95_s'] * 1000:.0f} ms search p95" if search else "-",
                ratio,
                f"p95 <= {LATENCY_P95_TARGET_S:.0f} s" if headline else "-",
                ok(r["p95_s"] <= LATENCY_P95_TARGET_S) if headline else "",
            )
        )
    return figs


SEARCH_P95_TARGET_S = 0.7  # search p95 stays where it was (0.6-0.7 s through HTTP)


def figures_search_latency(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    """``bench/search/bench_search_latency.py``: HTTP search p50/p95 per query kind and mode; the
    target holds on a repository's existing index (``--repo``), the size it was set at."""
    index = next(iter(records.read(out, "search.latency_index")), None)
    where = f"{index['repo']}, {int(index['chunks']):,} chunks" if index else "own src/semgraph"
    figs: list[Figure] = []
    for r in records.read(out, "search.latency"):
        if not num(r, "p50_s", "p95_s", "n"):
            continue
        headline = index is not None
        figs.append(
            Figure(
                f"HTTP search p95 (p50), {r.get('kind')} queries, {r.get('mode')}, {where}",
                f"{r['p95_s'] * 1000:.0f} ms ({r['p50_s'] * 1000:.0f})",
                "-",
                "-",
                f"p95 <= {SEARCH_P95_TARGET_S} s" if headline else "-",
                ok(r["p95_s"] <= SEARCH_P95_TARGET_S) if headline else "",
            )
        )
    return figs
