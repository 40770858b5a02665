"""``semgraph localize [FILE]``: from an issue text to the files and symbols to change."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer

from semgraph.commands.ask import (
    TEXT_BOUND,
    k_option,
    mode_option,
    print_answer,
    read_source,
    repo_option,
)
from semgraph.commands.console import env_option, json_option, settings_from


def localize_cmd(
    ctx: typer.Context,
    source: str = typer.Argument(
        "-",
        help="A file holding the issue text, or - (the default) to read it from standard "
        f"input. {TEXT_BOUND}",
    ),
    repo: str = repo_option(..., "The repository (its key)."),
    k: int = k_option("SEMGRAPH_LOCALIZE_K", 50, "Number of files."),
    mode: str = mode_option("The chunk search: hybrid, bm25 or knn."),
    options: str | None = env_option(
        None,
        "--options",
        env="SEMGRAPH_LOCALIZE_OPTIONS",
        help="The parts' weights, e.g. names=0,rerank=0.5 (chunks, names, frames, callees, "
        "callers, rerank, history, demote, demote_asked, expand_from, rerank_files, symbols).",
    ),
    as_json: bool = json_option("Print the answer as JSON."),
) -> None:
    """Rank the files of REPO, and the symbols within them, that an issue text points to,
    each with its evidence: matching chunks, traceback frames, names, call-graph hops, past
    commit messages."""
    from semgraph.db import connect_graph, connect_search
    from semgraph.localize.locate import LocalizeOptions, localize
    from semgraph.search.embed import Embedder
    from semgraph.search.query import validate

    settings = settings_from(ctx)
    text = read_source(source, settings.search_max_body_bytes)
    validate(text, k=k, mode=mode, settings=settings)  # bad input fails before a model load
    parsed = LocalizeOptions.parse(options)
    embedder = Embedder(settings) if mode != "bm25" or parsed.rerank > 0 else None
    with connect_search(settings) as es, connect_graph(settings) as graph:
        answer = localize(
            es, graph, settings, embedder, text, repo=repo, k=k, mode=mode, options=parsed
        )
    print_answer(answer, as_json, answer.files, "no file matches", _file_lines)


def _file_lines(n: int, f: dict[str, Any]) -> Iterator[str]:
    role = f"  [{f['role']}]" if f["role"] != "source" else ""
    yield f"{n:>2}. {f['path']}  score={f['score']:.4f}{role}"
    for e in f["evidence"][:3]:
        yield f"      - {e['detail']}"
    for s in f["symbols"][:3]:
        lines = f":{s['start_line']}" if s["start_line"] else ""
        yield f"      {s['symbol']}{lines}  score={s['score']:.4f}"
