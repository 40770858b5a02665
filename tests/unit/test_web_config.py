from __future__ import annotations

import pytest

from semgraph.config import load_settings
from semgraph.errors import ConfigError


def test_branch_and_allowlist_accept_json_or_commas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEMGRAPH_WEBHOOK_BRANCHES", "main, release/*")
    monkeypatch.setenv("SEMGRAPH_WEBHOOK_ALLOWLIST", '["org/a", "https://h/org/b.git"]')
    settings = load_settings()
    assert settings.webhook_branches == ["main", "release/*"]
    assert settings.webhook_allowlist == ["org/a", "https://h/org/b.git"]
    monkeypatch.setenv("SEMGRAPH_WEBHOOK_BRANCHES", "")
    assert load_settings().webhook_branches == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SEMGRAPH_WEBHOOK_SECRETS", "{not json"),
        ("SEMGRAPH_WEBHOOK_SECRETS", '["a"]'),
        ("SEMGRAPH_WEBHOOK_SECRETS", '{"org/a": 1}'),
        ("SEMGRAPH_WEBHOOK_BRANCHES", "[unclosed"),
        ("SEMGRAPH_WEBHOOK_BRANCHES", "[1, 2]"),
        ("SEMGRAPH_WEBHOOK_MAX_BODY_BYTES", "12"),
        ("SEMGRAPH_WEB_PORT", "70000"),
        ("SEMGRAPH_API_READ_OPEN", "maybe"),
    ],
)
def test_bad_web_settings_are_config_errors(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=name):
        load_settings()
