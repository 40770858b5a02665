"""Python sources through the real extraction and the resolver, no servers: the call edges
leaving one function, for the resolver's unit tests."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from semgraph.indexer.extract import extract_all
from semgraph.model import FileFacts
from semgraph.resolve.resolver import resolve


def python_facts(files: Mapping[str, str]) -> list[FileFacts]:
    """Each Python source of ``files`` (path -> text) through the real extraction."""
    return language_facts({path: ("python", text) for path, text in files.items()})


def language_facts(files: Mapping[str, tuple[str, str]]) -> list[FileFacts]:
    """Each source of ``files`` (path -> (language, text)) through the real extraction."""
    facts = []
    for path, (language, text) in files.items():
        symbols, imports, calls, binds, _ = extract_all(path, language, text.encode())
        one = FileFacts(path, language, path.ljust(40, "0"), len(text), text.count("\n"), "ok")
        one.symbols, one.imports, one.calls, one.bindings = symbols, imports, calls, binds
        facts.append(one)
    return facts


def edges_from(tmp_path: Path, files: Mapping[str, str], qn: str) -> set[tuple[int, str]]:
    """{(line, callee's qualified name)} of the resolved calls in function ``qn``, lines counted
    from that function's ``def`` line (its first body line is 1)."""
    facts = python_facts(files)
    with resolve(lambda: iter(facts), "r", tmp_path / "res") as res:
        db = sqlite3.connect(res.path)
        (start,) = db.execute("SELECT start_line FROM symbols WHERE qn = ?", (qn,)).fetchone()
        rows = db.execute(
            "SELECT e.line, d.qn FROM call_edges e JOIN symbols s ON s.key = e.src_key "
            "JOIN symbols d ON d.key = e.dst_key WHERE s.qn = ? AND e.tier != 'ambiguous'",
            (qn,),
        ).fetchall()
        db.close()
    return {(line - start, callee) for line, callee in rows}


def resolution_rows(tmp_path: Path, facts: list[FileFacts], *queries: str) -> list[list[Any]]:
    """The rows of each query over the resolution of ``facts`` (its SQLite tables)."""
    with resolve(lambda: iter(facts), "r", tmp_path / "res") as res:
        db = sqlite3.connect(res.path)
        try:
            return [db.execute(query).fetchall() for query in queries]
        finally:
            db.close()
