"""The eight languages added by issue 16, each through the real reindex job: one small
repository per language (``tests/lang_fixtures.py``), indexed into the real graph server and
Elasticsearch; the test asserts the exact symbols, the import targets, the callers and callees
with their tiers, and a search hit by identifier."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.reader import GraphReader
from semgraph.indexer.pipeline import Reindex
from semgraph.indexer.request import ReindexRequest, ReindexResult
from semgraph.model import module_name
from semgraph.search.embed import Embedder
from semgraph.search.query import search
from tests.lang_fixtures import FIXTURES
from tests.repos import make_repo
from tests.shared_kinds import shared_embedder

pytestmark = pytest.mark.integration

SYMBOLS_OF_REPO = """
MATCH (s:Symbol {repo: $repo})
RETURN s.kind AS kind, s.qualified_name AS qn ORDER BY qn, kind
"""


@dataclass(frozen=True)
class Expect:
    symbols: set[tuple[str, str]]
    main: str  # the file whose imports are checked
    imports: list[tuple[str, str]]  # (kind, target) in line order
    runner: str  # the symbol whose callees are checked
    callees: set[tuple[str, str]]  # (qualified name, tier)
    helper: str  # the imported helper: its callers, and the identifier searched for
    helper_qn: str


EXPECT: dict[str, Expect] = {
    "csharp": Expect(
        symbols={
            ("interface", "Acme.App.IRunner"),
            ("method", "Acme.App.IRunner.Run"),
            ("class", "Acme.App.Base"),
            ("method", "Acme.App.Base.Save"),
            ("class", "Acme.App.Job"),
            ("method", "Acme.App.Job.Count"),
            ("method", "Acme.App.Job.Run"),
            ("method", "Acme.App.Job.Audit"),
            ("class", "Acme.Util.Helper"),
            ("method", "Acme.Util.Helper.FormatTotal"),
        },
        main="Acme/App/Job.cs",
        imports=[("external", "System"), ("file", "Acme/Util/Helper.cs")],
        runner="Acme.App.Job.Run",
        callees={
            ("Acme.App.Base.Save", "receiver"),  # this.Save() and base.Save()
            ("Acme.Util.Helper.FormatTotal", "import"),  # using Acme.Util
            ("Acme.App.Job.Audit", "scope"),  # a bare call sees the class
        },
        helper="FormatTotal",
        helper_qn="Acme.Util.Helper.FormatTotal",
    ),
    "kotlin": Expect(
        symbols={
            ("class", "com.acme.util.Helper"),
            ("method", "com.acme.util.Helper.formatTotal"),
            ("class", "com.acme.app.Base"),
            ("method", "com.acme.app.Base.save"),
            ("interface", "com.acme.app.Runner"),
            ("method", "com.acme.app.Runner.run"),
            ("class", "com.acme.app.Job"),
            ("class", "com.acme.app.Job.Factory"),  # companion object
            ("method", "com.acme.app.Job.Factory.create"),
            ("method", "com.acme.app.Job.run"),
            ("method", "com.acme.app.Job.audit"),
            ("function", "com.acme.app.String.shout"),  # extension function
        },
        main="src/com/acme/app/Job.kt",
        imports=[("file", "src/com/acme/util/Helper.kt"), ("external", "kotlinx.coroutines")],
        runner="com.acme.app.Job.run",
        callees={
            ("com.acme.app.Base.save", "receiver"),
            ("com.acme.util.Helper.formatTotal", "import"),
            ("com.acme.app.Job.audit", "scope"),
        },
        helper="formatTotal",
        helper_qn="com.acme.util.Helper.formatTotal",
    ),
    "ruby": Expect(
        symbols={
            ("module", "app.job.Billing"),
            ("class", "app.job.Billing.Base"),
            ("method", "app.job.Billing.Base.save"),
            ("class", "app.job.Billing.Job"),
            ("method", "app.job.Billing.Job.run"),
            ("method", "app.job.Billing.Job.audit"),
            ("method", "app.job.Billing.Job.build"),  # def self.build
            ("module", "lib.helper.Helper"),
            ("method", "lib.helper.Helper.format_total"),
        },
        main="app/job.rb",
        imports=[("external", "json"), ("file", "lib/helper.rb")],
        runner="app.job.Billing.Job.run",
        callees={
            ("app.job.Billing.Base.save", "receiver"),  # self.save
            ("lib.helper.Helper.format_total", "receiver"),  # Helper.format_total
            ("app.job.Billing.Job.audit", "scope"),  # implicit self
        },
        helper="format_total",
        helper_qn="lib.helper.Helper.format_total",
    ),
    "php": Expect(
        symbols={
            ("class", "App.Util.Helper"),
            ("method", "App.Util.Helper.formatTotal"),
            ("interface", "App.App.Runner"),
            ("method", "App.App.Runner.run"),
            ("trait", "App.App.Audits"),
            ("method", "App.App.Audits.audit"),
            ("class", "App.App.Base"),
            ("method", "App.App.Base.save"),
            ("class", "App.App.Job"),
            ("method", "App.App.Job.run"),
            ("method", "App.App.Job.make"),
            ("function", "src.App.functions.slugify"),
        },
        main="src/App/Job.php",
        imports=[
            ("file", "src/Util/Helper.php"),
            ("external", "Psr\\Log"),
            ("file", "src/App/functions.php"),
        ],
        runner="App.App.Job.run",
        callees={
            ("App.App.Base.save", "receiver"),  # $this->save() and parent::save()
            ("App.Util.Helper.formatTotal", "import"),  # Helper::formatTotal
            ("src.App.functions.slugify", "import"),  # through require_once
            ("App.App.Job.make", "receiver"),  # self::make() and static::make()
        },
        helper="formatTotal",
        helper_qn="App.Util.Helper.formatTotal",
    ),
    "swift": Expect(
        symbols={
            ("interface", "Sources.App.Job.Runner"),
            ("method", "Sources.App.Job.Runner.run"),
            ("class", "Sources.App.Job.Base"),
            ("method", "Sources.App.Job.Base.save"),
            ("class", "Sources.App.Job.Job"),
            ("method", "Sources.App.Job.Job.run"),
            ("method", "Sources.App.Job.Job.audit"),
            ("method", "Sources.App.Job.Job.describe"),  # in `extension Job`
            ("struct", "Sources.Util.Helper.Helper"),
            ("method", "Sources.Util.Helper.Helper.formatTotal"),
        },
        main="Sources/App/Job.swift",
        imports=[("external", "Foundation"), ("file", "Sources/Util/Helper.swift")],
        runner="Sources.App.Job.Job.run",
        callees={
            ("Sources.App.Job.Base.save", "receiver"),
            ("Sources.Util.Helper.Helper.formatTotal", "import"),  # import Util
            ("Sources.App.Job.Job.audit", "scope"),
        },
        helper="formatTotal",
        helper_qn="Sources.Util.Helper.Helper.formatTotal",
    ),
    "scala": Expect(
        symbols={
            ("trait", "com.acme.app.Runner"),
            ("method", "com.acme.app.Runner.run"),
            ("class", "com.acme.app.Base"),
            ("method", "com.acme.app.Base.save"),
            ("class", "com.acme.app.Job"),
            ("method", "com.acme.app.Job.run"),
            ("method", "com.acme.app.Job.audit"),
            ("class", "com.acme.util.Helper"),  # object Helper
            ("method", "com.acme.util.Helper.formatTotal"),
        },
        main="src/com/acme/app/Job.scala",
        imports=[
            ("file", "src/com/acme/util/Helper.scala"),
            ("external", "scala.collection.mutable"),
        ],
        runner="com.acme.app.Job.run",
        callees={
            ("com.acme.app.Base.save", "receiver"),
            ("com.acme.util.Helper.formatTotal", "import"),
            ("com.acme.app.Job.audit", "scope"),
        },
        helper="formatTotal",
        helper_qn="com.acme.util.Helper.formatTotal",
    ),
    "bash": Expect(
        symbols={
            ("function", "bin.deploy.setup"),
            ("function", "bin.deploy.deploy"),
            ("function", "lib.common.format_total"),
        },
        main="bin/deploy",  # no extension: the shebang says bash
        imports=[("file", "lib/common.sh")],
        runner="bin.deploy.deploy",
        callees={("bin.deploy.setup", "module"), ("lib.common.format_total", "import")},
        helper="format_total",
        helper_qn="lib.common.format_total",
    ),
    "lua": Expect(
        symbols={
            ("method", "app.job.Job.save"),
            ("method", "app.job.Job.run"),
            ("function", "app.job.audit"),
            ("function", "lib.helper.Helper.format_total"),
        },
        main="app/job.lua",
        imports=[("file", "lib/helper.lua"), ("external", "cjson")],
        runner="app.job.Job.run",
        callees={
            ("app.job.Job.save", "receiver"),  # self:save() in function Job:run()
            ("lib.helper.Helper.format_total", "import"),  # local helper = require(...)
            ("app.job.audit", "module"),
        },
        helper="format_total",
        helper_qn="lib.helper.Helper.format_total",
    ),
}


@pytest.fixture(scope="module")
def embedder(settings: Settings) -> Embedder:
    return shared_embedder(settings)


@pytest.fixture
def run_index(
    settings: Settings, graph: Graph, es: Elasticsearch, embedder: Embedder
) -> Callable[[Path], ReindexResult]:
    def run(source: Path) -> ReindexResult:
        request = ReindexRequest(source=str(source))
        return Reindex(settings, graph, es, request, embedder=embedder).run()

    return run


def _edges(answer: Any) -> set[tuple[str, str]]:
    return {(e["qualified_name"], e["tier"]) for e in answer.edges}


@pytest.mark.parametrize("language", sorted(EXPECT))
def test_language_fixture_end_to_end(
    language: str,
    settings: Settings,
    graph: Graph,
    es: Elasticsearch,
    embedder: Embedder,
    tmp_path: Path,
    run_index: Callable[[Path], ReindexResult],
) -> None:
    expect = EXPECT[language]
    result = run_index(make_repo(tmp_path / language, FIXTURES[language]))
    assert result.status == "succeeded"
    key = result.repo_key
    rows = graph.query("symbols of repo", SYMBOLS_OF_REPO, repo=key)
    files = {("module", module_name(path, language)) for path in FIXTURES[language]}
    assert {(r["kind"], r["qn"]) for r in rows} == expect.symbols | files

    reader = GraphReader(graph)
    imports = reader.imports(expect.main, repo=key)
    assert imports.matches[0]["language"] == language
    assert [(e["kind"], e["target"]) for e in imports.edges if e["direction"] == "imports"] == (
        expect.imports
    )
    assert imports.unresolved_in_scope == {"imports_unresolved": 0}
    assert _edges(reader.callees(expect.runner, repo=key)) == expect.callees
    assert _edges(reader.callers(expect.helper_qn, repo=key)) == {
        (expect.runner, "import" if language not in ("ruby",) else "receiver")
    }

    # the helper's chunk (its own, or its type's when the type is one chunk) comes first
    top = search(es, settings, embedder, expect.helper, repo=key, k=3)[0]
    assert (top.language, top.symbol) in {
        (language, expect.helper_qn),
        (language, expect.helper_qn.rsplit(".", 1)[0]),
    }
    assert expect.helper in top.snippet and top.bm25_rank == 1
