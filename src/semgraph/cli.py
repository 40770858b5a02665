"""The ``semgraph`` command line.

Every option maps to one ``SEMGRAPH_*`` environment variable (named in ``--help``); options
given on the command line override the environment. Errors print their cause chain on one
line each and exit non-zero; ``-v`` adds the traceback.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

import typer

from semgraph.commands.invocation import Invocation, is_verbose, set_verbose
from semgraph.commands.lazy import LazyGroup
from semgraph.errors import SemgraphError, cause_chain

# name -> (module, attribute, help line). Each module is imported when its command runs or
# its own --help is asked, never for ``semgraph --help`` (tests/unit/test_cli_lazy.py checks
# that each help line is the command's own; the architecture test reads the modules).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": (
        "semgraph.commands.services",
        "init_cmd",
        "Create every constraint and index semgraph needs (idempotent, both dialects).",
    ),
    "doctor": (
        "semgraph.commands.services",
        "doctor_cmd",
        "Print server kinds, versions and health; exit 1 when a server is unreachable.",
    ),
    "serve": (
        "semgraph.commands.serve",
        "serve",
        "Serve webhooks (/webhooks/github|gitlab|gitea) and the HTTP API until stopped.",
    ),
    "probe-worker": (
        "semgraph.commands.queue",
        "probe_worker_cmd",
        "Exit 1 unless this host's worker heartbeat recently (Kubernetes liveness probe).",
    ),
    "search": (
        "semgraph.commands.search",
        "search_cmd",
        "Search indexed code: BM25 and kNN, each scaled to 0..1 and summed (score fusion).",
    ),
    "localize": (
        "semgraph.commands.localize",
        "localize_cmd",
        "Rank the files of REPO, and the symbols within them, that an issue text points to, "
        "each with its evidence: matching chunks, traceback frames, names, call-graph hops, "
        "past commit messages.",
    ),
    "mcp": (
        "semgraph.commands.mcp",
        "mcp_cmd",
        "Serve the Model Context Protocol on stdin/stdout (read-only tools for agents).",
    ),
    "enqueue": (
        "semgraph.commands.enqueue",
        "enqueue_cmd",
        "Queue a reindex of REPO (merged into its pending job if there is one). An unknown key "
        "is refused (exit 2) and nothing is queued: a job without a source could never run.",
    ),
    "worker": (
        "semgraph.commands.queue",
        "worker_cmd",
        "Run queued jobs one at a time until stopped (SIGTERM/SIGINT: graceful stop).",
    ),
    "index": (
        "semgraph.commands.index",
        "index_cmd",
        "Enqueue a reindex of SOURCE and run that job here until it finishes (older pending "
        "jobs of other repositories are left to the worker).",
    ),
    "check": (
        "semgraph.commands.index",
        "check_cmd",
        "Compare each repository's graph run id with the index behind its alias; exit 1 when "
        "any repository is diverged (and not repaired).",
    ),
    "services": (
        "semgraph.commands.services",
        "services_app",
        "The local service stack (Elasticsearch + Bolt graph server).",
    ),
    "graph": (
        "semgraph.commands.graph",
        "graph_app",
        "Query the code graph: definitions, callers, callees, imports.",
    ),
    "runs": ("semgraph.commands.graph", "runs_app", "Index runs: what each reindex did."),
    "repos": (
        "semgraph.commands.repos",
        "repos_app",
        "The repositories the graph knows: list, show, remove.",
    ),
    "jobs": ("semgraph.commands.queue", "jobs_app", "Inspect and steer the job queue."),
}


class RootGroup(LazyGroup):
    table = COMMANDS


app = typer.Typer(
    rich_markup_mode=None,
    name="semgraph",
    help="Keep a code graph and a semantic code-search index fresh for many git repositories.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=RootGroup,
)


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
    ctx.obj = Invocation(verbose=verbose, overrides=overrides)  # settings load when used


# -- entry points ---------------------------------------------------------------------------


def _run(application: typer.Typer, args: list[str] | None = None) -> None:
    try:
        application(args=args, standalone_mode=True)
    except SemgraphError as exc:
        if is_verbose():
            traceback.print_exc()
        chain = cause_chain(exc)
        typer.echo(f"error: {chain[0].split(': ', 1)[-1]}", err=True)
        for cause in chain[1:]:
            typer.echo(f"  caused by {cause}", err=True)
        sys.exit(1)


def main() -> None:
    _run(app)


if __name__ == "__main__":
    main()
