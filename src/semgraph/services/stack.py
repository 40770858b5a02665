"""Start, stop and inspect the local Elasticsearch and Bolt graph server.

Idempotent: ``up`` on a running, healthy stack is a no-op; ``down`` stops only processes
named by our pid files whose command line carries our state directory.
"""

from __future__ import annotations

import abc
import logging
import os
import pwd
import shutil
import socket
import subprocess
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import neo4j

from semgraph.config import Settings
from semgraph.errors import ServiceError
from semgraph.logs import event
from semgraph.services import procs
from semgraph.services.heap import HeapChoice, choose_heap, tx_memory_mb

log = logging.getLogger(__name__)

ES_ARTIFACT = "org.elasticsearch.distribution.integ-test-zip:elasticsearch:{version}:zip"


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


def _java_home(settings: Settings) -> Path:
    candidates = [settings.java_home, os.environ.get("JAVA_HOME")]
    candidates += ["/usr/lib/jvm/java-17-openjdk-amd64", "/usr/lib/jvm/default-java"]
    for cand in candidates:
        if cand and (Path(cand) / "bin" / "java").exists():
            return Path(cand)
    java = shutil.which("java")
    if java:
        return Path(java).resolve().parents[1]
    raise ServiceError("no Java runtime found: set SEMGRAPH_JAVA_HOME or JAVA_HOME (JDK 17+)")


def _mvn() -> str:
    mvn = shutil.which("mvn")
    if not mvn:
        raise ServiceError("Maven ('mvn') is not on PATH; it resolves the servers' artifacts")
    return mvn


def _run(
    argv: list[str], what: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> None:
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-15:]
        raise ServiceError(f"{what} failed (exit {proc.returncode}):\n" + "\n".join(tail))


def _unzip(archive: Path, dest: Path) -> None:
    """Unpack keeping the executable bits that ``zipfile`` drops."""
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            target = dest / info.filename
            if not target.resolve().is_relative_to(dest.resolve()):
                raise ServiceError(f"refusing zip entry outside {dest}: {info.filename}")
            zf.extract(info, dest)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                target.chmod(mode)


def _port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    os.chown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, gid)


class _Service(abc.ABC):
    """One local server process: how to prepare, launch, probe and stop it."""

    name = ""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = settings.state_dir / self.name
        self.pid_file = settings.state_dir / "run" / f"{self.name}.pid"
        self.log_file = settings.state_dir / "logs" / f"{self.name}.log"

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
        if _port_in_use(host, port):
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
        self.pid_file.unlink(missing_ok=True)
        event(log, logging.INFO, "service_stop", service=self.name, pid=pid)
        return True

    def _log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


class ElasticsearchService(_Service):
    name = "elasticsearch"

    @property
    def url(self) -> str:
        return self.settings.es_url

    def address(self) -> tuple[str, int]:
        return self.settings.es_host, self.settings.es_port

    @property
    def dist_dir(self) -> Path:
        return self.home / f"elasticsearch-{self.settings.es_version}"

    def _user(self) -> str | None:
        return self.settings.es_user if os.geteuid() == 0 else None

    def healthy(self) -> bool:
        try:
            resp = httpx.get(f"{self.url}/_cluster/health", timeout=2.0)
            return resp.status_code == 200 and resp.json().get("status") in {"green", "yellow"}
        except (httpx.HTTPError, ValueError):
            return False

    def _resolve_zip(self) -> Path:
        cache = self.settings.state_dir / "dist"
        archive = cache / f"elasticsearch-{self.settings.es_version}.zip"
        if archive.exists():
            return archive
        cache.mkdir(parents=True, exist_ok=True)
        artifact = ES_ARTIFACT.format(version=self.settings.es_version)
        _run(
            [
                _mvn(),
                "-B",
                "-q",
                "dependency:copy",
                f"-Dartifact={artifact}",
                f"-DoutputDirectory={cache}",
                "-Dmdep.overWriteIfNewer=true",
            ],
            f"resolve {artifact} from Maven Central",
            cwd=cache,
        )
        if not archive.exists():
            raise ServiceError(f"Maven did not produce {archive}")
        return archive

    def _ensure_user(self, user: str) -> None:
        try:
            pwd.getpwnam(user)
        except KeyError:
            _run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
                f"create unprivileged user {user!r} for Elasticsearch",
            )

    def prepare(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        for path in (self.settings.state_dir, self.home):
            path.chmod(0o755)
        if not (self.dist_dir / "bin" / "elasticsearch").exists():
            _unzip(self._resolve_zip(), self.home)
        for sub in ("data", "logs", "tmp"):
            (self.home / sub).mkdir(exist_ok=True)
        user = self._user()
        if user is not None:
            self._ensure_user(user)
            entry = pwd.getpwnam(user)
            _chown_tree(self.home, entry.pw_uid, entry.pw_gid)

    def launch_spec(self) -> tuple[list[str], dict[str, str], str | None]:
        s = self.settings
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "ES_JAVA_HOME": str(_java_home(s)),
            "ES_JAVA_OPTS": f"-Xms{s.es_heap_mb}m -Xmx{s.es_heap_mb}m",
            "ES_TMPDIR": str(self.home / "tmp"),
            "LANG": "C.UTF-8",
        }
        settings = {
            "cluster.name": "semgraph-local",
            "node.name": "semgraph-local",
            "discovery.type": "single-node",
            "network.host": s.es_host,
            "http.port": str(s.es_port),
            "transport.port": str(s.es_port + 100),
            "xpack.security.enabled": "false",
            "cluster.routing.allocation.disk.threshold_enabled": "false",
            "path.data": str(self.home / "data"),
            "path.logs": str(self.home / "logs"),
        }
        argv = [str(self.dist_dir / "bin" / "elasticsearch")]
        for key, value in settings.items():
            argv += ["-E", f"{key}={value}"]
        return argv, env, self._user()


class BoltService(_Service):
    name = "neo4j"

    @property
    def url(self) -> str:
        return self.settings.bolt_uri

    def address(self) -> tuple[str, int]:
        return self.settings.bolt_host, self.settings.bolt_port

    @property
    def project(self) -> Path:
        return self.settings.ops_dir / "neo4j-server"

    def healthy(self) -> bool:
        try:
            with (
                neo4j.GraphDatabase.driver(
                    self.url, auth=None, connection_timeout=2.0, max_transaction_retry_time=0
                ) as driver,
                driver.session() as session,
            ):
                session.execute_write(
                    lambda tx: tx.run("CREATE (p:SemgraphProbe) DELETE p").consume()
                )
            return True
        except Exception:
            return False

    def _built(self) -> bool:
        jar = self.project / "target" / "semgraph-neo4j-server-1.0.jar"
        if not jar.exists() or not (self.project / "target" / "lib").is_dir():
            return False
        sources = [self.project / "pom.xml", *self.project.glob("src/**/*.java")]
        return all(src.stat().st_mtime <= jar.stat().st_mtime for src in sources)

    def prepare(self) -> None:
        if not (self.project / "pom.xml").exists():
            raise ServiceError(f"no Maven project at {self.project} (set SEMGRAPH_OPS_DIR)")
        (self.home / "data").mkdir(parents=True, exist_ok=True)
        if not self._built():
            env = dict(os.environ, JAVA_HOME=str(_java_home(self.settings)))
            _run(
                [_mvn(), "-B", "-q", "package", "-DskipTests"],
                "build the Bolt server",
                cwd=self.project,
                env=env,
            )

    def heap(self) -> HeapChoice:
        """The heap this server starts with (SEMGRAPH_NEO4J_HEAP_MB, or sized from the
        machine's memory: :mod:`semgraph.services.heap`)."""
        return choose_heap(self.settings)

    def state(self) -> ServiceState:
        state = super().state()
        chosen = self.heap()
        running = running_heap(procs.cmdline(state.pid)) if state.pid is not None else None
        if running is None or running[0] == chosen.heap_mb:
            state.heap_mb, state.tx_memory_mb = running or (chosen.heap_mb, chosen.tx_memory_mb)
            state.detail = chosen.describe()
        else:  # started with other settings than the current ones
            state.heap_mb, state.tx_memory_mb = running
            state.detail = (
                f"heap {running[0]} MiB, transactions capped at {running[1]} MiB "
                f"(a restart would take {chosen.describe()})"
            )
        return state

    def launch_spec(self) -> tuple[list[str], dict[str, str], str | None]:
        s = self.settings
        java = _java_home(s) / "bin" / "java"
        classpath = f"{self.project / 'target' / 'classes'}:{self.project / 'target' / 'lib'}/*"
        heap_mb = self.heap().heap_mb
        argv = [
            str(java),
            f"-Xmx{heap_mb}m",
            *GC_FLAGS[s.neo4j_gc],
            "-cp",
            classpath,
            "dev.semgraph.ops.BoltServer",
            str(self.home / "data"),
            str(s.bolt_port),
            s.bolt_host,
            # all transactions together may hold at most 70 % of the heap: a repository too
            # large for one publish is refused with MemoryPoolOutOfMemoryError (GraphTooLarge,
            # naming this setting) instead of driving the JVM into back-to-back full GCs
            f"db.memory.transaction.total.max={tx_memory_mb(heap_mb)}m",
        ]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        return argv, env, None


# The collector of the local Neo4j (SEMGRAPH_NEO4J_GC). A publish builds one transaction's
# state for its whole length (2 KB per row), all of it garbage after COMMIT. The parallel
# collector promoting what survives one young collection straight to the old generation
# copies that state once instead of up to 15 times: on the 20,000-file publish (12 GiB heap)
# GC took 23 s of 75 s (27.2k rows/s), against 35 s of 91 s with the default tenuring
# (22.3k), 30 s with a threshold of 1 (25.0k) and 41 s of 116 s with G1 (17.5k).
GC_FLAGS: dict[str, tuple[str, ...]] = {
    "parallel": ("-XX:+UseParallelGC", "-XX:MaxTenuringThreshold=0"),
    "g1": ("-XX:+UseG1GC",),
}


def running_heap(cmdline: str) -> tuple[int, int] | None:
    """(heap MiB, transaction cap MiB) of a running server, read from its command line."""
    heap: int | None = None
    cap: int | None = None
    for arg in cmdline.split():
        if arg.startswith("-Xmx") and arg.endswith("m") and arg[4:-1].isdigit():
            heap = int(arg[4:-1])
        prefix = "db.memory.transaction.total.max="
        if arg.startswith(prefix) and arg.endswith("m") and arg[len(prefix) : -1].isdigit():
            cap = int(arg[len(prefix) : -1])
    if heap is None:
        return None
    return heap, cap if cap is not None else tx_memory_mb(heap)


class Stack:
    """Both local services, driven together."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.services: list[_Service] = [ElasticsearchService(settings), BoltService(settings)]

    def up(self) -> list[ServiceState]:
        self.settings.state_dir.mkdir(parents=True, exist_ok=True)
        started = [(svc, svc.start()) for svc in self.services]
        for svc, proc in started:
            try:
                svc.wait_healthy(proc, self.settings.services_start_timeout_s)
            except ServiceError:
                if proc is not None:
                    svc.stop()
                raise
        return self.status()

    def down(self) -> list[str]:
        return [svc.name for svc in self.services if svc.stop()]

    def status(self) -> list[ServiceState]:
        return [svc.state() for svc in self.services]
