"""Changing the embedding model re-embeds a repository once and never mixes vectors: the
model's identity is part of the run fingerprint (the job is not a no-op), of the vector
store's key (nothing of the old model is reused) and of the live index's ``_meta``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings, load_settings
from semgraph.db import Graph
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest, ReindexResult
from semgraph.search.embed import Embedder
from semgraph.search.index import SearchIndex
from semgraph.search.model_files import BASE_MODEL, default_model_dir
from semgraph.search.query import search
from tests.repos import POLYGLOT, make_repo

pytestmark = pytest.mark.integration


def _cls_variant(root: Path) -> Path:
    """all-MiniLM-L6-v2 with CLS pooling instead of mean: another model (other vectors, other
    configs), sharing the weights file through a link."""
    base = default_model_dir()
    model = root / "minilm-cls"
    for path in base.rglob("*"):
        if path.is_file() and not path.name.startswith("."):
            target = model / path.relative_to(base)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    pooling = model / "1_Pooling" / "config.json"
    conf = json.loads(pooling.read_text())
    pooling.unlink()
    conf.update(pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    pooling.write_text(json.dumps(conf))
    return model


def _run(settings: Settings, graph: Graph, es: Elasticsearch, repo: Path) -> ReindexResult:
    request = ReindexRequest(source=str(repo))
    # the job embeds every chunk itself (its embedding is what this test is about; the
    # vectors job of progressive publish: tests/integration/test_progressive.py)
    settings = settings.model_copy(update={"embed_inline_max_chunks": -1})
    return Reindex(settings, graph, es, request, embedder=Embedder(settings)).run()


def test_a_new_model_reembeds_each_repository_once_and_never_mixes(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "polyglot", POLYGLOT)
    # torch on the CPU for both: no OpenVINO export of the variant (minutes) in a test
    old = load_settings(embedding_model=BASE_MODEL, embedding_backend="torch")
    new = load_settings(embedding_model=str(_cls_variant(tmp_path)), embedding_backend="torch")
    old_id, new_id = Embedder(old).model_id, Embedder(new).model_id
    assert old_id != new_id

    first = _run(old, graph, es, repo)
    assert first.status == "succeeded" and first.stats["index"]["embedded"] > 0
    assert _run(old, graph, es, repo).status == "noop"

    upgraded = _run(new, graph, es, repo)
    assert upgraded.status == "succeeded", "a new model is a new fingerprint, not a no-op"
    stats = upgraded.stats["index"]
    assert stats["reused"] == 0 and stats["embedded"] == stats["chunks"] > 0
    meta = SearchIndex(es, new).index_meta(SearchIndex(es, new).live_index(first.repo_key) or "")
    assert meta is not None and meta["model_id"] == new_id

    again = _run(new, graph, es, repo)
    assert again.status == "noop", "re-embedded once"
    hits = search(es, new, Embedder(new), "parse the config", repo=first.repo_key, k=3)
    assert hits, "the new model's vectors answer"

    # back to the old model: nothing comes from the live index (the new model's vectors);
    # the old model's vectors come from the shared store, where their own key holds them
    back = _run(old, graph, es, repo)
    assert back.status == "succeeded"
    counts = back.stats["index"]
    assert counts["embedded"] == 0 and counts["reused"] == 0
    assert counts["store_reused"] + counts["deduplicated"] == counts["chunks"]
    meta = SearchIndex(es, old).index_meta(SearchIndex(es, old).live_index(first.repo_key) or "")
    assert meta is not None and meta["model_id"] == old_id
