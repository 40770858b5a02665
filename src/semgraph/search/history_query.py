"""What a query's match against the commit messages says about files (pure: no client).

The history search (:func:`semgraph.search.bodies.history_body`, in the same ``_msearch``
as the chunks' searches, so against the same indexes) ranks commit documents; per file the
best :data:`COMMITS_PER_FILE` of them are summed with weights 1, 1/2, 1/4 (one commit that
says it beats several that barely do), and the files' scores are scaled so that the best
file has 1. The hybrid search lifts each chunk by its file's scaled score times
``search_history_weight``; the localisation adds it as its ``history`` part. Evidence is
the commit's short sha and subject, bounded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HISTORY_HITS = 100  # commit documents one query ranks
COMMITS_PER_FILE = 3
COMMIT_DECAY = 0.5
EVIDENCE_CHARS = 200
SHORT_SHA = 7


def commit_evidence(sha: str, subject: str) -> str:
    """``commit 1a2b3c4: fix timezone parsing``, bounded."""
    text = f"commit {sha[:SHORT_SHA]}: {' '.join(subject.split())}"
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 1] + "…"


@dataclass
class FileHistory:
    """A file whose commit messages match: its scaled score (the best file: 1) and its
    best commits, each with its share of that score."""

    index: str
    path: str
    score: float = 0.0
    commits: list[tuple[str, str, float]] = field(default_factory=list)  # sha, subject, share

    def evidence(self, n: int = COMMITS_PER_FILE) -> list[str]:
        return [commit_evidence(sha, subject) for sha, subject, _ in self.commits[:n]]


def per_file(hits: list[dict[str, Any]]) -> dict[tuple[str, str], FileHistory]:
    """``(index, path)`` -> the file's history match, from the history search's hits."""
    found: dict[tuple[str, str], list[tuple[float, str, str]]] = {}
    for hit in hits:
        src = hit.get("_source") or {}
        path = src.get("history_path")
        if not isinstance(path, str):
            continue
        key = (str(hit.get("_index", "")), path)
        commits = found.setdefault(key, [])
        if len(commits) < COMMITS_PER_FILE:  # hits come best first
            sha, subject = str(src.get("history_sha", "")), str(src.get("history_subject", ""))
            commits.append((float(hit.get("_score") or 0.0), sha, subject))
    raw = {
        key: sum(s * COMMIT_DECAY**i for i, (s, _, _) in enumerate(commits))
        for key, commits in found.items()
    }
    top = max(raw.values(), default=0.0)
    if top <= 0:
        return {}
    out: dict[tuple[str, str], FileHistory] = {}
    for key, commits in found.items():
        shares = [
            (sha, subj, s * COMMIT_DECAY**i / top) for i, (s, sha, subj) in enumerate(commits)
        ]
        out[key] = FileHistory(key[0], key[1], raw[key] / top, shares)
    return out


def lifted(
    fused: list[tuple[str, float]],
    file_of: dict[str, tuple[str, str]],
    history: dict[tuple[str, str], FileHistory],
    weight: float,
) -> list[tuple[str, float]]:
    """``fused`` (document id, score) with each chunk's score raised by ``weight`` times its
    file's history score, ranked again (ties keep the fused order)."""
    raised = []
    for order, (doc_id, score) in enumerate(fused):
        found = history.get(file_of[doc_id])
        raised.append((score + (weight * found.score if found else 0.0), order, doc_id))
    raised.sort(key=lambda r: (-r[0], r[1]))
    return [(doc_id, score) for score, _, doc_id in raised]


def evidence_of(
    history: dict[tuple[str, str], FileHistory], key: tuple[str, str]
) -> list[str] | None:
    """The evidence lines of the file ``key`` (None: its history did not match)."""
    found = history.get(key) if history else None
    return found.evidence() if found else None
