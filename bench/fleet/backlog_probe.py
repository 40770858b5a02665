"""What ``bench/fleet/bench_backlog.py`` samples while its workers run: each worker's process tree
(RSS, CPU seconds), the servers' CPU seconds, the machine's CPU and its load average.

Read from ``/proc`` (Linux only): ``/proc/PID/stat`` for CPU ticks (a process's own and its
reaped children's) and parents, ``/proc/PID/status`` for ``VmRSS`` / ``VmHWM``,
``/proc/stat`` for the whole machine.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TICK = os.sysconf("SC_CLK_TCK")
MIB = 2**20


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (field 3 is index 0)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def cpu_s(pid: int, children: bool = True) -> float:
    """CPU seconds of ``pid`` (user + system), with those of its reaped children."""
    f = _stat(pid)
    if f is None:
        return 0.0
    ticks = int(f[11]) + int(f[12]) + ((int(f[13]) + int(f[14])) if children else 0)
    return ticks / TICK


def _status_kib(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid``."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            f = _stat(int(entry))
            if f is not None:
                parent[int(entry)] = int(f[1])
    found, frontier = [], [pid]
    while frontier:
        nxt = [p for p, pp in parent.items() if pp in frontier]
        found += nxt
        frontier = nxt
    return found


def machine_ticks() -> tuple[int, int]:
    """(busy, total) CPU ticks of the whole machine since boot."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


@dataclass
class Tree:
    """One worker process: its peak RSS (its own high-water mark, and the sampled sum over
    its process tree) and its CPU seconds (read last while it is alive)."""

    name: str
    pid: int
    peak_tree_rss: int = 0  # bytes
    peak_main_rss: int = 0  # bytes (VmHWM)
    cpu_s: float = 0.0

    def sample(self) -> None:
        pids = [self.pid, *descendants(self.pid)]
        rss = sum(_status_kib(p, "VmRSS") for p in pids) * 1024
        self.peak_tree_rss = max(self.peak_tree_rss, rss)
        self.peak_main_rss = max(self.peak_main_rss, _status_kib(self.pid, "VmHWM") * 1024)
        live_children = sum(cpu_s(p) for p in pids[1:])
        self.cpu_s = max(self.cpu_s, cpu_s(self.pid) + live_children)


@dataclass
class Probe:
    """Samples taken during one run: the workers, the servers and the machine."""

    workers: list[Tree]
    servers: dict[str, int]  # name -> pid
    started: float = field(default_factory=time.monotonic)
    loads: list[float] = field(default_factory=list)
    _ticks0: tuple[int, int] = field(default_factory=machine_ticks)
    _servers0: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._servers0 = {name: self._server_cpu(pid) for name, pid in self.servers.items()}

    @staticmethod
    def _server_cpu(pid: int) -> float:
        return cpu_s(pid) + sum(cpu_s(p) for p in descendants(pid))

    def sample(self) -> None:
        for tree in self.workers:
            tree.sample()
        self.loads.append(os.getloadavg()[0])

    def summary(self) -> dict[str, Any]:
        """The run's machine figures (call while the workers are still alive)."""
        self.sample()
        busy1, total1 = machine_ticks()
        busy = busy1 - self._ticks0[0]
        total = total1 - self._ticks0[1]
        wall = time.monotonic() - self.started
        cores = os.cpu_count() or 1
        servers = {
            name: round(self._server_cpu(pid) - self._servers0.get(name, 0.0), 1)
            for name, pid in self.servers.items()
        }
        workers_cpu = sum(t.cpu_s for t in self.workers)
        machine_cpu = busy / TICK
        return {
            "wall_s": round(wall, 1),
            "cores": cores,
            "machine_cpu_s": round(machine_cpu, 1),
            "machine_busy_pct": round(100 * busy / total, 1) if total else None,
            "workers_cpu_s": round(workers_cpu, 1),
            "servers_cpu_s": servers,
            "other_cpu_s": round(machine_cpu - workers_cpu - sum(servers.values()), 1),
            "load_1m_mean": round(sum(self.loads) / len(self.loads), 2) if self.loads else None,
            "load_1m_max": round(max(self.loads), 2) if self.loads else None,
            "workers": [
                {
                    "name": t.name,
                    "peak_rss_mib": round(t.peak_main_rss / MIB),
                    "peak_tree_rss_mib": round(t.peak_tree_rss / MIB),
                    "cpu_s": round(t.cpu_s, 1),
                }
                for t in self.workers
            ],
        }
