"""The report's rows for the resolver and push benchmarks (bench.harness.figures.resolve,
bench.harness.figures.push, bench.harness.figures.replay), and the kept-log forms they come in
(bench.harness.logs).

The samples are lines as the benchmarks print them, with figures of real runs
(bench/results/*.log): a builder that no longer reads what its benchmark prints fails here,
and so does one that judges a partial run met.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.harness import records
from bench.harness.benches import BENCHES
from bench.harness.figures import MET, MISSED, NOT_MEASURED, Figure
from bench.harness.figures.push import figures_cli, figures_pushphases, figures_sharedelta
from bench.harness.figures.replay import figures_replay
from bench.harness.figures.resolve import figures_incremental, figures_push_resolve, figures_resolve
from bench.harness.logs import outcomes_from_log


def js(*rows: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def rec(kind: str, **fields: Any) -> str:
    return records.line(kind, **fields) + "\n"


def row(figs: list[Figure], start: str) -> Figure:
    [fig] = [f for f in figs if f.name.startswith(start)]
    return fig


def _tree(r: int, tree: str, cpu: float) -> dict[str, Any]:
    return {"round": r, "tree": tree, "cpu_s": cpu, "calls": 379310, "resolved": 231888}


RESOLVE_HEAD = {"repo": "sympy", "commit": "e950d313", "load": 11.45, "spills": {}}


def test_resolve_judges_after_over_pre_typed_on_the_best_of_the_rounds() -> None:
    out = js(
        RESOLVE_HEAD,
        _tree(0, "pre-typed", 10.58),
        _tree(0, "after", 13.79),
        _tree(1, "pre-typed", 9.52),
        _tree(1, "after", 11.58),
        {"repo": "sympy", "cpu_s_min": {"pre-typed": 9.52, "after": 11.58}},
    )
    figs = figures_resolve(out, ["--rounds", "2", "--trees", "pre-typed,after"])
    ratio = row(figs, "full resolve CPU, after / pre-typed")
    assert (ratio.ratio, ratio.verdict, ratio.load) == ("1.216x", MET, "11.45")
    assert row(figs, "full resolve CPU, after (sympy)").value.startswith("11.58 s best of 2")
    out = js(RESOLVE_HEAD, _tree(0, "pre-typed", 11.0), _tree(0, "after", 16.53), {"cpu_s_min": 1})
    figs = figures_resolve(out, ["--rounds", "1", "--trees", "pre-typed,after"])
    assert row(figs, "full resolve CPU, after / pre-typed").verdict == MISSED  # 1.503x


def test_resolve_cut_short_is_not_met_and_names_what_did_not_run() -> None:
    out = js(RESOLVE_HEAD, _tree(0, "pre-typed", 11.41), _tree(0, "today", 123.7))
    figs = figures_resolve(out, ["--repo", "sympy", "--rounds", "1", "--check"])
    assert row(figs, "full resolve CPU, after (sympy)").verdict == NOT_MEASURED
    assert row(figs, "full resolve CPU, after / pre-typed").verdict == NOT_MEASURED
    assert row(figs, "--check").verdict == NOT_MEASURED
    # every tree ran, the summary line did not: a ratio that would be met is only partial
    out += js(_tree(0, "after", 13.37), {"round": 0, "check": "today == after", "differences": 0})
    figs = figures_resolve(out, ["--repo", "sympy", "--rounds", "1", "--check"])
    ratio = row(figs, "full resolve CPU, after / pre-typed")
    assert ratio.verdict == NOT_MEASURED and "partial" in ratio.value
    assert row(figs, "--check").verdict == NOT_MEASURED
    assert row(figs, "full resolve CPU, today / after").ratio == "9.25x"


def test_resolve_target_is_sympys_only() -> None:
    head = {**RESOLVE_HEAD, "repo": "self"}
    out = js(head, _tree(0, "pre-typed", 0.54), _tree(0, "after", 0.85), {"cpu_s_min": {}})
    figs = figures_resolve(out, ["--repo", "self", "--rounds", "1"])
    ratio = row(figs, "full resolve CPU, after / pre-typed")
    assert ratio.verdict == "" and "sympy" in ratio.target


def _scenario(name: str, cpu: float, files: int, diffs: list[str]) -> dict[str, Any]:
    return {
        "run": name,
        "cpu_s": cpu,
        "mode": "incremental",
        "reason": None,
        "files_resolved": files,
        "full_cpu_s": 12.4,
        "differences": diffs,
    }


def test_incremental_rows_judge_equality_and_name_the_scenarios_not_reached() -> None:
    out = (
        js(
            {"run": "full", "cpu_s": 124.8, "code_files": 1519},
            _scenario("body", 0.322, 1, []),
            _scenario("new_function", 5.439, 182, ["counts: ...", "call_edges: ..."]),
        )
        + "(stopped by hand after these rows)\n"
    )
    figs = figures_incremental(out, ["S", "W", "--check", "--only", "body,new_function,sig:rare"])
    assert row(figs, "body:").verdict == MET
    assert row(figs, "body:").ratio == "0.026x"
    bad = row(figs, "new_function:")
    assert bad.verdict == MISSED and "2 difference line(s)" in bad.value
    assert row(figs, "sig:rare").verdict == NOT_MEASURED


def test_incremental_without_its_summary_is_partial_and_reads_the_fit() -> None:
    figs = figures_incremental(js({"run": "full", "cpu_s": 12.6}, _scenario("body", 0.3, 1, [])))
    assert row(figs, "scenarios after the last one").verdict == NOT_MEASURED
    summary = {
        "full_cpu_s": 12.655,
        "code_files": 1519,
        "scenarios": {},
        "fit": {"fixed_cpu_s": 0.481, "cpu_s_per_file": 0.0118},
        "break_even_files": 1028,
        "break_even_fraction": 0.677,
    }
    figs = figures_incremental(js({"run": "full", "cpu_s": 12.6}, {"summary": summary}), [])
    assert row(figs, "fit:").ratio == "break-even 1028 files (0.677)"
    assert not [f for f in figs if f.verdict == NOT_MEASURED]


def _push(cpu: float) -> str:
    return js(
        {"run": "parse-first", "wall_s": 9.85},
        {"run": "resolve-first", "wall_s": 12.78, "cpu_s": 12.78, "mode": "full"},
        {"run": "parse-push", "wall_s": 0.51},
        {
            "run": "resolve-push",
            "wall_s": 1.24,
            "cpu_s": cpu,
            "mode": "incremental",
            "reason": None,
            "files_resolved": 1,
        },
        {"load": 0.71},
    )


def test_push_resolve_is_judged_on_cpu_against_one_second() -> None:
    assert row(figures_push_resolve(_push(1.238)), "resolve phase").verdict == MISSED
    ok = row(figures_push_resolve(_push(0.204)), "resolve phase")
    assert (ok.verdict, ok.load, ok.ratio) == (MET, "0.71", "0.016x")
    cut = figures_push_resolve(js({"run": "parse-first", "wall_s": 93.4}), ["T", "F", "A"])
    assert [f.verdict for f in cut] == [NOT_MEASURED, NOT_MEASURED]


def _round(variant: str, r: int, job: float, parse: float) -> tuple[str, dict[str, Any]]:
    rows = {"job (wall)": job, "parse": parse, "  parse.walk": parse / 2, "resolve": 8.0}
    return "pushphases.round", {
        "variant": variant,
        "round": r,
        "files": 1000,
        "seconds": job,
        "status": "succeeded",
        "rows": rows,
    }


def test_pushphases_steps_rounds_and_the_20000_file_target() -> None:
    steps = "".join(
        rec(
            "pushphases.parse",
            variant=v,
            repeat=i,
            seconds=s,
            reused=20000,
            load="19.52 20.30 19.40",
            steps={"walk": s / 2},
        )
        for i, (v, s) in enumerate([("before", 32.9), ("after", 6.05)])
    ) + rec("pushphases.staging_read", variant="before", repeat=0, files=1, seconds=20.3)
    figs = figures_pushphases(steps, ["--repo", "R", "--steps", "2", "--rounds", "0"])
    parse = row(figs, "parse phase alone")
    assert (parse.value, parse.baseline, parse.ratio) == ("6.05 s", "before 32.90 s", "0.18x")
    assert "20,000 files" in parse.name and row(figs, "  parse step: walk").ratio == "0.18x"
    push = row(figs, "one-file push at 20,000 files")
    assert push.verdict == NOT_MEASURED and "--rounds 0" in push.value
    rounds = "".join(
        rec(k, **v) for k, v in [_round("before", 0, 27.9, 5.5), _round("after", 0, 24.5, 3.0)]
    )
    rounds += rec(
        "pushphases.summary", variant="after", files=1000, rounds=1, p50_s=24.5, p95_s=24.5
    )
    figs = figures_pushphases(rounds, ["--repo", "R", "--rounds", "1"])
    assert row(figs, "one-file push at 1,000 files: parse").ratio == "0.55x"
    assert not [f for f in figs if "parse.walk" in f.name]
    assert row(figs, "one-file push, whole job").verdict == ""  # judged at 20,000 files only
    big = rounds.replace('"files": 1000', '"files": 20000')
    assert row(figures_pushphases(big, None), "one-file push, whole job").verdict == MISSED
    kind, fields = _round("before", 0, 27.9, 5.5)
    cut = figures_pushphases(rec(kind, **fields), ["--repo", "R"])
    assert row(cut, "one-file push, whole job").verdict == NOT_MEASURED


def _step(step: int, diffs: list[str], mode: str = "incremental") -> str:
    return rec(
        "replay.step",
        step=step,
        outcome="succeeded",
        job_s=10.0 + step,
        job_cpu_s=2.0,
        phases_s={"resolve": 3.0},
        phases_cpu_s={"resolve": 1.0},
        resolve_mode=mode,
        resolve_reason="",
        files_resolved=1,
        differences=diffs,
        full_resolve_s=6.0,
        check_cpu_s=2.0,
    )


def test_replay_partial_log_is_never_met_and_a_parity_failure_is_missed() -> None:
    head = rec("replay.repo", pushes=197, load_1m=12.51)
    clean = head + _step(0, [], "full") + _step(1, []) + _step(2, [])
    figs = figures_replay(clean, ["--commits", "197", "--keep"])
    parity = row(figs, "every push's resolution")
    assert parity.verdict == NOT_MEASURED and "2 of 197 pushes" in parity.value
    assert row(figs, "`semgraph check --graph-parity`").verdict == NOT_MEASURED
    assert row(figs, "per push, resolve phase, wall").baseline.endswith("6.00 s")
    failed = figures_replay(clean + _step(3, ["call_edges: ..."]), ["--commits", "197"])
    assert row(failed, "every push's resolution").verdict == MISSED


def test_replay_complete_run_and_a_parity_command_alone() -> None:
    steps = _step(0, [], "full") + _step(1, [])
    parity = rec(
        "replay.parity",
        command="python -m semgraph check",
        rc=0,
        report={"live_rows": 10170, "model_rows": 10170, "ok": True},
    )
    done = rec("replay.repo", pushes=1) + steps + parity + rec("replay.summary", pushes=1)
    figs = figures_replay(done, ["--commits", "1"])
    assert row(figs, "every push's resolution").verdict == MET
    assert row(figs, "`semgraph check --graph-parity`").verdict == MET
    [alone] = figures_replay(parity, None)  # `$ python -m semgraph check ...` kept in the log
    assert alone.verdict == MET and "10,170 live rows" in alone.value


def _one(host: str, tx: float, fresh: bool, mode: str = "delta") -> str:
    return rec(
        "sharedelta.one_file",
        host=host,
        empty_state_dir=fresh,
        mode=mode,
        tx_s=tx,
        state_read_s=0.2,
        rows_written=18,
        load=7.5,
        delta_fallback="",
    )


def test_sharedelta_judges_a_fresh_hosts_delta_at_two_seconds() -> None:
    first = rec("sharedelta.grow", files=20000, mode="first", tx_s=26.28, rows_written=208324)
    out = first + _one("B1", 0.517, True) + _one("A1", 0.297, False) + _one("B2", 2.005, True)
    figs = figures_sharedelta(out, None)
    assert row(figs, "one-file change by host B1").verdict == MET
    assert row(figs, "one-file change by host B1").ratio == "0.0197x"
    assert row(figs, "one-file change by host B2").verdict == MISSED
    assert row(figs, "graph phase, fresh host / publishing host").ratio == "4.25x"
    fallback = figures_sharedelta(first + _one("B1", 0.5, True, mode="full"), None)
    assert row(fallback, "one-file change by host B1").verdict == MISSED
    cut = figures_sharedelta(first, ["--files", "20000"])
    assert row(cut, "one-file change from a fresh host").verdict == NOT_MEASURED


def _cli(cmd: str, variant: str, median: float, target: float | None) -> str:
    return rec(
        "cli.command",
        command=cmd,
        variant=variant,
        target_s=target,
        median_s=median,
        min_s=median,
        max_s=median,
        cpu_median_s=0.1,
        exit_codes=[0],
    )


def test_cli_rows_against_the_before_checkout_and_their_targets() -> None:
    out = (
        _cli("help", "before", 7.81, 0.3)
        + _cli("help", "now", 0.327, 0.3)
        + _cli("jobs_list", "now", 0.9, 1.0)
        + rec("cli.summary", python_pass_median_s=0.048, repeats=10, load=6.27)
    )
    figs = figures_cli(out, ["--repeats", "10"])
    helped = row(figs, "`semgraph --help`")
    assert (helped.verdict, helped.baseline, helped.ratio) == (MISSED, "before 7.810 s", "0.042x")
    listed = row(figs, "`semgraph jobs list`")
    assert (listed.verdict, listed.baseline) == (MET, "python -c pass 0.048 s")
    assert row(figures_cli("", ["--repeats", "3"]), "`semgraph --help`").verdict == NOT_MEASURED


def _bench(name: str) -> Any:
    return next(b for b in BENCHES if b.name == name)


def test_a_kept_log_with_env_prefixed_commands_labels_and_a_run_in_progress(
    tmp_path: Path,
) -> None:
    """push-resolve.log as several sessions keep it: env-prefixed commands, a trailing
    ``# before, round 1`` label, a comment that leads up to the next command, a run cut off."""
    (tmp_path / "push-resolve.log").write_text(
        '$ python -m bench.push.bench_push_resolve T sympy/core/basic.py "    def copy(self):"\n'
        "# sympy at e950d313;  22:51:26 up  2:50,  0 user,  load average: 0.19, 0.85, 2.21\n"
        + _push(1.238)
        + "\n# session 9: before and after, interleaved\n"
        "$ PYTHONPATH=/w/src:/w python -m bench.push.bench_push_resolve T F '    def copy(self):'"
        "   # before, round 1\n"
        + _push(2.024)
        + "$ PYTHONPATH=/m/src python -m bench.push.bench_push_resolve T F '  # x'"
        + "   # after, round 1\n"
        + js({"run": "parse-first", "wall_s": 48.27})
    )
    first, before, after = outcomes_from_log(_bench("push-resolve"), tmp_path)
    assert first.label == "" and first.load_1m == 0.19 and first.notes[-1].startswith("sympy")
    assert before.label == "before, round 1"
    assert before.notes == ["session 9: before and after, interleaved"]
    assert before.args == ["T", "F", "    def copy(self):"]
    assert before.command.startswith("PYTHONPATH=/w/src:/w python -m") and "#" not in before.command
    assert after.label == "after, round 1" and after.args == ["T", "F", "  # x"]
    assert all(f.verdict == NOT_MEASURED for f in after.figures)


def test_a_bare_command_another_programs_command_and_more_log_files(tmp_path: Path) -> None:
    (tmp_path / "incremental.log").write_text(
        "python -m bench.push.bench_incremental S W --check --only body\n"
        + js({"run": "full", "cpu_s": 124.8}, _scenario("body", 0.322, 1, []))
    )
    [inc] = outcomes_from_log(_bench("incremental"), tmp_path)
    assert inc.args == ["S", "W", "--check", "--only", "body"]
    assert row(inc.figures, "body:").verdict == MET
    (tmp_path / "replay.log").write_text(
        "$ python -m bench.push.bench_replay --commits 2\n"
        + _step(0, [], "full")
        + _step(1, [])
        + "# stopped by hand\n$ python -m semgraph check --graph-parity K --json   (rc 0)\n"
        + rec("replay.parity", rc=0, report={"live_rows": 5, "model_rows": 5, "ok": True})
        + "$ python -m semgraph repos list\nsome text\n"
    )
    (tmp_path / "replay-click.log").write_text("$ python -m bench.push.bench_replay --commits 1\n")
    run, check, other, click = outcomes_from_log(_bench("replay"), tmp_path)
    assert run.notes == ["stopped by hand"] and not run.error
    assert row(run.figures, "every push's").verdict == NOT_MEASURED
    assert check.measured and not check.error
    assert not other.figures and not other.error and "not a run of" in other.notes[-1]
    assert click.label == "replay-click.log" and click.error == "no figures found in the output"


def test_lanes_rows_judge_the_small_lane_only() -> None:
    from bench.harness.figures.fleet import figures_lanes

    out = js(
        {"record": "lanes.mode", "lanes": "any+any", "p50_s": 99.0, "p95_s": 102.0, "hold_s": 90},
        {"record": "lanes.mode", "lanes": "any+small", "p50_s": 12.9, "p95_s": 22.3, "hold_s": 90},
        {"record": "lanes.summary", "p95_any_s": 102.0, "p95_lanes_s": 22.3, "ratio": 4.6},
    )
    figs = figures_lanes(out)
    assert [g.verdict for g in figs] == ["", MISSED, ""]
    assert figures_lanes("", ["--hold-s", "1"])[0].verdict == NOT_MEASURED
    real = {"record": "lanes.mode", "lanes": "any+small", "p50_s": 6.0, "p95_s": 9.5}
    (fig,) = figures_lanes(js({**real, "large": "real first index, 20000 files"}))
    assert fig.baseline == "real first index, 20000 files" and fig.verdict == MET


def test_coldhost_rows_pair_cold_and_warm_by_phase() -> None:
    from bench.harness.figures.fleet import figures_coldhost

    def rnd(host: str, job: float) -> dict[str, object]:
        phases = {"job (wall)": job, "parse": job / 2}
        return {"record": "coldhost.round", "host": host, "files": 100, "phases": phases}

    figs = figures_coldhost(js(rnd("cold", 60.0), rnd("warm", 10.0), rnd("cold", 70.0)))
    job = row(figs, "one-file push at 100 files, job (wall)")
    assert job.value == "65.00 s" and job.ratio == "6.5x"
    assert figures_coldhost(js(rnd("cold", 1.0)), [])[0].verdict == NOT_MEASURED
