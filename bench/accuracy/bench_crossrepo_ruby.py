"""Cross-repository links for gems (issue 30) against the Ruby interpreter.

    python -m bench.accuracy.bench_crossrepo_ruby

sinatra 3.0.5, rack-protection 3.0.5 and rack-test 2.0.2, three dependents of rack 2.2.22
(Debian's packages of the gems, ``ops/xrepo-corpus.sh``), each indexed as a repository and
linked as the reindex job does. The oracle is Ruby itself
(``bench/accuracy/ruby_calls.rb``; Debian's ``ruby`` package, installed here when missing): Ruby's
parser (Ripper) finds every call in each dependent whose receiver is a constant path
(``Rack::Utils.escape_html(...)``, ``Rack::Builder.new``), rack is loaded from its ``lib/``,
and the interpreter says where the method the call runs is defined (``source_location``; for
``.new`` the class, ``const_source_location``). An oracle edge is (site path, line, target
file, target line) with the target in rack; ours are the ``XCALLS`` with the same four fields
(the target's ``start_line``). Precision = ours the oracle has / ours; recall = the
oracle's we have / its. The oracle sees only calls on a constant path, as our open sites
do; calls on values of rack's classes (``request.path_info``) are outside both.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEPENDENTS = ("sinatra", "rack-protection", "rack-test")


def ensure_ruby() -> str:
    """The ``ruby`` executable, installed from Debian's packages when missing."""
    found = shutil.which("ruby")
    if found is None:
        print("bench_crossrepo_ruby: installing ruby (apt)", flush=True)
        env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "ruby"], check=True, env=env, capture_output=True
        )
        found = shutil.which("ruby")
    assert found is not None, "ruby is not installed"
    return found


def _counts(name: str, *sets: set[tuple[Any, ...]]) -> list[int]:
    """[ours, oracle, agreed] of one dependent."""
    return [len([e for e in found if e[0] == name]) for found in sets]


def accuracy(graph: Any, settings: Any, tmp: Path) -> dict[str, Any]:
    from bench.accuracy.bench_crossrepo import index_corpus, scored

    ruby = ensure_ruby()
    roots, index_s = index_corpus(graph, settings, tmp, (*DEPENDENTS, "rack"))
    ours = {
        (r["repo"], r["sp"], r["line"], r["tp"], r["tl"])
        for r in graph.query(
            "xcalls",
            "MATCH (a:Symbol)-[e:XCALLS]->(b:Symbol {repo: 'rack'}) RETURN a.repo AS repo, "
            "a.path AS sp, e.line AS line, b.path AS tp, b.start_line AS tl",
        )
    }
    began = time.monotonic()
    rows = []
    for name in DEPENDENTS:
        out = tmp / f"{name}.jsonl"
        script = str(ROOT / "bench" / "accuracy" / "ruby_calls.rb")
        argv = [ruby, script, str(roots[name]), str(roots["rack"]), "rack", str(out)]
        subprocess.run(argv, check=True, capture_output=True)
        rows += [{"repo": name, **json.loads(line)} for line in out.read_text().splitlines()]
    oracle_s = time.monotonic() - began
    key = ("repo", "path", "line", "target", "target_line")
    oracle = {tuple(r[k] for k in key) for r in rows}
    hit = ours & oracle
    result = {
        "pairs": "sinatra 3.0.5, rack-protection 3.0.5, rack-test 2.0.2 -> rack 2.2.22",
        "per_dependent": {name: _counts(name, ours, oracle, hit) for name in DEPENDENTS},
        **scored(ours, oracle),
        "index_s": round(index_s, 1),
        "oracle_s": round(oracle_s, 1),
        "missed": sorted(
            [r["repo"], r["path"], r["line"], f"{r['receiver']}.{r['name']}", r["target"]]
            for r in rows
            if tuple(r[k] for k in key) not in ours
        )[:40],
    }
    return result


if __name__ == "__main__":
    from bench.accuracy.bench_crossrepo import run_accuracy

    run_accuracy("semgraph-bench-xrepo-ruby-", "crossrepo.ruby_accuracy", accuracy, "gem")
