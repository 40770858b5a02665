"""Cross-repository links between real public packages, fetched from PyPI and
the Go module proxy and npm (tests/integration/xrepo_corpus.py): flask -> click /
itsdangerous, go-multierror -> errwrap, find-up -> locate-path -> p-locate -> p-limit ->
yocto-queue. Exact edges from a caller in one repository to a definition in
another (through click's and itsdangerous' re-exports), a library change that re-links its
dependent, a removal, and a token that sees only one side."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.faults import Faults
from semgraph.graph.reader import GraphReader
from semgraph.repos import removal
from semgraph.repos.graph import dependencies
from semgraph.xrepo.relink import relink_dependents, relink_lines
from tests.integration.xrepo_corpus import checkout, corpus
from tests.integration.xrepo_repos import counts, publish_tree, xcalls
from tests.repos import git

pytestmark = pytest.mark.integration

ECHO = "click.utils.echo"


def _index(graph: Graph, settings: Settings, tmp_path: Path, names: list[str]) -> dict[str, Any]:
    cache = corpus()
    out = {}
    for name in names:  # each library's publish re-links its dependents, as the job does
        root, sha = checkout(cache, name, tmp_path / "src")
        publish_tree(graph, settings, tmp_path / "work", root, name, sha)
        relink_dependents(graph, name)
        out[name] = (root, sha)
    return out


# flask 3.0.3's links into click 8.1.7 and itsdangerous 2.2.0 (78 before the sites inherited
# through flask's own classes and the members click's classes inherit, 88 before the sites
# through typed values and other files' classes: session 13)
LINKS = 112


def test_flask_links_into_click_and_itsdangerous(
    graph: Graph, settings: Settings, tmp_path: Path, es: Elasticsearch
) -> None:
    # the dependent first: its links are made when each library publishes
    repos = _index(graph, settings, tmp_path, ["flask", "click", "itsdangerous"])
    click_sha, its_sha = repos["click"][1], repos["itsdangerous"][1]
    links = xcalls(graph, "flask")
    assert {
        # flask/cli.py:274 click.echo(...): click/__init__.py re-exports utils.echo
        ("flask.cli.get_version", 274, "click", ECHO, "cross_repo", click_sha, "re-export"),
        # flask/sessions.py: from itsdangerous import URLSafeTimedSerializer
        (
            "flask.sessions.SecureCookieSessionInterface.get_signing_serializer",
            313,
            "itsdangerous",
            "itsdangerous.url_safe.URLSafeTimedSerializer",
            "cross_repo",
            its_sha,
            "re-export",
        ),
        # flask/cli.py:430 ctx.ensure_object(...) with ctx: click.Context (a typed parameter)
        (
            "flask.cli._set_app",
            430,
            "click",
            "click.core.Context.ensure_object",
            "cross_repo",
            click_sha,
            "re-export",
        ),
        # flask/cli.py:667 super().make_context(...) in FlaskGroup(AppGroup(click.Group)):
        # Group inherits it from BaseCommand, three bases up in click
        (
            "flask.cli.FlaskGroup.make_context",
            667,
            "click",
            "click.core.BaseCommand.make_context",
            "cross_repo",
            click_sha,
            "inherited",
        ),
        # tests/test_cli.py: from click.testing import CliRunner
        (
            "tests.test_cli.runner",
            38,
            "click",
            "click.testing.CliRunner",
            "cross_repo",
            click_sha,
            "definition",
        ),
        # tests/test_cli.py:315 runner.invoke(...): ``runner`` is the pytest fixture above
        (
            "tests.test_cli.test_with_appcontext",
            315,
            "click",
            "click.testing.CliRunner.invoke",
            "cross_repo",
            click_sha,
            "definition",
        ),
        # flask/sansio/blueprints.py:344 app.cli.add_command(...) with app: App, whose base
        # Scaffold (another file) declares ``cli: Group`` (from click import Group)
        (
            "flask.sansio.blueprints.Blueprint.register",
            344,
            "click",
            "click.core.Group.add_command",
            "cross_repo",
            click_sha,
            "re-export",
        ),
        # flask/sessions.py:329 s.loads(...), s what get_signing_serializer() returns
        # (-> URLSafeTimedSerializer | None): Python's MRO finds TimedSerializer.loads
        # (URLSafeSerializerMixin's base Serializer comes after TimedSerializer)
        (
            "flask.sessions.SecureCookieSessionInterface.open_session",
            329,
            "itsdangerous",
            "itsdangerous.timed.TimedSerializer.loads",
            "cross_repo",
            its_sha,
            "inherited",
        ),
    } <= links
    assert len(links) == LINKS
    before = counts(graph, "flask")
    assert before["linked"] == LINKS and before["ambiguous"] == 0
    deps = dependencies(graph, "click")
    assert [d["repo"] for d in deps["dependents"]] == ["flask"]
    assert deps["dependents"][0]["chosen"] is True
    assert deps["dependents"][0]["links"] == LINKS - 3  # and three into itsdangerous

    # a library change re-links its dependent without re-indexing it
    root, _ = repos["click"]
    utils = root / "src" / "click" / "utils.py"
    utils.write_text(utils.read_text().replace("def echo(", "def echo_renamed("))
    git(root, "commit", "-qam", "rename echo")
    sha2 = git(root, "rev-parse", "HEAD")
    publish_tree(graph, settings, tmp_path / "work", root, "click", sha2)
    echo_sites = echo_links = {e for e in links if e[3] == ECHO}
    pending = "OPTIONAL MATCH (p:RelinkPending {library: 'click'}) RETURN p.names AS names"
    # the names, and where each changed (what the re-link follows through re-exports)
    assert graph.query("pending", pending) == [
        {
            "names": [
                "echo",
                "echo_renamed",
                "src/click/utils.py\techo",
                "src/click/utils.py\techo_renamed",
            ]
        }
    ]
    echoing = graph.query(
        "echo sites",
        "MATCH (s:Symbol {repo: 'flask'})-[e:CALLS_EXTERNAL]->(:ExternalModule {name: 'click'}) "
        "WHERE e.rest = 'echo' OR e.local = 'echo' RETURN s.key AS key, e.line AS line",
    )
    with graph.transaction("sites") as tx:
        lines = relink_lines(tx, "flask", "click", {"echo", "echo_renamed"})
    assert lines == {(r["key"], r["line"]) for r in echoing} and len(lines) < 40
    stats = relink_dependents(graph, "click")
    # only flask's sites that meet a name the change touched are re-linked; the others keep
    # their links, stamped with click's new commit (a property)
    assert list(stats) == ["flask"] and stats["flask"].sites == len(lines)
    assert stats["flask"].stamped == LINKS - 3 - len(echo_links)
    assert graph.query("pending", pending) == [{"names": None}]  # done: the node is gone
    after = xcalls(graph, "flask")
    assert echo_sites and not any(e[3] == ECHO for e in after)
    assert len(after) == LINKS - len(echo_sites)
    assert {e[5] for e in after if e[2] == "click"} == {sha2}  # the library's new commit
    assert counts(graph, "flask")["unmatched"] == before["unmatched"] + len(echo_sites)

    # removing a library removes the links into it (and re-links its dependents' counts)
    removal.Removal(
        settings, graph, es, "itsdangerous", job_id="j", requested_at=time.time(), faults=Faults()
    ).run()
    assert not any(e[2] == "itsdangerous" for e in xcalls(graph, "flask"))
    assert counts(graph, "flask")["unprovided"] > before["unprovided"]

    # a token that sees one side only: the allowlist applies at every hop
    reader = GraphReader(graph)
    target = "click.testing.CliRunner"
    both = reader.callers(target, "click", across_repos=True)
    assert {e["repo"] for e in both.edges} >= {"flask"} and both.repositories == ["click", "flask"]
    only_click = reader.callers(target, "click", across_repos=True, visible=lambda r: r == "click")
    assert all(e["repo"] == "click" for e in only_click.edges)
    assert only_click.hidden_repositories == 1 and only_click.repositories == ["click"]

    # removing the dependent: the packages only it named go with it (no :Package orphan);
    # itsdangerous's package went with flask, its last dependent
    removal.Removal(
        settings, graph, es, "flask", job_id="j2", requested_at=time.time(), faults=Faults()
    ).run()
    packages = {
        r["key"]: r["n"]
        for r in graph.query(
            "packages",
            "MATCH (p:Package) OPTIONAL MATCH (p)<-[e]-() RETURN p.key AS key, count(e) AS n",
        )
    }
    assert "pypi:click" in packages and 0 not in packages.values(), packages
    assert not {"pypi:flask", "pypi:werkzeug", "pypi:itsdangerous"} & set(packages)
    inside = reader.callers(target, "click")  # not across: one repository, as before
    assert all(e["repo"] == "click" for e in inside.edges) and inside.hidden_repositories == 0


def test_go_multierror_links_into_errwrap(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    repos = _index(graph, settings, tmp_path, ["errwrap", "go-multierror"])
    sha = repos["errwrap"][1]
    assert xcalls(graph, "go-multierror") == {
        ("prefix.Prefix", 30, "errwrap", "errwrap.Wrapf", "cross_repo", sha, "definition"),
        ("prefix.Prefix", 35, "errwrap", "errwrap.Wrapf", "cross_repo", sha, "definition"),
    }
    found = dependencies(graph, "go-multierror")["depends_on"]
    assert [(d["name"], d["chosen"], d["why"]) for d in found] == [
        ("github.com/hashicorp/errwrap", "errwrap", "only provider")
    ]


def test_tablewriter_links_into_go_runewidth_by_the_name_its_package_is_imported_under(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """go-runewidth's package is ``runewidth``: an import without an alias binds the name the
    Go tools assume (the path's last element less ``go-``), so ``runewidth.StringWidth`` is
    a site into github.com/mattn/go-runewidth. ``IsEastAsian`` is defined once per platform
    (runewidth_posix.go, _windows.go, _js.go, _appengine.go): the call links each."""
    repos = _index(graph, settings, tmp_path, ["go-runewidth", "tablewriter"])
    sha = repos["go-runewidth"][1]
    width = "runewidth.StringWidth"
    variants = [f"runewidth_{p}.IsEastAsian" for p in ("posix", "windows", "js", "appengine")]
    calls = [
        ("util.DisplayWidth", 21, width),
        ("wrap.WrapString", 31, width),
        ("wrap.WrapWords", 59, width),
        ("wrap.WrapWords", 61, width),
        *[("wrap_test.TestUnicode", 38, v) for v in variants],
        *[("wrap_test.TestDisplayWidth", 50, v) for v in variants],
    ]
    link = ("cross_repo", sha, "definition")
    assert xcalls(graph, "tablewriter") == {(a, n, "go-runewidth", b, *link) for a, n, b in calls}
    assert counts(graph, "tablewriter")["linked"] == 6  # a call, whatever its candidates
    found = dependencies(graph, "tablewriter")["depends_on"]
    assert [(d["name"], d["chosen"]) for d in found] == [
        ("github.com/mattn/go-runewidth", "go-runewidth")
    ]


NPM_CHAIN = ["find-up", "locate-path", "p-locate", "p-limit", "yocto-queue"]


def test_npm_chain_links_default_and_named_imports(
    graph: Graph, settings: Settings, tmp_path: Path, es: Elasticsearch
) -> None:
    """find-up -> locate-path -> p-locate -> p-limit -> yocto-queue, each published after
    the packages that import it: a named import, default exports (``export default
    function``, ``export default class``) and the methods of a class made with ``new``."""
    repos = _index(graph, settings, tmp_path, NPM_CHAIN)
    sha = {name: repos[name][1] for name in NPM_CHAIN}

    def edge(src: str, line: int, lib: str, dst: str, via: str) -> tuple[Any, ...]:
        return (src, line, lib, dst, "cross_repo", sha[lib], via)

    up, lp, limit = "index.findUpMultiple", "locate-path", "p-limit"
    assert xcalls(graph, "find-up") == {  # import {locatePath, locatePathSync} from ...
        edge(f"{up}.runMatcher", 18, lp, "index.locatePath", "definition"),
        edge(f"{up}.runMatcher", 23, lp, "index.locatePath", "definition"),
        edge(f"{up}Sync.runMatcher", 62, lp, "index.locatePathSync", "definition"),
        edge(f"{up}Sync.runMatcher", 67, lp, "index.locatePathSync", "definition"),
    }
    assert xcalls(graph, "locate-path") == {  # import pLocate from "p-locate"; pLocate(...)
        edge("index.locatePath", 39, "p-locate", "index.pLocate", "definition"),
    }
    assert xcalls(graph, "p-locate") == {
        edge("index.pLocate", 31, limit, "index.pLimit", "definition"),
        edge("index.pLocate", 37, limit, "index.pLimit", "definition"),
    }
    queue = "yocto-queue"  # const queue = new Queue(); queue.enqueue(...)
    assert xcalls(graph, limit) == {
        edge("index.pLimit", 8, queue, "index.Queue", "definition"),
        edge("index.pLimit", 62, queue, "index.Queue.clear", "definition"),
        edge("index.pLimit.enqueue", 34, queue, "index.Queue.enqueue", "definition"),
        edge("index.pLimit.enqueue", 44, queue, "index.Queue.dequeue", "definition"),
        edge("index.pLimit.next", 15, queue, "index.Queue.dequeue", "definition"),
    }
    assert xcalls(graph, queue) == set()
    assert counts(graph, "p-locate")["linked"] == 2

    # the library renames its default export: p-locate is re-linked, without re-indexing
    root, _ = repos[limit]
    index = root / "index.js"
    index.write_text(index.read_text().replace("function pLimit(", "function makeLimit("))
    git(root, "commit", "-qam", "rename the default export")
    sha[limit] = git(root, "rev-parse", "HEAD")
    publish_tree(graph, settings, tmp_path / "work", root, limit, sha[limit])
    stats = relink_dependents(graph, limit)
    assert list(stats) == ["p-locate"] and stats["p-locate"].sites == 2
    assert xcalls(graph, "p-locate") == {
        edge("index.pLocate", 31, limit, "index.makeLimit", "definition"),
        edge("index.pLocate", 37, limit, "index.makeLimit", "definition"),
    }
    assert {e[5] for e in xcalls(graph, limit)} == {sha[queue]}  # its own links stand

    # a token that sees the library only: p-limit's callers are hidden, as a count
    reader = GraphReader(graph)
    both = reader.callers("index.Queue", queue, across_repos=True)
    assert {e["repo"] for e in both.edges} == {limit}
    mine = reader.callers("index.Queue", queue, across_repos=True, visible=lambda r: r == queue)
    assert mine.edges == [] and mine.hidden_repositories == 1

    # removing the library removes the links into it
    removal.Removal(
        settings, graph, es, queue, job_id="jq", requested_at=time.time(), faults=Faults()
    ).run()
    assert xcalls(graph, limit) == set()
    assert counts(graph, limit)["unprovided"] >= 5


def test_commons_text_links_into_commons_lang3(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """Java: commons-text 1.10.0's calls into commons-lang3 3.12.0 (``import
    org.apache.commons.lang3.StringUtils; StringUtils.isEmpty(...)``), the class found as its
    file under the package's directory; the provider's modules are its source packages."""
    repos = _index(graph, settings, tmp_path, ["commons-text", "commons-lang3"])
    sha = repos["commons-lang3"][1]
    text, lang = "src.main.java.org.apache.commons.text", "src.main.java.org.apache.commons.lang3"
    found = xcalls(graph, "commons-text")
    assert {
        (
            f"{text}.CaseUtils.CaseUtils.toCamelCase",
            70,
            "commons-lang3",
            f"{lang}.StringUtils.StringUtils.isEmpty",
            "cross_repo",
            sha,
            "definition",
        ),
        (
            f"{text}.WordUtils.WordUtils.abbreviate",
            80,
            "commons-lang3",
            f"{lang}.Validate.Validate.isTrue",
            "cross_repo",
            sha,
            "definition",
        ),
        (
            f"{text}.AlphabetConverter.AlphabetConverter.convertCharsToIntegers",
            104,
            "commons-lang3",
            f"{lang}.ArrayUtils.ArrayUtils.isEmpty",
            "cross_repo",
            sha,
            "definition",
        ),
    } <= found
    before = counts(graph, "commons-text")
    # every call site into commons-lang3 is linked (overloads are candidates of one site)
    assert before["linked"] == 73 and before["unmatched"] == 0 and before["ambiguous"] == 0
    deps = dependencies(graph, "commons-text")["depends_on"]
    assert [(d["name"], d["chosen"]) for d in deps if d["chosen"]] == [
        ("org.apache.commons:commons-lang3", "commons-lang3")
    ]

    # the library renames Validate.isTrue: only those sites are re-linked (now unmatched)
    root, _ = repos["commons-lang3"]
    validate = root / "src/main/java/org/apache/commons/lang3/Validate.java"
    validate.write_text(validate.read_text().replace(" void isTrue(", " void isTrueChecked("))
    git(root, "commit", "-qam", "rename isTrue")
    publish_tree(graph, settings, tmp_path / "work", root, "commons-lang3", "c2")
    named = {(e[0], e[1]) for e in found if e[3].endswith(".Validate.Validate.isTrue")}
    with graph.transaction("sites") as tx:
        lines = relink_lines(tx, "commons-text", "commons-lang3", {"isTrue", "isTrueChecked"})
    assert {(k.split("|")[2], line) for k, line in lines} == named
    stats = relink_dependents(graph, "commons-lang3")["commons-text"]
    # a line is re-linked whole: one of them holds a second call into commons-lang3 (made
    # again), and each site is counted on its own
    assert stats.sites == len(named) + 1 and stats.edges == 1
    after = counts(graph, "commons-text")
    assert after["unmatched"] == len(named) and after["linked"] == 73 - len(named)
    assert not any(e[3].endswith(".isTrue") for e in xcalls(graph, "commons-text"))


def test_serde_json_links_into_itoa_and_ryu(
    graph: Graph, settings: Settings, tmp_path: Path, es: Elasticsearch
) -> None:
    """Rust: serde_json 1.0.108 calls ``itoa::Buffer::new()`` and ``ryu::Buffer::new()``
    with no ``use`` (a dependency crate is in scope); itoa defines ``Buffer`` in its crate
    root, ryu re-exports it (``pub use crate::buffer::{Buffer, Float}``, src/buffer/mod.rs)."""
    repos = _index(graph, settings, tmp_path, ["serde_json", "itoa", "ryu"])
    itoa, ryu = repos["itoa"][1], repos["ryu"][1]
    found = xcalls(graph, "serde_json")
    assert {
        (
            "src.number.Number.fmt",
            351,
            "itoa",
            "src.lib.Buffer.new",
            "cross_repo",
            itoa,
            "definition",
        ),
        (
            "src.number.Number.fmt",
            353,
            "ryu",
            "src.buffer.mod.Buffer.new",
            "cross_repo",
            ryu,
            "re-export",
        ),
        (
            "src.ser.Formatter.write_f64",
            1705,
            "ryu",
            "src.buffer.mod.Buffer.new",
            "cross_repo",
            ryu,
            "re-export",
        ),
    } <= found
    assert {e[2] for e in found} == {"itoa", "ryu"}
    assert len([e for e in found if e[2] == "itoa"]) == 15
    assert len([e for e in found if e[2] == "ryu"]) == 7
    before = counts(graph, "serde_json")
    assert before["linked"] == 22 and before["unmatched"] == 0

    # ryu stops re-exporting Buffer: only its sites are re-linked (now unmatched)
    root, _ = repos["ryu"]
    lib = root / "src" / "lib.rs"
    lib.write_text(
        lib.read_text().replace(
            "pub use crate::buffer::{Buffer, Float};", "pub use crate::buffer::Float;"
        )
    )
    git(root, "commit", "-qam", "Buffer is private")
    publish_tree(graph, settings, tmp_path / "work", root, "ryu", "c2")
    stats = relink_dependents(graph, "ryu")["serde_json"]
    # a line is re-linked whole: number.rs:353 also calls core's Formatter::write_str
    assert stats.sites == 7 + 1 and stats.edges == 0
    assert counts(graph, "serde_json")["unmatched"] == 7
    assert {e[2] for e in xcalls(graph, "serde_json")} == {"itoa"}

    # removing itoa removes the links into it
    removal.Removal(
        settings, graph, es, "itoa", job_id="ji", requested_at=time.time(), faults=Faults()
    ).run()
    assert xcalls(graph, "serde_json") == set()


def test_okhttp_links_into_okio(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    """Kotlin: okhttp 4.12.0 into okio 3.6.0 (okio's JVM sources in their multiplatform
    layout, src/commonMain/kotlin and src/jvmMain/kotlin): a constructor, a top-level
    function in a file of another name, and a member inherited from okio's ForwardingSink;
    Kotlin names its definitions by their package, not their path."""
    repos = _index(graph, settings, tmp_path, ["okhttp", "okio"])
    sha = repos["okio"][1]

    def edge(src: str, line: int, dst: str) -> tuple[Any, ...]:
        return (f"okhttp3.{src}", line, "okio", dst, "cross_repo", sha, "definition")

    found = xcalls(graph, "okhttp")
    assert {
        edge("internal.ws.MessageDeflater", 34, "okio.DeflaterSink"),  # DeflaterSink(...)
        edge("internal.cache.DiskLruCache.runOnce", 196, "okio.blackholeSink"),  # Okio.kt
        edge("internal.cache.FaultHidingSink.write", 36, "okio.ForwardingSink.write"),  # super
        edge("MultipartReader", 202, "okio.Options.of"),  # a companion object's function
    } <= found
    assert {e[2] for e in found} == {"okio"} and len(found) == 56
    assert counts(graph, "okhttp")["linked"] == 56
    deps = dependencies(graph, "okhttp")["depends_on"]
    assert [(d["name"], d["chosen"]) for d in deps if d["chosen"]] == [
        ("com.squareup.okio:okio", "okio")
    ]


def test_cats_core_links_into_cats_kernel(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    """Scala: cats-core 2.10.0 into cats-kernel 2.10.0 (Scala 2.13 sources jars and poms):
    ``import cats.kernel.instances.StaticMethods.wrapMutableIndexedSeq`` and its calls, the
    object's member found in ``cats/kernel/instances/StaticMethods.scala``. (Its qualified
    name reads ``cats.StaticMethods``: Scala's chained package clauses, ``package cats`` then
    ``package kernel``, are read as the first one only.)"""
    repos = _index(graph, settings, tmp_path, ["cats-core", "cats-kernel"])
    sha = repos["cats-kernel"][1]
    found = xcalls(graph, "cats-core")
    target = "cats.StaticMethods.wrapMutableIndexedSeq"
    assert (
        "cats.ListInstances.traverse",
        126,
        "cats-kernel",
        target,
        "cross_repo",
        sha,
        "definition",
    ) in found
    assert {e[3] for e in found} == {target} and len(found) == 8
    assert counts(graph, "cats-core")["linked"] == 8
    deps = dependencies(graph, "cats-core")["depends_on"]
    assert [(d["name"], d["chosen"]) for d in deps if d["chosen"]] == [
        ("org.typelevel:cats-kernel_2.13", "cats-kernel")
    ]


def test_sinatra_links_into_rack(
    graph: Graph, settings: Settings, tmp_path: Path, es: Elasticsearch
) -> None:
    """Ruby: sinatra 3.0.5 into rack 2.2.22 (Debian's packages of the two gems: their lib/
    trees and gemspecs). ``require "rack"`` binds no name: ``Rack::Utils.escape_html(...)``
    is an open site, the gem named after the constant its candidate, linked to the
    definition whose nesting is ``Rack::Utils`` in rack's graph, whatever file defines it;
    ``Rack::Builder.new`` is the class. (Lines are left out: a security update of either
    package may move them; the names are what the link is about.)"""
    repos = _index(graph, settings, tmp_path, ["sinatra", "rack"])
    sha = repos["rack"][1]
    found = {(e[0], e[2], e[3], e[4], e[5], e[6]) for e in xcalls(graph, "sinatra")}

    def edge(src: str, dst: str) -> tuple[str, ...]:
        return (
            f"lib.sinatra.base.Sinatra.{src}",
            "rack",
            f"lib.rack.{dst}",
            "cross_repo",
            sha,
            "definition",
        )

    assert found == {
        edge("Helpers.status", "utils.Rack.Utils.status_code"),
        edge("Request.params", "utils.Rack.Utils.escape_html"),
        edge("Base.handle_exception!", "utils.Rack.Utils.escape_html"),
        edge("Base", "utils.Rack.Utils.escape_html"),
        edge("Base.build", "builder.Rack.Builder"),  # Rack::Builder.new
        edge("Base.mime_type", "mime.Rack.Mime.mime_type"),
        edge("Base.run!", "handler.Rack.Handler.pick"),
    }
    before = counts(graph, "sinatra")
    assert before["linked"] == 8 and before["ambiguous"] == 0
    deps = dependencies(graph, "sinatra")["depends_on"]
    assert [(d["name"], d["chosen"]) for d in deps if d["chosen"]] == [("rack", "rack")]
    assert {d["name"] for d in deps} == {
        "mustermann",
        "rack",
        "rack-protection",
        "rack-test",
        "tilt",
    }

    # rack renames Utils.status_code: only that site is re-linked (now unmatched)
    root, _ = repos["rack"]
    utils = root / "lib" / "rack" / "utils.rb"
    utils.write_text(utils.read_text().replace("def status_code(", "def status_code_of("))
    git(root, "commit", "-qam", "rename status_code")
    publish_tree(graph, settings, tmp_path / "work", root, "rack", "c2")
    stats = relink_dependents(graph, "rack")["sinatra"]
    assert stats.sites == 1 and stats.edges == 0  # (the link went with the definition)
    after = counts(graph, "sinatra")
    assert after["linked"] == 7 and after["unmatched"] == before["unmatched"] + 1

    # removing rack removes the links into it
    removal.Removal(
        settings, graph, es, "rack", job_id="jr", requested_at=time.time(), faults=Faults()
    ).run()
    assert xcalls(graph, "sinatra") == set()
