"""``semgraph serve``: the webhook receiver and HTTP API on uvicorn.

Before it binds anything it refuses a configuration that would publish indexed code: reads
with no API token configured are served on a loopback address only (one line naming the two
ways out). With ``--webhook-port`` it also listens on a second, webhook-only port (for the
public ingress: ``/webhooks/*``, ``/healthz``, ``/readyz``; anything else there is 404).
SIGHUP rereads the API tokens file.

SIGTERM (or Ctrl-C) stops it gracefully: it stops accepting connections, lets in-flight
requests finish (their enqueues committed; at most ``web_shutdown_timeout_s``), commits
what the enqueue batcher still holds, closes the connections and exits 0.
"""

from __future__ import annotations

import logging
import socket
import sys
from typing import TYPE_CHECKING

import typer

from semgraph.commands.console import settings_from
from semgraph.errors import ConfigError

if TYPE_CHECKING:
    from semgraph.config import Settings

log = logging.getLogger(__name__)


def _listeners(settings: Settings) -> list[tuple[str, int]]:
    main = (settings.web_host, settings.web_port)
    if settings.webhook_port is None:
        return [main]
    hooks = (settings.webhook_host or settings.web_host, settings.webhook_port)
    if hooks[1] == main[1]:
        raise ConfigError("SEMGRAPH_WEBHOOK_PORT must differ from SEMGRAPH_WEB_PORT")
    return [main, hooks]


def _bind(listeners: list[tuple[str, int]]) -> list[socket.socket]:
    from semgraph.logs import event
    from semgraph.web.server import bind_socket

    sockets: list[socket.socket] = []
    try:
        for host, port in listeners:
            sockets.append(bind_socket(host, port))
    except OSError as exc:
        for sock in sockets:
            sock.close()
        event(log, logging.ERROR, "web_start_failed", f"cannot listen on {host}:{port}: {exc}")
        raise typer.Exit(3) from exc
    return sockets


def _refuse_unsafe_graph(settings: Settings) -> None:
    """Refuse a graph server the queue cannot run on (Memgraph in IN_MEMORY_ANALYTICAL:
    :func:`semgraph.doctor.refuse_unsafe_graph`) before anything is bound. A server that
    that cannot be reached yet, or answers the question with an error (credentials, privileges),
    is logged and not waited for: serve starts as it always did (``/readyz`` tells)."""
    from semgraph.db import connect_graph
    from semgraph.doctor import refuse_unsafe_graph
    from semgraph.errors import GraphError
    from semgraph.logs import event

    try:
        with connect_graph(settings) as graph:
            refuse_unsafe_graph(graph)
    except GraphError as exc:
        event(log, logging.WARNING, "web_graph_unchecked", f"storage mode not checked: {exc}")


def serve(
    ctx: typer.Context,
    host: str | None = typer.Option(None, help="Address to bind (env SEMGRAPH_WEB_HOST)."),
    port: int | None = typer.Option(
        None, min=1, max=65535, help="Port to listen on (env SEMGRAPH_WEB_PORT)."
    ),
    webhook_port: int | None = typer.Option(
        None,
        min=1,
        max=65535,
        help="Also listen here for webhooks only (env SEMGRAPH_WEBHOOK_PORT).",
    ),
    webhook_host: str | None = typer.Option(
        None, help="Address of the webhook-only port (env SEMGRAPH_WEBHOOK_HOST)."
    ),
) -> None:
    """Serve webhooks (/webhooks/github|gitlab|gitea) and the HTTP API until stopped."""
    from semgraph.doctor import exposure_refusal
    from semgraph.logs import event
    from semgraph.web.app import create_app
    from semgraph.web.server import (
        GracefulServer,
        server_config,
    )

    base = settings_from(ctx)
    overrides = {
        k: v
        for k, v in {
            "web_host": host,
            "web_port": port,
            "webhook_port": webhook_port,
            "webhook_host": webhook_host,
        }.items()
        if v is not None
    }
    settings = base.model_copy(update=overrides)
    refusal = exposure_refusal(settings)
    if refusal is not None:
        raise ConfigError(refusal)  # before anything is bound or connected
    _refuse_unsafe_graph(settings)
    listeners = _listeners(settings)
    app = create_app(settings)
    config = server_config(app, settings.web_host, settings.web_port)
    config.timeout_graceful_shutdown = max(1, round(settings.web_shutdown_timeout_s))
    sys.setswitchinterval(settings.web_gil_switch_interval_s)
    sockets = _bind(listeners)
    server = GracefulServer(config, on_hangup=app.state.ctx.tokens.reload)
    try:
        server.run(sockets=sockets)
    finally:
        for sock in sockets:
            sock.close()
    if not server.started:
        event(log, logging.ERROR, "web_start_failed", "the web server did not start")
        raise typer.Exit(3)
