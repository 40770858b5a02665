"""Waking idle workers on this host the moment a job is queued.

An idle worker claims again every ``poll_interval_s`` (1 s by default): that is the only way
a worker on another host learns of a job, since neither Memgraph nor Neo4j can push a
notification to a client. Workers that share the enqueuer's state directory (one host: the
webhook server, the CLI and the workers of ``semgraph services``) need not wait that long:
each idle worker binds a Unix datagram socket in ``<state>/run/wake/``, and every committed
enqueue sends one byte to each socket there. A worker that receives it claims at once.

The nudge is only a hint. A lost datagram, a full socket buffer, a socket path too long for
the platform or a file system without Unix sockets all fall back to the poll; a socket left by
a dead worker answers ``ECONNREFUSED`` and its file is removed by the next sender.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import select
import socket
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

WAKE_DIR = Path("run") / "wake"
SLICE_S = 0.1  # the longest a wait goes without looking at the stop event
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on the BSDs


def wake_dir(state_dir: Path) -> Path:
    return state_dir / WAKE_DIR


class WakeListener:
    """One idle worker's socket; ``wait`` returns early when nudged or when ``stop`` is set."""

    def __init__(self, state_dir: Path, name: str) -> None:
        self.path = wake_dir(state_dir) / f"{name}.sock"
        self._sock: socket.socket | None = None
        if len(str(self.path).encode()) > MAX_SOCKET_PATH:
            log.debug("wake socket path too long, polling only: %s", self.path)
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sock.setblocking(False)
            sock.bind(str(self.path))
        except OSError as exc:
            log.debug("no wake socket at %s (%s), polling only", self.path, exc)
            return
        self._sock = sock

    @property
    def listening(self) -> bool:
        return self._sock is not None

    def wait(self, timeout_s: float, stop: threading.Event) -> bool:
        """Sleep up to ``timeout_s``; True when a nudge ended the wait early."""
        deadline = time.monotonic() + timeout_s
        while not stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self._sock is None:
                stop.wait(min(left, SLICE_S))
                continue
            readable, _, _ = select.select([self._sock], [], [], min(left, SLICE_S))
            if readable:
                self._drain()
                return True
        return False

    def _drain(self) -> None:
        assert self._sock is not None
        while True:
            try:
                self._sock.recv(64)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return

    def close(self) -> None:
        if self._sock is None:
            return
        self._sock.close()
        self._sock = None
        with contextlib.suppress(OSError):
            self.path.unlink()

    def __enter__(self) -> WakeListener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def nudge_workers(state_dir: Path) -> int:
    """Tell every listening worker of this state directory that a job was queued; returns
    how many sockets took the nudge. Never raises: the poll is the fallback."""
    folder = wake_dir(state_dir)
    try:
        paths = sorted(folder.glob("*.sock"))
    except OSError:
        return 0
    if not paths:
        return 0
    sent = 0
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    except OSError:
        return 0
    with sock:
        sock.setblocking(False)
        for path in paths:
            try:
                sock.sendto(b"!", str(path))
                sent += 1
            except BlockingIOError:
                sent += 1  # its buffer is full of earlier nudges: it wakes anyway
            except OSError as exc:
                if exc.errno in (errno.ECONNREFUSED, errno.ENOTSOCK):
                    with contextlib.suppress(OSError):
                        path.unlink()  # nobody listens: a worker that died idle
    return sent
