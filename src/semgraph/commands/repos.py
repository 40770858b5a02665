"""``semgraph repos list|show|remove``: the repositories the graph knows, and their removal.

``remove`` only queues the ``remove`` job (:mod:`semgraph.repos.removal`): a worker runs
it, fenced like any job. An unknown key is a one-line error with exit code 2 and nothing is
queued.
"""

from __future__ import annotations

import contextlib
import datetime
import time
from typing import Any

import typer

from semgraph.commands.console import emit_json, err, json_option, out, settings_from
from semgraph.errors import QueueInputError

repos_app = typer.Typer(
    rich_markup_mode=None,
    help="The repositories the graph knows: list, show, remove.",
    no_args_is_help=True,
)

KEY_HELP = "The repository key (as `semgraph repos list` prints it)."


def _refuse(message: str) -> typer.Exit:
    """One line on stderr, exit 2 (a usage error: nothing was done)."""
    err.print(f"error: {message}", markup=False)
    return typer.Exit(2)


def _key(key: str) -> str:
    from semgraph.repos.listing import check_key

    why = check_key(key)
    if why is not None:
        raise _refuse(why)
    return key


def _unknown(key: str) -> typer.Exit:
    return _refuse(f"no repository {key[:200]!r} is known (see `semgraph repos list`)")


def _when(ts: Any) -> str:
    if not isinstance(ts, int | float):
        return "-"
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@repos_app.command("list")
def list_cmd(ctx: typer.Context, as_json: bool = json_option()) -> None:
    """Every known repository with its state: live, removing (a removal started: not live)
    or unpublished (queued, never published)."""
    from semgraph.db import connect_graph
    from semgraph.repos.listing import list_repositories

    with connect_graph(settings_from(ctx)) as graph:
        repos = list_repositories(graph)
    if as_json:
        emit_json(repos)
        return
    if not repos:
        out.print("no repositories", markup=False)
    for repo in repos:
        commit = str(repo.get("commit") or "-")[:12]
        source = repo.get("source") or repo.get("url") or "-"
        out.print(
            f"{repo['key']}  {repo['state']:<11} commit={commit} "
            f"indexed={_when(repo.get('indexed_at'))} source={source}",
            markup=False,
        )


@repos_app.command("show")
def show_cmd(
    ctx: typer.Context,
    key: str = typer.Argument(..., help=KEY_HELP),
    as_json: bool = json_option(),
) -> None:
    """Everything about one repository: its record, state, graph counts, indexes, jobs."""
    from semgraph.db import (
        connect_graph,
        connect_search,
    )
    from semgraph.queue.staleness import reason_line
    from semgraph.repos.listing import show_repository

    key = _key(key)
    settings = settings_from(ctx)
    with connect_graph(settings) as graph, contextlib.closing(connect_search(settings)) as es:
        shown = show_repository(settings, graph, es, key)
    if shown is None:
        raise _unknown(key)
    if as_json:
        emit_json(shown)
        return
    repo = shown["repository"] or {}
    record = shown["record"] or {}
    counts = shown["counts"]
    lines = [
        f"key:         {key}",
        f"state:       {shown['state']}",
        f"source:      {record.get('source') or repo.get('url') or '-'}",
        f"commit:      {repo.get('commit') or '-'}",
        f"run:         {repo.get('run_id') or '-'}  indexed {_when(repo.get('indexed_at'))}",
        f"graph:       {counts['files']} files, {counts['symbols']} symbols, "
        f"{counts['externals']} external modules, {counts['runs']} runs",
        f"lane:        {shown['size_class']}  ({_size_why(settings, record)})",
        f"alias:       {shown['alias']} -> {shown['live_index'] or '-'}",
        f"indexes:     {', '.join(shown['indexes']) or '-'}",
    ]
    semantic = shown.get("semantic")
    if semantic:  # progressive publish: the vectors of the published commit
        pending = f"pending {semantic['pending']:,} of {semantic['chunks']:,} chunks"
        lines.append(f"semantic:    {pending if semantic['pending'] else 'complete'}")
    why = reason_line(shown.get("stale_reason"))
    if why:  # the newest job that publishes a commit did not (yet)
        lines.append(f"stale:       {why}")
    if repo.get("xrepo_linked") is not None:  # its external calls, linked or why not
        lines.append(f"xrepo calls: {_links({k: repo.get('xrepo_' + k) for k in _XREPO})}")
    lines += [f"job:         {j['id']} {j['kind']} {j['status']}" for j in shown["jobs"]]
    for line in lines:
        out.print(line, markup=False)


def _size_why(settings: Any, record: dict[str, Any]) -> str:
    """Why the claim puts the repository in its lane, from the record's two figures."""
    files, job_s = record.get("files"), record.get("last_job_s")
    if files is None or job_s is None:
        return "no finished job recorded yet: a first index is large"
    return (
        f"{files} files, limit {settings.lane_small_max_files}; last job {float(job_s):.0f} s, "
        f"limit {settings.lane_small_max_job_s:g} s"
    )


@repos_app.command("deps")
def deps_cmd(
    ctx: typer.Context,
    key: str = typer.Argument(..., help="Repository key."),
    as_json: bool = json_option(),
) -> None:
    """What KEY depends on (and which indexed repository provides it), and what depends on it."""
    from semgraph.db import connect_graph
    from semgraph.repos.graph import dependencies

    with connect_graph(settings_from(ctx)) as graph:
        found = dependencies(graph, _key(key))
    if as_json:
        emit_json(found)
        return
    for p in found["provides"]:
        out.print(f"provides {p['ecosystem']}:{p['name']}  {p['manifest']}", markup=False)
    for d in found["depends_on"]:
        who = d["chosen"] or (
            f"ambiguous: {', '.join(d['candidates'])}" if d["candidates"] else "-"
        )
        out.print(f"depends on {d['ecosystem']}:{d['name']} {d['spec']}  <- {who}", markup=False)
    for d in found["dependents"]:
        out.print(
            f"depended on by {d['repo']} ({d['ecosystem']}:{d['name']} {d['spec']}, "
            f"{d['links']} links)",
            markup=False,
        )
    if not any(found[k] for k in ("provides", "depends_on", "dependents")):
        out.print(f"{key}: no package identity recorded", markup=False)
    if found["counts"]["linked"] is not None:
        out.print(f"cross-repository calls: {_links(found['counts'])}", markup=False)
    pending = found["relink_pending"]
    if pending:
        what = "everything" if pending["everything"] else f"{pending['names']} names"
        out.print(
            f"re-link pending for its dependents: {what}, {pending['lost']} lost links",
            markup=False,
        )


_XREPO = ("linked", "ambiguous", "unprovided", "unmatched")


def _links(counts: dict[str, Any]) -> str:
    """A repository's cross-repository counts, one per external call."""
    return ", ".join(f"{counts.get(k) or 0} {k}" for k in _XREPO)


@repos_app.command("remove")
def remove_cmd(
    ctx: typer.Context,
    key: str = typer.Argument(..., help=KEY_HELP),
    as_json: bool = json_option(),
) -> None:
    """Queue the removal of KEY from the graph, the search index and the worker's disk (a
    worker runs it; `semgraph jobs show JOB` follows it). Unknown keys exit 2."""
    from semgraph.db import connect_graph
    from semgraph.queue.store import JobStore
    from semgraph.repos import removal

    key = _key(key)
    settings = settings_from(ctx)
    with connect_graph(settings) as graph:
        if not removal.is_known(graph, key):
            raise _unknown(key)
        try:
            result = removal.request_removal(
                JobStore(graph, settings), key, now=time.time(), requested_by="cli"
            )
        except QueueInputError as exc:
            raise _refuse(str(exc)) from exc
    if as_json:
        emit_json({"job_id": result.job_id, "outcome": result.outcome, "repo": key})
    else:
        out.print(f"removal {result.outcome} {result.job_id}", markup=False)
