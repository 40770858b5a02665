"""What every answer shares: errors as objects, cursors tied to runs, row pages, and the
token bound.

A cursor is an opaque, URL-safe text naming the tool, a digest of the other arguments, the
run(s) the page was computed on and the offset of the next row. A cursor for other arguments
is ``malformed_cursor``; a cursor from an older run is ``stale_cursor`` (never a silent mix
of two runs' rows).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from semgraph.mcp.tokens import MAX_ANSWER_TOKENS, TokenCounter

DEFAULT_LIMIT = 50
MAX_LIMIT = 200
MAX_CURSOR_CHARS = 1000


class ToolFailure(Exception):
    """A tool's answer is an error object: ``code`` is stable, ``message`` says what to do."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.details}}


def check_limit(limit: int | None, default: int = DEFAULT_LIMIT, most: int = MAX_LIMIT) -> int:
    if limit is None:
        return default
    if not 1 <= limit <= most:
        raise ToolFailure(
            "invalid_argument", f"limit must be between 1 and {most}, got {limit}", field="limit"
        )
    return limit


def runs_digest(runs: Mapping[str, str | None]) -> str:
    text = "\n".join(f"{k}={v}" for k, v in sorted(runs.items()))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _args_digest(tool: str, args: Mapping[str, Any]) -> str:
    text = json.dumps([tool, dict(sorted(args.items()))], default=str, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class Cursor:
    tool: str
    args: str
    runs: str
    offset: int


def encode_cursor(tool: str, args: Mapping[str, Any], runs: str, offset: int) -> str:
    raw = json.dumps({"t": tool, "a": _args_digest(tool, args), "r": runs, "o": offset})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(
    text: str | None, tool: str, args: Mapping[str, Any], runs: Mapping[str, str | None]
) -> int:
    """The offset a cursor continues at (0 without one); raises ``malformed_cursor`` or
    ``stale_cursor``."""
    if text is None or text == "":
        return 0
    bad = ToolFailure(
        "malformed_cursor",
        "the cursor is not one this tool gave for these arguments; call again without it",
        field="cursor",
    )
    if len(text) > MAX_CURSOR_CHARS:
        raise bad
    try:
        padded = text + "=" * (-len(text) % 4)
        body = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        cursor = Cursor(str(body["t"]), str(body["a"]), str(body["r"]), int(body["o"]))
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError):
        raise bad from None
    if cursor.tool != tool or cursor.args != _args_digest(tool, args) or cursor.offset < 0:
        raise bad
    if cursor.runs != runs_digest(runs):
        raise ToolFailure(
            "stale_cursor",
            "the repository was reindexed since this cursor was given: its rows came from "
            "another run; call again without the cursor to start over on the current run",
            current_runs={k: v for k, v in sorted(runs.items())},
        )
    return cursor.offset


def completeness(causes: list[str]) -> dict[str, Any]:
    return {"status": "lower_bound" if causes else "exact", "causes": causes}


@dataclass
class Page:
    """Rows of one answer: ``rows`` is every row the tool found (at most its cap), the page
    is ``rows[offset : offset + limit]``."""

    tool: str
    args: Mapping[str, Any]
    runs: Mapping[str, str | None]
    rows: list[Any]
    offset: int
    limit: int
    total_exact: bool = True

    def render(self, head: dict[str, Any], tokens: TokenCounter) -> dict[str, Any]:
        """The answer: ``head`` (tool-specific fields) plus the page, cut so that it fits
        the token bound (``has_more`` and the cursor then continue after the last row)."""
        page = self.rows[self.offset : self.offset + self.limit]
        digest = runs_digest(self.runs)

        def build(n: int) -> dict[str, Any]:
            end = self.offset + n
            answer = dict(head)
            answer["rows"] = page[:n]
            answer["total"] = len(self.rows)
            answer["total_is_exact"] = self.total_exact
            answer["offset"] = self.offset
            answer["returned"] = n
            answer["has_more"] = end < len(self.rows)
            answer["next_cursor"] = (
                encode_cursor(self.tool, self.args, digest, end) if answer["has_more"] else None
            )
            return answer

        return fit(build, len(page), tokens)


def fit(build: Callable[[int], dict[str, Any]], n: int, tokens: TokenCounter) -> dict[str, Any]:
    """``build(k)`` for the largest ``k <= n`` whose JSON fits the token bound, with its
    size in ``tokens`` (and ``cut_to_fit_tokens`` when rows were dropped to fit)."""
    k = n
    cut = False
    while True:
        answer = build(k)
        if cut:
            answer["cut_to_fit_tokens"] = True
        size = _measure(answer, tokens)
        if size <= MAX_ANSWER_TOKENS or k <= 1:
            return answer
        cut = True
        k = max(1, min(k - 1, int(k * MAX_ANSWER_TOKENS * 0.9 / size)))


def _measure(answer: dict[str, Any], tokens: TokenCounter) -> int:
    """Sets ``answer["tokens"]`` to the size of the answer's JSON, that field included."""
    size = 0
    for _ in range(3):  # the count's own digits are part of the text: settle them
        answer["tokens"] = size
        counted = tokens.count(json.dumps(answer, ensure_ascii=False, default=str))
        if counted == size:
            break
        size = max(size, counted)
    answer["tokens"] = size
    return size
