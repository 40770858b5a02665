"""The audit of reads: who read what of which repository, and how much (action
``read_audit``). Every MCP tool call is logged with the caller (the token's name over HTTP;
``stdio`` for ``semgraph mcp``), the tool, the repository it named, and the rows and bytes of
its answer; ``/search`` and ``/localize`` likewise (``tool`` = ``search`` / ``localize``). The
text asked is logged only when the operator turns ``audit_query_text`` on (cut at
:data:`TEXT_CHARS`), never otherwise. The other HTTP reads are in
:class:`semgraph.web.edge.AuditLog`'s ``api_read`` lines.
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from typing import Any

from semgraph.config import Settings
from semgraph.logs import event

log = logging.getLogger(__name__)

TEXT_CHARS = 500  # an audited query text is cut here
#: who the MCP request in flight is (set by the /mcp route, read by the tool calls it runs)
CALLER: ContextVar[str | None] = ContextVar("semgraph_mcp_caller", default=None)


def audit_read(
    settings: Settings,
    who: str | None,
    tool: str,
    repo: object,
    answer: object,
    text: object = None,
) -> None:
    """One ``read_audit`` line: who read what of which repository, and how much."""
    rows = _rows(answer)
    size = len(json.dumps(answer, default=str, separators=(",", ":")))
    fields: dict[str, Any] = {
        "who": who or "stdio",
        "tool": tool,
        "repo": str(repo)[:512] if repo else None,
        "rows": rows,
        "bytes": size,
    }
    if settings.audit_query_text and isinstance(text, str):
        fields["text"] = text[:TEXT_CHARS]
    event(log, logging.INFO, "read_audit", f"{fields['who']} {tool} {fields['repo']}", **fields)


def _rows(answer: object) -> int | None:
    if not isinstance(answer, dict):
        return None
    for key in ("rows", "hits", "files", "matches"):
        value = answer.get(key)
        if isinstance(value, list):
            return len(value)
    return None
