"""``semgraph serve``: the webhook receiver and HTTP API on uvicorn.

SIGTERM (or Ctrl-C) stops it gracefully: it stops accepting connections, lets in-flight
requests finish (their enqueues committed; at most ``web_shutdown_timeout_s``), commits
what the enqueue batcher still holds, closes the connections and exits 0.
"""

from __future__ import annotations

import logging
import sys

import typer

from semgraph.commands.console import settings_from
from semgraph.logs import event
from semgraph.web.app import create_app
from semgraph.web.server import GracefulServer, server_config

log = logging.getLogger(__name__)


def serve(
    ctx: typer.Context,
    host: str | None = typer.Option(None, help="Address to bind (env SEMGRAPH_WEB_HOST)."),
    port: int | None = typer.Option(
        None, min=1, max=65535, help="Port to listen on (env SEMGRAPH_WEB_PORT)."
    ),
) -> None:
    """Serve webhooks (/webhooks/github|gitlab|gitea) and the HTTP API until stopped."""
    base = settings_from(ctx)
    overrides = {k: v for k, v in {"web_host": host, "web_port": port}.items() if v is not None}
    settings = base.model_copy(update=overrides)
    config = server_config(create_app(settings), settings.web_host, settings.web_port)
    config.timeout_graceful_shutdown = max(1, round(settings.web_shutdown_timeout_s))
    sys.setswitchinterval(settings.web_gil_switch_interval_s)
    server = GracefulServer(config)
    server.run()
    if not server.started:
        event(log, logging.ERROR, "web_start_failed", "the web server did not start")
        raise typer.Exit(3)
