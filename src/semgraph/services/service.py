"""One local server process (:class:`Service`): how it is prepared, launched, probed and
stopped, and what ``semgraph services status`` reports of it (:class:`ServiceState`); and the
tools both servers are built with (Java, Maven).

``down`` stops only processes named by our pid files whose command line carries our state
directory.
"""

from __future__ import annotations

import abc
import atexit
import logging
import os
import pwd
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from semgraph.config import Settings
from semgraph.errors import ServiceError
from semgraph.logs import event
from semgraph.services import procs

log = logging.getLogger(__name__)

# Every server this process launched and has not stopped. A server outlives the object that
# started it (``semgraph services up`` exits, a test session keeps its stack for the next):
# its Popen stays referenced until the interpreter exits, so it is never collected while the
# server runs (Popen warns then, ResourceWarning: "subprocess N is still running").
_LAUNCHED: list[subprocess.Popen[bytes]] = []


@atexit.register
def _leave_servers_running() -> None:
    """At exit the servers still in :data:`_LAUNCHED` keep running on purpose (in their own
    sessions, with pid files for ``services down``). This process will not reap them, so
    each Popen is marked as settled; otherwise its collection at shutdown warns "subprocess
    N is still running" (an ignored exception under an ``error`` warnings filter)."""
    for proc in _LAUNCHED:
        if proc.poll() is None:
            proc.returncode = 0  # not an exit status: "not ours to wait for any more"
    _LAUNCHED.clear()


@dataclass
class ServiceState:
    name: str
    pid: int | None
    healthy: bool
    url: str
    detail: str = ""
    heap_mb: int | None = None  # the graph server's JVM heap (running, or what up would take)
    tx_memory_mb: int | None = None  # its cap on all transactions' memory

    @property
    def running(self) -> bool:
        return self.pid is not None


def java_home(settings: Settings) -> Path:
    candidates = [settings.java_home, os.environ.get("JAVA_HOME")]
    candidates += ["/usr/lib/jvm/java-17-openjdk-amd64", "/usr/lib/jvm/default-java"]
    for cand in candidates:
        if cand and (Path(cand) / "bin" / "java").exists():
            return Path(cand)
    java = shutil.which("java")
    if java:
        return Path(java).resolve().parents[1]
    raise ServiceError("no Java runtime found: set SEMGRAPH_JAVA_HOME or JAVA_HOME (JDK 17+)")


def mvn() -> str:
    mvn = shutil.which("mvn")
    if not mvn:
        raise ServiceError("Maven ('mvn') is not on PATH; it resolves the servers' artifacts")
    return mvn


def run_command(
    argv: list[str], what: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> None:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
        raise ServiceError(f"{what} failed (exit {proc.returncode}):\n" + "\n".join(tail))


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


class Service(abc.ABC):
    """One local server process: how to prepare, launch, probe and stop it."""

    name = ""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = settings.state_dir / self.name
        self.pid_file = settings.state_dir / "run" / f"{self.name}.pid"
        self.log_file = settings.state_dir / "logs" / f"{self.name}.log"
        # the process this object launched: kept (a dropped Popen of a running child warns,
        # ResourceWarning) and reaped when :meth:`stop` ends it
        self.launched: subprocess.Popen[bytes] | None = None

    @property
    def marker(self) -> str:
        """A string present in our process's command line and nobody else's."""
        return str(self.home / "data")

    @property
    @abc.abstractmethod
    def url(self) -> str:
        """The URL clients use."""

    @abc.abstractmethod
    def address(self) -> tuple[str, int]:
        """The (host, port) the server listens on."""

    def pid(self) -> int | None:
        return procs.read_pid(self.pid_file, self.marker)

    @abc.abstractmethod
    def healthy(self) -> bool:
        """Whether the server answers as ready."""

    @abc.abstractmethod
    def prepare(self) -> None:
        """Resolve, build or unpack whatever the server needs before it starts."""

    @abc.abstractmethod
    def launch_spec(self) -> tuple[list[str], dict[str, str], str | None]:
        """(argv, environment, user to run as or None)."""

    def state(self) -> ServiceState:
        pid = self.pid()
        return ServiceState(self.name, pid, pid is not None and self.healthy(), self.url)

    def start(self) -> subprocess.Popen[bytes] | None:
        """Launch if not running; returns the new process, or None when already running."""
        if self.pid() is not None:
            return None
        host, port = self.address()
        if port_in_use(host, port):
            raise ServiceError(
                f"{self.name}: {host}:{port} is already in use by a process we did not "
                "start; stop it or choose another port"
            )
        self.prepare()
        argv, env, user = self.launch_spec()
        self.pid_file.parent.mkdir(parents=True, exist_ok=True)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        uid = gid = None
        groups: list[int] | None = None
        if user is not None:
            entry = pwd.getpwnam(user)
            uid, gid, groups = entry.pw_uid, entry.pw_gid, []
        with self.log_file.open("ab") as out:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.home,
                start_new_session=True,
                user=uid,
                group=gid,
                extra_groups=groups,
            )
        self.pid_file.write_text(f"{proc.pid}\n")
        event(log, logging.INFO, "service_start", service=self.name, pid=proc.pid)
        self.launched = proc
        _LAUNCHED.append(proc)
        return proc

    def wait_healthy(self, proc: subprocess.Popen[bytes] | None, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.healthy():
                return
            if proc is not None and proc.poll() is not None:
                raise ServiceError(
                    f"{self.name} exited with code {proc.returncode} while starting; "
                    f"log tail:\n{self._log_tail()}"
                )
            time.sleep(0.5)
        raise ServiceError(
            f"{self.name} not healthy after {timeout_s:.0f}s at {self.url}; "
            f"log tail:\n{self._log_tail()}"
        )

    def stop(self, timeout_s: float = 60.0) -> bool:
        pid = self.pid()
        if pid is None:
            stray = procs.processes_with(self.marker)
            if not stray:
                self.pid_file.unlink(missing_ok=True)
                return False
            pid = stray[0]
        procs.stop_group(pid, self.marker, timeout_s)
        if self.launched is not None and self.launched.pid == pid:
            self.launched.wait(timeout=10.0)  # our child: reap it (it is gone or a zombie)
            if self.launched in _LAUNCHED:
                _LAUNCHED.remove(self.launched)
            self.launched = None
        self.pid_file.unlink(missing_ok=True)
        event(log, logging.INFO, "service_stop", service=self.name, pid=pid)
        return True

    def _log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])
