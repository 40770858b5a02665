"""The languages added by issue 16 at the unit tier: detection by extension and shebang, the
grammar versions in the fingerprint, each fixture's imports and call sites exactly, partial
parses, and each grammar's hostile inputs (tests/hostile_inputs.py)."""

from __future__ import annotations

import pytest

from semgraph.indexer import languages
from semgraph.indexer.extract import ExtractOptions, extract_code, extract_file
from tests.hostile_inputs import EXTENSIONS, invalid_utf8, nested, one_line, slow_recovery
from tests.lang_fixtures import FIXTURES

NEW = sorted(EXTENSIONS)
MAIN = {
    "csharp": "Acme/App/Job.cs",
    "kotlin": "src/com/acme/app/Job.kt",
    "ruby": "app/job.rb",
    "php": "src/App/Job.php",
    "swift": "Sources/App/Job.swift",
    "scala": "src/com/acme/app/Job.scala",
    "bash": "bin/deploy",
    "lua": "app/job.lua",
}
IMPORTS = {
    "csharp": [("System", ["*"], None, 1), ("Acme.Util", ["*"], None, 2)],
    "kotlin": [
        ("com.acme.util", ["Helper"], None, 3),
        ("kotlinx.coroutines", ["launch"], None, 4),
    ],
    "ruby": [("json", [], None, 1), ("../lib/helper", [], None, 2)],
    "php": [
        ("App\\Util", ["Helper"], None, 4),
        ("Psr\\Log", ["LoggerInterface"], None, 5),
        ("./functions.php", [], None, 7),
    ],
    "swift": [("Foundation", [], None, 1), ("Util", [], None, 2)],
    "scala": [
        ("com.acme.util", ["Helper"], None, 3),
        ("scala.collection.mutable", ["Map"], "MMap", 4),
    ],
    "bash": [("../lib/common.sh", [], None, 2)],
    "lua": [("lib.helper", [], "helper", 1), ("cjson", [], "json", 2)],
}
_CS = "Acme.App.Job.Run"
_KT = "com.acme.app"
CALLS = {
    "csharp": [
        (_CS, "Save", "this", 14),
        (_CS, "FormatTotal", "Helper", 15),
        (_CS, "WriteLine", "Console", 16),
        (_CS, "Audit", None, 17),
        (_CS, "Save", "base", 18),
    ],
    "kotlin": [
        (f"{_KT}.Job.Factory.create", "Job", None, 16),
        (f"{_KT}.Job.run", "save", "this", 20),
        (f"{_KT}.Job.run", "formatTotal", "Helper", 21),
        (f"{_KT}.Job.run", "println", None, 22),
        (f"{_KT}.Job.run", "audit", None, 23),
        (f"{_KT}.String.shout", "uppercase", None, 29),
    ],
    "ruby": [
        ("app.job.Billing.Job.run", "save", "self", 12),
        ("app.job.Billing.Job.run", "format_total", "Helper", 13),
        ("app.job.Billing.Job.run", "audit", None, 14),
        ("app.job.Billing.Job.run", "info", "@log", 15),
    ],
    "php": [
        ("App.App.Job.run", "save", "$this", 22),
        ("App.App.Job.run", "formatTotal", "Helper", 23),
        ("App.App.Job.run", "save", "parent", 24),
        ("App.App.Job.run", "slugify", None, 25),
        ("App.App.Job.run", "make", "self", 26),
        ("App.App.Job.run", "make", "static", 27),
    ],
    "swift": [
        ("Sources.App.Job.Job.run", "save", "self", 14),
        ("Sources.App.Job.Job.run", "formatTotal", "Helper", 15),
        ("Sources.App.Job.Job.run", "print", None, 16),
        ("Sources.App.Job.Job.run", "audit", None, 17),
    ],
    "scala": [
        ("com.acme.app.Job.run", "save", "this", 16),
        ("com.acme.app.Job.run", "formatTotal", "Helper", 17),
        ("com.acme.app.Job.run", "println", None, 18),
        ("com.acme.app.Job.run", "audit", None, 19),
    ],
    "bash": [
        ("bin.deploy", "dirname", None, 2),
        ("bin.deploy.setup", "mkdir", None, 5),
        ("bin.deploy.deploy", "setup", None, 9),
        ("bin.deploy.deploy", "format_total", None, 10),
        ("bin.deploy.deploy", "echo", None, 11),
        ("bin.deploy", "deploy", None, 14),
    ],
    "lua": [
        ("app.job.Job.run", "save", "self", 10),
        ("app.job.Job.run", "format_total", "helper", 11),
        ("app.job.Job.run", "print", None, 12),
        ("app.job.Job.run", "audit", None, 13),
    ],
}
BROKEN = {  # one syntax error each, on line 2
    "csharp": "class A {\n  void F( {\n}\n",
    "kotlin": "class A {\n  fun f( {\n}\n",
    "ruby": "class A\n  def f(\nend\n",
    "php": "<?php class A {\n  function f( {\n}\n",
    "swift": "class A {\n  func f( {\n}\n",
    "scala": "class A {\n  def f( = {\n}\n",
    "bash": "f() {\n  if then fi )\n}\n",
    "lua": "function f()\n  local = = 1\nend\n",
}


@pytest.mark.parametrize(
    ("path", "head", "language"),
    [
        ("a/B.cs", b"", "csharp"),
        ("a/b.kt", b"", "kotlin"),
        ("build.gradle.kts", b"", "kotlin"),
        ("lib/a.rb", b"", "ruby"),
        ("Rakefile", b"", "ruby"),
        ("web/index.php", b"", "php"),
        ("Sources/A/b.swift", b"", "swift"),
        ("src/A.scala", b"", "scala"),
        ("run.sh", b"", "bash"),
        ("init.lua", b"", "lua"),
        ("bin/deploy", b"#!/usr/bin/env bash\nset -e\n", "bash"),
        ("bin/tool", b"#!/bin/sh\n", "bash"),
        ("bin/rake", b"#!/usr/bin/env -S ruby -w\n", "ruby"),
        ("bin/x", b"#!/usr/bin/php\n<?php\n", "php"),
        ("bin/y", b"#!/usr/bin/env lua5.4\n", "lua"),
        ("bin/z", b"#!/usr/bin/env python3.12\n", "python"),
        ("bin/w", b"#!/usr/bin/env perl\n", "text"),
        ("notes", b"no shebang here\n", "text"),
        ("setup.sh", b"#!/usr/bin/env python3\n", "bash"),  # the extension wins
    ],
)
def test_language_by_extension_then_shebang(path: str, head: bytes, language: str) -> None:
    assert languages.detect_language(path, head) == language


def test_every_new_grammar_loads_and_its_version_is_in_the_fingerprint() -> None:
    versions = languages.grammar_versions()
    for language in NEW:
        module, _ = languages.CODE_LANGUAGES[language]
        assert versions[module.replace("_", "-")] not in ("", "unknown")
        assert languages.query(language).pattern_count > 0


@pytest.mark.parametrize("language", NEW)
def test_fixture_imports_and_calls_exact(language: str) -> None:
    path = MAIN[language]
    facts = extract_file(path, FIXTURES[language][path].encode(), ExtractOptions())
    assert (facts.language, facts.parse_status, facts.parse_error) == (language, "ok", None)
    assert [(i.module, i.names, i.alias, i.start_line) for i in facts.imports] == IMPORTS[language]
    assert [(c.enclosing, c.callee, c.receiver, c.line) for c in facts.calls] == CALLS[language]
    # chunks start at symbol boundaries
    starts = {s.start_line for s in facts.symbols}
    assert any(c.symbol is not None and c.start_line in starts for c in facts.chunks)


@pytest.mark.parametrize("language", NEW)
def test_syntax_error_is_partial(language: str) -> None:
    ext = EXTENSIONS[language]
    facts = extract_file(f"x.{ext}", BROKEN[language].encode(), ExtractOptions())
    assert facts.parse_status == "partial"
    assert (facts.parse_error or "").startswith("syntax error near line")
    assert facts.chunks


@pytest.mark.parametrize("language", NEW)
def test_hostile_inputs_per_grammar(language: str) -> None:
    ext = EXTENSIONS[language]
    deep = extract_file(f"x.{ext}", nested(language), ExtractOptions())
    assert deep.parse_status == "ok" and deep.symbols
    line = extract_file(f"x.{ext}", one_line(language), ExtractOptions())
    assert (line.parse_status, line.symbols, line.calls) == ("text", [], [])
    assert (line.parse_error or "").endswith("indexed as text")
    bad = extract_file(f"x.{ext}", invalid_utf8(language), ExtractOptions())
    assert bad.parse_status in ("ok", "partial") and bad.symbols
    # the budget: spent before the first read, the parse keeps nothing and says where it stopped
    data = slow_recovery(language, lines=4000)  # over treeparse.BUDGET_FROM_BYTES
    _, _, _, error = extract_code(f"x.{ext}", language, data, budget_s=0.0)
    assert error == f"parse stopped after 0 s at byte 0 of {len(data)}"
    stopped = extract_file(f"x.{ext}", data, ExtractOptions(parse_budget_s=0.0))
    assert stopped.parse_status == "partial" and stopped.chunks


def test_a_stopped_parse_keeps_the_named_symbols_it_reached() -> None:
    # 220 KB of unclosed Lua brackets take about 36 s to parse here; the budget stops it
    data = b"function good(x)\n  return helper(x)\nend\n" + slow_recovery("lua", 20_000)
    facts = extract_file("x.lua", data, ExtractOptions(parse_budget_s=0.5))
    assert facts.parse_status == "partial"
    assert (facts.parse_error or "").startswith("parse stopped after 0.5 s at byte ")
    assert [(s.kind, s.qualified_name) for s in facts.symbols] == [("function", "x.good")]
    assert [(c.enclosing, c.callee) for c in facts.calls] == [("x.good", "helper")]


def test_a_changed_query_file_changes_the_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    from semgraph.config import load_settings
    from semgraph.indexer.request import fingerprint

    settings = load_settings()
    before = fingerprint(settings, "model")
    original = languages.query_source
    monkeypatch.setattr(
        languages,
        "query_source",
        lambda language: original(language) + ("\n; edited" if language == "go" else ""),
    )
    assert languages.queries_digest() != ""
    assert fingerprint(settings, "model") != before
