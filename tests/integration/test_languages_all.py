"""All sixteen languages in one repository, one reindex job (issue 16): every file parses,
and the run record carries the per-language counts (files, call classes, imports)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.runs import RunStore
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest
from tests.lang_fixtures import FIXTURES
from tests.repos import POLYGLOT, make_repo
from tests.shared_kinds import shared_embedder

pytestmark = pytest.mark.integration

# the first eight (python, javascript and go come from POLYGLOT)
OLDER: dict[str, str] = {
    "java/src/com/acme/Strings.java": (
        "package com.acme;\n\npublic class Strings {\n"
        "    public static String trim(String s) { return s.trim(); }\n}\n"
    ),
    "rust/src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    "c/util.c": '#include "util.h"\n\nint twice(int x) { return 2 * x; }\n',
    "c/util.h": "int twice(int x);\n",
    "cpp/shape.cpp": "class Shape {\npublic:\n    int area() { return 0; }\n};\n",
    "ts/index.ts": "export function greet(name: string): string {\n  return name;\n}\n",
    "ts/view.tsx": "export function View() {\n  return <div>hi</div>;\n}\n",
}

# the eight of issue 16, from their fixtures; what one job counts for each (as measured by
# the per-language tests' repositories: tests/integration/test_languages.py)
NEWER_CALLS: dict[str, dict[str, int]] = {
    "csharp": {"resolved": 4, "external": 1, "unresolved": 1},  # cents.ToString()
    "kotlin": {"resolved": 4, "external": 1, "unresolved": 2},  # toString(), uppercase()
    "ruby": {"resolved": 3, "unresolved": 2},  # @log.info, cents.to_s
    "php": {"resolved": 6, "external": 1},  # strtolower
    "swift": {"resolved": 3, "external": 1, "unresolved": 1},  # String(cents)
    "scala": {"resolved": 3, "external": 1},  # println
    "bash": {"resolved": 3, "external": 4},  # printf, mkdir, echo, dirname
    "lua": {"resolved": 3, "external": 2},  # tostring, print
}


def test_sixteen_languages_in_one_job(
    settings: Settings, graph: Graph, es: Elasticsearch, tmp_path: Path
) -> None:
    files: dict[str, str] = {**POLYGLOT, **OLDER}
    for language, fixture in FIXTURES.items():
        files |= {f"{language}/{path}": text for path, text in fixture.items()}
    repo = make_repo(tmp_path / "all", files)

    request = ReindexRequest(source=str(repo))
    result = Reindex(settings, graph, es, request, embedder=shared_embedder(settings)).run()
    assert result.status == "succeeded"

    run = RunStore(graph).get(result.run_id)
    assert run is not None and run["status"] == "succeeded"
    stats = json.loads(run["stats"])  # the run record keeps the job's stats as JSON text
    resolution = stats["resolution"]
    by_language = resolution["files_by_language"]
    expected_files = {
        "python": 2,
        "javascript": 1,
        "go": 1,
        "java": 1,
        "rust": 1,
        "c": 2,
        "cpp": 1,
        "typescript": 1,
        "tsx": 1,
        "csharp": 2,
        "kotlin": 2,
        "ruby": 2,
        "php": 3,
        "swift": 2,
        "scala": 2,
        "bash": 2,
        "lua": 2,
        "markdown": 1,
    }
    assert by_language == expected_files
    assert len({lang for lang in by_language if lang != "markdown"} - {"tsx"}) == 16
    assert stats["parse"]["files_by_status"] == {"ok": sum(expected_files.values()) - 1, "text": 1}
    assert stats["parse"]["skipped_by_reason"] == {"empty": 1}  # app/__init__.py
    calls = resolution["calls_by_language"]
    assert {lang: calls[lang] for lang in NEWER_CALLS} == NEWER_CALLS
    imports = resolution["imports_by_language"]
    assert {lang: imports[lang].get("internal", 0) for lang in NEWER_CALLS} == {
        "csharp": 1,
        "kotlin": 1,
        "ruby": 1,
        "php": 2,
        "swift": 1,
        "scala": 1,
        "bash": 1,
        "lua": 1,
    }
