"""What ``semgraph search`` and ``semgraph localize`` share: the text read from standard
input or a file (at most SEMGRAPH_SEARCH_MAX_BODY_BYTES, decoded leniently), the options
both take, and the answer printed (JSON, or the notice, the rows or the line saying there
are none).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import typer

from semgraph.commands.console import emit_json, env_option, out

Row = TypeVar("Row")
TEXT_BOUND = (
    "Cut at SEMGRAPH_SEARCH_MAX_QUERY_CHARS (32,768 characters by default) with a notice, "
    "never refused."
)


class Answer(Protocol):
    notice: str | None

    def to_dict(self) -> dict[str, Any]: ...


def repo_option(default: Any, help: str) -> Any:
    return env_option(default, "--repo", env="SEMGRAPH_SEARCH_REPO", help=help)


def k_option(env: str, most: int, help: str) -> Any:
    return env_option(10, "-k", env=env, help=help, min=1, max=most)


def mode_option(help: str) -> Any:
    return env_option("hybrid", "--mode", env="SEMGRAPH_SEARCH_MODE", help=help)


def read_stdin(limit: int) -> str:
    """Standard input: at most ``limit`` bytes read (the rest is left unread; the text is cut
    to its bound anyway), decoded leniently."""
    return sys.stdin.buffer.read(limit).decode("utf-8", "replace")


def read_source(source: str, limit: int) -> str:
    """The text of the file ``source``, or of standard input for ``-``, read like
    :func:`read_stdin`."""
    if source == "-":
        return read_stdin(limit)
    path = Path(source)
    if not path.is_file():
        raise typer.BadParameter(f"no file {source[:200]!r}", param_hint="SOURCE")
    with path.open("rb") as handle:
        return handle.read(limit).decode("utf-8", "replace")


def print_answer(
    answer: Answer,
    as_json: bool,
    rows: list[Row],
    empty: str,
    lines: Callable[[int, Row], Iterable[str]],
) -> None:
    """``answer`` as JSON, or its notice and then each row's ``lines`` (numbered from 1), or
    ``empty`` when there is no row."""
    if as_json:
        emit_json(answer.to_dict())
        return
    if answer.notice:
        out.print(f"note: {answer.notice}", markup=False)
    if not rows:
        out.print(empty, markup=False)
        return
    for n, row in enumerate(rows, start=1):
        for line in lines(n, row):
            out.print(line, markup=False)
