"""The one fault-injection mechanism (semgraph.faults): named points, armed per registry or
per process, from the environment for the processes a test starts."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from semgraph import faults
from semgraph.errors import ConfigError


def test_an_unarmed_point_does_nothing_and_an_armed_one_gets_its_context() -> None:
    reg = faults.Faults()
    seen: list[dict[str, Any]] = []
    reg.point("x.y", n=1)
    reg.arm("x.y", lambda **ctx: seen.append(ctx))
    reg.point("x.y", n=2)
    reg.point("other")
    reg.disarm("x.y")
    reg.point("x.y", n=3)
    assert seen == [{"n": 2}]


def test_armed_is_scoped_and_restores_what_was_there() -> None:
    reg = faults.Faults()
    calls: list[str] = []
    reg.arm("p", lambda **_: calls.append("outer"))
    with reg.armed("p", lambda **_: calls.append("inner")):
        reg.point("p")
    reg.point("p")
    with pytest.raises(RuntimeError), reg.armed("q", faults.fail):
        reg.point("q")
    reg.point("q")  # disarmed again after the block
    assert calls == ["inner", "outer"]


def test_registries_are_independent() -> None:
    a, b = faults.Faults(), faults.Faults()
    a.arm("p", faults.fail)
    b.point("p")  # b has nothing armed
    with pytest.raises(RuntimeError):
        a.point("p")


def test_specs_arm_builtin_actions_and_refuse_anything_else() -> None:
    reg = faults.Faults()
    reg.arm_spec(" parse.file=marker , ,other=raise")
    with pytest.raises(RuntimeError):
        reg.point("other")
    reg.point("parse.file", data=b"no marker here")
    for bad in ("parse.file", "parse.file=rm -rf /", "=", "p=__import__"):
        with pytest.raises(ConfigError, match="SEMGRAPH_FAULTS"):
            faults.Faults().arm_spec(bad)
    with pytest.raises(ConfigError):
        faults.Faults().arm_spec("x=" + "a" * 100_000)


def test_the_marker_action_does_what_the_file_says() -> None:
    with pytest.raises(RuntimeError):
        faults.marker(data=b"x = 1\n# SEMGRAPH_FAULT:raise\n")
    faults.marker(data=b"# SEMGRAPH_FAULT:nothing-known\n")
    faults.marker(data=b"")


def test_a_started_process_is_armed_from_the_environment() -> None:
    code = (
        "from semgraph import faults; faults.arm_from_env(); "
        "faults.PROCESS.point('boom', data=b'SEMGRAPH_FAULT:abort')"
    )
    env_on = {"SEMGRAPH_FAULTS": "boom=marker", "PYTHONPATH": ":".join(sys.path)}
    crashed = subprocess.run([sys.executable, "-c", code], env=env_on, capture_output=True)
    assert crashed.returncode < 0  # SIGABRT
    env_off = {"PYTHONPATH": ":".join(sys.path)}
    quiet = subprocess.run([sys.executable, "-c", code], env=env_off, capture_output=True)
    assert quiet.returncode == 0, quiet.stderr
