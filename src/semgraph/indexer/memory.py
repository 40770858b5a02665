"""Process memory: resident set size and returning freed heap to the OS.

``malloc_trim(0)`` is called after every job (DESIGN.md data flow, "finally"): CPython and
tree-sitter free memory back to glibc's arenas, which keep it; trimming hands it back so a
long-running worker's RSS reflects its current job, not its largest one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import sys
from functools import cache

_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int:
    """Current resident set size of this process in bytes (peak RSS where /proc is absent)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return peak_rss_bytes()


def peak_rss_bytes() -> int:
    """Peak resident set size of this process over its lifetime, in bytes."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


@cache
def _libc_malloc_trim() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        libc = ctypes.CDLL(name)
        fn = libc.malloc_trim
    except (OSError, AttributeError):  # musl and other libcs have no malloc_trim
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


def malloc_trim() -> bool:
    """Return free heap memory to the OS (glibc ``malloc_trim(0)``).

    Returns True when glibc's malloc_trim ran, False where it is unavailable (a no-op).
    """
    fn = _libc_malloc_trim()
    if fn is None:
        return False
    fn(0)
    return True
