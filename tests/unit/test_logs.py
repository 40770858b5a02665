from __future__ import annotations

import json
import logging

import pytest

from semgraph.logs import JsonFormatter, KeyValueFormatter, event


def _record(caplog_records: list[logging.LogRecord]) -> logging.LogRecord:
    assert caplog_records
    return caplog_records[-1]


def test_event_carries_action_and_context(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("semgraph.test")
    with caplog.at_level(logging.INFO, logger="semgraph.test"):
        event(logger, logging.INFO, "job_claimed", "claimed", job_id="j1", repo="r")
    rec = _record(caplog.records)
    body = json.loads(JsonFormatter().format(rec))
    assert body["action"] == "job_claimed"
    assert body["job_id"] == "j1" and body["repo"] == "r"
    text = KeyValueFormatter().format(rec)
    assert "action=job_claimed job_id=j1 repo=r" in text


def test_handler_follows_the_current_stderr_after_the_old_one_is_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A CLI run under a captured stderr that is later closed (a test runner, an embedding
    server) must not leave a handler writing to the closed file: later records from another
    thread went to ``--- Logging error ---`` before."""
    import io
    import sys
    import threading

    from semgraph import logs

    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    logs.configure("INFO")
    first.close()
    second = io.StringIO()
    monkeypatch.setattr(sys, "stderr", second)
    errors: list[str] = []
    monkeypatch.setattr(logging.Handler, "handleError", lambda self, record: errors.append("x"))
    thread = threading.Thread(
        target=event, args=(logging.getLogger("semgraph.test"), logging.INFO, "api_audit")
    )
    thread.start()
    thread.join()
    root = logging.getLogger("semgraph")
    for handler in list(root.handlers):
        if getattr(handler, "_semgraph", False):
            root.removeHandler(handler)
    root.propagate = True
    assert errors == []
    assert "action=api_audit" in second.getvalue()
