"""The MCP server: eight read-only tools over :class:`semgraph.mcp.tools.Tools`, and the
instructions that tell an agent which to use when (and when grep is the better choice).

Every answer is one JSON text (the same bytes that were counted against the token bound).
Bad arguments, unknown tools and store failures are error results holding an error object
(``{"error": {"code", "message", ...}}``), never a stack trace.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from contextvars import ContextVar
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from semgraph.audit import CALLER, audit_read
from semgraph.mcp.backend import Allow
from semgraph.mcp.tools import Tools

#: the caller's repository allowlist, set by the HTTP transport per request (None: all)
ALLOWED_REPOS: ContextVar[Allow] = ContextVar("allowed_repos", default=None)

INSTRUCTIONS = """\
semgraph answers questions about indexed git repositories from a code graph and a hybrid
(keyword + semantic) search index, at the commit that was last indexed.

- search_code: you do not know the name; describe behaviour or give words ("retry with
  backoff", "parse webhook signature"), or pass a whole issue text with its traceback.
  Ranked chunks with paths, lines and each file's role; role="source" leaves out tests,
  docs, changelogs, examples, translations and generated files.
- localize: you have an issue text (a bug report, a traceback, a feature request) and want
  the files to change: ranked files of one repository, each with its best symbols and the
  evidence (matching chunks, traceback frames, names found in the graph, past commits whose
  message matches: "commit 1a2b3c4: subject"). Tests and docs are demoted, less when the
  text asks for them.
- find_definition: you know a name (short, qualified or a trailing part like Order.total).
- callers / callees: who calls X, what X calls; each edge has its resolution tier. If a
  name is ambiguous you get candidates: ask again with a qualified name.
- impact: what a change to X may break (transitive callers and files); summary=true
  first for counts per depth.
- get_snippet: read lines of a file at the indexed commit (at most 400 per call).
- index_status: which repositories exist, how fresh they are, pending jobs.

Every answer has rows with total/has_more/next_cursor (pass next_cursor back to page; a
stale_cursor error means the repository was reindexed: start again), a freshness block
(indexed_commit vs latest_known_commit, commits_behind) and completeness (exact or
lower_bound with causes: unresolved or ambiguous calls, parse failures). If freshness says
the index is behind, or you need the working tree's uncommitted state, or you look for an
exact literal string, a regular expression, a comment or a config value, plain grep on the
working tree is the better tool. Use semgraph for meaning, definitions and call structure.
"""

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

Repo = Annotated[str | None, Field(description="repository key (index_status lists them)")]
Limit = Annotated[int | None, Field(description="rows per page, 1..200 (default 50)")]
Cursor = Annotated[str | None, Field(description="next_cursor of the previous page")]
Name = Annotated[str, Field(description="symbol name: short, qualified, or a trailing part")]
Depth = Annotated[int | None, Field(description="hops to walk, 1..5")]
Across = Annotated[bool, Field(description="span repositories: follow cross-repository links")]
# semgraph.search.roles.ROLES (a test holds them equal)
Role = Literal["source", "test", "docs", "changelog", "example", "i18n", "generated"]


def _result(answer: dict[str, Any]) -> CallToolResult:
    text = json.dumps(answer, ensure_ascii=False, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error="error" in answer)


def _error(code: str, message: str) -> CallToolResult:
    return _result({"error": {"code": code, "message": message}})


class SemgraphMCP(MCPServer):
    """MCPServer whose argument and unknown-tool failures are error objects too."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        if self._tool_manager.get_tool(name) is None:
            return _error("unknown_tool", f"no tool named {name[:100]!r}; see tools/list")
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            return _error("internal_error", "the tool failed unexpectedly; the server logged it")
        except ToolError as exc:
            message = str(exc).split("\n", 1)[-1].strip() if "\n" in str(exc) else str(exc)
            return _error("invalid_argument", message[:600])


def build_server(tools: Tools) -> SemgraphMCP:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server = SemgraphMCP("semgraph", instructions=INSTRUCTIONS, version="0.1.0")
    # MCPServer installs a root handler at INFO (every library's records on stderr, the web
    # server's too): our logging stays as semgraph.logs configured it
    root.handlers[:] = handlers
    root.setLevel(level)

    def tool(declared: Callable[..., dict[str, Any]]) -> None:
        """Register ``declared`` as the tool of its name: its signature and docstring are the
        tool's schema, and it returns its arguments (``locals()``), which go to
        :meth:`Tools.call` less those not given (None, or a switch left off)."""

        async def call(**args: Any) -> CallToolResult:
            given = {k: v for k, v in declared(**args).items() if v is not None and v is not False}
            allowed = ALLOWED_REPOS.get()
            answer = await anyio.to_thread.run_sync(tools.call, declared.__name__, allowed, given)
            text = given.get("text") or given.get("name")
            settings = tools.backend.settings
            audit_read(settings, CALLER.get(), declared.__name__, given.get("repo"), answer, text)
            return _result(answer)

        server.tool(annotations=READ_ONLY, structured_output=False)(functools.wraps(declared)(call))

    @tool
    def search_code(
        text: Annotated[
            str,
            Field(
                description="words, a description of the code, or a whole issue text (cut at "
                "32,768 characters with a notice, never refused)"
            ),
        ],
        repo: Repo = None,
        language: Annotated[str | None, Field(description="python, go, ...")] = None,
        path_prefix: Annotated[str | None, Field(description="e.g. src/api/")] = None,
        role: Annotated[
            Role | None,
            Field(description="only files of this role; source leaves tests and docs out"),
        ] = None,
        limit: Limit = None,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """Hybrid (keyword + semantic) code search: ranked chunks with repo, path, lines,
        and each file's role (source, test, docs, ...)."""
        return locals()

    @tool
    def localize(
        text: Annotated[
            str,
            Field(
                description="the issue text: title, body, traceback, code (cut at 32,768 "
                "characters with a notice, never refused)"
            ),
        ],
        repo: Annotated[
            str | None,
            Field(description="repository key; needed when more than one is indexed"),
        ] = None,
        limit: Annotated[
            int | None, Field(description="files per page, 1..50 (default 10)")
        ] = None,
        mode: Annotated[
            str | None,
            Field(description="the chunk search: hybrid (default), bm25 or knn"),
        ] = None,
        options: Annotated[
            str | None,
            Field(
                description="the parts' weights, e.g. callees=0.2,callers=0.2 to add the "
                "call-graph hops (chunks, names, frames, callees, callers, rerank, history, "
                "demote, demote_asked, expand_from, rerank_files, symbols)"
            ),
        ] = None,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """From an issue text to the code to change: ranked files, each with its ranked
        symbols and the evidence for them (chunks, traceback frames, names in the graph,
        matching commit messages)."""
        return locals()

    @tool
    def find_definition(
        name: Name,
        repo: Repo = None,
        kind: Annotated[str | None, Field(description="function, method, class, ...")] = None,
        across_repos: Across = False,
        limit: Limit = None,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """Where a symbol is defined; several matches come back as a list."""
        return locals()

    @tool
    def callers(
        name: Name,
        repo: Repo = None,
        depth: Depth = None,
        across_repos: Across = False,
        limit: Limit = None,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """Who calls a symbol (depth hops), each edge with its resolution tier."""
        return locals()

    @tool
    def callees(
        name: Name,
        repo: Repo = None,
        depth: Depth = None,
        limit: Limit = None,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """What a symbol calls (depth hops), each edge with its resolution tier."""
        return locals()

    @tool
    def impact(
        name: Name,
        repo: Repo = None,
        depth: Annotated[int | None, Field(description="hops, 1..5 (default 3)")] = None,
        summary: Annotated[bool, Field(description="counts per depth only")] = False,
        across_repos: Across = False,
        limit: Limit = None,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """What a change to a symbol may affect: transitive callers and their files."""
        return locals()

    @tool
    def get_snippet(
        repo: Annotated[str, Field(description="repository key")],
        path: Annotated[str, Field(description="path relative to the repository root")],
        start_line: Annotated[int | None, Field(description="first line (default 1)")] = None,
        end_line: Annotated[int | None, Field(description="last line (at most 400 lines)")] = None,
    ) -> dict[str, Any]:
        """Lines of a file at the indexed commit (at most 400 per call)."""
        return locals()

    @tool
    def index_status(
        repo: Repo = None, limit: Limit = None, cursor: Cursor = None
    ) -> dict[str, Any]:
        """Indexed commit, newest announced commit, jobs, resolution rates, skipped files."""
        return locals()

    return server
