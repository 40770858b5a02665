"""The MCP answers' shared rules without servers: cursors tied to runs, limits, the token
bound (with the real tokenizer), hostile snippet paths and the caller's allowlist."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from semgraph.config import Settings
from semgraph.mcp.envelope import (
    MAX_LIMIT,
    Page,
    ToolFailure,
    check_limit,
    decode_cursor,
    encode_cursor,
    runs_digest,
)
from semgraph.mcp.http import allowed_repos
from semgraph.mcp.source import clean_path
from semgraph.mcp.tokens import MAX_ANSWER_TOKENS, TokenCounter
from semgraph.web.tokens import ANONYMOUS, Principal

ARGS = {"name": "f", "repo": "r", "limit": 5}
RUNS: dict[str, str | None] = {"r": "run-1"}


def failure(fn: Any, *args: Any) -> ToolFailure:
    with pytest.raises(ToolFailure) as caught:
        fn(*args)
    return caught.value


def test_a_cursor_continues_only_the_same_call_on_the_same_run() -> None:
    cursor = encode_cursor("callers", ARGS, runs_digest(RUNS), 5)
    assert decode_cursor(cursor, "callers", ARGS, RUNS) == 5
    assert decode_cursor(None, "callers", ARGS, RUNS) == 0
    stale = failure(decode_cursor, cursor, "callers", ARGS, {"r": "run-2"})
    assert stale.code == "stale_cursor" and stale.details["current_runs"] == {"r": "run-2"}
    assert failure(decode_cursor, cursor, "callees", ARGS, RUNS).code == "malformed_cursor"
    other = {**ARGS, "name": "g"}
    assert failure(decode_cursor, cursor, "callers", other, RUNS).code == "malformed_cursor"
    for bad in ("x", "!!!", "a" * 2000, base64.urlsafe_b64encode(b'{"t": 1}').decode()):
        assert failure(decode_cursor, bad, "callers", ARGS, RUNS).code == "malformed_cursor"
    negative = encode_cursor("callers", ARGS, runs_digest(RUNS), -1)
    assert failure(decode_cursor, negative, "callers", ARGS, RUNS).code == "malformed_cursor"


def test_limits() -> None:
    assert check_limit(None) == 50 and check_limit(MAX_LIMIT) == MAX_LIMIT
    for bad in (0, -1, MAX_LIMIT + 1, 10**12):
        error = failure(check_limit, bad)
        assert error.code == "invalid_argument" and error.to_dict()["error"]["field"] == "limit"


def test_pages_are_cut_to_the_token_bound_and_the_cursor_resumes_after_the_cut() -> None:
    tokens = TokenCounter(Settings())
    row = {"path": "src/x.py", "text": " ".join(f"q{i:x}z" for i in range(400))}
    assert tokens.count(json.dumps(row)) > 1000  # 200 such rows are far over the bound
    rows = [dict(row, n=i) for i in range(300)]
    page = Page("search_code", ARGS, RUNS, rows, offset=0, limit=200)
    answer = page.render({"tool": "search_code"}, tokens)
    text = json.dumps(answer, ensure_ascii=False)
    assert answer["cut_to_fit_tokens"] is True
    assert tokens.count(text) <= answer["tokens"] <= MAX_ANSWER_TOKENS
    assert 1 <= answer["returned"] < 200 and answer["total"] == 300 and answer["has_more"]
    resumed = decode_cursor(answer["next_cursor"], "search_code", ARGS, RUNS)
    assert resumed == answer["returned"]
    rest = Page("search_code", ARGS, RUNS, rows, offset=resumed, limit=200)
    assert rest.render({}, tokens)["rows"][0]["n"] == resumed


def test_small_pages_are_exact_and_uncut() -> None:
    tokens = TokenCounter(Settings())
    rows = [{"n": i} for i in range(7)]
    answer = Page("callers", ARGS, RUNS, rows, offset=5, limit=5).render({}, tokens)
    assert [r["n"] for r in answer["rows"]] == [5, 6]
    assert answer["has_more"] is False and answer["next_cursor"] is None
    assert "cut_to_fit_tokens" not in answer and answer["total_is_exact"] is True


@pytest.mark.parametrize(
    "path",
    ["../etc/passwd", "a/../../b", "/etc/passwd", "a\x00b", "C:\\x", "c:/x", "a\\b", "", " ", ".."],
)
def test_hostile_snippet_paths_are_refused(path: str) -> None:
    assert failure(clean_path, path).code == "invalid_argument"


def test_snippet_paths_are_normalised() -> None:
    assert clean_path("./src//a.py") == "src/a.py"
    assert clean_path("src/./a.py") == "src/a.py"


def test_the_allowlist_comes_from_the_callers_principal() -> None:
    assert allowed_repos(None) is None
    assert allowed_repos(ANONYMOUS) is None
    allows = allowed_repos(Principal("ci", frozenset({"read"}), ("svc-*", "web-1")))
    assert allows is not None
    assert allows("svc-abc") and allows("web-1") and not allows("web-2")
