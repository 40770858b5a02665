"""Long questions (issue 28): the bound and its notice, the BM25 words of a long text, the
windows the model reads and their pooling, and the role of a file from its path."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semgraph.search.bodies import bm25_body, search_filters
from semgraph.search.longquery import (
    MAX_BM25_WORDS,
    MAX_WINDOWS,
    SHORT_QUERY_WORDS,
    WINDOW_CHARS,
    bm25_words,
    bound_query,
    embedding_windows,
    pool,
    title_paragraph,
)
from semgraph.search.roles import ROLES, role_of
from semgraph.search.split import query_words

TRACEBACK = """\
Click option with multiple=True ignores envvar

When an option has multiple=True and an envvar, the value from the environment is not split.

Traceback (most recent call last):
  File "/usr/lib/python3.12/site-packages/click/core.py", line 1231, in invoke
    return ctx.invoke(self.callback, **ctx.params)
  File "/usr/lib/python3.12/site-packages/click/core.py", line 2342, in value_from_envvar
    rv = self.type.split_envvar_value(rv)
AttributeError: 'NoneType' object has no attribute 'split_envvar_value'
"""


def issue_text(chars: int) -> str:
    filler = "I tried this again with the latest release and it still happens on my machine. "
    text = TRACEBACK
    while len(text) < chars:
        text += filler
    return text[:chars]


def test_a_short_query_is_searched_as_given() -> None:
    bounded = bound_query("  flip_alias  ", 100)
    assert (bounded.text, bounded.chars, bounded.truncated) == ("flip_alias", 10, False)
    assert bounded.notice(100) is None
    assert bm25_words("return the name of the file") == query_words("return the name of the file")
    assert embedding_windows("parse webhook signature") == ["parse webhook signature"]


def test_an_over_bound_query_is_cut_on_a_blank_with_a_notice() -> None:
    text = "alpha " * 10_000
    bounded = bound_query(text, 1000)
    assert bounded.truncated and bounded.chars == len(text.strip())
    assert len(bounded.text) <= 1000 and bounded.text.endswith("alpha")
    notice = bounded.notice(1000)
    assert notice is not None and "1000" in notice and "alpha" not in notice
    # no blank to cut on: cut at the bound
    assert len(bound_query("x" * 5000, 1000).text) == 1000


def test_control_characters_and_lone_surrogates_are_cleaned() -> None:
    bounded = bound_query("a\x00b\x1bc\ud800d\te\nf", 100)
    assert bounded.text == "a b c\ufffdd\te\nf"
    bounded.text.encode("utf-8")  # valid UTF-8 now


def test_long_text_keeps_identifiers_within_the_clause_budget() -> None:
    words = bm25_words(issue_text(30_000))
    assert len(words) <= MAX_BM25_WORDS
    assert len(words) == len(set(words))
    for wanted in ("split_envvar_value", "envvar", "value_from_envvar", "attributeerror"):
        assert wanted in words
    for filler in ("the", "i", "with", "again", "this"):
        assert filler not in words
    # a text of many distinct words is capped too, and the BM25 body stays small
    many = " ".join(f"word{i}x" for i in range(5000))
    assert len(bm25_words(many)) == MAX_BM25_WORDS
    body = bm25_body(many, [], 10)
    assert len(body["query"]["bool"]["should"][0]["multi_match"]["query"].split()) <= 256


def test_long_text_keeps_repeats_out_but_order_in() -> None:
    text = " ".join(["render_table"] * 50 + ["console"] * 50)
    assert len(query_words(text)) > SHORT_QUERY_WORDS
    assert bm25_words(text) == ["render_table", "render", "table", "console"]


def test_windows_cover_the_start_of_a_long_text_and_are_bounded() -> None:
    assert len(embedding_windows(issue_text(30_000))) == MAX_WINDOWS
    windows = embedding_windows(issue_text(30_000), max_windows=8)
    assert len(windows) == 8
    assert all(len(w) <= WINDOW_CHARS for w in windows)
    assert windows[0].startswith("Click option with multiple=True")
    assert embedding_windows("y" * 5000)[0] == "y" * WINDOW_CHARS  # one giant word: cut
    assert title_paragraph(TRACEBACK).startswith("Click option with multiple=True ignores")


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=3000))
def test_any_text_gives_bounded_windows_and_words(text: str) -> None:
    bounded = bound_query(text, 1500)
    assert len(bounded.text) <= 1500
    assert len(embedding_windows(bounded.text)) <= MAX_WINDOWS
    assert len(bm25_words(bounded.text)) <= max(MAX_BM25_WORDS, SHORT_QUERY_WORDS)


def test_pool_is_the_normalised_mean() -> None:
    assert pool([[0.6, 0.8]]) == [0.6, 0.8]
    pooled = pool([[1.0, 0.0], [0.0, 2.0]])
    assert pooled == pytest.approx([math.sqrt(0.5), math.sqrt(0.5)], rel=1e-6)


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("src/click/core.py", "source"),
        ("src/flask/release.py", "source"),
        ("setup.py", "source"),
        ("tests/test_basic.py", "test"),
        ("pkg/conftest.py", "test"),
        ("server/handler_test.go", "test"),
        ("web/app.spec.ts", "test"),
        ("src/test/java/a/FooTest.java", "test"),
        ("docs/api.rst", "docs"),
        ("README.md", "docs"),
        ("docs/conf.py", "docs"),
        ("CHANGES.rst", "changelog"),
        ("HISTORY.md", "changelog"),
        ("changelog.d/123.bugfix.md", "changelog"),
        ("examples/tutorial/app.py", "example"),
        ("locale/de/LC_MESSAGES/messages.po", "i18n"),
        ("api/v1/service.pb.go", "generated"),
        ("proto/msg_pb2.py", "generated"),
        ("vendor/github.com/x/y.go", "generated"),
        ("package-lock.json", "generated"),
        ("Tests/Unit/Thing.py", "test"),
        ("", "source"),
    ],
)
def test_role_of_a_path(path: str, role: str) -> None:
    assert role_of(path) == role
    assert role in ROLES


def test_the_role_filter_is_a_term_on_the_role_field() -> None:
    assert search_filters(repo=None, lang=None, path_prefix=None, role="source") == [
        {"term": {"role": "source"}}
    ]
    assert search_filters(repo=None, lang=None, path_prefix=None) == []


def test_the_interfaces_offer_exactly_the_roles() -> None:
    from typing import get_args

    from semgraph.mcp.server import Role as McpRole
    from semgraph.web.search_api import Role as HttpRole

    assert set(get_args(HttpRole)) == set(ROLES) == set(get_args(McpRole))


def test_the_docstring_evaluation_is_searched_exactly_as_before() -> None:
    """Its queries are short: both sides must be what they were before issue 28 (the words
    BM25 gets, the one text the model embeds), so its figures cannot move."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "bench" / "search" / "eval"
    lines = (root / "queries.jsonl").read_text("utf-8").splitlines()
    texts = [json.loads(line)["query"] for line in lines if line.strip()]
    texts += [q["query"] for q in json.loads((root / "questions.json").read_text("utf-8"))]
    assert len(texts) > 600
    for text in texts:
        assert bm25_words(text) == query_words(text), text
        assert embedding_windows(text) == [text], text
        assert not bound_query(text, 32_768).truncated


def test_a_store_error_never_carries_a_whole_query() -> None:
    import elasticsearch
    from elastic_transport import ApiResponseMeta, HttpHeaders, NodeConfig

    from semgraph.db import search_errors
    from semgraph.errors import SearchRequestError

    node = NodeConfig("http", "localhost", 9200)
    meta = ApiResponseMeta(400, "1.1", HttpHeaders(), 0.0, node)
    echoed = "query text " * 5000  # a non-JSON error body comes back whole
    with pytest.raises(SearchRequestError) as caught, search_errors("search"):
        raise elasticsearch.BadRequestError(echoed, meta, echoed)
    assert len(caught.value.message) < 400
