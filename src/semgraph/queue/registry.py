"""Job kinds: ``register(kind, fn)``; the worker looks kinds up here.

The worker command registers ``reindex`` explicitly
(:func:`semgraph.jobs.register_job_kinds`); deployments and tests add modules through the
``job_modules`` setting. Production code registers no kind that exists only for tests.
"""

from __future__ import annotations

import importlib
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from semgraph.config import Settings
from semgraph.errors import CancelReason, ConfigError, JobCancelled, QueueInputError
from semgraph.logs import event

if TYPE_CHECKING:
    from semgraph.db import Graph

log = logging.getLogger(__name__)

_KIND_RE = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")
_MODULE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True)
class JobInfo:
    """What a running job may know about itself."""

    id: str
    kind: str
    repo_key: str
    args: dict[str, Any]
    ref: str | None
    commit: str | None
    attempts: int
    crash_count: int


@dataclass
class JobContext:
    """Handed to a job function. Call :meth:`checkpoint` between phases."""

    job: JobInfo
    settings: Settings
    graph: Graph
    worker_id: str
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    _cancel_reason: CancelReason = field(default=CancelReason.CANCELLED, repr=False)
    last_checkpoint: str | None = None
    #: the files the job found in its repository, when it knows (a reindex that parsed):
    #: recorded with the job's completion as the repository's size (semgraph.queue.lanes)
    files: int | None = None

    def cancel(self, reason: CancelReason, *, override: bool = False) -> None:
        """Ask the job to stop at its next checkpoint (called by the worker). The first
        reason sticks unless ``override`` (a timeout overrides a pending shutdown)."""
        if override or not self._cancel.is_set():
            self._cancel_reason = reason
            self._cancel.set()

    @property
    def cancel_requested(self) -> CancelReason | None:
        return self._cancel_reason if self._cancel.is_set() else None

    def checkpoint(self, name: str) -> None:
        """Record progress; raise :class:`JobCancelled` if the job must stop here."""
        self.last_checkpoint = name
        if self._cancel.is_set():
            raise JobCancelled(
                f"job {self.job.id} stopped at checkpoint {name!r}: {self._cancel_reason}",
                reason=self._cancel_reason,
            )


JobFn = Callable[[JobContext], None]
_KINDS: dict[str, JobFn] = {}


def _same(registered: Callable[..., Any], fn: Callable[..., Any]) -> bool:
    """The same function, or the same method of an object of its class: the job kinds of a
    worker, built again where a worker starts (tests start several in one process)."""
    method = getattr(fn, "__func__", None)
    return registered is fn or (
        method is not None and getattr(registered, "__func__", None) is method
    )


def register(kind: str, fn: JobFn) -> None:
    """Register ``fn`` to run jobs of ``kind`` (idempotent for the same function; the same
    method of a newer object replaces the older one's)."""
    if not _KIND_RE.match(kind):
        raise QueueInputError(f"invalid job kind {kind!r}: lowercase letters, digits, _ . -")
    existing = _KINDS.get(kind)
    if existing is not None and not _same(existing, fn):
        raise QueueInputError(f"job kind {kind!r} is already registered to {existing!r}")
    _KINDS[kind] = fn


MaintenanceHook = Callable[[Settings, "Graph"], None]
_MAINTENANCE: list[MaintenanceHook] = []


def on_maintenance(fn: MaintenanceHook) -> None:
    """Run ``fn(settings, graph)`` at worker start (after the sweep) and at every periodic
    rescue. The job kinds register the maintenance passes here (:mod:`semgraph.jobs`). A
    hook that raises is logged; it never stops the worker. Registered again, a hook keeps
    its place (the same method of a newer object takes the older one's)."""
    for i, hook in enumerate(_MAINTENANCE):
        if _same(hook, fn):
            _MAINTENANCE[i] = fn
            return
    _MAINTENANCE.append(fn)


def maintenance_hooks() -> list[MaintenanceHook]:
    return list(_MAINTENANCE)


def unregister(kind: str) -> None:
    _KINDS.pop(kind, None)


def lookup(kind: str) -> JobFn | None:
    return _KINDS.get(kind)


def kinds() -> list[str]:
    return sorted(_KINDS)


def load_job_modules(settings: Settings) -> list[str]:
    """Import every module named in ``job_modules`` (each registers its kinds on import)."""
    loaded: list[str] = []
    for name in (n.strip() for n in settings.job_modules.split(",")):
        if not name:
            continue
        if not _MODULE_RE.match(name):
            raise ConfigError(f"SEMGRAPH_JOB_MODULES: {name[:200]!r} is not a module name")
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ConfigError(f"SEMGRAPH_JOB_MODULES: cannot import {name!r}: {exc}") from exc
        loaded.append(name)
    event(log, logging.DEBUG, "job_modules_loaded", modules=",".join(loaded), kinds=kinds())
    return loaded
