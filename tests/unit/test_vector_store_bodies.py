"""The vector store's pure parts: document encoding, the decoder's checks on hostile
documents, and the GC request bodies."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from semgraph.search import store_bodies
from semgraph.search.store_bodies import decode_vector
from semgraph.search.vectorstore import store_name

DIMS = 4


def doc(vector: list[float], model: str = "m") -> dict[str, object]:
    return store_bodies.store_document(model, vector, 1_700_000_000.9)


def test_a_vector_round_trips_exactly_as_float32() -> None:
    vector = [0.1, -0.25, 1e-7, 0.5]
    source = doc(vector)
    assert source["dims"] == 4 and source["last_used"] == 1_700_000_000
    out = decode_vector(source, "m", DIMS)
    assert out == np.asarray(vector, dtype=np.float32).astype(np.float64).tolist()


@pytest.mark.parametrize(
    "source",
    [
        None,
        [],
        "vector",
        {},
        {"model_id": "other", "vector": store_bodies.encode_vector([1.0] * DIMS)},
        {"model_id": "m"},
        {"model_id": "m", "vector": 12345},
        {"model_id": "m", "vector": [1.0, 2.0, 3.0, 4.0]},
        {"model_id": "m", "vector": store_bodies.encode_vector([1.0] * (DIMS + 1))},
        {"model_id": "m", "vector": store_bodies.encode_vector([1.0] * (DIMS - 1))},
        {"model_id": "m", "vector": "A" * 10_000_000},  # oversized
        {"model_id": "m", "vector": "!" * 24},  # the right length, not base64
        {"model_id": "m", "vector": store_bodies.encode_vector([0.0] * DIMS)},
        {"model_id": "m", "vector": store_bodies.encode_vector([1.0, float("inf"), 0, 0])},
        {
            "model_id": "m",
            "vector": base64.b64encode(np.full(DIMS, np.nan, dtype="<f4").tobytes()).decode(),
        },
    ],
)
def test_anything_but_a_valid_vector_of_this_model_and_size_is_ignored(source: object) -> None:
    assert decode_vector(source, "m", DIMS) is None


def test_bulk_bodies_write_and_touch_by_key() -> None:
    ops = store_bodies.store_operations("code_vectors", [("k1", {"a": 1}), ("k2", {"a": 2})])
    assert ops == [
        {"index": {"_index": "code_vectors", "_id": "k1"}},
        {"a": 1},
        {"index": {"_index": "code_vectors", "_id": "k2"}},
        {"a": 2},
    ]
    touch = store_bodies.touch_operations("code_vectors", ["k1"], 5.7)
    assert touch == [{"update": {"_index": "code_vectors", "_id": "k1"}}, {"doc": {"last_used": 5}}]


def test_gc_bodies() -> None:
    assert store_bodies.expired_body(99.5) == {"query": {"range": {"last_used": {"lt": 99}}}}
    hour = store_bodies.hour_body(7200)["query"]["range"]["last_used"]
    assert hour == {"gte": 7200, "lt": 10800}
    first = store_bodies.usage_hours_body(None, 10)["aggs"]["hours"]["composite"]
    assert "after" not in first and first["size"] == 10
    nxt = store_bodies.usage_hours_body({"hour": 3600}, 10)["aggs"]["hours"]["composite"]
    assert nxt["after"] == {"hour": 3600}


def test_the_store_is_outside_every_repository_pattern() -> None:
    assert store_name("code") == "code_vectors"
    assert not store_name("code").startswith("code-")
    body = store_bodies.create_store_body(replicas=1, now=3.0)
    assert body["mappings"]["dynamic"] == "strict"
    assert body["mappings"]["_meta"] == {store_bodies.STORE_MARKER: 1, "last_gc": 3.0}
    assert body["settings"]["index"]["number_of_replicas"] == 1
