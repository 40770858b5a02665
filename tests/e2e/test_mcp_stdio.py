"""``semgraph mcp`` over stdio with a real MCP client, against an indexed multi-language
repository on the real stack: every tool, paging with the cursor, a reindex between pages
(``stale_cursor``), and bad input through the protocol."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.search.index import SearchIndex
from tests.mcp_client import TOOLS, answer, call, stdio_session
from tests.repos import POLYGLOT, commit, make_repo

pytestmark = pytest.mark.e2e
REPO_ROOT = Path(__file__).resolve().parents[2]
# 400 lines of short hex words: about 59,000 tokens, three times the bound of one answer
WIDE = "".join(
    "W{} = {!r}\n".format(
        i, " ".join(hashlib.sha256(f"{i}-{j}".encode()).hexdigest()[:4] for j in range(48))
    )
    for i in range(400)
)


def index(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "semgraph", "index", str(path), "--json"],
        cwd=REPO_ROOT,
        env={**os.environ},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    body: dict[str, Any] = json.loads(done.stdout)
    assert body["run"]["status"] == "succeeded", body
    return body


def test_every_tool_over_stdio(
    graph: Graph, es: Elasticsearch, settings: Settings, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "polyglot", {**POLYGLOT, "data/wide.py": WIDE})
    first = index(repo)
    key = first["run"]["repo"]
    run_id = first["run"]["id"]

    async def scenario() -> None:
        async with stdio_session() as client:
            assert client.instructions and "grep" in client.instructions
            listed = (await client.list_tools()).tools
            assert {t.name for t in listed} == TOOLS
            for tool in listed:
                assert tool.annotations is not None and tool.annotations.read_only_hint is True
                assert tool.annotations.destructive_hint is False
                assert "query" not in tool.input_schema.get("properties", {})

            status = await call(client, "index_status")
            assert status["total"] == 1 and status["total_is_exact"] is True
            row = status["rows"][0]
            assert row["repo"] == key and row["run_id"] == run_id
            assert row["indexed_commit"] == first["run"]["commit"]
            assert row["resolution_rate"] is not None and row["jobs"]["pending"] == 0

            found = await call(client, "search_code", text="crc32 checksum of bytes", repo=key)
            assert found["status"] == "ok" and found["rows"], found
            assert found["rows"][0]["path"] == "app/models.py"
            assert found["freshness"][0]["run_id"] == run_id

            defs = await call(client, "find_definition", name="compute_checksum", repo=key)
            assert defs["status"] == "ok" and defs["total"] == 1
            assert defs["rows"][0]["qualified_name"] == "app.models.compute_checksum"
            assert defs["completeness"]["status"] in ("exact", "lower_bound")
            none = await call(client, "find_definition", name="no_such_thing_anywhere")
            assert none["status"] == "empty" and none["empty_reason"] == "no such symbol"

            callers = await call(client, "callers", name="compute_checksum", repo=key)
            names = {e["qualified_name"] for e in callers["rows"]}
            assert names == {"app.models.Repository.save", "app.service.fingerprint"}
            assert all(e["tier"] for e in callers["rows"])
            assert "repository_unresolved" in callers["call_sites_in_scope"]
            lonely = await call(client, "callers", name="sync_repositories", repo=key)
            assert lonely["empty_reason"] == "symbol found, no callers"

            callees = await call(client, "callees", name="app.service.sync_repositories")
            assert {"app.models.Repository.save"} <= {e["qualified_name"] for e in callees["rows"]}

            summary = await call(client, "impact", name="compute_checksum", summary=True)
            assert summary["summary"] is True and summary["rows"][0]["depth"] == 1
            assert summary["affected"]["symbols"] >= 3  # save, fingerprint, sync_repositories
            full = await call(client, "impact", name="compute_checksum", depth=2)
            assert {"app/models.py", "app/service.py"} == {f["path"] for f in full["files"]}

            snippet = await call(client, "get_snippet", repo=key, path="cmd/main.go", end_line=9)
            assert snippet["status"] == "ok" and snippet["end_line"] == 9
            assert snippet["text"].splitlines()[0] == "package main"
            assert "func LoadConfig(path string)" in snippet["text"]
            assert snippet["has_more"] and snippet["next_start_line"] == 10
            assert snippet["file_last_line"] == 19
            tail = await call(client, "get_snippet", repo=key, path="cmd/main.go", start_line=10)
            assert tail["has_more"] is False and tail["end_line"] == 19

            wide = await call(client, "get_snippet", repo=key, path="data/wide.py", end_line=400)
            assert wide["cut_to_fit_tokens"] is True and wide["tokens"] <= 20_000
            assert wide["has_more"] and wide["next_start_line"] == wide["end_line"] + 1
            shown = wide["text"].splitlines()
            assert shown == WIDE.splitlines()[: wide["end_line"]]
            rest = await call(
                client,
                "get_snippet",
                repo=key,
                path="data/wide.py",
                start_line=wide["next_start_line"],
                end_line=400,
            )
            assert rest["text"].splitlines()[0] == WIDE.splitlines()[wide["end_line"]]

            page1 = await call(client, "callers", name="compute_checksum", repo=key, limit=1)
            assert page1["returned"] == 1 and page1["total"] == 2 and page1["has_more"]
            page2 = await call(
                client,
                "callers",
                name="compute_checksum",
                repo=key,
                limit=1,
                cursor=page1["next_cursor"],
            )
            assert page2["has_more"] is False and page2["next_cursor"] is None
            assert page1["rows"] + page2["rows"] == callers["rows"]

            commit(repo, {"app/extra.py": "def extra():\n    return 1\n"}, "reindex me")
            assert index(repo)["run"]["id"] != run_id
            stale = await call(
                client,
                "callers",
                name="compute_checksum",
                repo=key,
                limit=1,
                cursor=page1["next_cursor"],
            )
            assert stale["error"]["code"] == "stale_cursor", stale
            await bad_input(client, key)

            # without the search index, the same lines come from git (the published blob)
            before = await call(client, "get_snippet", repo=key, path="cmd/main.go")
            live = SearchIndex(es, settings).live_index(key)
            assert live is not None and before["source"] == "search_index"
            es.indices.delete(index=live)
            after = await call(client, "get_snippet", repo=key, path="cmd/main.go")
            assert after["source"] == "git" and after["text"] == before["text"]

    anyio.run(scenario)


async def bad_input(client: Any, key: str) -> None:
    """Wrong types, unknown tools, huge limits, malformed cursors, hostile paths: each an
    error object, never a stack trace."""
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("callers", {"name": "compute_checksum", "depth": "deep"}, "invalid_argument"),
        ("callers", {"name": ["compute_checksum"]}, "invalid_argument"),
        ("find_definition", {}, "invalid_argument"),
        ("no_such_tool", {"name": "x"}, "unknown_tool"),
        ("search_code", {"text": "x", "limit": 10**9}, "invalid_argument"),
        ("callers", {"name": "compute_checksum", "depth": 99}, "invalid_argument"),
        ("find_definition", {"name": "x", "cursor": "not-a-cursor"}, "malformed_cursor"),
        ("find_definition", {"name": "x", "repo": "ghost"}, "unknown_repository"),
        ("find_definition", {"name": "\x00"}, "invalid_argument"),
        ("get_snippet", {"repo": key, "path": "../../etc/passwd"}, "invalid_argument"),
        ("get_snippet", {"repo": key, "path": "app/../../x"}, "invalid_argument"),
        ("get_snippet", {"repo": key, "path": "/etc/passwd"}, "invalid_argument"),
        ("get_snippet", {"repo": key, "path": "app/models.py\x00.txt"}, "invalid_argument"),
        ("get_snippet", {"repo": key, "path": "C:\\Windows\\win.ini"}, "invalid_argument"),
        (
            "get_snippet",
            {"repo": key, "path": "app/models.py", "end_line": 5000},
            "invalid_argument",
        ),
    ]
    for tool, args, code in cases:
        result = await client.call_tool(tool, args)
        body = answer(result)
        assert result.is_error and body["error"]["code"] == code, (tool, args, body)
        assert "Traceback" not in json.dumps(body)
    missing = await call(client, "get_snippet", repo=key, path="app/nothere.py")
    assert missing["status"] == "empty" and "no such file" in missing["empty_reason"]
