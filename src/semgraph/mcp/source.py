"""get_snippet: source lines of one file at the indexed commit, rebuilt from the search
index's chunks of the published run, or, when the index has none or is unreachable, read from
git: the published blob (``File.blob_sha``) out of this host's mirror of the repository's
recorded source, fetched on demand (:mod:`semgraph.indexer.blobread`). Both stores are shared,
so the answer never depends on which host indexed the repository or serves the call (never
a host's parse cache, never a working tree, which may have moved on).

Chunks cover every line that is not blank; a line no chunk covers is whitespace only and is
returned empty (``blank_lines_filled`` counts them). ``has_more`` and ``next_start_line`` say
whether the file goes on after the lines returned (``file_last_line``: its last non-blank
line), whether the 400-line window or the token bound stopped the answer. A chunk whose
code the index truncated (``search_max_code_chars``) makes the answer a lower bound.
"""

from __future__ import annotations

import logging
from typing import Any

from semgraph.db import search_errors
from semgraph.errors import CheckoutError, SearchError
from semgraph.indexer.blobread import read_blob
from semgraph.indexer.chunking import split_lines
from semgraph.logs import event
from semgraph.mcp import queries as mq
from semgraph.mcp.backend import Scope
from semgraph.mcp.envelope import ToolFailure, completeness, fit
from semgraph.resolve.symtab import file_key
from semgraph.search.index import SearchIndex

log = logging.getLogger(__name__)

MAX_LINES = 400
MAX_LINE_CHARS = 2000
MAX_PATH_CHARS = 4096
MAX_LINE_NUMBER = 2**31 - 1  # the index's line fields are integers


def clean_path(path: str) -> str:
    """A repository-relative path, or ``invalid_argument``: no NUL, not absolute, no ``..``."""
    bad = ToolFailure(
        "invalid_argument",
        "path must be relative to the repository root, without '..', NUL or backslashes",
        field="path",
    )
    text = path.strip()
    if not text or len(text) > MAX_PATH_CHARS or any(c in text for c in "\x00\\\n\r"):
        raise bad
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise bad
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        raise bad
    return "/".join(parts)


def _range(start_line: int | None, end_line: int | None) -> tuple[int, int]:
    start = 1 if start_line is None else start_line
    if not 1 <= start <= MAX_LINE_NUMBER:
        raise ToolFailure(
            "invalid_argument", f"start_line must be in 1..{MAX_LINE_NUMBER}", field="start_line"
        )
    end = start + MAX_LINES - 1 if end_line is None else end_line
    if end < start:
        raise ToolFailure("invalid_argument", "end_line must be >= start_line", field="end_line")
    if end - start + 1 > MAX_LINES:
        raise ToolFailure(
            "invalid_argument",
            f"at most {MAX_LINES} lines per call; page with start_line",
            field="end_line",
        )
    return start, end


def _chunks(
    scope: Scope, repo: str, path: str, start: int, end: int
) -> tuple[list[dict[str, Any]], int] | None:
    """The chunks overlapping the window, and the file's last non-blank line (0: none);
    None when the repository has no live index."""
    b = scope.backend
    index = SearchIndex(b.search, b.settings).live_index(repo)
    if index is None:
        return None
    with search_errors("read the chunks of a snippet"):
        resp = b.search.search(index=index, **mq.snippet_chunks_body(path, start, end))
    last = resp["aggregations"]["all"]["file"]["last"]["value"]
    return [h["_source"] for h in resp["hits"]["hits"]], int(last or 0)


def _git_chunks(scope: Scope, repo: str, blob: str) -> tuple[list[dict[str, Any]], str]:
    """The file as one chunk (line 1 to its last non-blank line) read from git at the
    published blob, and why not when it cannot be ([], reason)."""
    record = scope.states[repo].record or {}
    try:
        data = read_blob(scope.backend.settings, str(record.get("url") or ""), repo, blob)
    except CheckoutError as exc:
        event(log, logging.WARNING, "snippet_git_unavailable", exc.message[:300], repo=repo)
        return [], f"the repository's source: {exc.message[:200]}"
    if data is None:
        return [], f"the repository's source has no blob {blob[:12]}"
    lines = split_lines(data.decode("utf-8", "replace"))
    last = max((n for n, text in enumerate(lines, 1) if text.strip()), default=0)
    if not last:
        return [], ""
    return [{"start_line": 1, "end_line": last, "code": "\n".join(lines[:last])}], ""


def _window(chunks: list[dict[str, Any]], start: int, end: int) -> tuple[list[dict[str, Any]], int]:
    inside = [c for c in chunks if int(c["start_line"]) <= end and int(c["end_line"]) >= start]
    return inside, max((int(c["end_line"]) for c in chunks), default=0)


def _assemble(chunks: list[dict[str, Any]], start: int, end: int) -> tuple[dict[int, str], bool]:
    lines: dict[int, str] = {}
    short = False
    for c in chunks:
        first, last = int(c["start_line"]), int(c["end_line"])
        texts = str(c.get("code", "")).split("\n")
        if len(texts) < last - first + 1 and first != last:
            short = True  # the index truncated this chunk's code
        for i, text in enumerate(texts[: last - first + 1]):
            n = first + i
            if start <= n <= end:
                lines[n] = lines.get(n, "") + text if first == last else text
    return lines, short


def get_snippet(
    scope: Scope, path: str, start_line: int | None, end_line: int | None
) -> dict[str, Any]:
    repo = scope.repo
    assert repo is not None  # a required argument of the tool
    clean = clean_path(path)
    start, end = _range(start_line, end_line)
    state = scope.states[repo]
    head: dict[str, Any] = {"tool": "get_snippet", "repo": repo, "path": clean}
    head["freshness"] = scope.freshness()
    if not state.indexed:
        return {**head, "status": "empty", "empty_reason": "repository not indexed"}
    key = file_key(repo, clean)  # the unique key (repo and path are two indexes)
    rows = scope.backend.graph.query("mcp file at run", mq.FILE_AT_RUN, key=key)
    if not rows:
        return {**head, "status": "empty", "empty_reason": "no such file in the indexed commit"}
    where = "search_index"
    failed: SearchError | None = None
    try:
        found = _chunks(scope, repo, clean, start, end)
    except SearchError as exc:
        found, failed = None, exc
    chunks, file_last = found or ([], 0)
    if found is None:  # no live index, or it is unreachable: the published blob, from git
        whole, why = _git_chunks(scope, repo, str(rows[0]["blob_sha"]))
        if whole:
            chunks, file_last = _window(whole, start, end)
            where = "git"
        elif failed is not None:
            message = f"the search index: {failed.message[:200]}" + (f"; {why}" if why else "")
            raise ToolFailure("store_unavailable", message, retryable=True) from None
    lines, short = _assemble(chunks, start, end)
    last_known = max((int(c["end_line"]) for c in chunks), default=0)
    stop = min(end, max(lines, default=start - 1), last_known) if lines else start - 1
    numbered = list(range(start, stop + 1))
    filled = sum(1 for n in numbered if n not in lines)
    long_lines = sum(1 for n in numbered if len(lines.get(n, "")) > MAX_LINE_CHARS)
    causes = ["the search index truncated a chunk's code"] if short else []
    if long_lines:
        causes.append(f"{long_lines} lines longer than {MAX_LINE_CHARS} characters cut")
    head.update(
        status="ok" if numbered else "empty",
        language=rows[0]["language"],
        blob_sha=rows[0]["blob_sha"],
        source=where,
        blank_lines_filled=filled,
        file_last_line=file_last,
        completeness=completeness(causes),
    )
    if not numbered:
        head["empty_reason"] = f"the file has no line {start} in the indexed commit"

    def build(n: int) -> dict[str, Any]:
        shown = numbered[:n]
        text = "\n".join(lines.get(i, "")[:MAX_LINE_CHARS] for i in shown)
        last = shown[-1] if shown else start - 1
        more = last < file_last
        return {
            **head,
            "start_line": start,
            "end_line": last,
            "text": text,
            "has_more": more,
            "next_start_line": last + 1 if more else None,
        }

    return fit(build, len(numbered), scope.backend.tokens)
