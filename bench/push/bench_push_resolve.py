"""The job's parse and resolve phases for a one-function push (issue 25), as the reindex job
runs them: ``parse_repository`` through the parse cache, then ``resolvecache.resolve_job``
(the spill decoded, the host's cached resolution patched, or a full resolve), the first
commit resolved fully and kept as the cache, then one statement added to one function.

    python -m bench.push.bench_push_resolve TREE FILE 'def name(self):'

TREE is a work tree (for the issue: sympy at e950d313), FILE a path in it, the last argument
the line after which the statement goes. Prints one JSON line per phase (wall and CPU
seconds, the resolve mode, files resolved again) and the load.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    from semgraph.config import load_settings
    from semgraph.indexer import resolvecache
    from semgraph.indexer.parse import parse_repository
    from semgraph.indexer.parsecache import ParseCache

    source, target, anchor = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    work = Path(tempfile.mkdtemp(prefix="bench-push-resolve-"))
    tree = work / "tree"
    shutil.copytree(source, tree, symlinks=True)
    settings = load_settings(state_dir=work / "state")
    fp = "bench-push-resolve"

    def parse(label: str) -> Path:
        spill = work / f"{label}.spill"
        start = time.perf_counter()
        with ParseCache.for_repo(settings, "bench", fp) as cache:
            parse_repository(settings, tree, spill, cache=cache)
            cache.commit()
        print(
            json.dumps({"run": f"parse-{label}", "wall_s": round(time.perf_counter() - start, 2)})
        )
        return spill

    def resolve(label: str, spill: Path) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        res = resolvecache.resolve_job(
            settings, spill, "bench", work / f"resolve-{label}", fp, force=False
        )
        out = {
            "run": f"resolve-{label}",
            "wall_s": round(time.perf_counter() - wall, 2),
            "cpu_s": round(time.process_time() - cpu, 2),
            **res.incremental,
        }
        res.close()
        resolvecache.keep(settings, "bench", work / f"resolve-{label}" / "symtab.sqlite")
        print(json.dumps(out), flush=True)

    try:
        resolve("first", parse("first"))
        path = tree / target
        text = path.read_text()
        if anchor not in text:
            raise SystemExit(f"{anchor!r} is not in {target}")
        path.write_text(text.replace(anchor, anchor + "\n        _pushed = 1", 1))
        resolve("push", parse("push"))
        print(json.dumps({"load": round(os.getloadavg()[0], 2)}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
