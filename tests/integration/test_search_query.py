"""Hybrid search and ``semgraph search`` against the real Elasticsearch and the real model."""

from __future__ import annotations

import json

import pytest
from elasticsearch import Elasticsearch
from typer.testing import CliRunner

from semgraph.config import Settings, load_settings
from semgraph.db import connect_search
from semgraph.errors import SearchNotIndexed, SearchQueryError, SearchUnavailable
from semgraph.faults import Faults
from semgraph.model import Chunk, FileFacts, content_hash
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.query import SearchHit, search
from semgraph.services import Stack
from tests.optional import some

pytestmark = pytest.mark.integration

NOW = 1_700_000_000.0

SOURCES = {
    ("alias.py", "python"): [
        (
            (
                "def flip_alias(es, alias, new_index):\n"
                "    actions = [remove_old(alias), add(new_index)]\n"
                "    es.update_aliases(actions)"
            ),
            "flip_alias",
            "function",
        ),
        (
            (
                "def parse_http_response(raw_bytes):\n"
                "    status, headers, body = split_message(raw_bytes)\n"
                "    return Response(status, headers, body)"
            ),
            "parse_http_response",
            "function",
        ),
    ],
    ("mail.py", "python"): [
        (
            (
                "def send_email(to, subject, body):\n"
                "    smtp = connect_smtp()\n"
                "    smtp.sendmail(to, subject, body)"
            ),
            "send_email",
            "function",
        ),
        (
            (
                "def resize_image(img, width, height):\n"
                "    return img.scale(width, height, antialias=True)"
            ),
            "resize_image",
            "function",
        ),
    ],
    ("server.go", "go"): [
        (
            (
                "func HashPassword(password string) string {\n"
                "\tsalt := randomSalt()\n"
                "\treturn bcrypt(password, salt)\n"
                "}"
            ),
            "HashPassword",
            "function",
        ),
        (
            (
                "func ReadConfigFile(path string) Config {\n"
                "\tdata := os.ReadFile(path)\n"
                "\treturn yaml.Unmarshal(data)\n"
                "}"
            ),
            "ReadConfigFile",
            "function",
        ),
    ],
    ("web/util.js", "javascript"): [
        (
            (
                "function debounce(fn, waitMs) {\n"
                "  let timer;\n"
                "  return (...args) => {\n"
                "    clearTimeout(timer);\n"
                "    timer = setTimeout(() => fn(...args), waitMs);\n"
                "  };\n"
                "}"
            ),
            "debounce",
            "function",
        ),
        (
            (
                "function sortUsersByAge(users) {\n"
                "  return users.slice().sort((a, b) => a.age - b.age);\n"
                "}"
            ),
            "sortUsersByAge",
            "function",
        ),
    ],
}


def corpus() -> list[FileFacts]:
    out = []
    for (path, language), chunks in SOURCES.items():
        items, line = [], 1
        for text, name, kind in chunks:
            end = line + text.count("\n")
            items.append(
                Chunk(
                    line,
                    end,
                    text,
                    content_hash(text),
                    f"{path.rsplit('.', 1)[0].replace('/', '.')}.{name}",
                    kind,
                )
            )
            line = end + 2
        out.append(FileFacts(path, language, "0" * 40, 100, line, "ok", chunks=items))
    return out


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(load_settings())


@pytest.fixture
def indexed(es_session: Elasticsearch, settings: Settings, embedder: Embedder) -> SearchIndex:
    """Two repositories with the corpus, run r1. Built once and reused while intact (tests
    that change the index state use ``es``, which wipes it, and the next user rebuilds)."""
    manager = SearchIndex(es_session, settings)
    live = manager.live_indexes()
    expected = {manager.alias_name("demo"), manager.alias_name("other")}
    intact = set(live) == expected and all(
        manager.index_run_id(i) == "r1" and manager.count(i) == 8 for i in live.values()
    )
    if intact:
        return manager
    for info in manager.list_indexes():
        manager.delete_index(info.name)
    for repo, run in (("demo", "r1"), ("other", "r1")):
        staging = manager.create_staging(repo, run, embedder.dims, now=NOW)
        manager.index_files(staging, repo, run, corpus(), embedder)
        manager.refresh(staging)
        manager.flip_alias(repo, staging)
    return manager


def top(hits: list[SearchHit], n: int = 3) -> list[str]:
    return [some(h.symbol).rsplit(".", 1)[-1] for h in hits[:n]]


@pytest.mark.parametrize(
    "q, want",
    [
        ("flip_alias", "flip_alias"),
        ("HashPassword", "HashPassword"),
        ("sortUsersByAge", "sortUsersByAge"),
        ("parse http response", "parse_http_response"),
    ],
)
def test_exact_identifier_is_first(
    indexed: SearchIndex,
    es_session: Elasticsearch,
    settings: Settings,
    embedder: Embedder,
    q: str,
    want: str,
) -> None:
    hits = search(es_session, settings, embedder, q, repo="demo", k=5)
    assert top(hits, 1) == [want]
    assert hits[0].repo == "demo" and hits[0].run_id == "r1" and hits[0].bm25_rank == 1


@pytest.mark.parametrize(
    "q, want",
    [
        ("deliver a message over SMTP", "send_email"),
        ("make a picture smaller", "resize_image"),
        ("securely store user credentials", "HashPassword"),
        ("load settings from a yaml file on disk", "ReadConfigFile"),
        ("delay calling a function until input stops", "debounce"),
    ],
)
def test_meaning_finds_the_chunk_in_top_3(
    indexed: SearchIndex,
    es_session: Elasticsearch,
    settings: Settings,
    embedder: Embedder,
    q: str,
    want: str,
) -> None:
    hits = search(es_session, settings, embedder, q, repo="demo", k=5)
    assert want in top(hits, 3)
    knn = search(es_session, settings, embedder, q, repo="demo", k=3, mode="knn")
    assert want in top(knn, 3) and all(h.bm25_rank is None for h in knn)


def test_hit_fields_and_snippet(
    indexed: SearchIndex, es_session: Elasticsearch, settings: Settings, embedder: Embedder
) -> None:
    hit = search(es_session, settings, embedder, "HashPassword", repo="demo", k=1)[0]
    assert (hit.path, hit.start_line, hit.end_line, hit.language, hit.kind) == (
        "server.go",
        1,
        4,
        "go",
        "function",
    )
    assert hit.symbol == "server.HashPassword"
    assert hit.snippet.startswith("func HashPassword(password string) string {")
    assert hit.score > 0 and hit.index == indexed.live_index("demo")
    assert set(hit.to_dict()) >= {
        "repo",
        "path",
        "start_line",
        "end_line",
        "symbol",
        "kind",
        "language",
        "score",
        "snippet",
        "run_id",
    }


def test_filters_restrict_results(
    indexed: SearchIndex, es_session: Elasticsearch, settings: Settings, embedder: Embedder
) -> None:
    both = search(es_session, settings, embedder, "function", k=50)
    assert {h.repo for h in both} == {"demo", "other"}
    go = search(es_session, settings, embedder, "function", lang="go", k=50)
    assert go and {h.language for h in go} == {"go"}
    web = search(es_session, settings, embedder, "function", path_prefix="web/", repo="other", k=50)
    assert web and {(h.repo, h.path) for h in web} == {("other", "web/util.js")}
    assert search(es_session, settings, embedder, "function", lang="cobol", k=5) == []
    bm25 = search(es_session, settings, None, "debounce", repo="demo", k=3, mode="bm25")
    assert top(bm25, 1) == ["debounce"] and bm25[0].knn_rank is None


def test_hostile_queries(
    indexed: SearchIndex, es_session: Elasticsearch, settings: Settings, embedder: Embedder
) -> None:
    for q in [
        'foo:bar AND (baz OR "',
        "*",
        "\x00\x1b[31m",
        "🦀 שלום",
        "a" * 1999,
        '{"query": 1}',
        "\\",
        "?",
    ]:
        assert isinstance(search(es_session, settings, embedder, q, k=3), list)
    with pytest.raises(SearchQueryError, match="empty"):
        search(es_session, settings, embedder, "   \n", k=3)
    assert isinstance(search(es_session, settings, embedder, "a" * 50_000, k=3), list)
    with pytest.raises(SearchQueryError, match="k must be"):
        search(es_session, settings, embedder, "x", k=0)
    with pytest.raises(SearchQueryError, match="mode must be"):
        search(es_session, settings, embedder, "x", mode="magic")
    with pytest.raises(SearchQueryError, match="needs an embedder"):
        search(es_session, settings, None, "x", mode="knn")


def test_nothing_indexed_unknown_repo_and_empty_index(
    es: Elasticsearch, settings: Settings, embedder: Embedder
) -> None:
    with pytest.raises(SearchNotIndexed, match="no repository is indexed yet"):
        search(es, settings, embedder, "anything")
    manager = SearchIndex(es, settings)
    empty = manager.create_staging("empty", "r1", embedder.dims, now=NOW)
    manager.refresh(empty)
    manager.flip_alias("empty", empty)
    assert search(es, settings, embedder, "anything", repo="empty") == []
    with pytest.raises(SearchNotIndexed, match="repository 'ghost' is not indexed"):
        search(es, settings, embedder, "anything", repo="ghost")


def test_unreachable_server_is_a_clear_error(stack: Stack, embedder: Embedder) -> None:
    settings = load_settings(es_url="http://127.0.0.1:9", es_request_timeout_s=2)
    es = connect_search(settings)
    with pytest.raises(SearchUnavailable, match="Elasticsearch unreachable"):
        search(es, settings, embedder, "anything")
    es.close()


def test_a_flip_between_resolve_and_search_is_retried_not_mixed(
    indexed: SearchIndex, es_session: Elasticsearch, settings: Settings, embedder: Embedder
) -> None:
    old = indexed.live_index("demo")
    new = indexed.create_staging("demo", "r2", embedder.dims, now=NOW)
    indexed.index_files(new, "demo", "r2", corpus(), embedder)
    indexed.refresh(new)
    calls: list[list[str]] = []

    def racing(*, targets: list[str]) -> None:
        if not calls:
            indexed.flip_alias("demo", new)  # flips and deletes `old` after we resolved it
        calls.append(list(targets))

    faults = Faults()
    faults.arm("search.targets_resolved", racing)
    hits = search(es_session, settings, embedder, "send email", repo="demo", k=5, faults=faults)
    assert calls == [[old], [new]]
    assert hits and {h.run_id for h in hits} == {"r2"} and {h.index for h in hits} == {new}


def test_cli_search_json_and_text(indexed: SearchIndex, settings: Settings) -> None:
    from semgraph.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["search", "HashPassword", "--repo", "demo", "-k", "2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    hits = data["hits"]
    assert data["truncated"] is False and "notice" not in data
    assert len(hits) == 2 and hits[0]["path"] == "server.go" and hits[0]["start_line"] == 1
    result = runner.invoke(app, ["search", "debounce", "--lang", "javascript", "-k", "1"])
    assert result.exit_code == 0, result.output
    assert "web/util.js:1-7" in result.output and "function debounce(fn, waitMs) {" in result.output
    result = runner.invoke(app, ["search", "x", "-k", "0"])
    assert result.exit_code == 2
