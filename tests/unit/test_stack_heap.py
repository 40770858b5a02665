"""The local Neo4j's default heap: a pure rule of the machine's memory and cgroup limit,
fed by readers of /proc/meminfo and the cgroup files that survive hostile contents."""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.config import load_settings
from semgraph.errors import ConfigError
from semgraph.services.bolt import BoltService, running_heap
from semgraph.services.heap import (
    CEILING_MB,
    FALLBACK_MB,
    FLOOR_MB,
    auto_heap_mb,
    cgroup_limit_mb,
    choose_heap,
    mem_total_mb,
    parse_cgroup_limit_mb,
    parse_meminfo_total_mb,
    reserve_mb,
    tx_memory_mb,
)

GIB = 1024


@pytest.mark.parametrize(
    ("memory_mb", "heap_mb"),
    [
        (24_105, 10_240),  # this build machine (24 GiB): half of 24,105 - 3,584, 256 MiB steps
        (16 * GIB, 6_400),
        (8 * GIB, 2_304),
        (4 * GIB, FLOOR_MB),  # nothing left after the reserve: the floor
        (2 * GIB, FLOOR_MB),  # a quarter of 2 GiB is the floor too
        (1 * GIB, 256),  # tiny: never more than a quarter of memory
        (300, 128),  # tinier still: the smallest heap the launcher takes
        (1, 128),
        (128 * GIB, CEILING_MB),  # large: capped below compressed-oops' 32 GiB
        (4 * 1024 * GIB, CEILING_MB),
    ],
)
def test_the_rule_halves_what_the_reserve_leaves(memory_mb: int, heap_mb: int) -> None:
    heap = auto_heap_mb(memory_mb)
    assert heap == heap_mb
    assert heap % 128 == 0 and 128 <= heap <= CEILING_MB
    if memory_mb < 2 * GIB:
        assert heap <= max(memory_mb // 4, 128)


def test_the_rule_grows_with_memory_and_leaves_room_for_the_rest() -> None:
    heaps = [auto_heap_mb(m) for m in range(256, 200 * GIB, 97)]
    assert heaps == sorted(heaps)
    for memory in range(6 * GIB, 60 * GIB, 1013):
        # Neo4j's heap, Elasticsearch, the worker and the OS fit, with half the rest to spare
        assert auto_heap_mb(memory) + reserve_mb(512) <= memory


def test_a_lower_cgroup_limit_wins_and_a_higher_one_is_ignored() -> None:
    assert auto_heap_mb(24 * GIB, 8 * GIB) == auto_heap_mb(8 * GIB)
    assert auto_heap_mb(8 * GIB, 64 * GIB) == auto_heap_mb(8 * GIB)
    assert auto_heap_mb(None, 8 * GIB) == auto_heap_mb(8 * GIB)  # no /proc/meminfo
    assert auto_heap_mb(8 * GIB, 0) == auto_heap_mb(8 * GIB)
    assert auto_heap_mb(-5, -1) == FALLBACK_MB


def test_a_larger_elasticsearch_heap_leaves_less_for_neo4j() -> None:
    assert auto_heap_mb(16 * GIB, es_heap_mb=1024) == auto_heap_mb(16 * GIB) - 256


def test_unknown_memory_falls_back_to_the_old_default() -> None:
    assert auto_heap_mb(None) == auto_heap_mb(None, None) == FALLBACK_MB == 1024


@pytest.mark.parametrize(
    ("text", "mb"),
    [
        ("MemTotal:       24684084 kB\nMemFree: 1 kB\n", 24_105),
        ("MemFree: 5 kB\nMemTotal: 2048 kB", 2),
        ("MemTotal: 2048", 2),
        ("", None),
        ("MemFree: 1000000 kB\n", None),
        ("MemTotal: lots kB\n", None),
        ("MemTotal: -4096 kB\n", None),
        ("MemTotal: 4096 MB\n", None),  # not the kernel's unit: refuse to guess
        ("MemTotal:\n", None),
        ("MemTotal: 0 kB\n", None),
        ("MemTotal: 1023 kB\n", None),
        ("\x00\xff garbage", None),
    ],
)
def test_meminfo_is_read_or_refused(text: str, mb: int | None) -> None:
    assert parse_meminfo_total_mb(text) == mb


@pytest.mark.parametrize(
    ("text", "mb"),
    [
        ("8589934592\n", 8 * GIB),
        ("max\n", None),  # cgroup v2: no limit
        ("9223372036854771712\n", None),  # cgroup v1: no limit
        ("1\n", 1),
        ("0\n", None),
        ("-1\n", None),
        ("", None),
        ("12k\n", None),
        ("8589934592 max", None),
    ],
)
def test_cgroup_limits_are_read_or_refused(text: str, mb: int | None) -> None:
    assert parse_cgroup_limit_mb(text) == mb


def _tree(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "proc", tmp_path / "cg"


def test_the_cgroup_of_this_process_is_found_in_v2_and_v1_layouts(tmp_path: Path) -> None:
    proc, cg = _tree(
        tmp_path,
        {
            "proc/self/cgroup": "4:memory:/box/inner\n0::/slice/app\n1:cpu:/x\n",
            "cg/memory.max": "max\n",
            "cg/slice/app/memory.max": str(6 * GIB * 1024 * 1024),
            "cg/memory/memory.limit_in_bytes": "9223372036854771712\n",
            "cg/memory/box/inner/memory.limit_in_bytes": str(5 * GIB * 1024 * 1024),
        },
    )
    assert cgroup_limit_mb(proc, cg) == 5 * GIB  # the lowest of the limits found


def test_no_cgroup_files_or_hostile_paths_mean_no_limit(tmp_path: Path) -> None:
    proc, cg = _tree(
        tmp_path,
        {
            "proc/self/cgroup": "0::/../../etc\nnonsense\n4:memory\n",
            "etc/memory.max": "1048576",  # outside the cgroup tree: never read
        },
    )
    assert cgroup_limit_mb(proc, cg) is None
    assert cgroup_limit_mb(tmp_path / "nope", tmp_path / "nope") is None


def test_missing_meminfo_reads_as_unknown(tmp_path: Path) -> None:
    assert mem_total_mb(tmp_path) is None
    (tmp_path / "meminfo").write_text("MemTotal: 8388608 kB\n")
    assert mem_total_mb(tmp_path) == 8 * GIB


def test_explicit_setting_wins_over_the_machine(tmp_path: Path) -> None:
    proc, cg = _tree(tmp_path, {"proc/meminfo": "MemTotal: 8388608 kB\n"})
    chosen = choose_heap(load_settings(state_dir=tmp_path, neo4j_heap_mb=3000), proc, cg)
    assert (chosen.heap_mb, chosen.explicit, chosen.tx_memory_mb) == (3000, True, 2100)
    assert "SEMGRAPH_NEO4J_HEAP_MB" in chosen.describe()


def test_default_is_auto_from_meminfo_and_cgroup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SEMGRAPH_NEO4J_HEAP_MB", raising=False)  # the test session pins it
    monkeypatch.delenv("SEMGRAPH_ES_HEAP_MB", raising=False)  # the rule reserves its heap
    settings = load_settings(state_dir=tmp_path)
    assert settings.neo4j_heap_mb == 0
    proc, cg = _tree(
        tmp_path,
        {
            "proc/meminfo": "MemTotal: 25165824 kB\n",  # 24 GiB
            "proc/self/cgroup": "0::/\n",
            "cg/memory.max": str(8 * GIB * 1024 * 1024),
        },
    )
    chosen = choose_heap(settings, proc, cg)
    assert not chosen.explicit and chosen.cgroup_limited
    assert chosen.heap_mb == auto_heap_mb(8 * GIB) == 2304
    assert chosen.describe() == (
        "heap 2304 MiB (auto: half of 8192 MiB cgroup limit less the reserve), "
        "transactions capped at 1612 MiB"
    )
    bare = choose_heap(settings, tmp_path / "none", tmp_path / "none")
    assert bare.heap_mb == FALLBACK_MB and "memory unknown" in bare.describe()


def test_the_server_starts_with_the_chosen_heap(tmp_path: Path) -> None:
    settings = load_settings(state_dir=tmp_path)
    service = BoltService(settings)
    heap = service.heap().heap_mb
    argv, _, _ = service.launch_spec()
    assert f"-Xmx{heap}m" in argv
    assert argv[-1] == f"db.memory.transaction.total.max={tx_memory_mb(heap)}m"
    assert running_heap(" ".join(argv)) == (heap, tx_memory_mb(heap))


def test_status_of_a_stopped_server_says_what_up_would_take(tmp_path: Path) -> None:
    state = BoltService(load_settings(state_dir=tmp_path, neo4j_heap_mb=2048)).state()
    assert not state.running
    assert (state.heap_mb, state.tx_memory_mb) == (2048, 1433)
    assert state.detail.startswith("heap 2048 MiB (SEMGRAPH_NEO4J_HEAP_MB)")


@pytest.mark.parametrize(
    ("cmdline", "found"),
    [
        ("java -Xmx1024m -cp x Bolt db.memory.transaction.total.max=716m", (1024, 716)),
        ("java -Xmx1024m -cp x Bolt db.memory.transaction.total.max=10m", (1024, 10)),
        ("java -Xmx2048m -cp x Bolt", (2048, 1433)),
        ("java -Xmx2g -cp x Bolt", None),
        ("", None),
    ],
)
def test_the_running_heap_is_read_from_the_command_line(
    cmdline: str, found: tuple[int, int] | None
) -> None:
    assert running_heap(cmdline) == found


@pytest.mark.parametrize("value", [0, 128, 262_144])
def test_heap_setting_accepts_auto_and_sizes(tmp_path: Path, value: int) -> None:
    assert load_settings(state_dir=tmp_path, neo4j_heap_mb=value).neo4j_heap_mb == value


@pytest.mark.parametrize("value", [1, 64, 127, -1, 262_145])
def test_heap_setting_refuses_what_is_neither(tmp_path: Path, value: int) -> None:
    with pytest.raises(ConfigError, match="SEMGRAPH_NEO4J_HEAP_MB"):
        load_settings(state_dir=tmp_path, neo4j_heap_mb=value)
