"""The mapping and request bodies of the shared vector store (:mod:`semgraph.search.vectorstore`),
as named constants and ``*_body`` builders (pure: no client, no I/O).

One document per vector, ``_id`` = the vector key (sha256 of model id and embedded text). The
vector is a ``binary`` field (base64 of little-endian float32): stored, never indexed for kNN,
and the same mapping holds models of any size (a document's size is checked when it is read).
``last_used`` is epoch seconds; the GC sorts on it. :func:`decode_vector` is the check a
stored document passes before its vector is used.
"""

from __future__ import annotations

import base64
import binascii
import copy
from typing import Any

import numpy as np

STORE_FORMAT = 1  # bump when the mapping changes incompatibly
STORE_MARKER = "semgraph_vector_store"
GC_HOUR_S = 3600  # GC buckets last_used by the hour (an hour's vectors are equally recent)

STORE_MAPPING: dict[str, Any] = {
    "dynamic": "strict",
    "_meta": {},
    "properties": {
        "model_id": {"type": "keyword"},
        "dims": {"type": "integer", "index": False},
        "vector": {"type": "binary"},  # not searchable, no doc values: _source only
        "last_used": {"type": "long"},
    },
}

MGET_SOURCE = ["model_id", "dims", "vector", "last_used"]


def create_store_body(*, replicas: int, now: float) -> dict[str, Any]:
    mappings = copy.deepcopy(STORE_MAPPING)
    mappings["_meta"] = {STORE_MARKER: STORE_FORMAT, "last_gc": now}
    return {
        "settings": {
            "index": {
                "number_of_shards": 1,
                "number_of_replicas": replicas,
                "refresh_interval": "30s",  # reads are realtime gets by id; only the GC counts
            }
        },
        "mappings": mappings,
    }


def encode_vector(vector: list[float]) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def store_document(model_id: str, vector: list[float], now: float) -> dict[str, Any]:
    return {
        "model_id": model_id,
        "dims": len(vector),
        "vector": encode_vector(vector),
        "last_used": int(now),
    }


def store_operations(index: str, docs: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """``_bulk`` that (over)writes each ``(key, document)``: the same key is the same vector,
    so a retry or a second writer is harmless, and a corrupt document is replaced."""
    operations: list[dict[str, Any]] = []
    for key, doc in docs:
        operations.append({"index": {"_index": index, "_id": key}})
        operations.append(doc)
    return operations


def touch_operations(index: str, keys: list[str], now: float) -> list[dict[str, Any]]:
    """``_bulk`` that sets ``last_used`` of existing documents (a vanished one is a 404)."""
    operations: list[dict[str, Any]] = []
    for key in keys:
        operations.append({"update": {"_index": index, "_id": key}})
        operations.append({"doc": {"last_used": int(now)}})
    return operations


def expired_body(before: float) -> dict[str, Any]:
    """Every vector last used before ``before``."""
    return {"query": {"range": {"last_used": {"lt": int(before)}}}}


def hour_body(start: int) -> dict[str, Any]:
    """Every vector last used in the hour starting at ``start``."""
    return {"query": {"range": {"last_used": {"gte": start, "lt": start + GC_HOUR_S}}}}


def usage_hours_body(after: dict[str, Any] | None, page: int) -> dict[str, Any]:
    """Vector counts per hour of ``last_used``, oldest first, one composite page."""
    composite: dict[str, Any] = {
        "size": page,
        "sources": [
            {"hour": {"histogram": {"field": "last_used", "interval": GC_HOUR_S, "order": "asc"}}}
        ],
    }
    if after is not None:
        composite["after"] = after
    return {"size": 0, "track_total_hits": False, "aggs": {"hours": {"composite": composite}}}


def decode_vector(source: Any, model_id: str, dims: int) -> list[float] | None:
    """The vector of a store document, or None unless it is a finite, non-zero vector of
    ``dims`` floats written for ``model_id``."""
    if not isinstance(source, dict) or source.get("model_id") != model_id:
        return None
    raw = source.get("vector")
    if not isinstance(raw, str) or len(raw) != 4 * ((dims * 4 + 2) // 3):
        return None
    try:
        data = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(data) != dims * 4:
        return None
    vector = np.frombuffer(data, dtype="<f4")
    if not np.isfinite(vector).all() or not float(np.dot(vector, vector)) > 0:
        return None
    out: list[float] = vector.astype(np.float64).tolist()
    return out


def item_error(item: Any) -> Any:
    """The error of one ``_bulk`` answer item (None when it succeeded)."""
    result: Any = next(iter(item.values()), {}) if isinstance(item, dict) and item else {}
    return result.get("error") if isinstance(result, dict) else "malformed answer"
