"""The localisation evaluation's pure half (issue 28, item 3): which commits count, what
their answer is, and the scores. :mod:`bench.search.eval_localize` runs the product; this module
reads no store and no repository, so a unit test covers it.

A commit counts when it is not a merge, its message (subject and body) describes a bug or a
feature (:data:`DESCRIBES`) and is at least :data:`MIN_MESSAGE_CHARS` long, and it modified
(not added, not deleted) 1 to :data:`MAX_FILES` non-test source files of the repository's
language (:func:`semgraph.search.roles.role_of` says ``source``). The answer is those files
and, for the function level, the innermost symbols whose lines, at the commit's parent, the
commit's diff changed (:func:`changed_old_lines`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from semgraph.search.roles import role_of

MIN_MESSAGE_CHARS = 40
MAX_FILES = 3
TRUNCATED_CHARS = 2000  # the old bound on a query: the "truncated" text variant
FILE_AT = (1, 3, 5, 10)
FUNC_AT = (5, 10)
DESCRIBES = re.compile(
    r"\b(fix(e[sd])?|bug|error|crash|exception|traceback|regression|incorrect|wrong|fail\w*|"
    r"broken|add(s|ed)?|support(s|ed)?|allow(s|ed)?|implement\w*|feature|new option|enable\w*)\b",
    re.I,
)
SKIP = re.compile(
    r"^(merge|bump|release|revert|prepare|version|changelog|update changelog)\b", re.I
)
SUFFIXES = {"python": (".py",), "go": (".go",), "rust": (".rs",), "javascript": (".js", ".ts")}
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)
MAX_LINES_PER_FILE = 60


@dataclass(frozen=True)
class Commit:
    sha: str
    parent: str
    message: str
    files: tuple[str, ...]  # the answer: modified non-test source files


def describes(message: str) -> bool:
    subject = message.strip().splitlines()[0] if message.strip() else ""
    return (
        len(message.strip()) >= MIN_MESSAGE_CHARS
        and bool(DESCRIBES.search(message))
        and not SKIP.search(subject)
    )


def answer_files(changes: Iterable[tuple[str, str]], language: str) -> tuple[str, ...] | None:
    """The answer of a commit from its ``(status, path)`` changes, or None when it does not
    count (an added or deleted source file, no source file, or too many)."""
    suffixes = SUFFIXES[language]
    out = []
    for status, path in changes:
        if not path.endswith(suffixes) or role_of(path) != "source":
            continue
        if status != "M":
            return None
        out.append(path)
    return tuple(sorted(out)) if 1 <= len(out) <= MAX_FILES else None


def changed_old_lines(diff: str) -> list[int]:
    """The parent's lines a one-file ``--unified=0`` diff touches: each hunk's removed
    lines, or the line after which it inserts (at most :data:`MAX_LINES_PER_FILE`)."""
    lines: list[int] = []
    for m in _HUNK.finditer(diff):
        start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
        lines += range(start, start + count) if count else [max(1, start)]
    return sorted(set(lines))[:MAX_LINES_PER_FILE]


def truncated(text: str) -> str:
    return text[:TRUNCATED_CHARS]


def first_rank(ranked: Sequence[str], targets: Iterable[str]) -> int | None:
    """1-based rank of the first target in ``ranked`` (deduplicated in order), or None."""
    wanted = set(targets)
    seen: list[str] = []
    for item in ranked:
        if item in seen:
            continue
        seen.append(item)
        if item in wanted:
            return len(seen)
    return None


def source_rank(ranked: Sequence[str], targets: Iterable[str]) -> int | None:
    """:func:`first_rank` among the files whose role is ``source`` only."""
    return first_rank([p for p in ranked if role_of(p) == "source"], targets)


def acc(ranks: Sequence[int | None], k: int) -> float:
    return 100.0 * sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def complete(records: Iterable[dict[str, Any]], methods: Sequence[str]) -> list[dict[str, Any]]:
    """The records of the (commit, text) pairs asked of every one of ``methods`` (a run cut
    short in the middle of a commit leaves it partly asked), each (commit, text, method)
    once (the first)."""
    first: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in records:
        first.setdefault((r["id"], r["text"], r["method"]), r)
    asked: dict[tuple[str, str], set[str]] = defaultdict(set)
    for cid, text, method in first:
        asked[(cid, text)].add(method)
    whole = {pair for pair, got in asked.items() if set(methods) <= got}
    return [r for (cid, text, _), r in first.items() if (cid, text) in whole]


def summarize(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (half, text, method): n, file Acc@1/3/5/10, and over the commits with a
    function answer, function n and Acc@5/10 (percent)."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        for half in (r["half"], "all"):
            groups[(half, r["text"], r["method"])].append(r)
    out = []
    for (half, text, method), rows in sorted(groups.items()):
        row: dict[str, Any] = {"half": half, "text": text, "method": method, "n": len(rows)}
        for k in FILE_AT:
            row[f"file@{k}"] = round(acc([r["file_rank"] for r in rows], k), 1)
        if all("file_rank_source" in r for r in rows):
            # the same answer with every non-source file dropped (what a client filtering
            # on role=source sees): the gap to file@5 is what tests and docs cost
            row["source_only@5"] = round(acc([r["file_rank_source"] for r in rows], 5), 1)
        funcs = [r["func_rank"] for r in rows if r.get("func_targets")]
        row["func_n"] = len(funcs)
        for k in FUNC_AT:
            row[f"func@{k}"] = round(acc(funcs, k), 1)
        out.append(row)
    return out
