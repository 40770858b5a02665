"""Pure search logic: identifier splitting, names, fusion, snippets, documents, model ids."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from semgraph.config import DEFAULT_EMBEDDING_MODEL, load_settings
from semgraph.errors import ConfigError, SearchQueryError
from semgraph.model import Chunk, content_hash
from semgraph.search.bodies import bm25_body, flip_alias_actions, lookup_vectors_body
from semgraph.search.documents import (
    PendingChunk,
    chunk_document,
    clean_text,
    document_id,
    symbol_name,
)
from semgraph.search.embed import Embedder, embedding_text, resolve_device, vector_key
from semgraph.search.model_files import declared_dims, model_fingerprint
from semgraph.search.names import slug
from semgraph.search.query import minmax_fusion, snippet, validate
from semgraph.search.split import identifier_words, query_words, split_identifier, split_text

LEGAL_INDEX = re.compile(r"^[a-z0-9_.][a-z0-9_.-]*$")


@pytest.mark.parametrize(
    "word, parts",
    [
        ("parseHTTPResponse", ["parse", "http", "response"]),
        ("flip_alias", ["flip", "alias"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        ("getHTTPClient2", ["get", "http", "client", "2"]),
        ("__init__", ["init"]),
        ("déjàVu", ["déjà", "vu"]),
        ("HTTP", ["http"]),
        ("", []),
    ],
)
def test_split_identifier(word: str, parts: list[str]) -> None:
    assert split_identifier(word) == parts


def test_identifier_words_keep_compounds_and_drop_blobs() -> None:
    assert (
        split_text("SearchIndex.flip_alias(x)")
        == "searchindex search index flip_alias flip alias x"
    )
    assert split_text("src/semgraph/search/index.py") == "src semgraph search index py"
    assert identifier_words("A" * 65 + " ok") == ["ok"]
    assert len(identifier_words("a_b " * 10_000, max_words=100)) == 100


@given(st.text(max_size=300))
def test_split_never_fails_and_is_lowercase(text: str) -> None:
    words = identifier_words(text)
    assert all(w == w.lower() and w.strip() == w and w for w in words)


@given(st.text(min_size=0, max_size=400))
def test_slugs_are_legal_bounded_and_never_contain_double_dash(value: str) -> None:
    s = slug(value, 150)
    assert s and len(s) <= 150 and "--" not in s and LEGAL_INDEX.match(s)
    assert not s.startswith("-") and not s.endswith("-")


def test_slug_is_identity_when_legal_and_hashed_when_lossy() -> None:
    assert slug("semgraph", 150) == "semgraph"
    assert slug("Org/Repo", 150) != slug("org-repo", 150)
    assert slug("a--b", 150) != slug("a-b", 150)
    assert slug("x" * 300, 150) == slug("x" * 300, 150)
    assert slug("x" * 300, 150) != slug("x" * 301, 150)


def test_staging_name_never_equals_another_repos_alias() -> None:
    from semgraph.search.index import SearchIndex

    manager = SearchIndex(None, load_settings())  # type: ignore[arg-type]
    assert manager.staging_name("a", "b") != manager.alias_name("a-b")
    assert manager.staging_name("a", "b") == "code-a--b"
    assert manager.alias_name("a-b") == "code-a-b"


def test_minmax_fusion_scales_each_ranking_and_sums_the_weighted_scores() -> None:
    bm25 = [("a", 12.0), ("b", 8.0), ("c", 4.0)]
    knn = [("c", 0.9), ("a", 0.8), ("d", 0.7)]
    fused = minmax_fusion([bm25, knn], [0.5, 0.5])
    scores = dict(fused)
    assert scores["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)
    assert scores["c"] == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)
    assert scores["b"] == pytest.approx(0.5 * 0.5) and scores["d"] == pytest.approx(0.0)
    assert [d for d, _ in fused] == ["a", "c", "b", "d"]
    # equal scores (one hit, or a tie over the whole window) count as the top, not 0/0
    assert minmax_fusion([[("x", 3.0)]], [1.0]) == [("x", 1.0)]
    assert dict(minmax_fusion([[("x", 2.0), ("y", 2.0)]], [1.0])) == {"x": 1.0, "y": 1.0}
    # ties: best single rank, then id; the order of the rankings does not matter
    assert [
        d
        for d, _ in minmax_fusion([[("p", 1.0), ("q", 0.0)], [("q", 1.0), ("p", 0.0)]], [1.0, 1.0])
    ] == ["p", "q"]
    assert minmax_fusion([], []) == [] and minmax_fusion([[], []], [0.5, 0.5]) == []
    with pytest.raises(ValueError):
        minmax_fusion([bm25], [0.5, 0.5])


def test_query_words_drop_stop_words_but_never_everything() -> None:
    assert query_words("Return the name of the file") == ["return", "name", "file"]
    assert query_words("is_valid") == ["is_valid", "valid"]
    assert query_words("to be or not to be") == ["to", "be", "or", "not", "to", "be"]
    assert query_words("") == [] and query_words("?? !!") == []
    assert query_words("the word " * 50_000) == ["word"] * 10_000


def test_snippet_starts_at_the_best_line_and_is_bounded() -> None:
    code = "import os\n\ndef flip_alias(a):\n    return a\n    # tail\n    # more"
    assert snippet(code, "flip alias", lines=2) == "def flip_alias(a):\n    return a"
    assert snippet(code, "zzz", lines=1) == "import os"
    assert len(snippet("x" * 10_000, "x", chars=50)) == 50
    assert snippet("", "q") == ""


def test_validate_rejects_bad_queries() -> None:
    settings = load_settings()
    assert validate("  q  ", k=1, mode="hybrid", settings=settings).text == "q"
    cases: list[tuple[str, dict[str, Any]]] = [
        (" ", {}),
        ("\x00\x01 \x7f", {}),  # nothing left once control characters are blanked
        ("q", {"k": 0}),
        ("q", {"k": 201}),
        ("q", {"mode": "x"}),
        ("q", {"role": "tests"}),
    ]
    for bad, kw in cases:
        with pytest.raises(SearchQueryError):
            validate(bad, **{"k": 5, "mode": "hybrid", "settings": settings, **kw})
    long = validate("word " * 20_000, k=5, mode="hybrid", settings=settings)  # never refused
    assert long.truncated and len(long.text) <= settings.search_max_query_chars


def test_bm25_body_only_uses_the_name_term_for_short_single_tokens() -> None:
    def has_term(body: dict[str, Any]) -> bool:
        return any("term" in c for c in body["query"]["bool"]["should"])

    assert has_term(bm25_body("flip_alias", [], 10))
    assert not has_term(bm25_body("flip alias", [], 10))
    assert not has_term(bm25_body("a" * 129, [], 10))


def test_bm25_body_sums_the_split_fields_of_the_query_without_stop_words() -> None:
    match = bm25_body("Return the parseHTTP response", [], 10)["query"]["bool"]["should"][0]
    assert match["multi_match"]["query"] == "return parsehttp parse http response"
    assert match["multi_match"]["type"] == "most_fields"
    assert "code" not in match["multi_match"]["fields"]


def test_request_bodies() -> None:
    assert lookup_vectors_body(["k1", "k2"])["size"] == 2
    assert flip_alias_actions("code-a", "new", ["old", "new"]) == [
        {"remove": {"index": "old", "alias": "code-a"}},
        {"add": {"index": "new", "alias": "code-a"}},
    ]


def test_documents_and_embedding_text() -> None:
    ch = Chunk(
        3, 4, "def flipAlias():\n    pass", content_hash("x"), "pkg.mod.flipAlias", "function"
    )
    text = embedding_text("pkg/mod.py", ch)
    assert text == "flipalias flip alias\npkg/mod.py\ndef flipAlias():\n    pass"
    assert embedding_text("p", Chunk(1, 1, "y" * 100, "h"), max_chars=10) == "p\nyyyyyyyy"
    # a vendored or monorepo copy embeds the same text: only the path's last two parts
    assert embedding_text("third_party/acme/pkg/mod.py", ch) == text
    assert embedding_text("/", Chunk(1, 1, "x", "h")) == "/\nx"
    key = vector_key("model@1", text)
    assert key == vector_key("model@1", text) != vector_key("model@2", text)
    assert len(key) == 64
    doc = chunk_document(
        PendingChunk("pkg/mod.py", "python", 0, ch, text, key),
        repo="r",
        run_id="run",
        vector=[0.1, 0.2],
        max_code_chars=10,
    )
    assert doc["code"] == "def flipAl" and doc["name"] == "flipAlias"
    assert doc["symbol_text"] == "pkg mod flipalias flip alias"
    assert document_id("a.py", 0) != document_id("a.py", 1)
    assert symbol_name(None) is None and symbol_name("a.b.") == "a.b."
    assert clean_text("ok\udcff") == "ok\ufffd"
    json.dumps(doc, ensure_ascii=False).encode("utf-8")


def test_model_fingerprint_depends_on_content_not_location(tmp_path: Path) -> None:
    for d in ("a/model", "b/model"):
        (tmp_path / d / "1_Pooling").mkdir(parents=True)
        (tmp_path / d / "modules.json").write_text(
            json.dumps([{"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"}])
        )
        (tmp_path / d / "1_Pooling" / "config.json").write_text('{"word_embedding_dimension": 7}')
        (tmp_path / d / "model.safetensors").write_bytes(b"w" * 3_000_000)
    a, b = tmp_path / "a/model", tmp_path / "b/model"
    assert model_fingerprint(a).split("@")[1] == model_fingerprint(b).split("@")[1]
    assert declared_dims(a) == 7
    (b / "model.safetensors").write_bytes(b"w" * 2_999_999 + b"x")
    assert model_fingerprint(a).split("@")[1] != model_fingerprint(b).split("@")[1]
    (a / "modules.json").write_text('[{"type": "custom.Layer", "path": ""}]')
    assert declared_dims(a) is None
    (a / "modules.json").write_text("not json")
    assert declared_dims(a) is None


def test_embedder_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a sentence-transformers model directory"):
        Embedder(load_settings(embedding_model=str(tmp_path)))
    with pytest.raises(ConfigError, match="SEMGRAPH_EMBEDDING_DEVICE"):
        load_settings(embedding_device="gpu0")
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") in ("cpu", "cuda")


def test_default_embedder_is_cheap_to_create() -> None:
    e = Embedder(load_settings())
    assert e.dims == 384 and e.model_id.startswith(f"{DEFAULT_EMBEDDING_MODEL}@")
