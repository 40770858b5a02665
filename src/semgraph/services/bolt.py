"""The local Bolt graph server: an embedded Neo4j 5 (``ops/neo4j-server``, built with Maven),
its heap (:mod:`semgraph.services.heap`), its collector and its cap on transaction memory."""

from __future__ import annotations

import os
from pathlib import Path

import neo4j

from semgraph.errors import ServiceError
from semgraph.services import procs
from semgraph.services.heap import HeapChoice, choose_heap, tx_memory_mb
from semgraph.services.service import Service, ServiceState, java_home, mvn, run_command


class BoltService(Service):
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
            env = dict(os.environ, JAVA_HOME=str(java_home(self.settings)))
            run_command(
                [mvn(), "-B", "-q", "package", "-DskipTests"],
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
        java = java_home(s) / "bin" / "java"
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
