"""The servers: the local service stack (``semgraph services``), the graph schema
(``semgraph init``) and the health of the configured servers (``semgraph doctor``)."""

from __future__ import annotations

from typing import Any

import typer

from semgraph.commands.console import emit_json, json_option, out, settings_from

services_app = typer.Typer(
    rich_markup_mode=None,
    help="The local service stack (Elasticsearch + Bolt graph server).",
    no_args_is_help=True,
)


def _print_states(states: list[Any], as_json: bool) -> None:
    if as_json:
        emit_json(
            [
                {
                    "name": s.name,
                    "pid": s.pid,
                    "running": s.running,
                    "healthy": s.healthy,
                    "url": s.url,
                    "detail": s.detail,
                    "heap_mb": s.heap_mb,
                    "tx_memory_mb": s.tx_memory_mb,
                }
                for s in states
            ]
        )
        return
    for s in states:
        status = "healthy" if s.healthy else ("running, not healthy" if s.running else "stopped")
        detail = f"  {s.detail}" if s.detail else ""
        out.print(f"{s.name:<14} {status:<22} pid={s.pid or '-':<8} {s.url}{detail}", markup=False)


@services_app.command("up")
def services_up(
    ctx: typer.Context,
    as_json: bool = json_option(),
) -> None:
    """Start Elasticsearch and the Bolt graph server (no-op when already running)."""
    from semgraph.services import Stack

    _print_states(Stack(settings_from(ctx)).up(), as_json)


@services_app.command("down")
def services_down(ctx: typer.Context) -> None:
    """Stop the services this state directory started (pid files), nothing else."""
    from semgraph.services import Stack

    stopped = Stack(settings_from(ctx)).down()
    out.print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))


@services_app.command("model")
def services_model(ctx: typer.Context) -> None:
    """Prepare the embedding model now: on the CPU backend, its OpenVINO export (minutes,
    once per model, a log line every 10 s), so the first index does not wait for it."""
    import time

    from semgraph.errors import EmbeddingError
    from semgraph.search.embed import Embedder

    started = time.perf_counter()
    embedder = Embedder(settings_from(ctx))
    try:
        embedder.embed(["warm up"])
    except EmbeddingError as exc:
        out.print(f"embedding model not ready: {exc}", markup=False)
        raise typer.Exit(1) from exc
    took = time.perf_counter() - started
    out.print(f"embedding model ready: {embedder.model_id} ({took:.1f} s)", markup=False)


@services_app.command("status")
def services_status(
    ctx: typer.Context,
    as_json: bool = json_option(),
) -> None:
    """Show whether each local service runs and answers; exit 1 unless all are healthy."""
    from semgraph.services import Stack

    states = Stack(settings_from(ctx)).status()
    _print_states(states, as_json)
    if not all(s.healthy for s in states):
        raise typer.Exit(1)


def init_cmd(ctx: typer.Context) -> None:
    """Create every constraint and index semgraph needs (idempotent, both dialects)."""
    from semgraph.db import connect_graph
    from semgraph.graph.schema import SCHEMA

    with connect_graph(settings_from(ctx)) as graph:
        graph.ensure_schema(SCHEMA)
        kind = graph.dialect.kind.value
        statements = len(graph.dialect.schema_ddl(SCHEMA))
    out.print(f"schema ready on {kind}: {statements} constraints and indexes present")


def doctor_cmd(
    ctx: typer.Context,
    as_json: bool = json_option(),
) -> None:
    """Print server kinds, versions and health; exit 1 when a server is unreachable."""
    from semgraph.doctor import run_doctor

    checks = run_doctor(settings_from(ctx))
    if as_json:
        emit_json([c.__dict__ for c in checks])
    else:
        for c in checks:
            out.print(f"{c.name:<7} {'ok ' if c.ok else 'FAIL'} {c.detail}", markup=False)
            for w in c.warnings:
                out.print(f"WARNING {w}", style="bold red", markup=False)
    if not all(c.ok for c in checks):
        raise typer.Exit(1)
