"""Run every benchmark and write ``bench/RESULTS.md``.

    python -m bench.run_all [--quick] [--only NAME,...] [--out bench/RESULTS.md] [--from-logs]

Each benchmark runs in its own subprocess against the stack named by ``SEMGRAPH_*`` (start a
private one: ``SEMGRAPH_STATE_DIR=... SEMGRAPH_BOLT_URI=... SEMGRAPH_ES_URL=...
semgraph services up``); its full output is kept in ``bench/results/NAME.log`` and its figures
are read from the JSON lines it prints (``bench.harness.records``) into one table: value, the
baseline measured in the same run, the ratio, the target (met, **missed**, or **not measured**
with the reason) and the command that reproduces it, with the 1-minute load average when it
started.
The report starts with the machine (cores, RAM, CPU model, load, Neo4j/Elasticsearch/Python
versions). The side-by-side peers section is read from ``bench/peers.json``, written by
``python -m bench.firstindex.peers`` (not run here: it installs the peers from PyPI).

``--from-logs`` re-renders the report from ``bench/results/NAME.log`` (NAME as in ``BENCHES``)
without running anything. A log may be the one this script writes, or one kept by hand: one or
more ``$ python -m bench.bench_NAME ARGS`` lines, each followed by that run's output, with
``#`` comment lines (``# rc N``, an ``uptime`` line for the load) and ``##``/``###`` headings
that name the runs, a command perhaps prefixed by environment assignments and ending in a
``# label`` comment (``# before, round 1``); every run in the file becomes its own section of the
report. A benchmark may keep runs in more files (``Bench.logs``: ``replay-*.log``).

The default run uses the sizes the issue asks for (whole job at 1k/5k/20k files, graph at
1k/10k/20k files, a 5,000-file repository behind the webhook); on a loaded 2-core machine it
takes hours, almost all of it CPU embedding. ``--quick`` takes minutes (small repositories;
figures marked as quick).

The parts, in ``bench.harness``: ``benches`` (what runs, with which arguments), ``runner`` (a
run and its log, the machine), ``logs`` (reading kept logs), ``figures`` and ``figures.*`` (a
run's rows, built from its JSON lines), ``render`` (the report).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path

from bench.harness.benches import BENCHES
from bench.harness.logs import outcomes_from_log
from bench.harness.render import render, render_peers
from bench.harness.runner import ROOT, machine, run_bench


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated benchmark names")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md")
    parser.add_argument("--peers", type=Path, default=ROOT / "bench" / "peers.json")
    parser.add_argument("--logs", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument(
        "--from-logs", action="store_true", help="re-render from bench/results/*.log, run nothing"
    )
    args = parser.parse_args(argv)
    wanted = {s for s in args.only.split(",") if s}
    unknown = wanted - {b.name for b in BENCHES}
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    logs = args.logs
    logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if args.from_logs:  # the machine of the run, never the one re-rendering it
        try:
            info = json.loads((logs / "machine.json").read_text())
        except (OSError, ValueError) as exc:
            info = {"machine": f"not recorded: no readable machine.json in {logs} ({exc})"}
    else:
        info = {"run started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **machine()}
        (logs / "machine.json").write_text(json.dumps(info, indent=1) + "\n")
    selected = [b for b in BENCHES if not wanted or b.name in wanted]
    if args.quick and not args.from_logs:  # a benchmark too slow for --quick runs when named
        selected = [b for b in selected if b.in_quick or b.name in wanted]
    if args.from_logs:
        outcomes = [o for b in selected for o in outcomes_from_log(b, logs)]
        args.quick = any(o.args == o.bench.quick and o.args != o.bench.default for o in outcomes)
        total_s = sum(o.seconds or 0.0 for o in outcomes)
    else:
        outcomes = [run_bench(b, args.quick, logs) for b in selected]
        total_s = time.monotonic() - started
    shown = str(logs.relative_to(ROOT)) if logs.is_relative_to(ROOT) else str(logs)
    peers = render_peers(args.peers)
    report = render(info, outcomes, args.quick, total_s, peers, shown, from_logs=args.from_logs)
    args.out.write_text(report)
    print(f"[run_all] wrote {args.out} in {(time.monotonic() - started) / 60:.1f} min")
    failed = [o.bench.name for o in outcomes if o.rc or o.error]
    if failed:
        print(f"[run_all] not measured or failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
