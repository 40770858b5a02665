"""The uvicorn server that ``semgraph serve`` (and the tests' in-thread server) runs: its
configuration, and a graceful stop on SIGTERM / Ctrl-C."""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading
from collections.abc import Callable, Iterator

import uvicorn

from semgraph.logs import event

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class GracefulServer(uvicorn.Server):
    """uvicorn's server, except that a stop signal ends in a normal exit, and SIGHUP calls
    ``on_hangup`` (the API tokens are reread).

    uvicorn (since 0.29) re-raises the caught signal once it has shut down, so the process
    dies *by* SIGTERM (exit -15 / 143) although it drained cleanly; a supervisor cannot tell
    that from a kill. Here the signal only starts the graceful shutdown.
    """

    def __init__(
        self, config: uvicorn.Config, on_hangup: Callable[[], object] | None = None
    ) -> None:
        super().__init__(config)
        self.on_hangup = on_hangup

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # signals can only be handled in the main thread
            return
        original = {sig: signal.signal(sig, self._stop) for sig in STOP_SIGNALS}
        original[signal.SIGHUP] = signal.signal(signal.SIGHUP, self._hangup)
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    def _hangup(self, sig: int, frame: object) -> None:
        event(log, logging.INFO, "web_sighup", "SIGHUP: rereading the API tokens")
        if self.on_hangup is not None:
            self.on_hangup()

    def _stop(self, sig: int, frame: object) -> None:
        if not self.should_exit:
            event(log, logging.INFO, "web_stopping", f"{signal.Signals(sig).name}: draining")
        self.handle_exit(sig, None)  # a second Ctrl-C forces the exit, as in uvicorn


def server_config(app: object, host: str, port: int) -> uvicorn.Config:
    """uvicorn's configuration for ``app``: uvloop's event loop and httptools' HTTP/1.1
    parser (both dependencies; the pure-Python h11 parser and asyncio loop cost more CPU per
    request, which a webhook burst queues behind), semgraph's own logging, no access log."""
    return uvicorn.Config(
        app,  # type: ignore[arg-type]
        host=host,
        port=port,
        loop="uvloop",
        http="httptools",
        log_config=None,
        access_log=False,
    )


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (IPv6 when ``host`` is an IPv6 literal), as
    uvicorn would bind it; an OSError (address in use, not ours) goes to the caller."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
        sock.set_inheritable(True)
    except BaseException:
        sock.close()
        raise
    return sock
