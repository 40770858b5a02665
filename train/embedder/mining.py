"""Hard negatives and consistency filtering for the embedder's training pairs.

- :class:`BM25` is a small Okapi BM25 over code tokens (identifiers split into their words).
- :func:`mine_hard_negatives` gives each anchor pair the code that BM25 ranks highest for its
  query among the pairs of the *same package and language* (the hardest negatives: same
  vocabulary, same conventions), never the positive itself, never a near-copy of it (same
  code once whitespace is collapsed, or token-set Jaccard at or above
  :data:`NEAR_COPY_JACCARD`), and never a pair with the same query (a second answer).
- :func:`consistency_keep` is CoRNStack's consistency filter: a pair is kept only when the
  base model ranks its positive within the top ``k`` of a pool of candidates (every code of
  the same language in the pool); a pair whose own code the base model cannot find among
  others is more likely noise (a summary that does not describe the code).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

NEAR_COPY_JACCARD = 0.8
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Za-z][a-z]*|\d+")


def tokens(text: str) -> list[str]:
    """Lower-cased words of a text, identifiers split (``getHTTPProxy`` → get, http, proxy)."""
    return [w.lower() for w in _WORD.findall(text) if len(w) > 1]


class BM25:
    """Okapi BM25 over tokenised documents (``k1`` 1.2, ``b`` 0.75), with an inverted index
    of each term's documents and weights."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.n = len(docs)
        lengths = [max(len(d), 1) for d in docs]
        avg = sum(lengths) / len(lengths) if docs else 1.0
        postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for i, doc in enumerate(docs):
            norm = k1 * (1 - b + b * lengths[i] / avg)
            for term, tf in Counter(doc).items():
                postings[term].append((i, tf * (k1 + 1) / (tf + norm)))
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, items in postings.items():
            idf = math.log(1 + (self.n - len(items) + 0.5) / (len(items) + 0.5))
            ids = np.array([i for i, _ in items], dtype=np.int64)
            weights = np.array([w * idf for _, w in items], dtype=np.float32)
            self.postings[term] = (ids, weights)

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """One score per document for the query's tokens (each distinct token once)."""
        out = np.zeros(self.n, dtype=np.float32)
        for term in sorted(set(query)):
            if term in self.postings:
                ids, weights = self.postings[term]
                out[ids] += weights
        return out


def _collapsed(code: str) -> str:
    return " ".join(code.split())


def near_copy(a: str, b: str) -> bool:
    """Whether two codes are the same once whitespace is collapsed, or share most tokens."""
    if _collapsed(a) == _collapsed(b):
        return True
    ta, tb = set(tokens(a)), set(tokens(b))
    if not ta or not tb:
        return False
    return len(ta & tb) / len(ta | tb) >= NEAR_COPY_JACCARD


def mine_hard_negatives(
    pairs: Sequence[dict[str, Any]], anchors: Sequence[int], *, look: int = 20
) -> dict[int, int | None]:
    """For each anchor (an index into ``pairs``), the index of its hard negative, or None
    when its package and language hold no acceptable one among BM25's top ``look``."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        groups[(p["package"], p["lang"])].append(i)
    wanted: dict[tuple[str, str], list[int]] = defaultdict(list)
    for a in anchors:
        wanted[(pairs[a]["package"], pairs[a]["lang"])].append(a)
    out: dict[int, int | None] = {}
    for key in sorted(wanted):
        members = groups[key]
        index = BM25([tokens(f"{pairs[m].get('name') or ''} {pairs[m]['code']}") for m in members])
        for a in wanted[key]:
            out[a] = None
            scores = index.scores(tokens(pairs[a]["query"]))
            order = np.argsort(-scores, kind="stable")[:look]
            query = _collapsed(pairs[a]["query"]).lower()
            for pos in order:
                j = members[int(pos)]
                if j == a or _collapsed(pairs[j]["query"]).lower() == query:
                    continue
                if near_copy(pairs[a]["code"], pairs[j]["code"]):
                    continue
                out[a] = j
                break
    return out


def positive_ranks(queries: np.ndarray, codes: np.ndarray, groups: Sequence[str]) -> np.ndarray:
    """The 0-based rank of each query's own code (row ``i`` of ``codes``) among the codes of
    its group (language), by dot product of normalised vectors; ties count against it."""
    ranks = np.zeros(len(groups), dtype=np.int64)
    by_group: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        by_group[g].append(i)
    for members in by_group.values():
        idx = np.array(members)
        sims = queries[idx] @ codes[idx].T
        own = sims[np.arange(len(idx)), np.arange(len(idx))]
        ranks[idx] = (sims >= own[:, None]).sum(axis=1) - 1
    return ranks


def consistency_keep(ranks: np.ndarray, k: int) -> np.ndarray:
    """The mask of pairs kept by the consistency filter: the positive within the top ``k``."""
    return np.asarray(ranks < k)
