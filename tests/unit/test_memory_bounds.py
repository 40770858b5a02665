"""memory: the pinned mmap threshold (in fresh processes) and the per-phase RSS sampler."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from semgraph.errors import ConfigError
from semgraph.memory import RssSampler, pin_mmap_threshold, rss_bytes

MIB = 1024 * 1024

# After a 30 MiB mmapped block is freed, glibc's sliding threshold rises to 30 MiB (and its
# trim threshold to twice that), so a 24 MiB block comes from the heap and stays resident
# once freed. Pinned at 128 KiB, the 24 MiB block is its own mapping and goes back on free.
_PROBE = textwrap.dedent(
    """
    import sys
    from semgraph.memory import pin_mmap_threshold, rss_bytes
    if sys.argv[1] == "pin":
        assert pin_mmap_threshold(131072)
    def touched(n):
        block = bytearray(n)
        block[::4096] = b"x" * len(block[::4096])
        return block
    big = touched(30 << 20)
    del big
    mid = touched(24 << 20)
    keep = [bytearray(1000) for _ in range(100)]  # small live heap blocks
    before = rss_bytes()
    del mid
    print(before - rss_bytes())
    """
)


def _released(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc mallopt (Linux only)")
def test_pinned_threshold_returns_freed_large_blocks_to_the_os() -> None:
    assert _released("pin") >= 20 * MIB
    assert _released("default") < 4 * MIB  # glibc's sliding threshold keeps it resident


def test_pin_refuses_nonsense_without_calling_glibc() -> None:
    assert pin_mmap_threshold(0) is False
    assert pin_mmap_threshold(-5) is False


def test_sampler_keeps_the_peak_of_each_phase() -> None:
    with RssSampler(interval_s=0.001, first_phase="setup") as sampler:
        base = rss_bytes()
        sampler.mark("big")
        block = bytearray(48 * MIB)
        block[::4096] = b"x" * len(block[::4096])
        sampler.sample()
        del block
        sampler.mark("small")
    peaks = sampler.peaks
    assert list(peaks) == ["setup", "big", "small"]
    assert peaks["big"] - base >= 40 * MIB
    assert peaks["setup"] < peaks["big"]


def test_sampler_stop_is_idempotent_and_interval_must_be_positive() -> None:
    sampler = RssSampler().start()
    first = sampler.stop()
    assert sampler.stop().keys() == first.keys() == {"start"}
    with pytest.raises(ConfigError, match="positive"):
        RssSampler(interval_s=0)
