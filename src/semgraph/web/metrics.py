"""What the web server counts (served with everything else at ``GET /metrics``)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

WEBHOOK_DELIVERIES = Counter(
    "semgraph_webhook_deliveries_total",
    "Webhook deliveries by host and outcome (queued, coalesced, follow_up, duplicate, ignored, "
    "pong, unauthorized, forbidden, bad_request, too_large, unsupported_type, unavailable).",
    ["host", "outcome"],
)
WEBHOOK_ACK_SECONDS = Histogram(
    "semgraph_webhook_ack_seconds",
    "Time from receiving a webhook body to answering it.",
    ["host"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5, 5.0, 10.0),
)
HTTP_REQUESTS = Counter(
    "semgraph_http_requests_total",
    "HTTP API requests by route template and status code.",
    ["route", "status"],
)
WORKERS_ALIVE = Gauge(
    "semgraph_workers_alive",
    "Workers whose heartbeat lease has not expired (read from the graph at scrape time).",
)
