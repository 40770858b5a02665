"""The full resolve of the same parsed trees by this tree's resolver and by a baseline's,
in one run (what a resolver change costs a first index and a push's fallback):

    python -m bench.firstindex.bench_resolve_ab --baseline COMMIT [--tree NAME=PATH ...]
        [--rounds 2]

Each tree is parsed once by each code's own parser (its spill; the parsed model may differ
between them, issue 44 added the calls' argument counts); the baseline is a ``git worktree``
of ``COMMIT``. The two resolve every spill in turn, ``--rounds``
times, alternating which goes first; each figure is the lowest CPU of three resolves in a
fresh process. Prints one ``resolve.ab`` record per tree and code: CPU, wall, the calls'
classes (equal counts: the change moved no call between classes) and the external sites.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.harness.baseline import baseline_tree, turns
from bench.harness.records import emit

ROOT = Path(__file__).resolve().parents[2]
_RESOLVE = r"""
import json, shutil, sys, time
from pathlib import Path
from semgraph.indexer.spill import SpillReader
from semgraph.resolve.resolver import resolve
spill, out = SpillReader(Path(sys.argv[1])), Path(sys.argv[2])
best = None
for _ in range(3):
    shutil.rmtree(out, ignore_errors=True)
    wall, cpu = time.perf_counter(), time.process_time()
    with resolve(lambda: iter(spill), "ab", out) as res:
        sites = res.table.db.execute("SELECT count(*) FROM external_sites").fetchone()[0]
        calls = res.counts["calls"]
    took = (time.perf_counter() - wall, time.process_time() - cpu)
    best = took if best is None or took[1] < best[1] else best
shutil.rmtree(out, ignore_errors=True)
print(json.dumps({"wall_s": round(best[0], 3), "cpu_s": round(best[1], 3), "sites": sites,
                  "calls": calls}))
"""
_PARSE = r"""
import sys
from pathlib import Path
from semgraph.config import load_settings
from semgraph.indexer.parse import parse_repository
if __name__ == "__main__":
    settings = load_settings(state_dir=Path(sys.argv[3]))
    parse_repository(settings, Path(sys.argv[1]), Path(sys.argv[2]))
"""


def _python(src: Path, code: str, *args: str) -> str:
    env = {"PYTHONPATH": f"{src / 'src'}:{src}", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    script = Path(tempfile.mkdtemp(prefix="ab-")) / "run.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script), *args], env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--baseline", required=True, help="the commit to compare against")
    p.add_argument("--tree", action="append", default=[], help="NAME=PATH of a tree to parse")
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    with baseline_tree(args.baseline, "semgraph-bench-ab-") as (work, base):
        spills: dict[tuple[str, str], Path] = {}
        for item in args.tree:
            name, _, path = item.partition("=")
            for code, src in (("this", ROOT), ("baseline", base)):
                spill = spills[(code, name)] = work / f"{name}-{code}.spill"
                _python(src, _PARSE, path, str(spill), str(work / f"state-{code}"))
            print(f"parsed {name}", flush=True)
        for r in range(args.rounds):
            for code, src in turns(r, base):
                for name in dict.fromkeys(n for _, n in spills):
                    spill = spills[(code, name)]
                    found = json.loads(_python(src, _RESOLVE, str(spill), str(work / "res")))
                    emit("resolve.ab", tree=name, code=code, round=r + 1, **found)


if __name__ == "__main__":
    main()
