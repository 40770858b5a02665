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
WEBHOOK_PHASE_SECONDS = Histogram(
    "semgraph_webhook_phase_seconds",
    "Where a webhook's acknowledgement time goes, by phase: body (reading it), check "
    "(signature, JSON, policy), batch_wait (queued for the next group commit), commit (the "
    "batch's graph transaction).",
    ["phase"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5, 10.0),
)
WEBHOOK_BATCH_SIZE = Histogram(
    "semgraph_webhook_batch_size",
    "Webhook enqueues committed together in one graph transaction (group commit).",
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
)
WEBHOOKS_IN_FLIGHT = Gauge(
    "semgraph_webhooks_in_flight",
    "Webhook requests received and not yet answered.",
)
API_READS_OPEN = Gauge(
    "semgraph_api_reads_open",
    "1 while read endpoints answer without a token because SEMGRAPH_API_READ_OPEN is set.",
)
AUTH_FAILURES = Counter(
    "semgraph_api_auth_failures_total",
    "API requests refused: unauthorized (no, unknown or expired token) or forbidden (scope).",
    ["reason"],
)
WEBHOOK_LIMITED = Counter(
    "semgraph_webhook_limited_total",
    "Webhook deliveries refused before any check: rate (429, per-client token bucket) or "
    "in_flight (503, too many deliveries at once).",
    ["reason"],
)

READS_LIMITED = Counter(
    "semgraph_reads_limited_total",
    "Search, localize and MCP requests refused with 429, by the limit hit: rate (a token's "
    "requests a second) or concurrency (its requests in flight).",
    ["limit"],
)
