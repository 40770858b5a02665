"""``semgraph serve``: the webhook receiver and HTTP API on uvicorn."""

from __future__ import annotations

import typer
import uvicorn


def serve(
    ctx: typer.Context,
    host: str | None = typer.Option(None, help="Address to bind (env SEMGRAPH_WEB_HOST)."),
    port: int | None = typer.Option(
        None, min=1, max=65535, help="Port to listen on (env SEMGRAPH_WEB_PORT)."
    ),
) -> None:
    """Serve webhooks (/webhooks/github|gitlab|gitea) and the HTTP API until stopped."""
    from semgraph.cli import settings_from
    from semgraph.web.app import create_app

    base = settings_from(ctx)
    overrides = {k: v for k, v in {"web_host": host, "web_port": port}.items() if v is not None}
    settings = base.model_copy(update=overrides)
    application = create_app(settings)
    uvicorn.run(
        application,
        host=settings.web_host,
        port=settings.web_port,
        log_config=None,  # keep semgraph's structured logging
        access_log=False,
        timeout_graceful_shutdown=30,
    )
