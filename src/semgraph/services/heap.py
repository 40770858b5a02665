"""How large the local Neo4j's heap is: ``SEMGRAPH_NEO4J_HEAP_MB`` when set, else sized from
the machine's memory.

A publish is ONE transaction whose state lives on the Neo4j heap until COMMIT, and the local
server caps all transactions together at 70 % of the heap (:func:`tx_memory_mb`). A fixed
1 GiB heap refused an ordinary 1,500-file repository, so by default (``SEMGRAPH_NEO4J_HEAP_MB``
unset or ``0``) the heap is the rule of :func:`auto_heap_mb`:

    memory  = MemTotal (/proc/meminfo), or the cgroup memory limit when that is lower
    reserve = Elasticsearch (its heap + 512 MiB) + the worker (1.5 GiB, the embedding model
              and parse children) + the OS (1 GiB)
    heap    = half of (memory - reserve), in steps of 256 MiB, at least 512 MiB (a quarter
              of memory on a machine under 2 GiB, never under 128 MiB), at most 31 GiB
              (compressed object pointers end at 32 GiB)
    memory unknown (no readable /proc/meminfo): 1024 MiB

The other half of what is left is for the JVM outside its heap (page cache, metaspace, GC
structures) and for whatever else runs on the machine. ``-Xmx`` only reserves address space:
the JVM commits heap as a publish needs it, so a large default costs nothing while idle.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from semgraph.config import Settings

FLOOR_MB = 512
CEILING_MB = 31 * 1024
STEP_MB = 256
FALLBACK_MB = 1024  # memory unknown: the old fixed default
WORKER_MB = 1536  # worker with the embedding model loaded (~1.1 GiB measured) + parse children
OS_MB = 1024
ES_OVERHEAD_MB = 512  # Elasticsearch's process outside its heap
TX_SHARE = 0.7  # all transactions together may hold this share of the heap

_MIB = 1024 * 1024


def tx_memory_mb(heap_mb: int) -> int:
    """The local Neo4j's cap on the memory of all open transactions (70 % of the heap)."""
    return heap_mb * 7 // 10


def reserve_mb(es_heap_mb: int) -> int:
    """Memory left to everything but the Neo4j JVM before the heap is sized."""
    return es_heap_mb + ES_OVERHEAD_MB + WORKER_MB + OS_MB


def effective_memory_mb(mem_total_mb: int | None, cgroup_limit_mb: int | None) -> int | None:
    """The memory the stack may use: the machine's, or the cgroup limit when it is lower."""
    known = [m for m in (mem_total_mb, cgroup_limit_mb) if m is not None and m > 0]
    return min(known) if known else None


def auto_heap_mb(
    mem_total_mb: int | None, cgroup_limit_mb: int | None = None, es_heap_mb: int = 512
) -> int:
    """The default heap for ``memory`` MiB (see the module docstring for the rule)."""
    memory = effective_memory_mb(mem_total_mb, cgroup_limit_mb)
    if memory is None:
        return FALLBACK_MB
    half = (memory - reserve_mb(max(es_heap_mb, 0))) // 2
    floor = min(FLOOR_MB, memory // 4)  # a machine under 2 GiB gets a quarter of it
    heap = min(max(half, floor), CEILING_MB)
    return max(heap // STEP_MB * STEP_MB, 128)


def parse_meminfo_total_mb(text: str) -> int | None:
    """``MemTotal`` of a /proc/meminfo text, in MiB; None when absent or not a positive
    number of kB."""
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name.strip() != "MemTotal":
            continue
        parts = rest.split()
        if not parts or not parts[0].isdigit() or parts[1:] not in ([], ["kB"]):
            return None
        kib = int(parts[0])
        return kib // 1024 if kib >= 1024 else None
    return None


def parse_cgroup_limit_mb(text: str) -> int | None:
    """A cgroup memory limit file (v2 ``memory.max``, v1 ``memory.limit_in_bytes``) in MiB;
    None for ``max``, an unset v1 limit (about 2**63), or anything that is not a number."""
    value = text.strip()
    if not value.isdigit():
        return None
    limit = int(value)
    if limit <= 0 or limit >= 1 << 60:
        return None
    return max(limit // _MIB, 1)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except (OSError, ValueError):
        return None


def cgroup_limit_mb(
    proc: Path = Path("/proc"), cgroup: Path = Path("/sys/fs/cgroup")
) -> int | None:
    """The lowest memory limit of this process's cgroup (v2 and v1 layouts), or None."""
    candidates = [cgroup / "memory.max", cgroup / "memory" / "memory.limit_in_bytes"]
    for line in (_read(proc / "self" / "cgroup") or "").splitlines():
        _, controllers, rel = [*line.split(":", 2), "", ""][:3]
        rel = rel.strip().lstrip("/")
        if not rel or ".." in rel.split("/"):
            continue
        if controllers == "":
            candidates.append(cgroup / rel / "memory.max")
        elif "memory" in controllers.split(","):
            candidates.append(cgroup / "memory" / rel / "memory.limit_in_bytes")
    limits = [parse_cgroup_limit_mb(_read(path) or "") for path in candidates]
    known = [limit for limit in limits if limit is not None]
    return min(known) if known else None


def mem_total_mb(proc: Path = Path("/proc")) -> int | None:
    text = _read(proc / "meminfo")
    return parse_meminfo_total_mb(text) if text is not None else None


@dataclass(frozen=True)
class HeapChoice:
    """The heap the local Neo4j starts with, and why."""

    heap_mb: int
    explicit: bool  # SEMGRAPH_NEO4J_HEAP_MB set
    memory_mb: int | None = None  # what the automatic rule saw
    cgroup_limited: bool = False

    @property
    def tx_memory_mb(self) -> int:
        return tx_memory_mb(self.heap_mb)

    def describe(self) -> str:
        if self.explicit:
            why = "SEMGRAPH_NEO4J_HEAP_MB"
        elif self.memory_mb is None:
            why = f"auto: machine memory unknown, {FALLBACK_MB} MiB"
        else:
            where = "cgroup limit" if self.cgroup_limited else "memory"
            why = f"auto: half of {self.memory_mb} MiB {where} less the reserve"
        return f"heap {self.heap_mb} MiB ({why}), transactions capped at {self.tx_memory_mb} MiB"


def choose_heap(
    settings: Settings, proc: Path = Path("/proc"), cgroup: Path = Path("/sys/fs/cgroup")
) -> HeapChoice:
    """The explicit ``neo4j_heap_mb`` when set (non-zero), else :func:`auto_heap_mb` of this
    machine."""
    if settings.neo4j_heap_mb:
        return HeapChoice(settings.neo4j_heap_mb, explicit=True)
    total, limit = mem_total_mb(proc), cgroup_limit_mb(proc, cgroup)
    memory = effective_memory_mb(total, limit)
    return HeapChoice(
        auto_heap_mb(total, limit, settings.es_heap_mb),
        explicit=False,
        memory_mb=memory,
        cgroup_limited=limit is not None and (total is None or limit < total),
    )
