"""Abuse limits on the public side: a per-client token bucket and a bound on the deliveries
in flight, both for ``/webhooks/*`` only and both applied before anything reads the body or
checks a signature, so a flood of unsigned deliveries costs a dictionary lookup each.

A client is the peer address uvicorn reports (behind a proxy, the address it forwards when
``--forwarded-allow-ips`` trusts it). Over its rate it gets 429 with ``Retry-After``; past
``webhook_max_in_flight`` deliveries at once, 503 with ``Retry-After``: git hosts redeliver.
"""

from __future__ import annotations

import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from semgraph.config import Settings
from semgraph.web.metrics import WEBHOOK_LIMITED

WEBHOOK_PREFIX = "/webhooks/"
MAX_CLIENTS = 10_000  # buckets kept; the least recently seen client is forgotten first


class TokenBucket:
    """Per-key token buckets: ``rate_per_s`` tokens a second, at most ``burst``."""

    def __init__(
        self,
        rate_per_s: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = MAX_CLIENTS,
    ) -> None:
        self.rate = rate_per_s
        self.burst = float(burst)
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, key: str) -> float:
        """0 when ``key`` may proceed (one token taken), else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        now = self._clock()
        tokens, last = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        wait = 0.0
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / self.rate
        self._buckets[key] = (tokens, now)
        while len(self._buckets) > self._max_keys:
            self._buckets.popitem(last=False)
        return wait


async def _refuse(send: Send, status: int, retry_after_s: float, body: dict[str, str]) -> None:
    payload = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        (b"retry-after", str(max(1, math.ceil(retry_after_s))).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


class WebhookLimits:
    """The ASGI middleware that holds both limits."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.bucket = TokenBucket(settings.webhook_rate_per_s, settings.webhook_rate_burst)
        self.max_in_flight = settings.webhook_max_in_flight
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(WEBHOOK_PREFIX):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        wait = self.bucket.take(str(client[0]) if client else "unknown")
        if wait > 0:
            WEBHOOK_LIMITED.labels(reason="rate").inc()
            detail = "too many deliveries from this client; retry later"
            await _refuse(send, 429, wait, {"status": "rate_limited", "detail": detail})
            return
        if self.in_flight >= self.max_in_flight:
            WEBHOOK_LIMITED.labels(reason="in_flight").inc()
            detail = "too many deliveries in flight; retry later"
            await _refuse(send, 503, 1, {"status": "busy", "detail": detail})
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
