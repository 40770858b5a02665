"""Process memory: resident set size, returning freed heap to the OS, and a per-phase
RSS sampler.

``malloc_trim(0)`` is called after every job (docs/architecture.md, data flow, "Finally") and after
every embedding window: CPython and tree-sitter free memory back to glibc's arenas, which
keep it; trimming hands it back so a long-running worker's RSS reflects its current work,
not its largest one.

:func:`pin_mmap_threshold` fixes glibc's mmap threshold. By default glibc raises the
threshold to the size of each freed mmapped block (up to 32 MiB), so after the first large
tensor is freed, later activation buffers come from the heap; with batches of varying
sequence lengths they fragment it and RSS grows with every new shape (measured: +380 MiB
over 80 distinct lengths with all-MiniLM-L6-v2, flat once the threshold is pinned).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import sys
import threading
from functools import cache

from semgraph.errors import ConfigError

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


def image_peak_rss_bytes() -> int:
    """Peak RSS of this process's current program image (``VmHWM``), in bytes.

    Unlike :func:`peak_rss_bytes` (``ru_maxrss``), it does not carry over the parent's peak:
    Linux keeps ``ru_maxrss`` across fork + exec, so a child started from a large process
    (a test runner with torch loaded) reports the parent's peak as its own.
    """
    try:
        with open("/proc/self/status", "rb") as fh:
            for raw in fh:
                if raw.startswith(b"VmHWM:"):
                    return int(raw.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return peak_rss_bytes()


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


M_MMAP_THRESHOLD = -3  # glibc <malloc.h>


@cache
def _libc_mallopt() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        fn = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def pin_mmap_threshold(n_bytes: int) -> bool:
    """Serve every allocation of ``n_bytes`` or more with its own mmap, returned to the OS on
    free (glibc ``mallopt(M_MMAP_THRESHOLD)``; this also stops glibc's sliding threshold).

    Process-wide. ``n_bytes`` <= 0 does nothing. Returns True when glibc accepted it, False
    where mallopt is unavailable or refused the value (glibc caps it at 32 MiB).
    """
    if n_bytes <= 0:
        return False
    fn = _libc_mallopt()
    if fn is None:
        return False
    return bool(fn(M_MMAP_THRESHOLD, n_bytes))


class RssSampler:
    """Samples this process's RSS on a background thread and keeps the peak per phase.

    ``mark(name)`` starts a new phase (pass it as a job's checkpoint); ``peaks`` maps each
    phase to the largest RSS seen while it was current. Samples every ``interval_s`` and
    once at every mark, so a phase shorter than the interval still gets a reading.
    """

    def __init__(self, interval_s: float = 0.01, first_phase: str = "start") -> None:
        if interval_s <= 0:
            raise ConfigError("interval_s must be positive")
        self.interval_s = interval_s
        self.phase = first_phase
        self.peaks: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> None:
        rss = rss_bytes()
        with self._lock:
            if rss > self.peaks.get(self.phase, 0):
                self.peaks[self.phase] = rss

    def mark(self, phase: str) -> None:
        self.sample()
        with self._lock:
            self.phase = phase
        self.sample()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def start(self) -> RssSampler:
        if self._thread is None:
            self.sample()
            self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> dict[str, int]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.sample()
        return dict(self.peaks)

    def __enter__(self) -> RssSampler:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
