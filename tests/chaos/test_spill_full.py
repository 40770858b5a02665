"""The spill cannot be written: the worker process runs under a file-size limit
(RLIMIT_FSIZE) smaller than the job's spill, as a full dedicated filesystem would be.

Invariants: the job fails with a clear error naming the spill and the cause; nothing is left
behind (no spill, no workspace under the state dir's ``jobs/``, no staging index); the live
graph and alias still name the previous run; the run is recorded ``failed``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from semgraph.indexer.sources import repo_key_for
from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore
from tests.chaos.conftest import Chaos
from tests.chaos.state import first_index, graph_repo, index_names, job_dirs, live_run
from tests.repos import commit, make_repo

pytestmark = pytest.mark.chaos

LIMIT_BYTES = 256 * 1024


def _module(i: int) -> str:
    """~12 KB of Python: every file stays far below the limit, the spill does not."""
    body = "".join(
        f"def function_{i}_{n}(value):\n    '''Step {n} of module {i}.'''\n"
        f"    return value * {n} + {i}\n\n\n"
        for n in range(150)
    )
    return f'"""Generated module {i}."""\n\n\n{body}'


def test_spill_directory_full(chaos: Chaos, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/first.py": "X = 1\n"})
    key = repo_key_for(str(repo))
    old_run = first_index(chaos, repo)
    old_indexes = index_names(chaos)
    files: dict[str, str | bytes | None] = {f"pkg/gen{i}.py": _module(i) for i in range(40)}
    assert max(len(v) for v in files.values() if isinstance(v, str)) < LIMIT_BYTES // 8
    new_commit = commit(repo, files)
    store = JobStore(chaos.graph, chaos.settings.model_copy(update={"job_max_attempts": 1}))
    jid = store.enqueue(
        key, now=time.time(), kind="reindex", commit=new_commit, args={"source": str(repo)}
    ).job_id

    worker = chaos.start_worker(
        "--once",
        env={"SEMGRAPH_SPILL_COMPRESSION": "none"},
        max_file_bytes=LIMIT_BYTES,
    )
    code, out = chaos.finish(worker)
    assert code == 0, out
    job = store.get(jid)
    assert job is not None and job.status is JobStatus.FAILED, out
    assert job.last_error is not None
    assert job.last_error.startswith("SpillError: cannot write spill"), job.last_error
    assert "File too large" in job.last_error, job.last_error
    assert job_dirs(chaos) == []  # no spill, no workspace left behind
    assert index_names(chaos) == old_indexes  # no staging index left behind
    assert graph_repo(chaos, key)["run_id"] == old_run and live_run(chaos, key) == old_run
    runs = chaos.graph.query(
        "runs", "MATCH (r:IndexRun {job_id: $id}) RETURN r.status AS s", id=jid
    )
    assert runs == [{"s": "failed"}]
