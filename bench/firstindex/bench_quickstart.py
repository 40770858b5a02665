"""A newcomer's first command on a fresh machine (issue 27): ``./dev quickstart`` from a clean
clone, a clean ``HOME`` (no pip, uv or Maven caches, no virtual environment) and a clean state
directory, on ports of its own; wall time per phase (the ``quickstart:`` lines ``./dev``
prints: install, embedding model ready, services up, indexed, answered) and in all.

    python -m bench.firstindex.bench_quickstart [--installers uv,pip]
        [--work /var/tmp/bench-quickstart]

One run per installer (``SEMGRAPH_INSTALLER``), one after the other, each from nothing: the
first is the baseline of the ratio. Target: <= 5 min. Downloads (PyPI, Maven Central) are
part of the figure, as they are of a newcomer's wait; the machine's load is printed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from bench.harness.records import emit

ROOT = Path(__file__).resolve().parents[2]
PHASE = re.compile(r"^quickstart: (?P<what>.+) in (?P<s>\d+) s \((?P<total>\d+) s in all\)$")
PORTS = {"SEMGRAPH_BOLT_URI": "bolt://127.0.0.1:7787", "SEMGRAPH_ES_URL": "http://127.0.0.1:9300"}


def run(installer: str, work: Path) -> dict[str, object]:
    base = work / installer
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    clone = base / "semgraph"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {
        # the caller's PATH without any virtual environment on it (a newcomer has none)
        "PATH": os.pathsep.join(
            p for p in os.environ.get("PATH", "").split(os.pathsep) if "venv" not in p
        ),
        "HOME": str(base / "home"),
        "SEMGRAPH_STATE_DIR": str(base / "state"),
        "SEMGRAPH_INSTALLER": installer,
        "SEMGRAPH_NEO4J_HEAP_MB": "2048",
        "LANG": "C.UTF-8",
        **PORTS,
    }
    (base / "home").mkdir()
    load = os.getloadavg()[0]
    started = time.monotonic()
    with open(base / "quickstart.log", "w") as log:
        proc = subprocess.run(
            ["./dev", "quickstart"], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    wall = time.monotonic() - started
    phases = {}
    for line in (base / "quickstart.log").read_text(errors="replace").splitlines():
        m = PHASE.match(line.strip())
        if m:
            phases[m["what"]] = int(m["s"])
    subprocess.run(
        [str(base / "home/.cache/semgraph/venv/bin/semgraph"), "services", "down"],
        cwd=clone,
        env=env,
        capture_output=True,
        check=False,
    )
    return {
        "installer": installer,
        "rc": proc.returncode,
        "wall_s": round(wall, 1),
        "phases_s": phases,
        "load_1m": round(load, 2),
        "log": str(base / "quickstart.log"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--installers", default="pip,uv")
    parser.add_argument("--work", type=Path, default=Path("/var/tmp/bench-quickstart"))
    args = parser.parse_args()
    results = []
    for installer in args.installers.split(","):
        print(f"quickstart from nothing, installer {installer} ...", flush=True)
        results.append(run(installer, args.work))
        emit("quickstart.run", **results[-1])
    base, *rest = results
    for r in rest:
        if base["rc"] == 0 and r["rc"] == 0:
            ratio = round(float(str(r["wall_s"])) / float(str(base["wall_s"])), 3)
            emit(
                "quickstart.ratio",
                installer=r["installer"],
                baseline=base["installer"],
                ratio=ratio,
                target_s=300,
            )


if __name__ == "__main__":
    main()
