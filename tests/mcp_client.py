"""A real MCP client (the same SDK as the server) for the tests: stdio and HTTP sessions,
and the JSON answer of a tool call."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

TOOLS = {
    "search_code",
    "localize",
    "find_definition",
    "callers",
    "callees",
    "impact",
    "get_snippet",
    "index_status",
}


@asynccontextmanager
async def stdio_session(env: dict[str, str] | None = None) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "semgraph", "mcp"], env={**os.environ, **(env or {})}
    )
    async with Client(params) as client:
        yield client


@asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


def answer(result: CallToolResult) -> dict[str, Any]:
    """The one JSON text of a tool's result (its error object when ``is_error``)."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    body: dict[str, Any] = json.loads(block.text)
    assert ("error" in body) == bool(result.is_error), body
    return body


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    return answer(await client.call_tool(tool, args))
