"""An unreachable store is an error object through the protocol (``store_unavailable``,
retryable), never a stack trace; the server keeps answering."""

from __future__ import annotations

import json

import anyio
from mcp import Client

from semgraph.config import load_settings
from semgraph.db import connect_graph, connect_search
from semgraph.mcp.backend import Backend
from semgraph.mcp.server import build_server
from semgraph.mcp.tokens import TokenCounter
from semgraph.mcp.tools import Tools
from semgraph.queue.store import JobStore
from tests.mcp_client import answer


def test_unreachable_stores_are_error_objects() -> None:
    settings = load_settings(
        bolt_uri="bolt://127.0.0.1:9", es_url="http://127.0.0.1:9", bolt_connect_timeout_s=2
    )
    graph = connect_graph(settings)
    search = connect_search(settings)
    backend = Backend(settings, graph, search, JobStore(graph, settings), TokenCounter(settings))

    async def scenario() -> None:
        async with Client(build_server(Tools(backend))) as client:
            for tool, args in (
                ("find_definition", {"name": "x"}),
                ("callers", {"name": "x", "repo": "r"}),
                ("index_status", {}),
                ("get_snippet", {"repo": "r", "path": "a.py"}),
                ("search_code", {"text": "x"}),
            ):
                result = await client.call_tool(tool, args)
                body = answer(result)
                assert body["error"]["code"] == "store_unavailable", (tool, body)
                assert body["error"]["retryable"] is True
                assert "Traceback" not in json.dumps(body)
            assert len((await client.list_tools()).tools) == 8  # still serving

    try:
        anyio.run(scenario)
    finally:
        graph.close()
        search.close()
