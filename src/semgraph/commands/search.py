"""``semgraph search "QUERY"``: hybrid code search from the command line."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import typer

from semgraph.commands.ask import (
    TEXT_BOUND,
    k_option,
    mode_option,
    print_answer,
    read_stdin,
    repo_option,
)
from semgraph.commands.console import env_option, json_option, out, settings_from

if TYPE_CHECKING:
    from semgraph.search.hits import SearchHit
    from semgraph.search.query import SearchArgs


def search_cmd(
    ctx: typer.Context,
    query: str = typer.Argument(
        ...,
        help="What to look for: an identifier, a description or a whole issue text; "
        f"- reads it from standard input. {TEXT_BOUND}",
    ),
    repo: str | None = repo_option(None, "Only this repository (its key)."),
    lang: str | None = env_option(
        None, "--lang", env="SEMGRAPH_SEARCH_LANG", help="Only this language (python, go ...)."
    ),
    path_prefix: str | None = env_option(
        None,
        "--path-prefix",
        env="SEMGRAPH_SEARCH_PATH_PREFIX",
        help="Only paths starting with this prefix.",
    ),
    role: str | None = env_option(
        None,
        "--role",
        env="SEMGRAPH_SEARCH_ROLE",
        help="Only files of this role: source, test, docs, changelog, example, i18n, generated.",
    ),
    k: int = k_option("SEMGRAPH_SEARCH_K", 200, "Number of results."),
    mode: str = mode_option("hybrid (BM25 + kNN, fused), bm25 or knn."),
    as_json: bool = json_option("Print the hits as JSON."),
) -> None:
    """Search indexed code: BM25 and kNN, each scaled to 0..1 and summed (score fusion).

    Model and ranking settings: SEMGRAPH_EMBEDDING_MODEL, SEMGRAPH_EMBEDDING_BACKEND,
    SEMGRAPH_EMBEDDING_DEVICE, SEMGRAPH_SEARCH_KNN_NUM_CANDIDATES, SEMGRAPH_SEARCH_RANK_WINDOW,
    SEMGRAPH_SEARCH_HISTORY_WEIGHT (the lift of chunks whose file's commit messages match,
    each such hit listing those commits).
    """
    from semgraph.db import connect_search
    from semgraph.search.embed import Embedder
    from semgraph.search.query import search_answer, validate

    settings = settings_from(ctx)
    if query == "-":
        query = read_stdin(settings.search_max_body_bytes)
    # bad input fails before a model load
    validate(query, k=k, mode=mode, settings=settings, role=role)
    embedder = Embedder(settings) if mode != "bm25" else None
    args: SearchArgs = {
        "repo": repo,
        "lang": lang,
        "path_prefix": path_prefix,
        "role": role,
        "k": k,
        "mode": mode,
    }
    with connect_search(settings) as es:
        answer = search_answer(es, settings, embedder, query, **args)
    if not as_json and mode != "bm25":
        for repo_key, semantic in sorted(answer.semantic.items()):
            if semantic.pending:  # kNN answers from the vectors that are there
                out.print(f"note: {repo_key} {semantic.line()}", markup=False)
    print_answer(answer, as_json, answer.hits, "no results", _hit_lines)


def _hit_lines(n: int, h: SearchHit) -> Iterator[str]:
    symbol = f"  {h.symbol} ({h.kind})" if h.symbol else ""
    role_note = f"  [{h.role}]" if h.role and h.role != "source" else ""
    where = f"{h.repo}  {h.path}:{h.start_line}-{h.end_line}"
    yield f"{n:>2}. {where}{symbol}  score={h.score:.4f}{role_note}"
    for line in h.snippet.splitlines():
        yield f"      {line}"
    for line in h.history or ():
        yield f"      - {line}"
