"""``semgraph search "QUERY"``: hybrid code search from the command line."""

from __future__ import annotations

import sys

import typer

from semgraph.commands.console import emit_json, out, settings_from


def search_cmd(
    ctx: typer.Context,
    query: str = typer.Argument(
        ...,
        help="What to look for: an identifier, a description or a whole issue text; "
        "- reads it from standard input. Cut at SEMGRAPH_SEARCH_MAX_QUERY_CHARS (32,768 "
        "characters by default) with a notice, never refused.",
    ),
    repo: str | None = typer.Option(
        None,
        "--repo",
        envvar="SEMGRAPH_SEARCH_REPO",
        show_envvar=True,
        help="Only this repository (its key).",
    ),
    lang: str | None = typer.Option(
        None,
        "--lang",
        envvar="SEMGRAPH_SEARCH_LANG",
        show_envvar=True,
        help="Only this language (python, go ...).",
    ),
    path_prefix: str | None = typer.Option(
        None,
        "--path-prefix",
        envvar="SEMGRAPH_SEARCH_PATH_PREFIX",
        show_envvar=True,
        help="Only paths starting with this prefix.",
    ),
    role: str | None = typer.Option(
        None,
        "--role",
        envvar="SEMGRAPH_SEARCH_ROLE",
        show_envvar=True,
        help="Only files of this role: source, test, docs, changelog, example, i18n, generated.",
    ),
    k: int = typer.Option(
        10,
        "-k",
        min=1,
        max=200,
        envvar="SEMGRAPH_SEARCH_K",
        show_envvar=True,
        help="Number of results.",
    ),
    mode: str = typer.Option(
        "hybrid",
        "--mode",
        envvar="SEMGRAPH_SEARCH_MODE",
        show_envvar=True,
        help="hybrid (BM25 + kNN, fused), bm25 or knn.",
    ),
    as_json: bool = typer.Option(
        False, "--json", envvar="SEMGRAPH_JSON", show_envvar=True, help="Print the hits as JSON."
    ),
) -> None:
    """Search indexed code: BM25 and kNN, each scaled to 0..1 and summed (score fusion).

    Model and ranking settings: SEMGRAPH_EMBEDDING_MODEL, SEMGRAPH_EMBEDDING_BACKEND,
    SEMGRAPH_EMBEDDING_DEVICE, SEMGRAPH_SEARCH_KNN_NUM_CANDIDATES, SEMGRAPH_SEARCH_RANK_WINDOW.
    """
    from semgraph.db import connect_search
    from semgraph.search.embed import Embedder
    from semgraph.search.query import search_answer, validate

    settings = settings_from(ctx)
    if query == "-":
        query = _read_stdin(settings.search_max_body_bytes)
    # bad input fails before a model load
    validate(query, k=k, mode=mode, settings=settings, role=role)
    embedder = Embedder(settings) if mode != "bm25" else None
    es = connect_search(settings)
    try:
        answer = search_answer(
            es,
            settings,
            embedder,
            query,
            repo=repo,
            lang=lang,
            path_prefix=path_prefix,
            k=k,
            mode=mode,
            role=role,
        )
    finally:
        es.close()
    if as_json:
        emit_json(answer.to_dict())
        return
    hits = answer.hits
    if answer.notice:
        out.print(f"note: {answer.notice}", markup=False)
    if not hits:
        out.print("no results", markup=False)
        return
    for n, h in enumerate(hits, start=1):
        symbol = f"  {h.symbol} ({h.kind})" if h.symbol else ""
        role_note = f"  [{h.role}]" if h.role and h.role != "source" else ""
        where = f"{h.repo}  {h.path}:{h.start_line}-{h.end_line}"
        out.print(f"{n:>2}. {where}{symbol}  score={h.score:.4f}{role_note}", markup=False)
        for line in h.snippet.splitlines():
            out.print(f"      {line}", markup=False)


def _read_stdin(limit: int) -> str:
    """The query from standard input: at most ``limit`` bytes read (the rest is left
    unread; the query is cut to its bound anyway), decoded leniently."""
    data = sys.stdin.buffer.read(limit)
    return data.decode("utf-8", "replace")
