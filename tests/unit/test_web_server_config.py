"""The web server's uvicorn configuration: uvloop and httptools, resolved for real."""

from __future__ import annotations

import asyncio

from semgraph.web.server import server_config


async def _app(scope: object, receive: object, send: object) -> None:  # pragma: no cover
    raise AssertionError("never called")


def test_serve_runs_on_uvloop_and_httptools() -> None:
    config = server_config(_app, "127.0.0.1", 8080)
    config.load()  # imports the protocol class named by ``http``: fails if it is missing
    assert config.http_protocol_class.__name__ == "HttpToolsProtocol"
    factory = config.get_loop_factory()
    assert factory is not None
    loop = factory()
    try:
        assert type(loop).__module__.startswith("uvloop")
        assert isinstance(loop, asyncio.AbstractEventLoop)
    finally:
        loop.close()
    assert (config.host, config.port, config.access_log, config.log_config) == (
        "127.0.0.1",
        8080,
        False,
        None,
    )
