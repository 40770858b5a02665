"""One alert path for every producer (divergence, quarantine, a job failing permanently).

An alert is: a CRITICAL log record with a stable ``action``, a Prometheus counter
(``semgraph_alerts_total{action=...}``), and, when ``alert_webhook_url`` is configured, an
HTTP POST (Slack-compatible ``{"text": ...}`` or a generic JSON body) retried with
exponential backoff. A failing sink is logged and never raises: an alert can not fail a job.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import httpx
from prometheus_client import Counter

from semgraph.config import Settings
from semgraph.logs import event

log = logging.getLogger(__name__)

ALERTS = Counter("semgraph_alerts_total", "Alerts fired, by action.", ["action"])
ALERT_SINK_FAILURES = Counter(
    "semgraph_alert_sink_failures_total", "Alert webhook deliveries that failed after retries."
)


def alert_body(style: str, action: str, summary: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The JSON body sent to the alert webhook."""
    if style == "slack":
        details = ", ".join(f"{k}={v}" for k, v in sorted(fields.items()))
        return {
            "text": f":rotating_light: semgraph {action}: {summary}"
            + (f" ({details})" if details else "")
        }
    return {"source": "semgraph", "action": action, "summary": summary, "fields": fields}


class Alerter:
    def __init__(
        self,
        settings: Settings,
        post: Callable[..., httpx.Response] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = settings.alert_webhook_url
        self.style = settings.alert_webhook_style
        self.attempts = settings.alert_webhook_attempts
        self.timeout_s = settings.alert_webhook_timeout_s
        self._post = post or httpx.post
        self._sleep = sleep

    def fire(self, action: str, summary: str, **fields: Any) -> bool:
        """Raise an alert. Returns whether the webhook (if any) accepted it; never raises."""
        ALERTS.labels(action=action).inc()
        event(log, logging.CRITICAL, action, summary, alert=True, **fields)
        if not self.url:
            return True
        body = alert_body(self.style, action, summary, {k: str(v) for k, v in fields.items()})
        for attempt in range(1, self.attempts + 1):
            try:
                resp = self._post(self.url, json=body, timeout=self.timeout_s)
                if resp.status_code < 300:
                    return True
                problem = f"HTTP {resp.status_code}"
            except Exception as exc:  # a sink must never fail the caller
                problem = f"{type(exc).__name__}: {exc}"
            event(
                log,
                logging.WARNING,
                "alert_sink_failed",
                problem,
                attempt=attempt,
                alert_action=action,
            )
            if attempt < self.attempts:
                self._sleep(min(0.5 * 2 ** (attempt - 1), 10.0))
        ALERT_SINK_FAILURES.inc()
        return False
