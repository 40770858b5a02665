"""What a search answers: its hits (:class:`SearchHit`), the answer around them
(:class:`SearchAnswer`: the hits and whether the query was cut), the score fusion of the two
retrievers and the snippet shown with each hit. Pure: no client, no I/O."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from semgraph.search.history_query import FileHistory
from semgraph.search.split import identifier_words

SNIPPET_LINES = 4
SNIPPET_CHARS = 400


@dataclass(frozen=True)
class Semantic:
    """How complete one repository's semantic half is: its chunks, those still pending."""

    chunks: int
    pending: int

    @property
    def state(self) -> str:
        return "pending" if self.pending else "complete"

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "chunks": self.chunks, "pending": self.pending}

    def line(self) -> str:
        """``semantic: pending 12,400 of 46,172 chunks`` (or ``complete``)."""
        if not self.pending:
            return "semantic: complete"
        return f"semantic: pending {self.pending:,} of {self.chunks:,} chunks"


def semantic_of(response: dict[str, Any]) -> dict[str, Semantic]:
    """Per repository, from the answer to :func:`semgraph.search.bodies.semantic_counts_body`."""
    buckets = response.get("aggregations", {}).get("repos", {}).get("buckets", [])
    return {
        str(b["key"]): Semantic(int(b["doc_count"]), int(b["pending"]["doc_count"]))
        for b in buckets
    }


@dataclass
class SearchHit:
    repo: str
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str | None
    language: str
    score: float
    snippet: str
    run_id: str
    index: str
    bm25_rank: int | None = None
    knn_rank: int | None = None
    role: str | None = None  # None: indexed before roles were recorded
    # the file's commits whose messages matched (the history lift), as evidence lines
    history: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if self.history is None:
            out.pop("history")
        return out


@dataclass
class SearchAnswer:
    """The hits, and whether the query was cut to the bound (``notice`` says how)."""

    hits: list[SearchHit]
    query_chars: int
    searched_chars: int
    truncated: bool = False
    notice: str | None = None
    # the files whose commit messages matched, best first (when asked for)
    history: list[FileHistory] = field(default_factory=list)
    # per repository searched: how complete its vectors are (progressive publish: kNN
    # answers from the vectors that are there while some are pending)
    semantic: dict[str, Semantic] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "hits": [hit.to_dict() for hit in self.hits],
            "query_chars": self.query_chars,
            "searched_chars": self.searched_chars,
            "truncated": self.truncated,
            "semantic": {repo: s.to_dict() for repo, s in sorted(self.semantic.items())},
        }
        if self.notice is not None:
            out["notice"] = self.notice
        return out


def minmax_fusion(
    rankings: list[list[tuple[str, float]]], weights: list[float]
) -> list[tuple[str, float]]:
    """Score-normalised fusion: each ranking's scores scaled to 0..1 by its own minimum and
    maximum (all 1 when they are equal), times its weight, summed; a document missing from a
    ranking gets 0 from it. Ties are broken by the best single rank, then by id."""
    if len(rankings) != len(weights):
        raise ValueError(f"{len(rankings)} rankings but {len(weights)} weights")
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        if not ranking:
            continue
        values = [score for _, score in ranking]
        low, high = min(values), max(values)
        span = high - low
        for rank, (doc, score) in enumerate(ranking, start=1):
            scaled = (score - low) / span if span > 0 else 1.0
            scores[doc] = scores.get(doc, 0.0) + weight * scaled
            best[doc] = min(best.get(doc, rank), rank)
    return sorted(scores.items(), key=lambda item: (-item[1], best[item[0]], item[0]))


def snippet_words(query: str) -> frozenset[str]:
    """The query's words a snippet looks for (split once per query, not once per hit)."""
    return frozenset(w for w in identifier_words(query) if len(w) > 1)


def snippet(
    code: str,
    query: str | frozenset[str],
    *,
    lines: int = SNIPPET_LINES,
    chars: int = SNIPPET_CHARS,
) -> str:
    """A few lines of ``code`` starting at the line that mentions the most query words
    (``query``: the text, or its :func:`snippet_words`)."""
    all_lines = code.splitlines()
    if not all_lines:
        return ""
    words = snippet_words(query) if isinstance(query, str) else query
    start = 0
    if words:
        counts = [len(words & set(identifier_words(line))) for line in all_lines]
        best = max(counts)
        if best:
            start = counts.index(best)
    picked = [ln.rstrip() for ln in all_lines[start : start + lines]]
    text = "\n".join(picked)
    return text if len(text) <= chars else text[: chars - 1] + "…"
