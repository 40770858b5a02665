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
