"""memory: RSS readings and malloc_trim."""

from __future__ import annotations

import sys

from semgraph.memory import malloc_trim, peak_rss_bytes, rss_bytes


def test_rss_grows_with_allocation_and_is_bounded_by_peak() -> None:
    before = rss_bytes()
    block = bytearray(64 * 1024 * 1024)
    block[::4096] = b"x" * len(block[::4096])  # touch every page
    during = rss_bytes()
    assert during - before >= 48 * 1024 * 1024
    assert peak_rss_bytes() >= during * 0.95  # ru_maxrss is updated lazily by the kernel
    del block


def test_malloc_trim_runs_on_glibc() -> None:
    assert malloc_trim() is sys.platform.startswith("linux")
