"""The pure parts of ``bench.push.bench_replay``: which commits a replay walks, what one step's
run record says (rows published, resolve mode), and the summary over the steps.

Percentiles are nearest-rank: the value at rank ``ceil(q / 100 * n)`` of the sorted sample,
so every figure reported is one that was measured.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

# what the job records when its resolve phase says nothing of a mode (a build without the
# incremental resolver): every resolve is a full one
FULL_MODE = "full"
NO_MODE_REASON = "the job reported no resolve mode (full resolve on every push)"


def select_commits(first_parent_newest_first: Iterable[str], n: int) -> list[str]:
    """The ``n`` pushes a replay makes, plus the commit it starts from, oldest first.

    ``first_parent_newest_first`` is ``git rev-list --first-parent`` output (one commit per
    line, newest first; blank lines ignored). A history shorter than ``n + 1`` commits
    replays all of it."""
    if n < 1:
        raise ValueError(f"a replay needs at least one push, not {n}")
    commits = [c.strip() for c in first_parent_newest_first if c.strip()]
    if len(commits) < 2:
        raise ValueError("a replay needs a history of at least two commits")
    return list(reversed(commits[: n + 1]))


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (0 < q <= 100) of ``values``."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 < q <= 100:
        raise ValueError(f"percentile {q} is not in (0, 100]")
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1]


def rows_published(publish: Mapping[str, Any] | None) -> int:
    """Rows one publish changed (its ``PublishStats`` as the run record holds it): nodes
    and edges written plus those deleted; 0 when nothing was published."""
    if not publish:
        return 0
    return int(
        sum(publish.get("nodes", {}).values())
        + sum(publish.get("edges", {}).values())
        + publish.get("deleted_nodes", 0)
        + publish.get("deleted_edges", 0)
    )


def resolve_mode(info: Mapping[str, Any] | None, files: int) -> dict[str, Any]:
    """The resolve phase's mode (``incremental``, ``full`` or ``fallback``), why, and how
    many files it resolved, from what the job's resolution says of its run (its
    ``incremental`` attribute, set by the incremental resolver); a resolution that says
    nothing resolved all ``files`` in full."""
    if not isinstance(info, Mapping) or "mode" not in info:
        return {"mode": FULL_MODE, "reason": NO_MODE_REASON, "files_resolved": files}
    out = {
        "mode": str(info["mode"]),
        "reason": str(info.get("reason") or ""),
        "files_resolved": int(info.get("files_resolved", files)),
    }
    return out


def read_steps(lines: Iterable[str]) -> list[dict[str, Any]]:
    """The ``replay.step`` records of a replay's log (any other line is skipped)."""
    steps = []
    for text in lines:
        text = text.strip()
        if not text.startswith("{"):
            continue
        try:
            row = json.loads(text)
        except ValueError:
            continue
        if isinstance(row, dict) and row.get("record") == "replay.step":
            steps.append(row)
    return steps


def summarize(steps: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """p50/p95 per push of the whole job and of its resolve phase (wall and CPU seconds),
    over the pushes (step 0, the first index, is left out), with the parity failures."""
    pushes = [s for s in steps if s.get("step", 0) > 0]
    out: dict[str, Any] = {
        "pushes": len(pushes),
        "parity_failures": sum(1 for s in pushes if s.get("differences")),
        "parity_failed_steps": [s["step"] for s in pushes if s.get("differences")],
        "modes": dict(Counter(str(s.get("resolve_mode")) for s in pushes)),
        "not_incremental": dict(
            Counter(
                f"{s.get('resolve_mode')}: {s.get('resolve_reason')}"
                for s in pushes
                if s.get("outcome") == "succeeded" and s.get("resolve_mode") != "incremental"
            )
        ),
        "noops": sum(1 for s in pushes if s.get("outcome") == "noop"),
    }
    figures: dict[str, Callable[[Mapping[str, Any]], float]] = {
        "job_s": lambda s: s["job_s"],
        "job_cpu_s": lambda s: s["job_cpu_s"],
        "resolve_s": lambda s: s["phases_s"].get("resolve", 0.0),
        "resolve_cpu_s": lambda s: s["phases_cpu_s"].get("resolve", 0.0),
    }
    measured = [s for s in pushes if s.get("outcome") == "succeeded"]
    for name, get in figures.items():
        values = [float(get(s)) for s in measured]
        if not values:
            continue
        out[f"{name}_p50"] = round(percentile(values, 50), 3)
        out[f"{name}_p95"] = round(percentile(values, 95), 3)
        out[f"{name}_max"] = round(max(values), 3)
    by_mode: dict[str, dict[str, Any]] = {}
    for mode in sorted({str(s.get("resolve_mode")) for s in measured}):
        of_mode = [s for s in measured if str(s.get("resolve_mode")) == mode]
        by_mode[mode] = {"pushes": len(of_mode)}
        for name, get in figures.items():
            values = [float(get(s)) for s in of_mode]
            by_mode[mode][f"{name}_p50"] = round(percentile(values, 50), 3)
            by_mode[mode][f"{name}_p95"] = round(percentile(values, 95), 3)
    out["by_mode"] = by_mode
    files = [int(s.get("files_resolved", 0)) for s in measured]
    if files:
        out["files_resolved_p50"] = percentile(files, 50)
        out["files_resolved_max"] = max(files)
    return out
