"""The cross-repository link against the real graph server: exact edges from a
caller in one repository to a definition in another, through a re-export, kept fresh when
either side publishes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch
from typer.testing import CliRunner

from semgraph.cli import app
from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.mcp.backend import Backend
from semgraph.mcp.tokens import TokenCounter
from semgraph.mcp.tools import Tools
from semgraph.queue.store import JobStore
from semgraph.xrepo.link import link
from semgraph.xrepo.relink import dependents
from tests.integration.xrepo_repos import GOLIB, GOSVC, LIB, SVC, counts, publish, xcalls

pytestmark = pytest.mark.integration

GO = "svc.main.go"


def test_python_sites_link_to_definitions_and_reexports(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    publish(graph, settings, tmp_path, LIB, "lib")
    publish(graph, settings, tmp_path, SVC, "svc")
    assert xcalls(graph, "svc") == {
        (GO, 7, "lib", "lib.app.Flask", "cross_repo", "c1", "re-export"),
        (GO, 8, "lib", "lib.app.Flask", "cross_repo", "c1", "re-export"),
        (GO, 9, "lib", "lib.app.helper", "cross_repo", "c1", "definition"),
        (GO, 11, "lib", "lib.app.Flask.route", "cross_repo", "c1", "re-export"),
    }
    # lib.missing(): provided, no definition; requests.get(): no indexed provider
    assert counts(graph, "svc") == {"linked": 4, "ambiguous": 0, "unprovided": 1, "unmatched": 1}
    with graph.session() as s:
        dep = s.run(
            "MATCH (:Repository {key: 'svc'})-[e:DEPENDS_ON]->(p:Package {key: 'pypi:lib'}) "
            "RETURN e.spec AS spec, e.chosen AS chosen, e.why AS why"
        ).single()
        rate = s.run("MATCH (r:Repository {key: 'svc'}) RETURN r.calls_external AS n").single()
    assert dep is not None and dict(dep) == {"spec": ">=1", "chosen": "lib", "why": "only provider"}
    assert rate is not None and rate["n"] == 6  # still external in its own resolution


LIB_CLASSES = {
    "pyproject.toml": '[project]\nname = "Lib"\n',
    "src/lib/__init__.py": "from .core import Group\n",
    "src/lib/core.py": (
        "class Base:\n    def main(self):\n        pass\n\n\n"
        "class Command(Base):\n    pass\n\n\n"
        "class Group(Command):\n    def add(self):\n        pass\n"
    ),
}
SVC_CLASSES = {
    "pyproject.toml": '[project]\nname = "svc"\ndependencies = ["lib>=1"]\n',
    "svc/cli.py": (
        "import lib\n\n\nclass AppGroup(lib.Group):\n    pass\n\n\n"
        "class FlaskGroup(AppGroup):\n    def go(self):\n        self.add()\n"
        "        self.main()\n        super().main()\n        self.nothing()\n"
    ),
}


def test_members_inherited_on_both_sides_link_to_their_definition(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """``self.m()`` in a subclass of a subclass of ``lib.Group`` (both in the dependent's
    file) links to ``m`` where the library defines it: on Group itself, or two bases up."""
    publish(graph, settings, tmp_path, LIB_CLASSES, "lib")
    publish(graph, settings, tmp_path, SVC_CLASSES, "svc")
    src = "svc.cli.FlaskGroup.go"
    assert xcalls(graph, "svc") == {
        (src, 10, "lib", "lib.core.Group.add", "cross_repo", "c1", "re-export"),
        (src, 11, "lib", "lib.core.Base.main", "cross_repo", "c1", "inherited"),
        (src, 12, "lib", "lib.core.Base.main", "cross_repo", "c1", "inherited"),
    }
    assert counts(graph, "svc")["unmatched"] == 1  # self.nothing(): defined nowhere


def test_go_site_links_to_the_package_definition(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    publish(graph, settings, tmp_path, GOLIB, "golib")
    publish(graph, settings, tmp_path, GOSVC, "gosvc")
    assert xcalls(graph, "gosvc") == {
        ("main.main", 6, "golib", "pkg.a.F", "cross_repo", "c1", "definition")
    }


def test_a_library_change_relinks_its_dependent(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    publish(graph, settings, tmp_path, LIB, "lib")
    publish(graph, settings, tmp_path, SVC, "svc")
    changed = dict(LIB)
    changed["src/lib/app.py"] = (
        "class Flask:\n    def route(self):\n        pass\n\n\ndef missing():\n    pass\n"
    )
    publish(graph, settings, tmp_path, changed, "lib", "c2")
    with graph.session() as s:
        keys = s.execute_read(lambda tx: dependents(tx, "lib"))
    assert keys == ["svc"]
    with graph.transaction("relink") as tx:
        link(tx, "svc")
    got = xcalls(graph, "svc")
    assert (GO, 9, "lib", "lib.app.helper", "cross_repo", "c1", "definition") not in got
    assert {(a, n, b) for a, n, _, b, *_ in got} == {
        (GO, 7, "lib.app.Flask"),
        (GO, 8, "lib.app.Flask"),
        (GO, 11, "lib.app.Flask.route"),
    }
    assert all(commit == "c2" for *_, commit, _ in got)
    assert counts(graph, "svc")["unmatched"] == 2  # helper gone; missing() is no re-export


def test_two_providers_are_ambiguous_with_candidates(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    publish(graph, settings, tmp_path, LIB, "lib")
    publish(graph, settings, tmp_path, LIB, "lib-fork")
    publish(graph, settings, tmp_path, SVC, "svc")
    assert xcalls(graph, "svc") == set()
    assert counts(graph, "svc")["ambiguous"] == 5
    with graph.session() as s:
        dep = s.run(
            "MATCH (:Repository {key: 'svc'})-[e:DEPENDS_ON]->(:Package {key: 'pypi:lib'}) "
            "RETURN e.chosen AS chosen, e.why AS why, e.candidates AS candidates"
        ).single()
    assert dep is not None
    assert dict(dep) == {
        "chosen": None,
        "why": "several providers",
        "candidates": ["lib", "lib-fork"],
    }


def _tools(settings: Settings, graph: Graph, es: Elasticsearch) -> Tools:
    return Tools(Backend(settings, graph, es, JobStore(graph, settings), TokenCounter(settings)))


def test_mcp_callers_and_impact_span_repositories_within_the_allowlist(
    graph: Graph, settings: Settings, tmp_path: Path, es: Elasticsearch
) -> None:
    publish(graph, settings, tmp_path, LIB, "lib")
    publish(graph, settings, tmp_path, SVC, "svc")
    tools = _tools(settings, graph, es)
    args = {"name": "lib.app.helper", "repo": "lib", "across_repos": True}
    both = tools.call("callers", None, args)
    assert both["repositories_covered"] == ["lib", "svc"] and both["repositories_hidden"] == 0
    assert [(e["repo"], e["qualified_name"], e["tier"]) for e in both["rows"]] == [
        ("svc", GO, "cross_repo")
    ]
    # a token that reads the library only: the dependent is a count, never a name
    lib_only = tools.call("callers", lambda r: r == "lib", args)
    assert lib_only["repositories_covered"] == ["lib"] and lib_only["repositories_hidden"] == 1
    assert lib_only["rows"] == [] and "svc" not in str(lib_only)
    impact = tools.call("impact", None, {**args, "name": "lib.app.Flask"})
    assert impact["repositories_covered"] == ["lib", "svc"]
    assert impact["affected"]["symbols"] >= 1
    plain = tools.call("callers", None, {"name": "lib.app.helper", "repo": "lib"})
    assert plain["rows"] == [] and "repositories_covered" not in plain  # not across
    found = tools.call(
        "find_definition", lambda r: r == "svc", {"name": "Flask", "across_repos": True}
    )
    assert found["repositories_hidden"] == 1 and found["repositories_covered"] == []


def test_a_dependent_push_links_only_what_changed(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    publish(graph, settings, tmp_path, LIB, "lib")
    first = publish(graph, settings, tmp_path, SVC, "svc")
    assert first.xrepo["sites"] == 6 and first.xrepo["edges"] == 4
    links = xcalls(graph, "svc")
    # a push of a file without external calls: no link work, the links stand
    quiet = publish(graph, settings, tmp_path, {**SVC, "svc/util.py": "X = 1\n"}, "svc", "c2")
    assert quiet.mode == "delta" and quiet.xrepo == {} and xcalls(graph, "svc") == links
    # a push that changes one caller: only its sites are linked again
    other = {
        **SVC,
        "svc/util.py": "X = 1\n",
        "svc/other.py": "import lib\n\n\ndef get():\n    lib.app.helper()\n",
    }
    one = publish(graph, settings, tmp_path, other, "svc", "c3")
    assert one.mode == "delta" and one.xrepo["sites"] == 1 and one.xrepo["edges"] == 1
    assert xcalls(graph, "svc") == links | {
        ("svc.other.get", 5, "lib", "lib.app.helper", "cross_repo", "c1", "definition")
    }
    # the manifest no longer names the library: every link goes, the counts say why
    undeclared = {**other, "pyproject.toml": '[project]\nname = "svc"\n'}
    gone = publish(graph, settings, tmp_path, undeclared, "svc", "c4")
    assert gone.xrepo["unlinked"] == 5 and xcalls(graph, "svc") == set()
    assert counts(graph, "svc") == {"linked": 0, "ambiguous": 0, "unprovided": 6, "unmatched": 0}


def test_cli_callers_across_repos_impact_and_repos_deps(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    publish(graph, settings, tmp_path, LIB, "lib")
    publish(graph, settings, tmp_path, SVC, "svc")
    runner = CliRunner()

    def cli(*args: str) -> Any:
        result = runner.invoke(app, list(args))
        assert result.exit_code == 0, result.output
        return json.loads(result.output) if "--json" in args else result.output

    inside = cli("graph", "callers", "lib.app.helper", "--repo", "lib", "--json")
    assert inside["edges"] == [] and inside["repositories"] == ["lib"]
    across = cli("graph", "callers", "lib.app.helper", "--repo", "lib", "--across-repos", "--json")
    assert [(e["repo"], e["qualified_name"], e["tier"], e["line"]) for e in across["edges"]] == [
        ("svc", GO, "cross_repo", 9)
    ]
    text = cli("graph", "impact", "lib.app.Flask", "--repo", "lib", "--across-repos")
    assert "svc: 1 symbols" in text and GO in text
    deps = cli("repos", "deps", "svc", "--json")
    assert [(d["name"], d["chosen"], d["why"]) for d in deps["depends_on"]] == [
        ("lib", "lib", "only provider"),
        ("requests", None, "no indexed provider"),
    ]
    lib = cli("repos", "deps", "lib", "--json")
    assert lib["provides"][0]["name"] == "lib"
    assert [(d["repo"], d["links"]) for d in lib["dependents"]] == [("svc", 4)]
    assert "depended on by svc" in cli("repos", "deps", "lib")
    assert deps["counts"] == {"linked": 4, "ambiguous": 0, "unprovided": 1, "unmatched": 1}
    assert "cross-repository calls: 4 linked, 0 ambiguous, 1 unprovided, 1 unmatched" in cli(
        "repos", "deps", "svc"
    )
    # lib's first publish left everything to re-link (no job ran relink_dependents here)
    assert lib["relink_pending"] == {"everything": True, "names": 0, "lost": 0}
    assert "re-link pending for its dependents: everything" in cli("repos", "deps", "lib")
    assert cli("repos", "deps", "nosuch", "--json")["counts"]["linked"] is None
    assert "xrepo calls: 4 linked, 0 ambiguous, 1 unprovided, 1 unmatched" in cli(
        "repos", "show", "svc"
    )


PHPLIB = {
    "composer.json": (
        '{"name": "Monolog/Monolog", "autoload": {"psr-4": {"Monolog\\\\": "src/Monolog"}}}'
    ),
    "src/Monolog/Logger.php": (
        "<?php\nnamespace Monolog;\n\nclass Logger\n{\n    public static function create() {}\n"
        "    public function info() {}\n}\n"
    ),
    "src/Monolog/Handler/StreamHandler.php": (
        "<?php\nnamespace Monolog\\Handler;\n\nclass StreamHandler {}\n"
    ),
}
PHPSVC = {
    "composer.json": '{"name": "acme/app", "require": {"monolog/monolog": "^3"}}',
    "src/App.php": (
        "<?php\nnamespace App;\n\nuse Monolog\\Logger;\n"
        "use Monolog\\Handler\\StreamHandler as SH;\n\n"
        "function boot() {\n    Logger::create();\n    new SH();\n    Logger::missing();\n}\n"
    ),
}


def test_php_site_links_to_the_namespaced_definition(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """Composer: ``use Monolog\\Logger; Logger::create()`` -> ``Monolog.Logger.create`` (PHP
    names a definition by its namespace); an alias keeps the class it imports."""
    publish(graph, settings, tmp_path, PHPSVC, "app")
    publish(graph, settings, tmp_path, PHPLIB, "monolog")
    with graph.transaction("relink") as tx:
        assert dependents(tx, "monolog") == ["app"]
        link(tx, "app")
    assert xcalls(graph, "app") == {
        ("App.boot", 8, "monolog", "Monolog.Logger.create", "cross_repo", "c1", "definition"),
        (
            "App.boot",
            9,
            "monolog",
            "Monolog.Handler.StreamHandler",
            "cross_repo",
            "c1",
            "definition",
        ),
    }
    assert counts(graph, "app")["unmatched"] == 1  # Logger::missing()


CSLIB = {
    "Acme.Json.csproj": (
        '<Project Sdk="Microsoft.NET.Sdk"><PropertyGroup><PackageId>Acme.Json</PackageId>'
        "<RootNamespace>Acme.Json</RootNamespace></PropertyGroup></Project>"
    ),
    "src/JsonConvert.cs": (
        "namespace Acme.Json\n{\n    public static class JsonConvert\n    {\n"
        '        public static string Serialize(object o) { return ""; }\n    }\n\n'
        "    public class JsonWriter\n    {\n    }\n}\n"
    ),
    "src/Linq/JToken.cs": (
        "namespace Acme.Json.Linq;\n\npublic class JToken\n{\n"
        "    public static JToken Parse(string s) { return null; }\n}\n"
    ),
}
CSSVC = {
    "App.csproj": (
        '<Project Sdk="Microsoft.NET.Sdk"><ItemGroup>'
        '<PackageReference Include="Acme.Json" Version="13.0.1" />'
        '<PackageReference Include="Acme.Log" Version="2.0.0" /></ItemGroup></Project>'
    ),
    "src/Program.cs": (
        "using System;\nusing Acme.Json;\nusing Acme.Json.Linq;\nusing Acme.Log;\n\n"
        "namespace App\n{\n    public class Program\n    {\n"
        "        public static void Main()\n        {\n"
        "            var s = JsonConvert.Serialize(1);\n"  # 12
        "            var w = new JsonWriter();\n"  # 13
        "            var t = JToken.Parse(s);\n"  # 14
        "            Log.Information(s);\n"  # 15: Acme.Log is not indexed
        "            JsonConvert.Missing();\n"  # 16: nor is it found in Acme.Json
        "            Console.WriteLine(s);\n        }\n    }\n}\n"
    ),
    "src/Other.cs": (
        "using Acme.Json;\n\nnamespace App\n{\n    public class Other\n    {\n"
        "        public void Run() { JsonConvert.Gone(); }\n    }\n}\n"
    ),
    "Sources/App/main.swift": "import Vapor\n\nfunc boot() {\n    Application()\n}\n",
}


def test_csharp_open_sites_link_through_their_using_namespaces(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """NuGet: ``using Acme.Json;`` binds no name. ``JsonConvert.Serialize()`` is one site
    per namespace the file imports from outside (``System`` left out), linked where the
    provider's graph has ``<namespace>.JsonConvert.Serialize``; a name found in none of them
    is unprovided while a candidate namespace has no indexed provider (``Acme.Log``), and
    unmatched once every candidate is provided. Swift's ``import Vapor`` is the same kind of
    site, with no provider."""
    publish(graph, settings, tmp_path, CSSVC, "app")
    publish(graph, settings, tmp_path, CSLIB, "json")
    with graph.transaction("relink") as tx:
        assert dependents(tx, "json") == ["app"]
        stats = link(tx, "app")
    assert stats.sites == 7
    main = "App.Program.Main"
    assert xcalls(graph, "app") == {
        (main, 12, "json", "Acme.Json.JsonConvert.Serialize", "cross_repo", "c1", "definition"),
        (main, 13, "json", "Acme.Json.JsonWriter", "cross_repo", "c1", "definition"),
        (main, 14, "json", "Acme.Json.Linq.JToken.Parse", "cross_repo", "c1", "definition"),
    }
    assert counts(graph, "app") == {"linked": 3, "ambiguous": 0, "unprovided": 3, "unmatched": 1}
    with graph.session() as s:
        rows = s.run(
            "MATCH (:Symbol {qualified_name: $qn})-[e:CALLS_EXTERNAL]->(m:ExternalModule) "
            "WHERE e.line = 12 RETURN collect(m.name) AS modules",
            qn=main,
        ).single()
    assert rows is not None
    assert sorted(rows["modules"]) == ["Acme.Json", "Acme.Json.Linq", "Acme.Log"]
