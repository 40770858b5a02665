"""``semgraph graph def|callers|callees|impact|imports`` and ``semgraph runs list|show``.

Like every command module, it imports what a command uses when that command runs, so that
``--help`` answers at once (the graph driver alone costs a few tenths of a second)."""

from __future__ import annotations

import datetime
import json
from typing import Any

import typer

from semgraph.commands.console import emit_json, env_option, out, settings_from
from semgraph.errors import GraphInputError, RunStateError

graph_app = typer.Typer(
    rich_markup_mode=None,
    help="Query the code graph: definitions, callers, callees, imports.",
    no_args_is_help=True,
)
runs_app = typer.Typer(
    rich_markup_mode=None, help="Index runs: what each reindex did.", no_args_is_help=True
)

REPO_HELP = "Only this repository (its key)."
LIMIT_HELP = "At most this many results (bounded by SEMGRAPH_GRAPH_MAX_LIMIT)."
DEPTH_HELP = "Levels (bounded by SEMGRAPH_GRAPH_MAX_DEPTH)."
JSON_HELP = "Print JSON."
NAME_HELP = "Short or qualified name."


# Every flag names its environment variable in --help. None of them is a setting (the
# bounds are: SEMGRAPH_GRAPH_MAX_LIMIT, SEMGRAPH_GRAPH_MAX_DEPTH), so each gets
# SEMGRAPH_<COMMAND>_<FLAG>; --json is SEMGRAPH_JSON as everywhere in the CLI.
def _repo(group: str) -> Any:
    return env_option(None, "--repo", env=f"SEMGRAPH_{group}_REPO", help=REPO_HELP)


def _limit(default: int, group: str = "GRAPH", help: str = LIMIT_HELP) -> Any:
    return env_option(default, "--limit", env=f"SEMGRAPH_{group}_LIMIT", help=help)


def _depth() -> Any:
    return env_option(1, "--depth", env="SEMGRAPH_GRAPH_DEPTH", help=DEPTH_HELP)


def _across() -> Any:
    return env_option(
        False,
        "--across-repos",
        env="SEMGRAPH_GRAPH_ACROSS_REPOS",
        help="Follow cross-repository links (tier cross_repo) into other repositories.",
    )


def _json() -> Any:
    return env_option(False, "--json", env="SEMGRAPH_JSON", help=JSON_HELP)


def _reader_call(ctx: typer.Context, method: str, *args: Any, **kwargs: Any) -> Any:
    from semgraph.db import connect_graph
    from semgraph.graph.reader import GraphReader

    settings = settings_from(ctx)
    with connect_graph(settings) as graph:
        reader = GraphReader(graph, settings.graph_max_limit, settings.graph_max_depth)
        return getattr(reader, method)(*args, **kwargs)


def _print_symbol(s: dict[str, Any]) -> str:
    return f"{s['qualified_name']}  [{s['kind']}]  {s['repo']}:{s['path']}:{s['start_line']}"


def _print_answer(answer: Any, as_json: bool) -> None:
    if as_json:
        emit_json(answer.to_dict())
        return
    if not answer.matches:
        out.print(f"no symbol or file matches {answer.name!r}", markup=False)
        return
    if answer.query == "definitions" or answer.ambiguous:
        if answer.ambiguous and answer.query != "definitions":
            out.print(f"{answer.name!r} is ambiguous; candidates:", markup=False)
        for s in answer.matches:
            out.print(_print_symbol(s) if "qualified_name" in s else s["path"], markup=False)
    else:
        _print_edges(answer)
    if answer.truncated:
        out.print("(truncated: raise --limit to see more)")


def _print_edges(answer: Any) -> None:
    if answer.query == "imports":
        for e in answer.edges:
            arrow = "->" if e["direction"] == "imports" else "<-"
            out.print(f"{arrow} {e['target']}  [{e['kind']}]  line {e['line']}", markup=False)
    else:
        arrow = "<-" if answer.query == "callers" else "->"
        for e in answer.edges:
            tier = e["tier"] + (f" of {e['candidates']}" if e["tier"] == "ambiguous" else "")
            tier = "candidate: name only" if tier == "ambiguous of 1" else tier
            indent = "  " * (e["depth"] - 1)
            out.print(
                f"{indent}{arrow} {e['qualified_name']}  [{tier}]  {e['path']}:{e['line']}",
                markup=False,
            )
        if not answer.edges:
            out.print(f"no {answer.query} found", markup=False)
    if len(answer.repositories) > 1:
        out.print(f"repositories covered: {', '.join(answer.repositories)}", markup=False)
    unresolved = ", ".join(f"{k}={v}" for k, v in answer.unresolved_in_scope.items())
    if unresolved:
        out.print(f"not resolved in scope: {unresolved}", markup=False)


@graph_app.command("def")
def def_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help=NAME_HELP),
    repo: str | None = _repo("GRAPH"),
    limit: int = _limit(20),
    as_json: bool = _json(),
) -> None:
    """Where NAME is defined (every candidate when it is ambiguous)."""
    _print_answer(_reader_call(ctx, "definitions", name, repo=repo, limit=limit), as_json)


def _calls(ctx: typer.Context, direction: str, name: str, depth: int, **kw: Any) -> Any:
    """The reader's walk of the call graph (:meth:`semgraph.graph.reader.GraphReader.calls`),
    a depth under 1 refused first, naming the flag."""
    if depth < 1:
        raise GraphInputError("--depth must be at least 1")
    return _reader_call(ctx, "calls", direction, name, depth=depth, **kw)


def _calls_command(direction: str, doc: str) -> None:
    """``graph callers`` and ``graph callees``: one command each, the walk's direction apart."""

    def command(
        ctx: typer.Context,
        name: str = typer.Argument(..., help=NAME_HELP),
        repo: str | None = _repo("GRAPH"),
        depth: int = _depth(),
        limit: int = _limit(50),
        across_repos: bool = _across(),
        as_json: bool = _json(),
    ) -> None:
        answer = _calls(
            ctx, direction, name, depth, repo=repo, limit=limit, across_repos=across_repos
        )
        _print_answer(answer, as_json)

    command.__doc__ = doc
    graph_app.command(direction)(command)


_calls_command("callers", "Who calls NAME, each edge with its resolution tier.")
_calls_command("callees", "What NAME calls, each edge with its resolution tier.")


@graph_app.command("impact")
def impact_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help=NAME_HELP),
    repo: str | None = _repo("GRAPH"),
    depth: int = env_option(3, "--depth", env="SEMGRAPH_GRAPH_IMPACT_DEPTH", help=DEPTH_HELP),
    limit: int = _limit(200),
    across_repos: bool = _across(),
    as_json: bool = _json(),
) -> None:
    """What a change of NAME may affect: its transitive callers, by repository."""
    answer = _calls(ctx, "callers", name, depth, repo=repo, limit=limit, across_repos=across_repos)
    answer.query = "impact"
    if as_json or answer.ambiguous or not answer.matches:
        _print_answer(answer, as_json)
        return
    per_repo: dict[str, set[str]] = {}
    for e in answer.edges:
        per_repo.setdefault(str(e["repo"]), set()).add(str(e["qualified_name"]))
    for key, names in sorted(per_repo.items()):
        out.print(f"{key}: {len(names)} symbols", markup=False)
        for n in sorted(names):
            out.print(f"  {n}", markup=False)
    if not per_repo:
        out.print("no callers: nothing else is affected", markup=False)


@graph_app.command("imports")
def imports_cmd(
    ctx: typer.Context,
    path: str = typer.Argument(..., help="Repository-relative file path."),
    repo: str | None = _repo("GRAPH"),
    limit: int = _limit(200),
    as_json: bool = _json(),
) -> None:
    """What the file at PATH imports, and which files import it."""
    _print_answer(_reader_call(ctx, "imports", path, repo=repo, limit=limit), as_json)


def _run_store(ctx: typer.Context) -> Any:
    from semgraph.db import connect_graph
    from semgraph.graph.runs import RunStore

    graph = connect_graph(settings_from(ctx))
    return graph, RunStore(graph)


def iso_utc(ts: object) -> str:
    """``2026-12-01T14:25:51Z`` for an epoch timestamp; ``-`` when there is none."""
    if not isinstance(ts, int | float):
        return "-"
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def duration(started: object, finished: object) -> str:
    """``1m 4.2s`` from two epoch timestamps; ``-`` while the run has not finished."""
    if not isinstance(started, int | float) or not isinstance(finished, int | float):
        return "-"
    seconds = max(finished - started, 0.0)
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m {rest:.0f}s" if minutes < 60 else f"{minutes / 60:.1f}h"


@runs_app.command("list")
def runs_list(
    ctx: typer.Context,
    repo: str | None = _repo("RUNS"),
    status: str | None = env_option(
        None, "--status", env="SEMGRAPH_RUNS_STATUS", help="Only runs with this status."
    ),
    limit: int = _limit(20, "RUNS", "At most this many runs (1-10000)."),
    as_json: bool = _json(),
) -> None:
    """Recent index runs, newest first."""
    graph, store = _run_store(ctx)
    with graph:
        runs = store.list(repo=repo, limit=limit, status=status)
    if as_json:
        emit_json(runs)
        return
    for r in runs:
        rate = r.get("resolution_rate")
        out.print(
            f"{r['id']}  {r['repo']}  {r.get('status')}  commit={str(r.get('commit'))[:12]}  "
            f"started={iso_utc(r.get('started_at'))}  "
            f"took={duration(r.get('started_at'), r.get('finished_at'))}  "
            f"rate={rate if rate is not None else '-'}",
            markup=False,
        )
    if not runs:
        out.print("no index runs")


@runs_app.command("show")
def runs_show(
    ctx: typer.Context,
    run_id: str = typer.Argument(..., help="The run id."),
    as_json: bool = _json(),
) -> None:
    """Everything recorded about one index run."""
    graph, store = _run_store(ctx)
    with graph:
        run = store.get(run_id)
    if run is None:
        raise RunStateError(f"no index run {run_id!r}")
    if as_json:
        emit_json(run)
        return
    for key in sorted(run):
        value = run[key]
        text = json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value
        out.print(f"{key:<28} {text}", markup=False)
