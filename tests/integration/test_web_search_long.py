"""``GET /search`` and ``POST /search`` over the real stores (issue 28): an issue text of
30 kB answers (not 422), a 1 MB body is cut with a notice, a body over the limit is a short
413, hostile input is searched or refused without the input echoed, the role filter works,
and no error body or WARNING log line repeats the query."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.model import Chunk, FileFacts, content_hash
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.web.app import create_app
from semgraph.web.fixtures import serve_in_thread

pytestmark = pytest.mark.integration

TOKEN = "api-token-for-tests"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
REPO = "webshop"
MARKER = "ZQXJ-MARKER"  # a word that must never come back in an error or a log line
FILES = {
    ("src/shop/config.py", "python"): (
        "def read_config_file(path):\n"
        "    with open(path) as handle:\n"
        "        return parse_yaml(handle.read())",
        "read_config_file",
    ),
    ("tests/test_config.py", "python"): (
        "def test_read_config_file(tmp_path):\n"
        "    assert read_config_file(tmp_path / 'config.yaml') == {}",
        "test_read_config_file",
    ),
    ("docs/config.md", "markdown"): ("# Configuration\n\nread_config_file reads YAML.", None),
}
TRACEBACK = (
    "read_config_file fails on an empty configuration file\n\n"
    "Traceback (most recent call last):\n"
    '  File "/srv/src/shop/config.py", line 3, in read_config_file\n'
    "    return parse_yaml(handle.read())\n"
    "ValueError: empty document\n\n"
)


def issue(chars: int) -> str:
    text = TRACEBACK
    while len(text) < chars:
        text += f"The configuration is read when the shop starts. {MARKER} "
    return text[:chars]


def corpus() -> list[FileFacts]:
    out = []
    for (path, language), (text, symbol) in FILES.items():
        lines = text.count("\n") + 1
        qualified = f"{path.rsplit('.', 1)[0].replace('/', '.')}.{symbol}" if symbol else None
        kind = "function" if symbol else None
        chunk = Chunk(1, lines, text, content_hash(text), qualified, kind)
        out.append(FileFacts(path, language, "0" * 40, 100, lines, "ok", chunks=[chunk]))
    return out


@pytest.fixture
def base(graph: Graph, es: Elasticsearch, settings: Settings) -> Iterator[str]:
    manager = SearchIndex(es, settings)
    embedder = Embedder(settings)
    staging = manager.create_staging(REPO, "r1", embedder.dims, now=1_700_000_000.0)
    manager.index_files(staging, REPO, "r1", corpus(), embedder)
    manager.refresh(staging)
    manager.flip_alias(REPO, staging)
    configured = settings.model_copy(update={"api_token": TOKEN})
    with serve_in_thread(create_app(configured, graph=graph, search=es)) as url:
        yield url


def post(base: str, body: Any) -> httpx.Response:
    """POST ``body`` as ASCII JSON (a lone surrogate travels as its escape)."""
    headers = {**AUTH, "content-type": "application/json"}
    return httpx.post(f"{base}/search", content=json.dumps(body), headers=headers, timeout=120)


def test_a_30_kb_issue_text_answers_on_get_and_post(base: str) -> None:
    text = issue(30_000)
    got = httpx.get(f"{base}/search", params={"q": text, "repo": REPO}, headers=AUTH, timeout=120)
    assert got.status_code == 200, got.text[:500]
    body = got.json()
    assert body["truncated"] is False and "notice" not in body
    assert body["query_chars"] == len(text.strip()) and body["hits"]
    assert body["hits"][0]["path"] == "src/shop/config.py"
    posted = post(base, {"q": text, "repo": REPO, "k": 3, "mode": "hybrid"})
    assert posted.status_code == 200 and posted.json()["hits"][0]["path"] == "src/shop/config.py"


def test_a_1_mb_body_is_cut_with_a_notice(base: str, settings: Settings) -> None:
    got = post(base, {"q": issue(1_000_000), "repo": REPO, "mode": "bm25"})
    assert got.status_code == 200
    body = got.json()
    assert body["truncated"] is True and body["query_chars"] == 1_000_000
    assert body["searched_chars"] <= settings.search_max_query_chars
    assert "SEMGRAPH_SEARCH_MAX_QUERY_CHARS" in body["notice"] and MARKER not in body["notice"]
    assert body["hits"]


def test_a_body_over_the_limit_is_a_short_413(base: str, settings: Settings) -> None:
    over = settings.search_max_body_bytes + 1
    got = post(base, {"q": MARKER * (over // len(MARKER))})
    assert got.status_code == 413 and MARKER not in got.text and len(got.text) < 200
    raw = httpx.post(
        f"{base}/search", content=b"{" * 10, headers={**AUTH, "content-type": "application/json"}
    )
    assert raw.status_code == 422 and len(raw.text) < 500


def test_errors_never_echo_the_query(base: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    long = issue(40_000)
    cases = [
        post(base, {"q": long, "mode": "sideways"}),
        post(base, {"q": long, "role": f"tests{MARKER}"}),
        post(base, {"q": long, "k": 0}),
        post(base, {"q": long, "unknown": MARKER}),
        post(base, {"q": [long]}),
        post(base, {"q": long, "repo": MARKER * 200}),
        httpx.get(f"{base}/search", params={"q": long, "k": 999}, headers=AUTH, timeout=60),
        httpx.get(f"{base}/search", params={"q": long, "mode": "x"}, headers=AUTH, timeout=60),
    ]
    for resp in cases:
        assert resp.status_code == 422, resp.text[:300]
        assert MARKER not in resp.text and len(resp.text) < 1000, resp.text[:300]
    blank = post(base, {"q": "\x00\x01\x02"})
    assert blank.status_code == 400 and blank.json() == {"detail": "the search query is empty"}
    missing = post(base, {"q": long, "repo": "no-such-repo"})  # the repository is named
    assert missing.status_code == 404 and "shop starts" not in missing.text
    assert all(MARKER not in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(
    "q",
    [
        "read\x00config\x00file",
        "\udcff configuration",
        "конфигурация 設定 read_config_file 🚀",
        '{"query": {"match_all": {}}} \\u0000 <script>alert(1)</script>',
        " ".join(f"w{i}q" for i in range(8000)),
    ],
)
def test_hostile_text_is_searched(base: str, q: str) -> None:
    got = post(base, {"q": q, "repo": REPO, "mode": "bm25"})
    assert got.status_code == 200, got.text[:300]
    assert isinstance(got.json()["hits"], list)


def test_the_role_filter_on_get_and_post(base: str) -> None:
    params: dict[str, Any] = {"q": "read config file", "repo": REPO, "k": 10}
    everything = httpx.get(f"{base}/search", params=params, headers=AUTH, timeout=60).json()
    assert {h["role"] for h in everything["hits"]} == {"source", "test", "docs"}
    for role in ("source", "test", "docs"):
        got = httpx.get(
            f"{base}/search", params={**params, "role": role}, headers=AUTH, timeout=60
        ).json()
        assert got["hits"] and {h["role"] for h in got["hits"]} == {role}
        assert {h["role"] for h in post(base, {**params, "role": role}).json()["hits"]} == {role}
    none = post(base, {**params, "role": "generated"})
    assert none.status_code == 200 and none.json()["hits"] == []


def test_the_post_form_is_in_the_openapi_document(base: str) -> None:
    doc = httpx.get(f"{base}/openapi.json", headers=AUTH, timeout=30).json()
    body = doc["paths"]["/search"]["post"]["requestBody"]["content"]["application/json"]
    assert {"q", "role", "mode"} <= set(body["schema"]["properties"])
    params = {p["name"] for p in doc["paths"]["/search"]["get"]["parameters"]}
    assert {"q", "role", "repo", "lang", "path_prefix", "k", "mode"} <= params
