"""A TCP proxy on loopback, run in the test process, that can cut live connections.

Worker subprocesses talk to the Bolt server through it. :meth:`CutProxy.cut` closes every
connection at once (both sides), exactly like a network failure; new connections are still
accepted afterwards. :meth:`CutProxy.cut_after_commit` arms a cut that fires right after the
next Bolt ``COMMIT`` message has been forwarded to the server, so the server commits but the
client never sees the answer (the "outcome unknown" case). With ``idle_tx=True`` only the
COMMIT of a connection that has a transaction open and has sent nothing for ``IDLE_S`` (a
paused publish) counts, so another thread's transaction (a heartbeat) cannot take the cut
meant for it; arming waits for such a connection, woken by the proxy's own traffic.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

# a Bolt COMMIT message: chunk size 2, tiny struct (0xB0) with signature 0x12, end marker
BOLT_COMMIT = b"\x00\x02\xb0\x12\x00\x00"
# a Bolt BEGIN message starts with a one-field struct (0xB1) with signature 0x11;
# ROLLBACK is a field-less struct with signature 0x13
BOLT_BEGIN = b"\xb1\x11"
BOLT_ROLLBACK = b"\x00\x02\xb0\x13\x00\x00"
IDLE_S = 0.5
IDLE_WAIT_S = 60.0


class CutProxy:
    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._arm_commit = threading.Event()
        self._states: list[dict[str, float]] = []  # one per connection
        self._targets: list[dict[str, float]] | None = None  # None: any connection
        self._traffic = threading.Condition()  # notified on every client message
        self.cuts = 0
        self.commit_cuts = 0
        self._closed = False
        threading.Thread(target=self._accept, name="cut-proxy", daemon=True).start()

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._pairs.append((client, upstream))
            state: dict[str, float] = {"commit_sent": 0, "in_tx": 0, "sent_at": time.monotonic()}
            with self._lock:
                self._states.append(state)
            threading.Thread(
                target=self._pump, args=(client, upstream, True, state), daemon=True
            ).start()
            threading.Thread(
                target=self._pump, args=(upstream, client, False, state), daemon=True
            ).start()

    def _pump(
        self, src: socket.socket, dst: socket.socket, from_client: bool, state: dict[str, float]
    ) -> None:
        tail = b""
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if not from_client and state["commit_sent"]:
                    # the server answered the COMMIT: it has committed; the client never knows
                    self.commit_cuts += 1
                    self.cut()
                    break
                if from_client:
                    state["sent_at"] = time.monotonic()
                    window = tail + data
                    tail = window[-(len(BOLT_COMMIT) - 1) :]
                    targets = self._targets
                    if (
                        self._arm_commit.is_set()
                        and BOLT_COMMIT in window
                        and (targets is None or any(state is t for t in targets))
                    ):
                        self._arm_commit.clear()
                        state["commit_sent"] = 1
                    if BOLT_BEGIN in window:
                        state["in_tx"] = 1
                    if BOLT_COMMIT in window or BOLT_ROLLBACK in window:
                        state["in_tx"] = 0
                    with self._traffic:
                        self._traffic.notify_all()
                dst.sendall(data)
        except OSError:
            pass
        finally:
            self._close_pair(src, dst)

    def _close_pair(self, a: socket.socket, b: socket.socket) -> None:
        for sock in (a, b):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()
        with self._lock:
            self._pairs = [p for p in self._pairs if a not in p and b not in p]

    def cut(self) -> int:
        """Close every open connection now; returns how many were cut."""
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for client, upstream in pairs:
            for sock in (client, upstream):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()
        self.cuts += 1
        return len(pairs)

    def cut_after_commit(self, *, idle_tx: bool = False) -> None:
        """Cut every connection right after the next COMMIT reaches the server; with
        ``idle_tx``, only the COMMIT of a connection idle in a transaction counts (waits
        until one is, at most ``IDLE_WAIT_S``)."""
        self._targets = self._idle_in_tx(IDLE_WAIT_S) if idle_tx else None
        assert self._targets is None or self._targets, "no connection is idle in a transaction"
        self._arm_commit.set()

    def _idle_in_tx(self, timeout_s: float) -> list[dict[str, float]]:
        """The connections in a transaction that have sent nothing for ``IDLE_S``, once
        there is one (empty after ``timeout_s``). Any client message wakes the wait; with
        none, it wakes when the quietest open transaction reaches ``IDLE_S``."""
        deadline = time.monotonic() + timeout_s
        with self._traffic:
            while True:
                now = time.monotonic()
                with self._lock:
                    open_tx = [s for s in self._states if s["in_tx"]]
                idle = [s for s in open_tx if now - s["sent_at"] >= IDLE_S]
                if idle or now >= deadline:
                    return idle
                due = min([deadline, *(s["sent_at"] + IDLE_S for s in open_tx)])
                self._traffic.wait(due - now)

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.close()
        self.cut()
