"""The ``semgraph`` command line.

Every option maps to one ``SEMGRAPH_*`` environment variable (named in ``--help``); options
given on the command line override the environment. Errors print their cause chain on one
line each and exit non-zero; ``-v`` adds the traceback.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from semgraph import logs
from semgraph.commands import queue as queue_cli
from semgraph.commands.console import err, is_verbose, set_verbose
from semgraph.commands.enqueue import enqueue_cmd
from semgraph.commands.graph import graph_app, runs_app
from semgraph.commands.index import check_cmd, index_cmd
from semgraph.commands.mcp import mcp_cmd
from semgraph.commands.repos import repos_app
from semgraph.commands.search import search_cmd
from semgraph.commands.serve import serve
from semgraph.commands.services import doctor_cmd, init_cmd, services_app
from semgraph.config import load_settings
from semgraph.errors import SemgraphError, cause_chain

app = typer.Typer(
    name="semgraph",
    help="Keep a code graph and a semantic code-search index fresh for many git repositories.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(services_app, name="services")
app.command("init")(init_cmd)
app.command("doctor")(doctor_cmd)


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
    set_verbose(verbose)
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


# -- web (issue 7) ---------------------------------------------------------------------------


app.command("serve")(serve)
app.command("probe-worker")(queue_cli.probe_worker_cmd)


# -- search (issue 6) ------------------------------------------------------------------------


app.command("search")(search_cmd)
app.command("mcp")(mcp_cmd)  # the agent interface (issue 15)


# -- code graph + index runs (issue 5) --------------------------------------------------------


app.add_typer(graph_app, name="graph")
app.add_typer(runs_app, name="runs")
app.add_typer(repos_app, name="repos")  # repository lifecycle (issue 19)


# -- job queue + worker (issue 3) -------------------------------------------------------------


app.command("enqueue")(enqueue_cmd)
app.add_typer(queue_cli.jobs_app, name="jobs")
app.command("worker")(queue_cli.worker_cmd)


# -- the main job and the divergence check ---------------------------------------------------

app.command("index")(index_cmd)
app.command("check")(check_cmd)


# -- entry points ---------------------------------------------------------------------------


def _run(application: typer.Typer, args: list[str] | None = None) -> None:
    try:
        application(args=args, standalone_mode=True)
    except SemgraphError as exc:
        if is_verbose():
            err.print_exception()
        chain = cause_chain(exc)
        err.print(f"error: {chain[0].split(': ', 1)[-1]}", markup=False)
        for cause in chain[1:]:
            err.print(f"  caused by {cause}", markup=False)
        sys.exit(1)


def main() -> None:
    _run(app)


if __name__ == "__main__":
    main()
