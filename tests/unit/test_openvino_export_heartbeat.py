"""The OpenVINO export child runs for minutes and prints nothing: the parent logs a line at
least every heartbeat while it waits, and kills a child past the export timeout."""

from __future__ import annotations

import logging
import sys
import time

import pytest

from semgraph.search import openvino_cache


def test_a_running_export_logs_a_heartbeat(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(openvino_cache, "_HEARTBEAT_S", 0.1)
    cmd = [sys.executable, "-c", "import sys, time; time.sleep(0.5); sys.stderr.write('done')"]
    with caplog.at_level(logging.INFO, logger="semgraph"):
        code, err = openvino_cache._run_with_heartbeat(cmd, {}, time.perf_counter())
    assert code == 0
    assert err == "done"
    beats = [r for r in caplog.records if getattr(r, "action", "") == "embedding_export_running"]
    assert len(beats) >= 2


def test_an_export_past_its_timeout_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openvino_cache, "_HEARTBEAT_S", 0.1)
    monkeypatch.setattr(openvino_cache, "_EXPORT_TIMEOUT_S", 0.3)
    started = time.perf_counter()
    code, _ = openvino_cache._run_with_heartbeat(
        [sys.executable, "-c", "import time; time.sleep(30)"], {}, started
    )
    assert code is None
    assert time.perf_counter() - started < 10


def test_a_failing_export_returns_its_stderr() -> None:
    cmd = [sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"]
    code, err = openvino_cache._run_with_heartbeat(cmd, {}, time.perf_counter())
    assert (code, err) == (3, "boom")


@pytest.mark.parametrize(
    "stderr, steps",
    [
        (
            'openvino_export: converted m\nopenvino_export: phases {"import": 9.5, "quantize": 80}',
            {"import": 9.5, "quantize": 80.0},
        ),
        ("openvino_export: converted m\n", {}),  # an older child: no phases line
        ("openvino_export: phases {not json", {}),
        ('openvino_export: phases ["a list"]', {}),
        ('openvino_export: phases {"import": "soon"}', {}),
        ('openvino_export: phases {"import": null}', {}),
    ],
)
def test_the_export_steps_are_read_from_the_childs_last_line(
    stderr: str, steps: dict[str, float]
) -> None:
    assert openvino_cache.export_steps(stderr) == steps
