from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.config import load_settings
from semgraph.errors import ConfigError


def test_env_prefix_and_units(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEMGRAPH_BOLT_URI", "bolt://db.internal:7999")
    monkeypatch.setenv("SEMGRAPH_ES_URL", "http://search:9333/")
    monkeypatch.setenv("SEMGRAPH_ES_HEAP_MB", "256")
    monkeypatch.setenv("SEMGRAPH_STATE_DIR", "/tmp/somewhere")
    s = load_settings()
    assert (s.bolt_host, s.bolt_port) == ("db.internal", 7999)
    assert (s.es_host, s.es_port, s.es_url) == ("search", 9333, "http://search:9333")
    assert s.es_heap_mb == 256
    assert s.state_dir == Path("/tmp/somewhere")


def test_overrides_beat_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEMGRAPH_ES_URL", "http://a:1")
    assert load_settings(es_url="http://b:2").es_url == "http://b:2"


@pytest.mark.parametrize(
    ("var", "value", "needle"),
    [
        ("SEMGRAPH_BOLT_URI", "http://not-bolt:7687", "SEMGRAPH_BOLT_URI"),
        ("SEMGRAPH_BOLT_URI", "bolt://", "no host"),
        ("SEMGRAPH_ES_URL", "ftp://x", "SEMGRAPH_ES_URL"),
        ("SEMGRAPH_ES_HEAP_MB", "4096", "SEMGRAPH_ES_HEAP_MB"),
        ("SEMGRAPH_ES_HEAP_MB", "lots", "SEMGRAPH_ES_HEAP_MB"),
        ("SEMGRAPH_LOG_LEVEL", "LOUD", "SEMGRAPH_LOG_LEVEL"),
        ("SEMGRAPH_BOLT_CONNECT_TIMEOUT_S", "-1", "SEMGRAPH_BOLT_CONNECT_TIMEOUT_S"),
        ("SEMGRAPH_ES_URL", "http://" + "x" * 100_000, "SEMGRAPH_ES_URL"),
    ],
)
def test_bad_configuration_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, needle: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert needle in str(info.value)
    assert len(str(info.value)) < 2000  # an oversized value is not echoed back whole
