"""The ``semgraph`` command line.

Every option maps to one ``SEMGRAPH_*`` environment variable (named in ``--help``); options
given on the command line override the environment. Errors print their cause chain on one
line each and exit non-zero; ``-v`` adds the traceback.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from rich.console import Console

from semgraph import logs
from semgraph.config import Settings, load_settings
from semgraph.errors import SemgraphError, cause_chain

app = typer.Typer(
    name="semgraph",
    help="Keep a code graph and a semantic code-search index fresh for many git repositories.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
services_app = typer.Typer(
    help="The local service stack (Elasticsearch + Bolt graph server).", no_args_is_help=True
)
app.add_typer(services_app, name="services")

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class _State:
    verbose = False


def is_verbose() -> bool:
    """Whether ``-v`` was given (tracebacks and detail)."""
    return _State.verbose


def settings_from(ctx: typer.Context) -> Settings:
    settings = ctx.obj if isinstance(ctx.obj, Settings) else None
    if settings is None:
        root = ctx.find_root()
        if not isinstance(root.obj, Settings):
            root.obj = load_settings()
        settings = root.obj
    return settings


@app.callback()
def main_callback(
    ctx: typer.Context,
    verbose: bool = typer.Option(
        False,
        "--verbose",
        "-v",
        envvar="SEMGRAPH_VERBOSE",
        show_envvar=True,
        help="Show tracebacks and debug logs.",
    ),
    bolt_uri: str | None = typer.Option(
        None, envvar="SEMGRAPH_BOLT_URI", show_envvar=True, help="Bolt URI of the graph server."
    ),
    es_url: str | None = typer.Option(
        None, envvar="SEMGRAPH_ES_URL", show_envvar=True, help="Elasticsearch URL."
    ),
    state_dir: str | None = typer.Option(
        None, envvar="SEMGRAPH_STATE_DIR", show_envvar=True, help="State directory."
    ),
    log_json: bool | None = typer.Option(
        None,
        "--log-json/--no-log-json",
        envvar="SEMGRAPH_LOG_JSON",
        show_envvar=True,
        help="JSON log lines.",
    ),
) -> None:
    _State.verbose = verbose
    overrides: dict[str, Any] = {
        k: v
        for k, v in {
            "bolt_uri": bolt_uri,
            "es_url": es_url,
            "state_dir": state_dir,
            "log_json": log_json,
        }.items()
        if v is not None
    }
    settings = load_settings(**overrides)
    logs.configure("DEBUG" if verbose else settings.log_level, settings.log_json)
    ctx.obj = settings


def emit_json(data: Any) -> None:
    out.out(json.dumps(data, indent=2, sort_keys=True, default=str))


# -- services -------------------------------------------------------------------------------


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
    as_json: bool = typer.Option(
        False, "--json", envvar="SEMGRAPH_JSON", show_envvar=True, help="Machine-readable output."
    ),
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


@services_app.command("status")
def services_status(
    ctx: typer.Context,
    as_json: bool = typer.Option(
        False, "--json", envvar="SEMGRAPH_JSON", show_envvar=True, help="Machine-readable output."
    ),
) -> None:
    """Show whether each local service runs and answers; exit 1 unless all are healthy."""
    from semgraph.services import Stack

    states = Stack(settings_from(ctx)).status()
    _print_states(states, as_json)
    if not all(s.healthy for s in states):
        raise typer.Exit(1)


# -- init / doctor ----------------------------------------------------------------------------


@app.command("init")
def init_cmd(ctx: typer.Context) -> None:
    """Create every constraint and index semgraph needs (idempotent, both dialects)."""
    from semgraph.db import connect_graph
    from semgraph.graph.schema import SCHEMA

    with connect_graph(settings_from(ctx)) as graph:
        graph.ensure_schema(SCHEMA)
        kind = graph.dialect.kind.value
        statements = len(graph.dialect.schema_ddl(SCHEMA))
    out.print(f"schema ready on {kind}: {statements} constraints and indexes present")


@app.command("doctor")
def doctor_cmd(
    ctx: typer.Context,
    as_json: bool = typer.Option(
        False, "--json", envvar="SEMGRAPH_JSON", show_envvar=True, help="Machine-readable output."
    ),
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


# -- web (issue 7) ---------------------------------------------------------------------------

from semgraph.web.cli import serve  # noqa: E402
from semgraph.web.probes import probe_worker_cmd  # noqa: E402

app.command("serve")(serve)
app.command("probe-worker")(probe_worker_cmd)


# -- search (issue 6) ------------------------------------------------------------------------

from semgraph.search.cli import search_cmd  # noqa: E402

app.command("search")(search_cmd)


# -- code graph + index runs (issue 5) --------------------------------------------------------

from semgraph.graph.cli import graph_app, runs_app  # noqa: E402

app.add_typer(graph_app, name="graph")
app.add_typer(runs_app, name="runs")


# -- job queue + worker (issue 3) -------------------------------------------------------------

from semgraph.queue import cli as queue_cli  # noqa: E402

app.command("enqueue")(queue_cli.enqueue_cmd)
app.add_typer(queue_cli.jobs_app, name="jobs")
app.command("worker")(queue_cli.worker_cmd)


# -- the main job and the divergence check ---------------------------------------------------
from semgraph.index_cli import check_cmd, index_cmd  # noqa: E402

app.command("index")(index_cmd)
app.command("check")(check_cmd)


# -- entry points ---------------------------------------------------------------------------


def _run(application: typer.Typer, args: list[str] | None = None) -> None:
    try:
        application(args=args, standalone_mode=True)
    except SemgraphError as exc:
        if _State.verbose:
            err.print_exception()
        chain = cause_chain(exc)
        err.print(f"error: {chain[0].split(': ', 1)[-1]}", markup=False)
        for cause in chain[1:]:
            err.print(f"  caused by {cause}", markup=False)
        sys.exit(1)


def main() -> None:
    _run(app)


def services_main() -> None:
    _run(app, ["services", *sys.argv[1:]])


if __name__ == "__main__":
    main()
