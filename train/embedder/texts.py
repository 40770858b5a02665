"""The texts a training pair is embedded as: the query side is the doc's summary, the code
side is exactly what the product embeds at index time.

The code side calls the product's own :func:`semgraph.search.embed.embedding_text` (the
symbol name's words, the path's last two parts, context lines where the product has them,
then the code), so training sees the same text the index embeds. Truncation at
:data:`MAX_TOKENS` word pieces happens in the model (``max_seq_length``), as in the product
(``embedding_max_tokens``).

Context lines (module, enclosing class, called names) are passed only when the product's
``embedding_text`` accepts a ``context`` argument and :mod:`semgraph.search.context` exists;
otherwise the text is the product's text without them.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from semgraph.model import Chunk
from semgraph.search.embed import embedding_text

MAX_TOKENS = 128  # the product's embedding_max_tokens
CONTEXT_PARTS = ("module", "class", "calls")  # what a pair's fields can give

_embed_text: Callable[..., str] = embedding_text


def accepts_context() -> bool:
    """Whether the product's ``embedding_text`` takes context lines."""
    return "context" in inspect.signature(embedding_text).parameters


def context_lines(pair: dict[str, Any], parts: frozenset[str]) -> list[str] | None:
    """The pair's context as the product writes it, or None where the product has none."""
    if not parts or not accepts_context():
        return None
    try:
        module = importlib.import_module("semgraph.search.context")
    except ImportError:
        return None
    limit = int(getattr(module, "MAX_CALLS", 12))
    calls = tuple(dict.fromkeys(c for c in pair.get("calls") or [] if c))[:limit]
    ctx = module.ChunkContext(
        module=pair.get("module") or "", cls=pair.get("class") or "", calls=calls
    )
    lines: list[str] = ctx.lines(parts)
    return lines


def code_text(pair: dict[str, Any], parts: frozenset[str] = frozenset()) -> str:
    """The code side of a pair, as the product's index embeds that function."""
    start = int(pair.get("start_line") or 1)
    chunk = Chunk(
        start_line=start,
        end_line=int(pair.get("end_line") or start),
        text=pair["code"],
        content_hash="",
        symbol=pair.get("symbol") or None,
        kind=pair.get("kind") or None,
    )
    context = context_lines(pair, parts)
    if context is None:
        return _embed_text(pair["path"], chunk)
    return _embed_text(pair["path"], chunk, context=context)


def query_text(pair: dict[str, Any]) -> str:
    """The query side: the doc's summary."""
    return str(pair["query"])
