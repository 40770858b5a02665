"""The local Bolt server's command line: the heap, and the cap on transaction memory that
turns an oversized publish into a clear refusal instead of a JVM stuck in full GCs."""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.config import load_settings
from semgraph.services.stack import BoltService, tx_memory_mb


@pytest.mark.parametrize(("heap", "cap"), [(128, 89), (1024, 716), (8192, 5734)])
def test_transaction_memory_is_capped_below_the_heap(tmp_path: Path, heap: int, cap: int) -> None:
    settings = load_settings(state_dir=tmp_path, neo4j_heap_mb=heap)
    argv, _, _ = BoltService(settings).launch_spec()
    assert f"-Xmx{heap}m" in argv
    assert argv[-1] == f"db.memory.transaction.total.max={cap}m"
    assert tx_memory_mb(heap) == cap < heap
