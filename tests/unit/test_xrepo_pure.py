"""The pure parts of the cross-repository link: the dotted name a site calls,
which provider covers a module, re-export entries; and reading the manifests of a work tree
(symbolic links never followed, oversized files refused)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import cast

from semgraph.db import Tx
from semgraph.indexer.manifests_read import read_identity
from semgraph.manifests.base import MAX_MANIFEST_BYTES
from semgraph.resolve import rust_crates
from semgraph.xrepo.counts import Provider, classify, provider_of
from semgraph.xrepo.counts import is_ambiguous as _is_ambiguous
from semgraph.xrepo.crates import paths
from semgraph.xrepo.crates import readings as rust_readings
from semgraph.xrepo.lookup import Site
from semgraph.xrepo.lookup import reexport as _reexport
from semgraph.xrepo.maven import readings
from semgraph.xrepo.npm import candidates, entry_target, package_of, site_name
from semgraph.xrepo.pypi import python_name


def site(module: str, local: str, rest: str) -> Site:
    return Site("k", 1, module, local, rest)


def test_python_name_of_a_site() -> None:
    assert python_name(site("click", "click", "echo")) == "click.echo"  # import click
    assert python_name(site("click", "echo", "")) == "click.echo"  # from click import echo
    assert python_name(site("flask.json", "flask", "json.dumps")) == "flask.json.dumps"
    assert python_name(site("a.b", "C", "m")) == "a.b.C.m"  # from a.b import C; C.m()


def test_provider_of_a_module() -> None:
    py = Provider("click-repo", "c1", "pypi", ("click",))
    go = Provider("errwrap", "c2", "go", ("github.com/hashicorp/errwrap",))
    both = [py, go]
    assert provider_of("click", both) is py and provider_of("click.testing", both) is py
    assert provider_of("clickhouse", both) is None  # a prefix is no package
    assert provider_of("github.com/hashicorp/errwrap", both) is go
    assert provider_of("github.com/hashicorp/errwrap/sub", both) is go
    assert provider_of("github.com/hashicorp/errwrapper", both) is None
    assert _is_ambiguous("click.core", {"click"}) and not _is_ambiguous("clicks", {"click"})


def test_a_call_is_linked_else_ambiguous_else_unmatched_else_unprovided() -> None:
    py = [Provider("click-repo", "c1", "pypi", ("click",))]
    assert classify(["click"], True, py, {"click"}) == "linked"
    assert classify(["click.core"], False, py, {"click"}) == "ambiguous"
    assert classify(["click"], False, py, set()) == "unmatched"
    assert classify(["requests"], False, py, set()) == "unprovided"
    # an open site (one row per candidate namespace): unmatched only when every candidate
    # has an indexed provider
    assert classify(["click", "Rack"], False, py, set()) == "unprovided"
    assert classify(["click", "click.testing"], False, py, set()) == "unmatched"
    php = Provider("monolog", "c3", "composer", ("Monolog",))  # PSR-4 prefixes: namespaces
    assert provider_of("Monolog\\Handler", [php]) is php and provider_of("Monolog", [php]) is php
    assert provider_of("MonologX\\Handler", [php]) is None
    assert _is_ambiguous("Monolog\\Handler", {"Monolog"})


def test_reexport_entries() -> None:
    entries = ["Flask\tsrc/flask/app.py\tFlask", "echo\tsrc/click/utils.py\techo"]
    assert _reexport(entries, "echo") == ("src/click/utils.py", "echo")
    assert _reexport(entries, "missing") is None and _reexport(None, "echo") is None


def test_read_identity_never_follows_a_link_and_refuses_oversized(tmp_path: Path) -> None:
    secret = tmp_path / "secret.toml"
    secret.write_text('[project]\nname = "leaked"\n')
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "src" / "pkg" / "__init__.py").write_text("")
    os.symlink(secret, repo / "pyproject.toml")
    (repo / "go.mod").write_bytes(b"module a\n" + b"/" * (MAX_MANIFEST_BYTES + 10))
    (repo / "package.json").write_text('{"name": "ok-pkg"}')
    ident = read_identity(repo)
    assert [(p.ecosystem, p.name) for p in ident.provides] == [("npm", "ok-pkg")]
    assert len(ident.errors) == 1 and ident.errors[0].startswith("go.mod: over")
    (repo / "pyproject.toml").unlink()
    (repo / "pyproject.toml").write_text('[project]\nname = "real"\n')
    ident = read_identity(repo)
    assert ("pypi", "real", ("pkg",)) in [(p.ecosystem, p.name, p.modules) for p in ident.provides]


def test_read_identity_of_a_missing_tree(tmp_path: Path) -> None:
    ident = read_identity(tmp_path / "nope")
    assert ident.provides == [] and ident.depends == [] and ident.errors == []


def test_npm_package_and_subpath() -> None:
    assert package_of("p-limit") == ("p-limit", ".")
    assert package_of("lodash/fp/get") == ("lodash", "./fp/get")
    assert package_of("@scope/ui/button") == ("@scope/ui", "./button")
    assert package_of("@scope/ui") == ("@scope/ui", ".")


def test_npm_entry_target() -> None:
    entries = (".\t./dist/index.js", "./utils\t./dist/utils.js", "./none\t")
    assert entry_target(entries, ".") == "./dist/index.js"
    assert entry_target(entries, "./utils") == "./dist/utils.js"
    assert entry_target(entries, "./none") == ""
    assert entry_target(entries, "./private") is None  # not exported
    assert entry_target((".\t./index.js",), "./lib/x") == "./lib/x"  # no exports map
    assert entry_target((), ".") == ""


def test_npm_entry_candidates() -> None:
    found = candidates("./dist/esm/index.js")
    assert found[0] == "dist/esm/index.js"
    assert found.index("src/esm/index.ts") < found.index("src/index.ts")
    assert "esm/index.ts" in found and "index.ts" in found
    assert candidates("./index.d.ts")[:3] == ["index.d.ts", "index.ts", "index.tsx"]
    assert candidates("./lib")[:2] == ["lib", "lib.ts"] and "lib/index.js" in candidates("./lib")
    assert candidates("")[:2] == ["src/index", "src/index.ts"]
    assert candidates("../../etc/passwd") == [] and candidates("/etc/passwd") == []
    assert len(candidates("./" + "dist/" * 50 + "x.js")) < 2000  # bounded by the path


def test_npm_site_names() -> None:
    assert site_name("default", "") == ("default", [])
    assert site_name("default", "Queue.enqueue") == ("default", ["Queue", "enqueue"])
    assert site_name("locatePath", "") == ("locatePath", [])
    assert site_name("*", "") == ("default", [])  # require("p")() / a namespace called
    assert site_name("*", "valid.x") == ("valid", ["x"])


POM = (
    "<project><groupId>org.acme</groupId><artifactId>lib</artifactId><dependencies>"
    "<dependency><groupId>org.x</groupId><artifactId>y</artifactId></dependency>"
    "</dependencies></project>"
)


def test_maven_modules_are_the_source_packages(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    for path in (
        "org/acme/lib/A.java",
        "org/acme/lib/sub/B.java",
        "org/acme/util/C.kt",
        "org/acme/README.md",
        "org/acme/fx/D.scala",
    ):
        (repo / "src/main/java" / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / "src/main/java" / path).write_text("package x;\n")
    (repo / "pom.xml").write_text(POM)
    os.symlink("/etc", repo / "src/main/java/org/linked")  # never followed
    ident = read_identity(repo)
    # the shallowest package holding code on each branch: sub-packages are under it
    assert [(p.name, p.modules) for p in ident.provides] == [
        ("org.acme:lib", ("org.acme.fx", "org.acme.lib", "org.acme.util"))
    ]
    # no sources: the group id, as before
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "pom.xml").write_text(POM)
    assert [p.modules for p in read_identity(bare).provides] == [("org.acme",)]


def test_java_site_readings() -> None:
    # import a.b.C; C.m()  /  import static a.b.C.m; m()
    assert readings("a.b", "C", "m") == [("a/b", "C", ["m"])]
    assert readings("a.b.C", "m", "") == [("a/b/C", "m", []), ("a/b", "C", ["m"])]
    assert readings("a.b.C", "Inner", "f.g") == [
        ("a/b/C", "Inner", ["f", "g"]),
        ("a/b", "C", ["Inner", "f", "g"]),
    ]


def test_rust_dependency_crates_and_their_implicit_use() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE packaging (path TEXT, text TEXT)")
    db.execute(
        "CREATE TABLE calls_raw (id INTEGER PRIMARY KEY, path TEXT, receiver TEXT, line INTEGER)"
    )
    db.executemany(
        "INSERT INTO packaging VALUES (?,?)",
        [
            (
                "Cargo.toml",
                '[dependencies]\nitoa = "1"\nserde-json = { version = "1" }\n'
                "[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n",
            ),
            ("sub/Cargo.toml", "[dev-dependencies]\nryu = '1'\n"),
            ("bad/Cargo.toml", "[dependencies\nnot toml"),  # malformed: names nothing
            ("pyproject.toml", '[project]\nname = "x"\n'),
            ("odd/Cargo.toml", '[dependencies]\n"a b" = "1"\n'),  # not an identifier
        ],
    )
    crates = rust_crates.dependency_crates(db)
    assert crates == {"itoa", "serde_json", "libc", "ryu"}
    db.executemany(
        "INSERT INTO calls_raw (path, receiver, line) VALUES (?,?,?)",
        [
            ("src/a.rs", "itoa::Buffer", 3),
            ("src/a.rs", "itoa", 5),
            ("src/a.rs", "ryu", 7),
            ("src/a.rs", "serde_json::Value", 9),
            ("src/a.rs", None, 11),
            ("src/a.rs", "self", 12),
        ],
    )
    # ryu is bound by a use of the file: its own binding stands
    assert rust_crates.implicit(db, "src/a.rs", {"ryu"}, crates) == [("itoa", 3), ("serde_json", 9)]
    assert rust_crates.implicit(db, "src/a.rs", set(), frozenset()) == []


def test_rust_site_paths_and_readings() -> None:
    assert paths("itoa", "Buffer", "new") == [["Buffer", "new"]]
    # the crate itself (no use), or an item named like it (use memchr::memchr)
    assert paths("itoa", "itoa", "Buffer.new") == [["Buffer", "new"], ["itoa", "Buffer", "new"]]
    assert paths("memchr", "memchr", "") == [["memchr"]]
    assert paths("serde.de", "Visitor", "visit") == [["de", "Visitor", "visit"]]
    assert rust_readings(["de", "Visitor", "visit"]) == [
        (["src/de/Visitor.rs", "src/de/Visitor/mod.rs"], "visit", []),
        (["src/de.rs", "src/de/mod.rs"], "Visitor", ["visit"]),
        (["src/lib.rs"], "de", ["Visitor", "visit"]),
    ]
    assert len(paths("a", "b", ".".join(["x"] * 100))[0]) == 8  # bounded


def test_multiplatform_kotlin_packages_are_read_from_every_target(tmp_path: Path) -> None:
    repo = tmp_path / "okio"
    for path in (
        "src/commonMain/kotlin/okio/Buffer.kt",
        "src/jvmMain/kotlin/okio/Okio.kt",
        "src/jvmMain/kotlin/okio/internal/X.kt",
        "src/test/x/Y.kt",
    ):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text("package okio\n")
    (repo / "pom.xml").write_text(POM)
    # the targets' roots together; src/test is no target (and src itself is a fallback only)
    assert [p.modules for p in read_identity(repo).provides] == [("okio",)]


def test_lost_links_are_read_per_dependent_and_a_malformed_entry_is_left_out() -> None:
    from semgraph.xrepo.relink import _lost

    entries = (
        "svc\tsvc|a.py|a.go\t3\tlib.f0",
        "svc\tsvc|b.py|b\t7\tf0",
        "web\tweb|x|y\tx\tf",
        "broken",
    )
    assert _lost(entries) == {
        "svc": frozenset({("svc|a.py|a.go", 3, "lib.f0"), ("svc|b.py|b", 7, "f0")})
    }


class _Tx:
    def __init__(self) -> None:
        self.runs: list[dict[str, object]] = []

    def run(self, query: str, **params: object) -> _Tx:
        self.runs.append(params)
        return self

    def single(self) -> None:
        return None


def test_a_publish_that_dropped_too_many_linked_calls_re_links_everything() -> None:
    from semgraph.xrepo.relink import MAX_LOST, record

    fake = _Tx()
    tx = cast(Tx, fake)  # record() only runs its statement
    record(tx, "lib", False, {"f"}, [f"svc\tk\t{i}\tlib.f" for i in range(3)])
    assert fake.runs[-1]["everything"] is False and len(fake.runs[-1]["lost"]) == 3  # type: ignore[arg-type]
    record(tx, "lib", False, {"f"}, [f"svc\tk\t{i}\tlib.f" for i in range(MAX_LOST + 1)])
    assert fake.runs[-1]["everything"] is True and fake.runs[-1]["lost"] == []
    record(tx, "lib", False, set(), [])
    assert len(fake.runs) == 2  # nothing changed: nothing recorded
