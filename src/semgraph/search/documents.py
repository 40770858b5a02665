"""One Elasticsearch document per code chunk (the shape the mapping in ``bodies.py`` expects)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from semgraph.model import Chunk
from semgraph.search.roles import role_of
from semgraph.search.split import split_text

_SURROGATE = re.compile("[\ud800-\udfff]")
# rough JSON size of one float in a vector, for bounding bulk request bytes
VECTOR_FLOAT_BYTES = 22
# a float in a Python list: the float object (24) plus the list's pointer (8)
PY_FLOAT_BYTES = 32
# a pending chunk's fixed cost: the dataclass, its key string, the chunk object
PENDING_OVERHEAD_BYTES = 600


def clean_text(text: str) -> str:
    """``text`` as valid UTF-8 (lone surrogates from undecodable bytes become U+FFFD)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)


def document_id(path: str, ordinal: int) -> str:
    """A stable id for the ``ordinal``-th chunk of ``path`` (ids are at most 512 bytes)."""
    raw = f"{path}\0{ordinal}".encode("utf-8", "surrogatepass")
    return hashlib.sha1(raw, usedforsecurity=False).hexdigest()


def symbol_name(qualified: str | None) -> str | None:
    """The last segment of a qualified name (``pkg.mod.Class.method`` -> ``method``)."""
    if not qualified:
        return None
    return qualified.rsplit(".", 1)[-1] or qualified


@dataclass(slots=True)
class PendingChunk:
    """A chunk waiting for its vector: what the document needs, nothing more."""

    path: str
    language: str
    ordinal: int
    chunk: Chunk
    text: str  # the embedded text
    key: str  # vector_key(model id, text)
    context: str = ""  # the words of its context (semgraph.search.context), for BM25


def pending_bytes(pending: PendingChunk, dims: int) -> int:
    """What one chunk costs while it waits in an embedding window, its vector included
    (an estimate in bytes, one per character; bounds the window)."""
    chunk = pending.chunk
    text = len(pending.text) + len(chunk.text) + len(pending.path) + len(chunk.symbol or "")
    text += len(pending.context)
    return text + PY_FLOAT_BYTES * dims + PENDING_OVERHEAD_BYTES


def chunk_document(
    pending: PendingChunk,
    *,
    repo: str,
    run_id: str,
    vector: list[float] | None,
    max_code_chars: int,
) -> dict[str, Any]:
    """The document for one chunk; without a vector (pending: progressive publish) it
    carries the text to embed instead (``embed_text``)."""
    chunk = pending.chunk
    code = clean_text(chunk.text)[:max_code_chars]
    path = clean_text(pending.path)
    symbol = clean_text(chunk.symbol) if chunk.symbol else None
    return {
        "repo": repo,
        "run_id": run_id,
        "path": path,
        "path_text": split_text(path),
        "language": pending.language,
        "role": role_of(path),
        "kind": chunk.kind,
        "symbol": symbol,
        "name": symbol_name(symbol),
        "symbol_text": split_text(symbol) if symbol else "",
        "chunk_hash": chunk.content_hash,
        "vector_key": pending.key,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "code": code,
        "identifiers": split_text(code),
        "context_text": clean_text(pending.context),
        **({"embedding": vector} if vector is not None else {"embed_text": pending.text}),
    }


def estimated_bytes(doc: dict[str, Any]) -> int:
    """A cheap upper-ish estimate of a document's JSON size (bounds bulk requests)."""
    text = len(doc["code"]) + len(doc["identifiers"]) + len(doc["path"]) * 3
    text += len(doc.get("context_text", ""))
    vector = doc.get("embedding")
    if vector is None:
        return 2 * (text + len(doc.get("embed_text") or "")) + 512
    return 2 * text + VECTOR_FLOAT_BYTES * len(vector) + 512
