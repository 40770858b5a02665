"""A push's publish, link and re-link with this tree's code and a baseline's, in one run
(what a change to the cross-repository link costs the push):

    python -m bench.push.bench_xrepo_push_ab --baseline COMMIT [--rounds 5]

Each round, each code (the baseline is a ``git worktree`` of ``COMMIT``; the two take turns,
the first alternating) runs in a fresh process against the configured graph server: an empty
graph, click 8.1.7, itsdangerous 2.2.0 and flask 3.0.3 from the cross-repository corpus
indexed and linked, then three one-file delta pushes of flask (a dependent: its publish
links its sites) and three of click (a library flask links into: its publish records what
changed, and its dependents are re-linked after it). Prints one ``xrepo.push_ab`` record per
round and code: the medians of the publish transaction, the link's share of it, and the
re-link after it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from bench.harness.baseline import baseline_tree, turns
from bench.harness.records import emit

ROOT = Path(__file__).resolve().parents[2]
_RUN = r"""
import json, statistics, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])  # this tree's bench helpers and corpus (not the code measured)
from bench.accuracy.bench_crossrepo import _publish, _repo, index_corpus
from semgraph.config import load_settings
from semgraph.db import connect_graph
from semgraph.xrepo.relink import relink_dependents
settings, tmp, out = load_settings(), Path(tempfile.mkdtemp()), {}
with connect_graph(settings) as g:
    roots, _ = index_corpus(g, settings, tmp, ("click", "itsdangerous", "flask"))
    for name, rel in (("flask", "src/flask/helpers.py"), ("click", "src/click/utils.py")):
        tx, link, relink, f = [], [], [], roots[name] / rel
        for n in range(3):
            f.write_text(f.read_text() + f"\n\ndef _ab_added_{n}():\n    return {n}\n")
            st = _publish(g, settings, tmp, roots[name], name, _repo(roots[name], {}))
            tx.append(st.tx_duration_s)
            link.append(st.xrepo_s)
            began = time.monotonic()
            relink_dependents(g, name)
            relink.append(time.monotonic() - began)
        out[name] = {k: round(statistics.median(v) * 1000, 1)
                     for k, v in (("publish_ms", tx), ("link_ms", link), ("relink_ms", relink))}
print(json.dumps(out))
"""


def _measure(code: Path) -> dict[str, dict[str, float]]:
    env = {**os.environ, "PYTHONPATH": str(code / "src")}
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(ROOT)], env=env, check=True, capture_output=True, text=True
    )
    found: dict[str, dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--baseline", required=True, help="the commit to compare against")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    with baseline_tree(args.baseline, "semgraph-bench-push-ab-") as (_, base):
        for r in range(args.rounds):
            for code, path in turns(r, base):
                found = _measure(path)
                print(f"round {r + 1}/{args.rounds} {code}: {found}", flush=True)
                emit("xrepo.push_ab", code=code, round=r + 1, **found)


if __name__ == "__main__":
    main()
