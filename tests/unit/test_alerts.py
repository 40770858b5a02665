from __future__ import annotations

import logging

import httpx
import pytest

from semgraph.alerts import ALERTS, Alerter, alert_body
from semgraph.config import Settings, load_settings


def _settings(**kw: object) -> Settings:
    return load_settings(**kw)


def test_without_sink_logs_critical_and_counts(caplog: pytest.LogCaptureFixture) -> None:
    before = ALERTS.labels(action="index_diverged")._value.get()
    with caplog.at_level(logging.CRITICAL, logger="semgraph"):
        assert Alerter(_settings()).fire("index_diverged", "repo r diverged", repo="r")
    rec = [r for r in caplog.records if getattr(r, "action", "") == "index_diverged"]
    assert rec and rec[0].levelno == logging.CRITICAL and rec[0].repo == "r"  # type: ignore[attr-defined]
    assert ALERTS.labels(action="index_diverged")._value.get() == before + 1


def test_failing_sink_is_retried_then_logged_never_raised() -> None:
    calls: list[dict[str, object]] = []
    sleeps: list[float] = []

    def post(url: str, json: dict[str, object], timeout: float) -> httpx.Response:
        calls.append(json)
        raise httpx.ConnectError("refused")

    alerter = Alerter(
        _settings(alert_webhook_url="http://127.0.0.1:9/hook", alert_webhook_attempts=3),
        post=post,
        sleep=sleeps.append,
    )
    assert alerter.fire("job_quarantined", "job j quarantined", job_id="j") is False
    assert len(calls) == 3
    assert sleeps == [0.5, 1.0]


def test_sink_success_after_a_5xx() -> None:
    codes = iter([503, 200])

    def post(url: str, json: dict[str, object], timeout: float) -> httpx.Response:
        return httpx.Response(next(codes))

    alerter = Alerter(_settings(alert_webhook_url="http://x/hook"), post=post, sleep=lambda s: None)
    assert alerter.fire("job_failed", "job failed permanently")


def test_bodies() -> None:
    assert alert_body("slack", "a", "s", {"repo": "r"})["text"].endswith("semgraph a: s (repo=r)")
    assert alert_body("generic", "a", "s", {"repo": "r"}) == {
        "source": "semgraph",
        "action": "a",
        "summary": "s",
        "fields": {"repo": "r"},
    }
