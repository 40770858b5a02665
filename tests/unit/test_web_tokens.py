"""Scoped API tokens (issue 18): the tokens file, its reload, the read rule and the scopes,
the webhook token bucket and what ``semgraph serve`` refuses. No store is contacted: every
answer here is decided before a route reaches one."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import pytest
from fastapi import Request
from fastapi.testclient import TestClient

from semgraph.config import Settings, is_loopback_host, load_settings
from semgraph.doctor import check_exposure, exposure_refusal
from semgraph.errors import ConfigError
from semgraph.web.app import create_app
from semgraph.web.context import AdminCtx, EnqueueCtx, ReadCaller, principal_of
from semgraph.web.limits import TokenBucket, WebhookLimits
from semgraph.web.tokens import TokenTable, parse_tokens

READER = "reader-token-0123456789"
ADMIN = "admin-token-0123456789ab"
GOOD = f"""
[[tokens]]
name = "reader-a"
token = "{READER}"
scopes = ["read"]
repos = ["alpha-0000000001", "beta-*"]

[[tokens]]
name = "ops"
token_sha256 = "{hashlib.sha256(ADMIN.encode()).hexdigest()}"
scopes = ["read", "enqueue", "admin"]
"""


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def settings_with(**fields: Any) -> Settings:
    return load_settings(**fields)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[[tokens]]\nname = 'x'\n", "exactly one of token and token_sha256"),
        ("[[tokens]\n", "not valid TOML"),
        ("tokens = 3\n", "array of tables"),
        ("[other]\n", "unknown top-level keys"),
        ("[[tokens]]\nname = 'a b'\ntoken = 'x'\n", "name must be"),
        ("[[tokens]]\nname = 'a'\ntoken = 'short'\nscopes=['read']\n", "16-4096 characters"),
        ("[[tokens]]\nname = 'a'\ntoken_sha256 = 'zz'\nscopes=['read']\n", "64 hexadecimal"),
        (f"[[tokens]]\nname = 'a'\ntoken = '{READER}'\nscopes=['root']\n", "scopes must be"),
        (f"[[tokens]]\nname = 'a'\ntoken = '{READER}'\nscopes=[]\n", "scopes must be"),
        (f"[[tokens]]\nname='a'\ntoken='{READER}'\nscopes=['read']\nrepos='x'\n", "repos must"),
        (f"[[tokens]]\nname='a'\ntoken='{READER}'\nscopes=['read']\nexpires_at=1\n", "expires_at"),
        (
            f"[[tokens]]\nname='a'\ntoken='{READER}'\nscopes=['read']\n"
            "expires_at=2030-01-01T00:00:00\n",
            "time zone",
        ),
        (f"[[tokens]]\nname='a'\ntoken='{READER}'\nscopes=['read']\nadmin=true\n", "unknown keys"),
        (
            f"[[tokens]]\nname='a'\ntoken='{READER}'\nscopes=['read']\n"
            f"[[tokens]]\nname='a'\ntoken='{ADMIN}'\nscopes=['read']\n",
            "same name",
        ),
        (
            f"[[tokens]]\nname='a'\ntoken='{READER}'\nscopes=['read']\n"
            f"[[tokens]]\nname='b'\ntoken='{READER}'\nscopes=['read']\n",
            "same token",
        ),
    ],
)
def test_a_bad_tokens_file_is_one_clear_error_without_the_token(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_tokens(text)
    assert needle in err.value.message
    assert READER not in err.value.message and ADMIN not in err.value.message


def test_hostile_files_are_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * 1_000_001)
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe[[tokens]]")
    for path, needle in ((big, "over"), (binary, "not UTF-8"), (tmp_path / "nope", "cannot read")):
        with pytest.raises(ConfigError, match=needle):
            TokenTable(settings_with(api_tokens_file=path))


def test_lookup_scopes_expiry_and_the_compatibility_token(tmp_path: Path) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(
        GOOD + f"\n[[tokens]]\nname='old'\ntoken='{'o' * 20}'\nscopes=['read']\n"
        "expires_at = 2001-01-01T00:00:00Z\n"
    )
    table = TokenTable(settings_with(api_tokens_file=path, api_token="legacy-token-123456"))
    reader = table.lookup(READER)
    assert reader is not None and reader.name == "reader-a" and reader.scopes == {"read"}
    assert reader.allows("alpha-0000000001") and reader.allows("beta-1234567890")
    assert not reader.allows("gamma-1234567890") and not reader.allows("alpha-00000000012")
    ops = table.lookup(ADMIN)
    assert ops is not None and ops.repos is None and "admin" in ops.scopes
    legacy = table.lookup("legacy-token-123456")
    assert legacy is not None and legacy.name == "api_token"
    assert legacy.scopes == {"read", "enqueue", "admin", "metrics"}  # every scope
    assert table.lookup("o" * 20) is None  # expired
    assert table.lookup(READER + "x") is None and table.lookup("") is None
    assert table.lookup("\udcff surrogate") is None


def test_the_file_is_reread_when_it_changes_and_a_broken_one_keeps_the_old(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(GOOD)
    clock = Clock()
    table = TokenTable(settings_with(api_tokens_file=path), clock=clock)
    assert table.lookup(READER) is not None
    rotated = GOOD.replace(READER, "rotated-token-0123456789")
    path.with_suffix(".new").write_text(rotated)
    os.replace(path.with_suffix(".new"), path)
    assert table.lookup(READER) is not None  # not looked at again within a second
    clock.now += 1.5
    assert table.lookup(READER) is None
    assert table.lookup("rotated-token-0123456789") is not None
    path.write_text("[[tokens]\nbroken")
    clock.now += 1.5
    assert table.lookup("rotated-token-0123456789") is not None  # kept
    assert table.reload() is False
    path.write_text(GOOD)
    assert table.reload() is True and table.lookup(READER) is not None


def test_token_bucket_refuses_then_recovers() -> None:
    clock = Clock()
    bucket = TokenBucket(2.0, 3, clock=clock, max_keys=2)
    assert [bucket.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take("a") == pytest.approx(0.5)
    assert bucket.take("b") == 0.0  # per client
    clock.now += 0.5
    assert bucket.take("a") == 0.0
    bucket.take("c")  # a third client: the least recently seen ("b") is forgotten
    assert TokenBucket(0, 1, clock=clock).take("a") == 0.0  # rate 0: no limit


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("example.org", False),
        ("", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback_host(host) is loopback


def test_serve_refuses_reads_without_a_token_off_loopback() -> None:
    refusal = exposure_refusal(settings_with(web_host="0.0.0.0"))
    assert refusal is not None and "\n" not in refusal
    assert "SEMGRAPH_API_TOKEN" in refusal and "SEMGRAPH_API_READ_OPEN=true" in refusal
    assert exposure_refusal(settings_with(web_host="127.0.0.2")) is None
    assert exposure_refusal(settings_with(web_host="0.0.0.0", api_token="t" * 20)) is None
    opened = settings_with(web_host="0.0.0.0", api_read_open=True)
    assert exposure_refusal(opened) is None
    check = check_exposure(opened)
    assert check.ok and "OPEN" in check.detail and check.warnings
    assert not check_exposure(settings_with(web_host="0.0.0.0")).ok


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    path = tmp_path / "tokens.toml"
    path.write_text(
        GOOD + "\n[[tokens]]\nname='ci'\ntoken='enqueue-token-0123456789'\nscopes=['enqueue']\n"
    )
    app = create_app(settings_with(api_tokens_file=path), repo_key_for=str)

    @app.get("/probe/read")
    def probe_read(request: Request, who: ReadCaller) -> dict[str, Any]:
        return {"who": principal_of(request).name, "repos": who.repos}

    @app.post("/probe/enqueue")
    def probe_enqueue(ctx: EnqueueCtx) -> dict[str, str]:
        return {"ok": "enqueue"}

    @app.post("/probe/admin")
    def probe_admin(ctx: AdminCtx) -> dict[str, str]:
        return {"ok": "admin"}

    with TestClient(app, base_url="http://127.0.0.1") as http:
        yield http


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_read_rule_and_the_scopes(client: TestClient) -> None:
    assert client.get("/probe/read").status_code == 401  # a token is configured
    assert client.get("/probe/read", headers=bearer("nope" * 5)).status_code == 401
    for header in ("Basic abc", "Bearer", "Bearer  ", "x" * 9000):
        assert client.get("/probe/read", headers={"Authorization": header}).status_code == 401
    reader = client.get("/probe/read", headers=bearer(READER))
    assert reader.json() == {"who": "reader-a", "repos": ["alpha-0000000001", "beta-*"]}
    ci = bearer("enqueue-token-0123456789")
    assert client.get("/probe/read", headers=ci).status_code == 403
    assert client.post("/probe/enqueue", headers=ci).status_code == 200
    assert client.post("/probe/admin", headers=ci).status_code == 403
    assert client.post("/probe/admin", headers=bearer(READER)).status_code == 403
    assert client.post("/probe/admin", headers=bearer(ADMIN)).status_code == 200
    assert client.post("/probe/admin").status_code == 401


def probed(settings: Settings) -> Any:
    app = create_app(settings, repo_key_for=str)

    @app.get("/probe/read")
    def probe_read(who: ReadCaller) -> dict[str, str]:
        return {"who": who.name}

    return app


def test_without_a_token_reads_are_served_on_loopback_only() -> None:
    with TestClient(probed(settings_with()), base_url="http://127.0.0.2") as local:
        assert local.get("/probe/read").json() == {"who": "anonymous"}
    with TestClient(probed(settings_with()), base_url="http://10.9.8.7") as remote:
        refused = remote.get("/probe/read")
        assert refused.status_code == 403 and "loopback" in refused.json()["detail"]
    opened = probed(settings_with(api_read_open=True))
    with TestClient(opened, base_url="http://10.9.8.7") as remote:
        assert remote.get("/probe/read").json() == {"who": "anonymous"}


def test_deliveries_past_the_in_flight_bound_get_503_before_the_app_runs() -> None:
    """Two deliveries held inside the app fill a bound of 2; the third is answered 503 with
    Retry-After without reaching the app; once one finishes, the next is let in."""
    settings = settings_with(webhook_max_in_flight=2, webhook_rate_per_s=0)
    entered: list[str] = []

    async def scenario() -> list[int]:
        release = asyncio.Event()

        async def app(scope: Any, receive: Any, send: Any) -> None:
            entered.append(scope["path"])
            await release.wait()
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})

        limits = WebhookLimits(app, settings)

        async def call(path: str) -> int:
            statuses: list[int] = []

            async def send(message: MutableMapping[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    statuses.append(int(message["status"]))

            async def receive() -> dict[str, Any]:
                return {"type": "http.request", "body": b"", "more_body": False}

            scope = {"type": "http", "path": path, "client": ("10.0.0.1", 1)}
            await limits(scope, receive, send)
            return statuses[0]

        held = [asyncio.create_task(call(f"/webhooks/github/{n}")) for n in range(2)]
        while len(entered) < 2:
            await asyncio.sleep(0)
        third = await call("/webhooks/github/third")
        release.set()
        done = [await task for task in held]
        return [*done, third, await call("/webhooks/github/after")]

    assert asyncio.run(scenario()) == [202, 202, 503, 202]
    assert "/webhooks/github/third" not in entered


def test_the_audit_line_names_the_token_and_cannot_be_split(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="semgraph.web.edge"):
        assert client.post("/probe/admin", headers=bearer(ADMIN)).status_code == 200
        client.post("/probe/admin%0Afake%20line", headers=bearer(ADMIN))
    lines = [r for r in caplog.records if getattr(r, "action", None) == "api_audit"]
    assert [(r.who, r.route, r.status) for r in lines[:1]] == [("ops", "/probe/admin", 200)]  # type: ignore[attr-defined]
    assert all("\n" not in r.getMessage() and ADMIN not in r.getMessage() for r in lines)
    assert lines[1].path == "/probe/admin?fake line"  # type: ignore[attr-defined]
