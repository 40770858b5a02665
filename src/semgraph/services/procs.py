"""Process helpers for the local stack: pid files that only ever name our own processes."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode("utf-8", "replace")


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is not alive for our purposes
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def read_pid(pid_file: Path, marker: str) -> int | None:
    """The pid in ``pid_file`` if that process is alive and its command line has ``marker``."""
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    if pid <= 1 or not is_alive(pid) or marker not in cmdline(pid):
        return None
    return pid


def processes_with(marker: str) -> list[int]:
    """Every live process whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            pid = int(entry.name)
            if pid != os.getpid() and marker in cmdline(pid) and is_alive(pid):
                found.append(pid)
    return found


def stop_group(pid: int, marker: str, timeout_s: float) -> None:
    """SIGTERM the process group led by ``pid`` (and stragglers with ``marker``), then KILL."""

    def targets() -> list[int]:
        return sorted(set(processes_with(marker)) | ({pid} if is_alive(pid) else set()))

    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        for other in targets():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(other, sig)
        deadline = time.monotonic() + (timeout_s if sig == signal.SIGTERM else 10.0)
        while time.monotonic() < deadline:
            if not targets():
                return
            time.sleep(0.2)
