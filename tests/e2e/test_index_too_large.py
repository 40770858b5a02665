"""``semgraph index`` on a repository whose graph the server refuses as too large for one
transaction: ONE line with the repository, its row count and the limit, exit 1, no traceback.

The refusal comes from a real server: a dedicated Bolt server (the local stack's launcher)
whose cap on all transactions, ``db.memory.transaction.total.max`` (the setting the local
stack derives from its heap), is lowered to 10 MiB, so a small repository exceeds it. The
CLI runs as a subprocess against that server and the session's Elasticsearch.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from tests.bolt_servers import bolt_server
from tests.repos import make_repo

pytestmark = pytest.mark.e2e
REPO_ROOT = Path(__file__).resolve().parents[2]
CAP = "10m"  # the smallest total cap Neo4j accepts is 10 MiB
CAP_TEXT = "Neo4j db.memory.transaction.total.max = 10 MiB"


@pytest.fixture(scope="module")
def capped_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """A Bolt server whose open transactions may hold at most ``CAP`` together."""
    with bolt_server(
        tmp_path_factory.mktemp("capped-bolt"), f"db.memory.transaction.total.max={CAP}", "capped"
    ) as settings:
        yield settings


def dense_calls_repo(root: Path, n_files: int = 8, n_functions: int = 40) -> Path:
    """``n_files`` Python files whose functions each call every other function of their file
    (one line of calls each): few chunks to embed, many call edges to publish."""
    files: dict[str, str | bytes | None] = {}
    for i in range(n_files):
        names = [f"step_{i}_{j}" for j in range(n_functions)]
        body = []
        for name in names:
            calls = "; ".join(f"{other}(x)" for other in names if other != name)
            body += [f"def {name}(x):", f"    {calls}", "    return x", "", ""]
        files[f"dense/mod_{i}.py"] = "\n".join(body)
    return make_repo(root, files)


def _index(
    settings: Settings, repo: Path, *extra_env: tuple[str, str]
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "SEMGRAPH_BOLT_URI": settings.bolt_uri,
        "SEMGRAPH_STATE_DIR": str(settings.state_dir),
        "SEMGRAPH_BACKOFF_BASE_S": "0",
        "SEMGRAPH_EMBEDDING_DEVICE": "cpu",
        "SEMGRAPH_EMBEDDING_MAX_CHARS": "64",  # the graph is the point: embed little
        **dict(extra_env),
    }
    return subprocess.run(
        [sys.executable, "-m", "semgraph.cli", "index", str(repo)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _refusal(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("semgraph index:")]
    assert len(lines) == 1, proc.stderr
    assert not [line for line in proc.stderr.splitlines() if line.startswith("error:")], (
        "the refusal is printed once, not also as a generic error"
    )
    return lines[0]


def _reset(settings: Settings) -> None:
    from semgraph.db import connect_graph

    with connect_graph(settings) as graph:
        graph.query("reset", "MATCH (n) DETACH DELETE n")


def _published(settings: Settings) -> list[dict[str, object]]:
    """What a publish would have committed: code nodes, and a run id on a repository (the
    run record alone MERGEs a bare ``:Repository``)."""
    from semgraph.db import connect_graph

    with connect_graph(settings) as graph:
        return graph.query(
            "published",
            "MATCH (n) WHERE n:File OR n:Symbol OR n:ExternalModule "
            "OR (n:Repository AND n.run_id IS NOT NULL) RETURN labels(n) AS labels LIMIT 3",
        )


def test_a_refused_publish_is_one_line_with_rows_and_limit(
    es: Elasticsearch, capped_server: Settings, tmp_path: Path
) -> None:
    repo = dense_calls_repo(tmp_path / "dense")
    _reset(capped_server)

    queued = _refusal(_index(capped_server, repo))
    prefix = "semgraph index: the graph of "
    assert queued.startswith(prefix), queued
    repo_key, rest = queued[len(prefix) :].split(" (", 1)
    counts = rest.split(" written before refusal)", 1)[0]
    total, written = (int(n.replace(",", "")) for n in counts.split(" rows; "))
    assert total > 12_480, queued  # the model: every call edge and more
    assert 1_000 < written < 12_480, queued  # refused before all 12,480 call edges went in
    assert f"exceeds {CAP_TEXT}; raise SEMGRAPH_NEO4J_HEAP_MB" in queued, queued
    assert "stays queued for retry, attempt 1/" in queued, queued
    assert _published(capped_server) == [], "nothing may be committed"

    # the last allowed attempt: the job is failed, and the same line says so without a retry
    _reset(capped_server)
    failed = _refusal(_index(capped_server, repo, ("SEMGRAPH_JOB_MAX_ATTEMPTS", "1")))
    assert failed.startswith(f"{prefix}{repo_key} (") and CAP_TEXT in failed, failed
    assert "queued" not in failed, failed
    assert _published(capped_server) == []
