"""``semgraph mcp``: the MCP server on stdio, for a local agent (the HTTP transport is
``/mcp`` on ``semgraph serve``). Logs go to stderr: stdout carries the protocol."""

from __future__ import annotations

import typer

from semgraph.commands.console import settings_from


def mcp_cmd(ctx: typer.Context) -> None:
    """Serve the Model Context Protocol on stdin/stdout (read-only tools for agents)."""
    from semgraph.db import connect_graph, connect_search
    from semgraph.mcp.backend import Backend
    from semgraph.mcp.server import build_server
    from semgraph.mcp.tokens import TokenCounter
    from semgraph.mcp.tools import Tools
    from semgraph.queue.store import JobStore

    settings = settings_from(ctx)
    graph = connect_graph(settings)
    search = connect_search(settings)
    try:
        backend = Backend(
            settings, graph, search, JobStore(graph, settings), TokenCounter(settings)
        )
        build_server(Tools(backend)).run("stdio")
    finally:
        graph.close()
        search.close()
