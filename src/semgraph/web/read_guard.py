"""Per-token limits on the costly reads (``/search``, ``/localize``, ``/mcp``) and the audit
of what each token read.

**Limits.** Each caller (a token's name; without a token, the peer address) has a token
bucket of ``read_rate_per_s`` requests a second, ``read_rate_burst`` at once, and at most
``read_max_concurrent`` requests in flight. Over either it gets ``429`` with ``Retry-After``
(seconds, rounded up) and a JSON ``detail`` that says which; nothing runs. The counts are
this process's (one web replica): an operator running N replicas behind a balancer divides.

**Audit** (:func:`semgraph.audit.audit_read`): ``/search`` and ``/localize`` answers, and
every MCP tool call, are logged with the caller, the repository and the answer's size.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from semgraph.config import Settings
from semgraph.logs import event
from semgraph.web.context import ReadCaller, principal_of
from semgraph.web.limits import TokenBucket
from semgraph.web.metrics import READS_LIMITED
from semgraph.web.tokens import Principal

log = logging.getLogger(__name__)


class ReadLimiter:
    """Rate and concurrency per caller, for one application (thread-safe)."""

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.bucket = TokenBucket(settings.read_rate_per_s, settings.read_rate_burst, clock=clock)
        self.max_concurrent = settings.read_max_concurrent
        self._active: dict[str, int] = {}
        self._lock = threading.Lock()

    def enter(self, who: str) -> Callable[[], None]:
        """Admit one request of ``who`` (or raise 429); returns its release."""
        with self._lock:
            if self._active.get(who, 0) >= self.max_concurrent:
                _refuse(who, "concurrency", 1.0, f"{self.max_concurrent} requests in flight")
            wait = self.bucket.take(who)
            if wait > 0:
                _refuse(who, "rate", wait, f"over {self.bucket.rate:g} requests a second")
            self._active[who] = self._active.get(who, 0) + 1
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released:
                    return
                released = True
                left = self._active.get(who, 1) - 1
                if left > 0:
                    self._active[who] = left
                else:
                    self._active.pop(who, None)

        return release


def _refuse(who: str, limit: str, wait_s: float, why: str) -> None:
    READS_LIMITED.labels(limit=limit).inc()
    retry = max(1, math.ceil(wait_s))
    event(log, logging.INFO, "read_limited", f"{who}: {why}", who=who, limit=limit)
    raise HTTPException(
        status_code=429,
        detail=f"too many requests for this token: {why}; retry after {retry} s",
        headers={"Retry-After": str(retry)},
    )


def caller_key(request: Request, who: Principal) -> str:
    """A token's name, or ``address:<peer>`` for a read without one."""
    if who.name and who.name != "anonymous":
        return who.name
    client = request.client
    return f"address:{client.host if client else 'unknown'}"


def admit(request: Request, who: Principal) -> Callable[[], None]:
    """Admit a costly read of ``who`` (or raise 429); returns its release. The limiter is
    the application's (``create_app`` makes it with the app)."""
    limiter: ReadLimiter = request.app.state.read_limiter
    return limiter.enter(caller_key(request, who))


def admit_caller(request: Request) -> Callable[[], None]:
    """:func:`admit` for a route whose read rule already ran (``/mcp``)."""
    return admit(request, principal_of(request))


def limited_read(request: Request, who: ReadCaller) -> Iterator[Principal]:
    """The read rule, then the caller's limits, held until the answer is made."""
    release = admit(request, who)
    try:
        yield who
    finally:
        release()


#: a reader of a costly route: the read rule and the per-token limits
LimitedCaller = Annotated[Principal, Depends(limited_read)]
