"""The replay benchmark's pure parts: which commits it walks, what a step's record says,
and the summary over the steps (``bench.push.replay_stats``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bench.push.replay_stats import (
    FULL_MODE,
    percentile,
    read_steps,
    resolve_mode,
    rows_published,
    select_commits,
    summarize,
)


def test_commits_are_the_start_and_the_last_n_oldest_first() -> None:
    newest_first = ["c5", "c4", "", "c3", "c2", "c1", "c0"]
    assert select_commits(newest_first, 3) == ["c2", "c3", "c4", "c5"]


def test_a_short_history_replays_all_of_it() -> None:
    assert select_commits(["b\n", "a\n"], 200) == ["a", "b"]


@pytest.mark.parametrize(("lines", "n"), [(["a", "b"], 0), (["a"], 5), ([], 1)])
def test_no_push_to_replay_is_an_error(lines: list[str], n: int) -> None:
    with pytest.raises(ValueError):
        select_commits(lines, n)


def test_percentiles_are_nearest_rank_values() -> None:
    values = [float(v) for v in range(1, 201)]  # 1..200, shuffled order does not matter
    assert percentile(list(reversed(values)), 50) == 100.0
    assert percentile(values, 95) == 190.0
    assert percentile(values, 100) == 200.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 0)


def test_rows_published_counts_writes_and_deletes() -> None:
    publish = {"nodes": {"File": 1, "Function": 2}, "edges": {"CALLS": 5}, "deleted_nodes": 1}
    assert rows_published({**publish, "deleted_edges": 3}) == 12
    assert rows_published(None) == 0
    assert rows_published({}) == 0


def test_resolve_mode_from_the_job_or_full_when_it_says_none() -> None:
    assert resolve_mode(None, 40) == {
        "mode": FULL_MODE,
        "reason": resolve_mode({}, 1)["reason"],
        "files_resolved": 40,
    }
    told = {"mode": "fallback", "reason": "closure 60%", "files_resolved": 31}
    assert resolve_mode(told, 40) == {
        "mode": "fallback",
        "reason": "closure 60%",
        "files_resolved": 31,
    }


def _step(step: int, job_s: float, resolve_s: float, **extra: Any) -> dict[str, Any]:
    return {
        "step": step,
        "outcome": "succeeded",
        "job_s": job_s,
        "job_cpu_s": job_s / 2,
        "phases_s": {"resolve": resolve_s},
        "phases_cpu_s": {"resolve": resolve_s / 2},
        "resolve_mode": "incremental",
        "files_resolved": 3,
        "differences": [],
        **extra,
    }


def test_summary_leaves_the_first_index_out_and_counts_parity_failures() -> None:
    steps = [_step(0, 900.0, 300.0)]
    steps += [_step(i, float(i), i / 10) for i in range(1, 21)]
    steps[5]["differences"] = ["call_edges: 1 row(s) only in the first, 0 only in the second"]
    steps[7] = {**steps[7], "outcome": "noop", "resolve_mode": "full"}
    summary = summarize(steps)
    assert summary["pushes"] == 20
    assert summary["parity_failures"] == 1
    assert summary["parity_failed_steps"] == [5]
    assert summary["noops"] == 1
    assert summary["modes"] == {"incremental": 19, "full": 1}
    assert summary["not_incremental"] == {}  # the full step is the no-op
    # the 19 succeeded pushes, 1..20 without 7: ranks 10 and 19 of them
    assert summary["job_s_p50"] == 11.0
    assert summary["job_s_p95"] == 20.0
    assert summary["job_s_max"] == 20.0
    assert summary["resolve_s_p95"] == 2.0
    assert summary["resolve_cpu_s_p50"] == 0.55
    assert summary["files_resolved_max"] == 3
    assert summary["by_mode"]["incremental"]["pushes"] == 19
    assert summary["by_mode"]["incremental"]["job_s_p50"] == 11.0


def test_summary_of_no_push() -> None:
    summary = summarize([_step(0, 5.0, 1.0)])
    assert summary["pushes"] == 0
    assert "job_s_p50" not in summary


def test_steps_are_read_back_from_a_log() -> None:
    log = [
        "$ python -m bench.push.bench_replay --commits 2",
        '{"record": "replay.repo", "pushes": 2}',
        json.dumps({"record": "replay.step", **_step(0, 9.0, 1.0)}),
        "[replay] a progress line",
        "{not json}",
        json.dumps(
            {
                "record": "replay.step",
                **_step(1, 2.0, 0.5, resolve_mode="full", resolve_reason="no previous"),
            }
        ),
    ]
    steps = read_steps(log)
    assert [s["step"] for s in steps] == [0, 1]
    assert summarize(steps)["not_incremental"] == {"full: no previous": 1}
