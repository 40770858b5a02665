"""Processes as hosts, for the e2e tier: each host has its own state directory, its own
hostname (a UTS namespace) and, where the machine lets us, its own network (a network
namespace with an address of its own, joined to this one by a veth pair).

The test stack listens on loopback only, so a host in a network namespace reaches it through
a TCP forwarder that this process runs on the host's side of the veth pair: the host's
worker speaks to ``<gateway>:<port>``, exactly like a worker on another machine speaks to the
servers' addresses. A SIGKILLed worker's connections close as a dead machine's would (the
graph server rolls back its open transaction).

:func:`isolation` says what this machine allows: ``netns`` (root, ``ip`` and ``unshare``),
``uts`` (``unshare --uts`` only: own hostnames, shared network) or ``none`` (one hostname:
the crash sweep then proves a dead worker by its pid instead of its lease).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from urllib.parse import urlsplit

SUBNET = "10.231.{n}.{host}"


def _works(*cmd: str) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def isolation() -> str:
    """``netns``, ``uts`` or ``none``: how far processes can be made hosts here (or the mode
    ``SEMGRAPH_TEST_ISOLATION`` names, to run a lesser one on purpose)."""
    forced = os.environ.get("SEMGRAPH_TEST_ISOLATION", "")
    if forced in {"netns", "uts", "none"}:
        return forced
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "none"
    if not _works("unshare", "--uts", "true"):
        return "none"
    if shutil.which("ip") is None or not _works("unshare", "--net", "true"):
        return "uts"
    return "netns"


class Forwarder:
    """Accepts on ``listen`` and pipes every connection to ``target`` (both directions)."""

    def __init__(self, listen: tuple[str, int], target: tuple[str, int]) -> None:
        self.target = target
        self._server = socket.create_server(listen)
        self.port = int(self._server.getsockname()[1])
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):  # one side closed: close both, as a dead peer's kernel does
            with suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._server.close()
        with self._lock:
            for s in self._open:
                with suppress(OSError):
                    s.close()


@dataclass
class Host:
    """One host: its name, state directory, environment and command prefix."""

    name: str
    env: dict[str, str]
    prefix: list[str] = field(default_factory=list)
    address: str | None = None  # its own address, in a network namespace

    def command(self, *args: str) -> list[str]:
        return [*self.prefix, *args]


def _uts(name: str) -> list[str]:
    return ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', name]


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@contextmanager
def hosts(names: list[str], env: dict[str, str], mode: str) -> Iterator[list[Host]]:
    """Hosts named ``names`` with ``env`` (``SEMGRAPH_BOLT_URI`` / ``SEMGRAPH_ES_URL`` of the
    stack; each host's own ``SEMGRAPH_STATE_DIR`` is the caller's), isolated as ``mode``."""
    made: list[str] = []
    forwarders: list[Forwarder] = []
    try:
        out: list[Host] = []
        for i, name in enumerate(names):
            host_env = dict(env)
            if mode == "none":
                out.append(Host(name, host_env))
                continue
            prefix = _uts(name)
            address = None
            if mode == "netns":
                ns = f"sg-{os.getpid() % 100000}-{i}"
                n = 40 + (os.getpid() + i) % 200
                gateway, address = SUBNET.format(n=n, host=1), SUBNET.format(n=n, host=2)
                _ip("netns", "add", ns)
                made.append(ns)
                _ip("link", "add", f"{ns}-o", "type", "veth", "peer", "name", f"{ns}-i")
                _ip("link", "set", f"{ns}-i", "netns", ns)
                _ip("addr", "add", f"{gateway}/30", "dev", f"{ns}-o")
                _ip("link", "set", f"{ns}-o", "up")
                _ip("-n", ns, "addr", "add", f"{address}/30", "dev", f"{ns}-i")
                _ip("-n", ns, "link", "set", f"{ns}-i", "up")
                _ip("-n", ns, "link", "set", "lo", "up")
                for var, scheme in (("SEMGRAPH_BOLT_URI", "bolt"), ("SEMGRAPH_ES_URL", "http")):
                    url = urlsplit(env[var])
                    target = (url.hostname or "127.0.0.1", int(url.port or 0))
                    fwd = Forwarder((gateway, 0), target)
                    forwarders.append(fwd)
                    host_env[var] = f"{scheme}://{gateway}:{fwd.port}"
                prefix = ["ip", "netns", "exec", ns, *prefix]
            out.append(Host(name, host_env, prefix, address))
        yield out
    finally:
        for fwd in forwarders:
            fwd.close()
        for ns in made:  # deleting the namespace deletes its end of the veth pair, and so both
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
