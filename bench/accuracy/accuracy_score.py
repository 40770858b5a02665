"""Scoring of ``bench.accuracy.bench_accuracy``: semgraph's call sites against an oracle's,
matched by (path, line, callee name). Pure logic over two dictionaries, no I/O (tested in
``tests/unit/test_bench_accuracy.py``).

An oracle site says one of: ``internal`` (it calls these semgraph definitions), ``nondef``
(something inside the repository that is not a definition semgraph indexes: a variable bound
to a lambda, a parameter), ``external`` (outside the repository: standard library, builtins,
dependencies) or ``none`` (the oracle found no target). A semgraph site is ``resolved`` (one
edge with its tier), ``ambiguous`` (an edge to each of several candidates, or none over the
cap), ``external`` or ``unresolved``.

For each tier: ``correct`` (the edge's target is among the oracle's), ``wrong`` (the oracle
resolves the site inside the repository, elsewhere), ``false_external`` / ``false_nondef`` /
``false_none`` (an edge where the oracle says external, not a definition, or nothing) and
``unmatched`` (no oracle site with that key: excluded from both views). Precision over the
sites the oracle resolves inside the repository is correct / (correct + wrong); over all
sites, correct / (correct + wrong + the three false kinds). Recall is over the sites the
oracle resolves inside the repository: resolved to a right target, and (counting ambiguous
candidates) resolved right or ambiguous with a right target among the candidates.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

Key = tuple[str, int, str]  # path, line of the call expression, callee name as written

INTERNAL, NONDEF, EXTERNAL, NONE = "internal", "nondef", "external", "none"
RESOLVED, AMBIGUOUS = "resolved", "ambiguous"
FALSE_KINDS = {EXTERNAL: "false_external", NONDEF: "false_nondef", NONE: "false_none"}
COUNTS = ("correct", "wrong", "false_external", "false_nondef", "false_none", "unmatched")
EXAMPLES_PER_KIND = 8


@dataclass
class OracleSite:
    internal: set[str] = field(default_factory=set)  # semgraph symbol keys it calls
    nondef: list[str] = field(default_factory=list)  # "path:line name" of in-repo non-defs
    external: int = 0
    error: bool = False
    # where the answer is a declaration only (``nondef``): the semgraph definitions that
    # implement it, when the oracle can tell (scip-typescript: bench.accuracy.accuracy_scip);
    # never part of the verdict, reported beside it
    implemented_by: set[str] = field(default_factory=set)

    @property
    def verdict(self) -> str:
        if self.internal:
            return INTERNAL
        if self.nondef:
            return NONDEF
        return EXTERNAL if self.external else NONE


@dataclass
class OurSite:
    cls: str  # resolved | ambiguous | external | unresolved
    tier: str | None = None
    targets: set[str] = field(default_factory=set)  # the resolved edge (one) or candidates
    receiver: str | None = None


@dataclass
class TierScore:
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def precision_in_repo(self) -> float | None:
        n = self.counts["correct"] + self.counts["wrong"]
        return self.counts["correct"] / n if n else None

    @property
    def precision_all(self) -> float | None:
        n = sum(self.counts[k] for k in COUNTS if k != "unmatched")
        return self.counts["correct"] / n if n else None


@dataclass
class Score:
    tiers: dict[str, TierScore] = field(default_factory=dict)
    oracle: Counter[str] = field(default_factory=Counter)  # oracle verdicts over its sites
    ours: Counter[str] = field(default_factory=Counter)  # our classes over our sites
    internal: int = 0  # sites the oracle resolves inside the repository
    found: int = 0
    found_with_ambiguous: int = 0
    misses: Counter[str] = field(default_factory=Counter)  # "state / receiver shape"
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def all_tiers(self) -> TierScore:
        total = TierScore()
        for t in self.tiers.values():
            total.counts.update(t.counts)
        return total

    @property
    def recall(self) -> float | None:
        return self.found / self.internal if self.internal else None

    @property
    def recall_ambiguous(self) -> float | None:
        return self.found_with_ambiguous / self.internal if self.internal else None

    def example(self, kind: str, key: Key, **extra: Any) -> None:
        rows = self.examples.setdefault(kind, [])
        if len(rows) < EXAMPLES_PER_KIND:
            rows.append({"site": f"{key[0]}:{key[1]}", "name": key[2], **extra})


_CALL = re.compile(r"\(")


def receiver_shape(receiver: str | None) -> str:
    """A coarse shape of a call's receiver text, for grouping the misses."""
    if receiver is None or not receiver.strip():
        return "bare f()"
    r = receiver.strip()
    if r.startswith("super("):
        return "super().m()"
    if r in ("self", "cls", "this"):
        return "self.m()"
    if _CALL.search(r):
        return "chained a.b().m()"
    parts = r.split(".")
    if parts[0] in ("self", "cls", "this"):
        return "self.attr.m()"
    if len(parts) == 1:
        return "Name.m()" if r[:1].isupper() else "name.m()"
    return "a.b.m()"


def score(oracle: dict[Key, OracleSite], ours: dict[Key, OurSite]) -> Score:
    out = Score()
    for site in oracle.values():
        out.oracle[site.verdict] += 1
    for key, mine in ours.items():
        out.ours[mine.cls] += 1
        if mine.cls == RESOLVED:
            _edge(out, key, mine, oracle.get(key))
    for key, truth in oracle.items():
        if truth.verdict == INTERNAL:
            _recall(out, key, ours.get(key), truth)
    return out


def _edge(out: Score, key: Key, mine: OurSite, truth: OracleSite | None) -> None:
    """One resolved edge against the oracle's answer for its site."""
    tier = out.tiers.setdefault(mine.tier or "?", TierScore())
    if truth is None:
        tier.counts["unmatched"] += 1
        return
    verdict = truth.verdict
    if verdict == INTERNAL:
        good = bool(mine.targets & truth.internal)
        tier.counts["correct" if good else "wrong"] += 1
        if not good:
            out.example(
                f"wrong ({mine.tier})",
                key,
                ours=sorted(mine.targets),
                oracle=sorted(truth.internal),
                receiver=mine.receiver,
            )
        return
    kind = FALSE_KINDS[verdict]
    tier.counts[kind] += 1
    out.example(
        f"{kind} ({mine.tier})",
        key,
        ours=sorted(mine.targets),
        oracle=truth.nondef or verdict,
        receiver=mine.receiver,
    )


def _recall(out: Score, key: Key, mine: OurSite | None, truth: OracleSite) -> None:
    """One site the oracle resolves inside the repository: found, or a miss and why."""
    out.internal += 1
    right = mine is not None and bool(mine.targets & truth.internal)
    if mine is not None and mine.cls == RESOLVED and right:
        out.found += 1
        out.found_with_ambiguous += 1
        return
    if mine is not None and mine.cls == AMBIGUOUS and right:
        out.found_with_ambiguous += 1
    if mine is None:
        state = "no call site"
    elif mine.cls == AMBIGUOUS:
        state = (
            "ambiguous, right candidate"
            if right
            else ("ambiguous, no right candidate" if mine.targets else "ambiguous over the cap")
        )
    elif mine.cls == RESOLVED:
        state = "resolved elsewhere"
    else:
        state = mine.cls
    kind = f"{state} / {receiver_shape(mine.receiver if mine else None)}"
    out.misses[kind] += 1
    out.example(
        f"miss: {kind}",
        key,
        ours=sorted(mine.targets) if mine else [],
        oracle=sorted(truth.internal),
        receiver=mine.receiver if mine else None,
    )


def ratio(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
