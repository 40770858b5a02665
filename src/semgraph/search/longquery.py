"""Long questions: an issue text with a traceback and code blocks is a query too.

Three pure steps, each leaving a short query exactly as it was:

- :func:`bound_query` cleans the text (NUL and other control characters become spaces, lone
  surrogates U+FFFD) and cuts it at the documented bound (``search_max_query_chars``, 32,768
  characters by default) on a line or word boundary; the answer then says so
  (``truncated``, ``notice``). A query is never refused for its length.
- :func:`bm25_words` keeps the informative words within Elasticsearch's clause limit: a
  query of at most :data:`SHORT_QUERY_WORDS` words is sent as before (stop words dropped,
  repeats kept); a longer one is deduplicated, English filler dropped, and capped at
  :data:`MAX_BM25_WORDS` words, identifiers (``snake_case``, ``camelCase``, dotted names,
  words that came out of one) ranked first, then rarer-looking (longer) words, each group in
  the order the text names them. Three fields per word stay far below the 1,024 clauses of
  the smallest ``indices.query.bool.max_clause_count`` Elasticsearch 8 computes.
- :func:`embedding_windows` picks what the model reads. It sees its first 128 word pieces
  only; a longer text is cut on whitespace into windows of about :data:`WINDOW_CHARS`
  characters, of which the query embeds :data:`MAX_WINDOWS` (one: the title and the start
  of the body, cut explicitly instead of silently by the tokenizer after reading 30 kB).
  Measured on long texts (``bench/search/eval_long.py``, ``bench/NOTES.md`` "Long queries"):
  pooling 4 or 8 windows (:func:`pool`, the normalised mean of normalised vectors) lost
  kNN file Acc@5 0.65 -> 0.48/0.45, and the title + first paragraph
  (:func:`title_paragraph`) lost Acc@1 with ``role=source``; both stay here for the
  benchmark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from semgraph.search.split import STOP_WORDS, identifier_words, query_words, split_identifier

SHORT_QUERY_WORDS = 64  # up to this many words a query's BM25 side is unchanged
MAX_BM25_WORDS = 256  # x 3 fields = 768 clauses, under the smallest max_clause_count (1024)
WINDOW_CHARS = 480  # about the 128 word pieces all-MiniLM-L6-v2 reads of English or code
MAX_WINDOWS = 1  # windows whose vectors a query pools (more lost on long texts)
CUT_LOOKBACK = 200  # how far before the bound a cut looks for a line break or a blank

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# words of issue prose that say nothing about where the code is (beyond the stop words)
_FILLER_WORDS = """i me my we our you your he she him her its am been being have has had do does did
    doing would should could can may might must shall so than too very just also only
    when where which who whom what why how all any both each few more most other some
    same own here out up down off over under again further once about above below
    between through during before after from because while until there get got
    using use used want expected actual seems like see following example issue
    bug problem fails failing work works working thanks please hi hello"""
FILLER = frozenset(_FILLER_WORDS.split())


@dataclass(frozen=True)
class BoundedQuery:
    """The text searched, and what the caller is told about it."""

    text: str
    chars: int  # the length of the query as given
    truncated: bool

    def notice(self, bound: int) -> str | None:
        if not self.truncated:
            return None
        return (
            f"the query has {self.chars} characters; only the first {len(self.text)} were "
            f"searched (the bound is {bound}, SEMGRAPH_SEARCH_MAX_QUERY_CHARS)"
        )


def clean_query(text: str) -> str:
    """``text`` without NUL or other control characters (tab, newline and carriage return
    kept) and with lone surrogates replaced, so it is valid UTF-8 everywhere it goes."""
    return _SURROGATE.sub("\ufffd", _CONTROL.sub(" ", text))


def bound_query(text: str, max_chars: int) -> BoundedQuery:
    """The cleaned, stripped query cut to ``max_chars`` (on a line break or a blank within
    :data:`CUT_LOOKBACK` characters before the bound, else at it)."""
    cleaned = clean_query(text).strip()
    if len(cleaned) <= max_chars:
        return BoundedQuery(cleaned, len(cleaned), False)
    head = cleaned[:max_chars]
    floor = max_chars - CUT_LOOKBACK
    cut = max(head.rfind("\n", floor), head.rfind(" ", floor), head.rfind("\t", floor))
    kept = (head[:cut] if cut > 0 else head).rstrip()
    return BoundedQuery(kept, len(cleaned), True)


def _is_identifier(token: str) -> bool:
    return "_" in token or "." in token or len(split_identifier(token)) > 1


def bm25_words(text: str) -> list[str]:
    """The words of the BM25 query (see the module docstring)."""
    words = query_words(text)
    if len(words) <= SHORT_QUERY_WORDS:
        return words
    named: list[str] = []
    for match in _IDENTIFIER.finditer(text):
        token = match.group(0)
        if _is_identifier(token):
            named.extend(identifier_words(token))
    first: dict[str, int] = {}
    for i, word in enumerate(words):
        if word not in STOP_WORDS and word not in FILLER and len(word) > 1:
            first.setdefault(word, i)
    strong = {w for w in named if w in first}

    def priority(word: str) -> tuple[int, int, int]:
        return (0 if word in strong else 1, 0 if len(word) >= 6 else 1, first[word])

    kept = sorted(first, key=priority)[:MAX_BM25_WORDS]
    return sorted(kept, key=first.__getitem__) or words[:MAX_BM25_WORDS]


def embedding_windows(
    text: str, *, window_chars: int = WINDOW_CHARS, max_windows: int = MAX_WINDOWS
) -> list[str]:
    """The texts whose vectors make the query's vector: the query itself when it fits one
    window, else up to ``max_windows`` consecutive windows cut on whitespace."""
    if len(text) <= window_chars:
        return [text]
    windows: list[str] = []
    current: list[str] = []
    size = 0
    for word in text.split():
        piece = word[:window_chars]
        if current and size + 1 + len(piece) > window_chars:
            windows.append(" ".join(current))
            if len(windows) == max_windows:
                return windows
            current, size = [], 0
        current.append(piece)
        size += len(piece) + (1 if size else 0)
    if current:
        windows.append(" ".join(current))
    return windows[:max_windows]


def title_paragraph(text: str, *, max_chars: int = WINDOW_CHARS) -> str:
    """The first two paragraphs (title and body's first), at most ``max_chars`` (an option
    measured, not used)."""
    blocks = [b.strip() for b in re.split(r"\n\s*\n", text.strip()) if b.strip()]
    return "\n".join(blocks[:2])[:max_chars] if blocks else text[:max_chars]


def pool(vectors: list[list[float]]) -> list[float]:
    """The normalised mean of normalised vectors (one vector is returned as it is)."""
    if len(vectors) == 1:
        return vectors[0]
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms > 0, norms, np.float32(1.0))
    mean = unit.mean(axis=0)
    length = float(np.linalg.norm(mean))
    result: list[float] = (mean / length if length > 0 else mean).tolist()
    return result
