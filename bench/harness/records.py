"""The JSON lines a benchmark prints for the report.

Besides its human-readable lines, every ``bench/bench_NAME.py`` that ``bench.run_all`` runs
prints each figure it measures as one JSON object on a line of its own, whose first key,
``"record"``, names what the line holds (``"parse.size"``, ``"webhook.burst"``, ...)::

    {"record": "parse.size", "files": 1000, "files_per_s": 217.7, ...}

The report (``bench.figures_*``) reads only these lines; the text around them is for people.
Numbers are rounded as the human line next to them prints them, so both read the same. A
benchmark may print several records of one kind (one per size, round or burst); a line that
is not a JSON object with a ``"record"`` string is ignored, so a log may hold anything else.

The kinds, and the fields each carries, are listed with the benchmark that prints them
(``RECORDS`` in this module) and read by the function named there.
"""

from __future__ import annotations

import json
from typing import Any

RECORD = "record"

# every kind of record, the benchmark that prints it, and what one line stands for
RECORDS = {
    "parse.size": "bench_parse: one repository size, parsed in a fresh process",
    "parse.languages": "bench_parse --languages: the sixteen-language repository, pool parse",
    "parse.language": "bench_parse --languages: one language's files extracted on one core",
    "memory.start": "bench_memory: a size's job started (a later memory.size is its result)",
    "memory.size": "bench_memory: the whole job at one size (peak RSS, phases)",
    "embed.texts": "bench_embed: the texts embedded (files, chunks, model, device, backend)",
    "embed.repeat": "bench_embed: one repeat of one backend (raw call, phase, unchanged re-run)",
    "embed.summary": "bench_embed: one backend's ratios over the best of the repeats",
    "embed.backends": "bench_embed: torch fp32 phase (and raw call) / OpenVINO's, same run",
    "embed.token_bound": "bench_token_bound: OpenVINO at the model's bound vs embedding_max_tokens",
    "reindex.repo": "bench_reindex: the repository indexed",
    "reindex.run": "bench_reindex: one run (first, unchanged, forced) with its phases",
    "reindex.ratios": "bench_reindex: first/unchanged and first/forced",
    "graph.size": "bench_graph: publish and queries at one size (or the error)",
    "crossrepo.accuracy": "bench_crossrepo: cross-repository links against jedi over both sides",
    "crossrepo.push": "bench_crossrepo: a one-file delta publish of flask, the link's share",
    "crossrepo.relink": "bench_crossrepo: re-linking a library's dependents after its publish",
    "crossrepo.query": "bench_crossrepo: callers --across-repos p50/p95 at depth 1",
    "crossrepo.js_accuracy": "bench_crossrepo_js: npm cross-repository links against TypeScript",
    "crossrepo.jvm_accuracy": "bench_crossrepo_jvm: Maven cross-repository links against javac",
    "crossrepo.ruby_accuracy": "bench_crossrepo_ruby: gem cross-repository links against Ruby",
    "crossrepo.go_accuracy": "bench_crossrepo_go: Go module links against the Go type checker",
    "xrepo.push_ab": "bench_xrepo_push_ab: a push, its link and re-link, this code and a baseline",
    "job.ab": "bench_job_ab: a first index and a one-function push, this code and a baseline",
    "first_answer.ab": "bench_first_answer: a first index's first answer and full time, two codes",
    "big.size": "bench_big: a big repository's first answer, push mid-embedding, full, RSS",
    "roles": "bench_roles: one worker process of one role until idle, its wall and peak RSS",
    "relink.scale": "bench_relink_scale: a re-link against a full link as dependents grow",
    "resolve.ab": "bench_resolve_ab: a full resolve of one tree by this code and a baseline's",
    "delta.step": "bench_delta: the first publish (step 0) or one delta",
    "sharedelta.grow": "bench_sharedelta: host A adds files to the repository (one publish)",
    "sharedelta.bytes": "bench_sharedelta: the published state's bytes in the graph",
    "sharedelta.read": "bench_sharedelta: reading every file's bundle digest (repeated)",
    "sharedelta.one_file": "bench_sharedelta: a one-file change published by host B or A",
    "coldhost.first": "bench_coldhost: host A's first index of the repository (stand-in vectors)",
    "coldhost.round": "bench_coldhost: one one-file push on the cold or the warm host, by phase",
    "coldhost.summary": "bench_coldhost: whole job median, cold host / warm host, same run",
    "coldhost.disk": "bench_coldhost: the warm host's cache entries of the repository, bytes",
    "queue.summary": "bench_queue: throughput and latency against one Bolt round trip",
    "lanes.mode": "bench_lanes: the small pushes' push-to-searchable under one pair of lanes",
    "lanes.round": "bench_lanes: one round of small pushes while a real first index runs",
    "lanes.summary": "bench_lanes: p95 with both workers any / with any + small, same run",
    "quickstart.run": "bench_quickstart: ./dev quickstart from a clean clone, HOME and state",
    "quickstart.ratio": "bench_quickstart: wall time of an installer / the first one, same run",
    "reuse.repo": "bench_reuse: the repository, its fork's changes and the model",
    "reuse.run": "bench_reuse: the first index of the origin or of the fork",
    "reuse.summary": "bench_reuse: the fork's share of vectors from the store, embed ratio",
    "firstindex.repo": "bench_firstindex: the repository every tool indexed, and the load",
    "firstindex.run": "bench_firstindex: one tool's whole first index (wall, peak RSS, phases)",
    "firstindex.summary": "bench_firstindex: torch / default and semgraph / CodeGraphContext",
    "webhook.burst": "bench_webhook: one measured burst of deliveries",
    "webhook.first_index": "bench_webhook: the baseline index through the webhook",
    "webhook.round": "bench_webhook: one push-to-searchable round",
    "webhook.push": "bench_webhook: the push-to-searchable summary over the rounds",
    "retrieval.corpus": "bench_retrieval: one evaluation's (or outside repository's) corpus",
    "retrieval.model": "bench_retrieval: the embedding model evaluated",
    "retrieval.eval": "bench_retrieval: recall@5 and MRR@10 of one mode on one slice",
    "search.latency": "bench_search_latency: p50/p95 of GET/POST /search, per query kind and mode",
    "search.latency_index": "bench_search_latency --repo: the existing index it queries (chunks)",
    "retrieval.bootstrap": "bench_retrieval: hybrid minus the best single retriever, 95 % CI",
    "mcp.tool": "bench_mcp: one tool's latency (p50/p99) and largest answer in tokens",
    "mcp.largest": "bench_mcp: one answer asked for to be as large as possible (tokens)",
    "console.page": "bench_console: one page's p50/p95 time and size, and its baseline's",
    "accuracy.repo": "bench_accuracy: one repository's call resolution against its oracle",
    "accuracy.tier": "bench_accuracy: one tier's edges of one repository against the oracle",
    "cli.command": "bench_cli: one command line's process wall time (median of the repeats)",
    "cli.summary": "bench_cli: the python -c pass baseline of the same run, and the load",
    "pushphases.first": "bench_pushphases: the first index of the repository (stand-in vectors)",
    "pushphases.round": "bench_pushphases: one one-file push of one variant, phase by phase",
    "pushphases.parse": "bench_pushphases --steps: the parse phase alone, every file unchanged",
    "pushphases.staging_read": "bench_pushphases --steps: the staging index's read of one file",
    "pushphases.summary": "bench_pushphases: one variant's job p50/p95 over its rounds",
    "replay.repo": "bench_replay: the repository replayed, its start and last commit, the load",
    "replay.reset": "bench_replay: what an earlier replay of the repository left, removed",
    "replay.step": "bench_replay: one push (step 0: the first index) through the job, checked",
    "replay.parity": "bench_replay: semgraph check --graph-parity after the last push",
    "replay.summary": "bench_replay: p50/p95 per push (job, resolve phase), parity failures",
    "backlog.source": "bench_backlog: one repository of the backlog (registry, version, files)",
    "backlog.job": "bench_backlog: one repository's first index in one run (waits, phases)",
    "backlog.mode": "bench_backlog: one run (1 or 2 workers): wall, p50/p95, RSS, CPU, limit",
    "backlog.summary": "bench_backlog: wall time with 2 workers / with 1 worker, same run",
    "accuracy.misses": "bench_accuracy: the oracle-resolved call sites one repository missed",
    "accuracy.declarations": (
        "bench_accuracy: the call sites scip-typescript resolves only to a declaration"
    ),
    "localize.repo": "eval_localize: one repository and the commits chosen from it",
    "localize.push": "eval_localize: the push to a chosen commit's parent (job seconds)",
    "localize.eval": "eval_localize: one commit, text and method: first answer file/function rank",
    "localize.summary": "eval_localize: file Acc@1/3/5/10, function Acc@5/10 per half/text/method",
    "models.run": "bench_models: one model's embed phase on one backend (chunks/s, peak RSS)",
    "models.best": "bench_models: each model's best turn and its chunks/s / the base model's",
    "localize.latency": "bench_localize_latency: p50/p95 of localize and search on one index",
}


def line(record: str, **fields: Any) -> str:
    """One record as its JSON line (the ``record`` key first, then the fields in order)."""
    if record not in RECORDS:
        raise ValueError(f"unknown record kind {record!r}")
    return json.dumps({RECORD: record, **fields})


def emit(record: str, **fields: Any) -> None:
    """Print one record (flushed: a run cut short keeps what it measured)."""
    print(line(record, **fields), flush=True)


def json_lines(out: str) -> list[dict[str, Any]]:
    """Every JSON object printed on a line of its own, in the order printed (records, and
    the plain JSON lines some benchmarks print instead)."""
    rows = []
    for text in out.splitlines():
        text = text.strip()
        if not (text.startswith("{") and text.endswith("}")):
            continue
        try:
            row = json.loads(text)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def read(out: str, record: str) -> list[dict[str, Any]]:
    """Every record of kind ``record`` in a benchmark's output, in the order printed."""
    return [row for row in json_lines(out) if row.get(RECORD) == record]
