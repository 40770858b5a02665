"""``semgraph localize [FILE]``: from an issue text to the files and symbols to change."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from semgraph.commands.console import emit_json, out, settings_from


def localize_cmd(
    ctx: typer.Context,
    source: str = typer.Argument(
        "-",
        help="A file holding the issue text, or - (the default) to read it from standard "
        "input. Cut at SEMGRAPH_SEARCH_MAX_QUERY_CHARS (32,768 characters by default) with a "
        "notice, never refused.",
    ),
    repo: str = typer.Option(
        ...,
        "--repo",
        envvar="SEMGRAPH_SEARCH_REPO",
        show_envvar=True,
        help="The repository (its key).",
    ),
    k: int = typer.Option(
        10,
        "-k",
        min=1,
        max=50,
        envvar="SEMGRAPH_LOCALIZE_K",
        show_envvar=True,
        help="Number of files.",
    ),
    mode: str = typer.Option(
        "hybrid",
        "--mode",
        envvar="SEMGRAPH_SEARCH_MODE",
        show_envvar=True,
        help="The chunk search: hybrid, bm25 or knn.",
    ),
    options: str | None = typer.Option(
        None,
        "--options",
        envvar="SEMGRAPH_LOCALIZE_OPTIONS",
        show_envvar=True,
        help="The parts' weights, e.g. names=0,rerank=0.5 (chunks, names, frames, callees, "
        "callers, rerank, demote, expand_from, rerank_files).",
    ),
    as_json: bool = typer.Option(
        False, "--json", envvar="SEMGRAPH_JSON", show_envvar=True, help="Print the answer as JSON."
    ),
) -> None:
    """Rank the files of REPO, and the symbols within them, that an issue text points to,
    each with its evidence: matching chunks, traceback frames, names, call-graph hops."""
    from semgraph.db import connect_graph, connect_search
    from semgraph.localize.locate import LocalizeOptions, localize
    from semgraph.search.embed import Embedder
    from semgraph.search.query import validate

    settings = settings_from(ctx)
    text = _read(source, settings.search_max_body_bytes)
    validate(text, k=k, mode=mode, settings=settings)  # bad input fails before a model load
    parsed = LocalizeOptions.parse(options)
    embedder = Embedder(settings) if mode != "bm25" or parsed.rerank > 0 else None
    es = connect_search(settings)
    graph = connect_graph(settings)
    try:
        answer = localize(
            es, graph, settings, embedder, text, repo=repo, k=k, mode=mode, options=parsed
        )
    finally:
        es.close()
        graph.close()
    if as_json:
        emit_json(answer.to_dict())
        return
    if answer.notice:
        out.print(f"note: {answer.notice}", markup=False)
    if not answer.files:
        out.print("no file matches", markup=False)
        return
    for n, f in enumerate(answer.files, start=1):
        role = f"  [{f['role']}]" if f["role"] != "source" else ""
        out.print(f"{n:>2}. {f['path']}  score={f['score']:.4f}{role}", markup=False)
        for e in f["evidence"][:3]:
            out.print(f"      - {e['detail']}", markup=False)
        for s in f["symbols"][:3]:
            lines = f":{s['start_line']}" if s["start_line"] else ""
            out.print(f"      {s['symbol']}{lines}  score={s['score']:.4f}", markup=False)


def _read(source: str, limit: int) -> str:
    """The issue text: at most ``limit`` bytes of the file or of standard input, decoded
    leniently (the rest is left unread; the text is cut to its bound anyway)."""
    if source == "-":
        return sys.stdin.buffer.read(limit).decode("utf-8", "replace")
    path = Path(source)
    if not path.is_file():
        raise typer.BadParameter(f"no file {source[:200]!r}", param_hint="SOURCE")
    with path.open("rb") as handle:
        return handle.read(limit).decode("utf-8", "replace")
