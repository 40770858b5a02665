"""The local Bolt server's command line: the heap, and the cap on transaction memory that
turns an oversized publish into a clear refusal instead of a JVM stuck in full GCs."""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.config import load_settings
from semgraph.errors import ConfigError
from semgraph.services.bolt import BoltService
from semgraph.services.heap import tx_memory_mb


@pytest.mark.parametrize(("heap", "cap"), [(128, 89), (1024, 716), (8192, 5734), (12288, 8601)])
def test_transaction_memory_is_capped_below_the_heap(tmp_path: Path, heap: int, cap: int) -> None:
    settings = load_settings(state_dir=tmp_path, neo4j_heap_mb=heap)
    argv, _, _ = BoltService(settings).launch_spec()
    assert f"-Xmx{heap}m" in argv
    assert argv[-1] == f"db.memory.transaction.total.max={cap}m"
    assert tx_memory_mb(heap) == cap < heap


@pytest.mark.parametrize(
    ("gc", "flag"), [("parallel", "-XX:+UseParallelGC"), ("g1", "-XX:+UseG1GC")]
)
def test_the_collector_is_chosen_by_settings(tmp_path: Path, gc: str, flag: str) -> None:
    argv, _, _ = BoltService(load_settings(state_dir=tmp_path, neo4j_gc=gc)).launch_spec()
    assert flag in argv
    assert [a for a in argv if a.startswith("-XX:+Use") and a.endswith("GC")] == [flag]


def test_the_default_collector_is_parallel(tmp_path: Path) -> None:
    argv, _, _ = BoltService(load_settings(state_dir=tmp_path)).launch_spec()
    assert "-XX:+UseParallelGC" in argv


@pytest.mark.parametrize(
    "bad", [{"neo4j_gc": "zgc"}, {"neo4j_gc": ""}, {"neo4j_heap_mb": 64}, {"neo4j_heap_mb": 10**7}]
)
def test_bad_server_memory_settings_are_refused(tmp_path: Path, bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=f"SEMGRAPH_{next(iter(bad)).upper()}"):
        load_settings(state_dir=tmp_path, **bad)
