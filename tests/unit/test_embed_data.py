"""The embedder's training-data builder (train/embedder): licences, held-out packages,
docstring removal, deduplication, hostile archives and the split. Pure: every archive and
source is made here, nothing is downloaded."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from train.embedder import archive, build_data, heldout, licences, package, sourcefiles
from train.embedder.dedup import Deduper, signature
from train.embedder.pairs import file_pairs, summary

# -- licences ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pkg_info", "spdx"),
    [
        ("Metadata-Version: 2.4\nName: a\nLicense-Expression: MIT\n", "MIT"),
        (
            "Metadata-Version: 2.4\nName: a\nLicense-Expression: Apache-2.0 OR GPL-2.0\n",
            "Apache-2.0",
        ),
        ("Metadata-Version: 2.1\nName: a\nLicense: BSD\n", "BSD-3-Clause"),
        (
            "Metadata-Version: 2.1\nName: a\nClassifier: License :: OSI Approved :: MIT License\n",
            "MIT",
        ),
        ("Metadata-Version: 2.1\nName: a\nLicense: GPL-3.0-or-later\n", "GPL-3.0-or-later"),
        ("Metadata-Version: 2.4\nName: a\nLicense-Expression: MIT AND LGPL-2.1\n", "LGPL-2.1"),
    ],
)
def test_licence_from_pkg_info(pkg_info: str, spdx: str) -> None:
    assert licences.from_pkg_info(pkg_info) == spdx


def test_only_permissive_licences_are_allowed() -> None:
    assert licences.allowed("MIT") and licences.allowed("BSD-2-Clause") and licences.allowed("ISC")
    for bad in ("GPL-3.0-only", "LGPL", "MPL-2.0", "AGPL", "SSPL-1.0", "unknown", None):
        assert not licences.allowed(bad)
    assert licences.from_pkg_info("Metadata-Version: 2.1\nName: a\n") is None  # unknown: refused
    assert licences.from_package_json({"license": "ISC"}) == "ISC"
    assert licences.from_package_json({"license": "(MIT OR GPL-3.0)"}) == "MIT"
    assert licences.from_package_json({"licenses": [{"type": "MIT"}]}) == "MIT"
    assert licences.from_package_json({"license": "UNLICENSED"}) is None
    assert licences.from_pom("<licenses><license><name>The Apache License, Version 2.0</name>") == (
        "Apache-2.0"
    )


@pytest.mark.parametrize(
    ("text", "spdx"),
    [
        ("MIT License\n\nPermission is hereby granted, free of charge, to any person", "MIT"),
        (
            "Redistribution and use in source and binary forms ... Neither the name of",
            "BSD-3-Clause",
        ),
        ("Redistribution and use in source and binary forms, with or without", "BSD-2-Clause"),
        ("                 Apache License\n           Version 2.0, January 2004", "Apache-2.0"),
        ("GNU GENERAL PUBLIC LICENSE Version 3", "GPL"),
        ("Mozilla Public License Version 2.0", "MPL-2.0"),
        ("All rights reserved.", None),
    ],
)
def test_licence_from_licence_text(text: str, spdx: str | None) -> None:
    assert licences.from_licence_text(text) == spdx


def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_a_package_is_judged_by_its_own_metadata(tmp_path: Path) -> None:
    gpl = _tar(
        tmp_path / "a-1.0.tar.gz",
        {"a-1.0/PKG-INFO": b"Metadata-Version: 2.1\nName: a\nLicense: GPL-3.0\n"},
    )
    assert not package.read_licence("pypi", gpl, ()).allowed
    npm = _tar(tmp_path / "b.tgz", {"package/package.json": b'{"license": "MIT"}'})
    assert package.read_licence("npm", npm, ()) == package.Licence("MIT", "package.json")
    go = tmp_path / "c.zip"
    with zipfile.ZipFile(go, "w") as zf:
        zf.writestr("example.com/c@v1.0.0/LICENSE", "Permission is hereby granted, free of charge")
    assert package.read_licence("go", go, ()).spdx == "MIT"
    none = _tar(tmp_path / "d.tgz", {"package/index.js": b"x"})
    assert package.read_licence("npm", none, ()) == package.Licence(None, "none found")


# -- held out ------------------------------------------------------------------------------


def test_held_out_names_are_blocked_in_every_spelling_of_the_same_package() -> None:
    held = heldout.load()
    for name in ("flask", "Flask", "FLASK", "scikit_learn", "Scikit.Learn", "sklearn", "Django"):
        assert held.blocks("pypi", name) is not None, name
    for name in ("flask_x", "flask-login", "requests-oauthlib", "clickhouse", "numpy"):
        assert held.blocks("pypi", name) is None, name
    for module in ("github.com/gorilla/mux", "github.com/Gorilla/Mux/v2", "github.com/spf13/cobra"):
        assert held.blocks("go", module) is not None, module
    assert held.blocks("go", "github.com/gorilla/websocket") is None
    assert held.blocks("go", "github.com/urfave/cli/v2") == "codesearch_evaluation"
    assert held.blocks("pypi", "attrs") == "codesearch_evaluation"
    assert held.blocks("npm", "Express") == "codesearch_evaluation"
    assert held.blocks("maven", "com.google.code.gson:gson") == "codesearch_evaluation"


def test_bench_eval_sources_are_held_out(tmp_path: Path) -> None:
    bench = tmp_path / "sources.json"
    bench.write_text(json.dumps([{"repo": "someone/widget", "commit": "0" * 40}]))
    held = heldout.load(bench_sources=bench)
    assert held.blocks("go", "github.com/someone/widget") == "bench_eval"
    assert held.blocks("pypi", "Widget") == "bench_eval"
    real = heldout.load()  # the repository's own: click, requests, cobra, mux
    assert real.blocks("go", "github.com/pallets/click") is not None


def test_vendored_copies_of_held_out_packages_are_skipped() -> None:
    held = heldout.load()
    assert held.blocks_path("pip/_vendor/requests/api.py") is not None
    assert held.blocks_path("_pytest/python.py") is not None
    assert held.blocks_path("vendor/github.com/gorilla/mux/mux.go") is not None
    assert held.blocks_path("flask_x/app.py") is None
    assert held.blocks_path("sentry_sdk/integrations/flask.py") is None  # a file, not a copy


def test_no_listed_source_is_held_out() -> None:
    held = heldout.load()
    listed = build_data.load_sources()
    assert [s for s in listed if held.blocks(s.registry, s.name)] == []
    assert {s.registry for s in listed} >= {"pypi", "npm", "go"}


def test_the_builder_refuses_a_held_out_source_without_downloading(tmp_path: Path) -> None:
    builder = build_data.Builder(tmp_path, workers=1)
    progress = build_data.Progress(total=1)
    rec = builder.package(build_data.Source("pypi", "Flask", "3.0.0"), None, progress)
    assert rec["status"] == "held_out"
    assert not (tmp_path / "downloads").exists()
    builder.close()


def test_sources_must_be_pinned(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"sources": [{"registry": "npm", "name": "x", "version": "^1"}]}))
    with pytest.raises(ValueError, match="not pinned"):
        build_data.load_sources(path)


# -- pairs ---------------------------------------------------------------------------------

PY = b'''
class Box:
    @property
    def area(self):
        """Compute the area of the box from its sides.

        Returns:
            float
        """

        w = self.width
        h = self.height
        return w * h

    def todo(self):
        """TODO: write this one"""
        a = 1
        b = 2
        return a + b
'''


def test_python_docstring_is_cut_from_the_code_and_the_context_kept() -> None:
    result = file_pairs("pkg/box.py", PY)
    [pair] = result.pairs
    assert pair["query"] == "Compute the area of the box from its sides."
    assert pair["code"] == (
        "@property\ndef area(self):\n    w = self.width\n    h = self.height\n    return w * h"
    )
    assert (pair["class"], pair["module"], pair["name"]) == ("Box", "pkg.box", "area")
    assert pair["signature"] == "def area(self)"
    assert result.dropped == Counter({"boilerplate_query": 1})


@pytest.mark.parametrize(
    ("path", "source", "query", "first_line"),
    [
        (
            "lib/add.js",
            b"/**\n * Adds two numbers and returns the sum.\n * @param {number} a\n */\n"
            b"function add(a, b) {\n  const c = a + b;\n  return c;\n}\n",
            "Adds two numbers and returns the sum.",
            "function add(a, b) {",
        ),
        (
            "src/add.ts",
            b"/** Adds two numbers and returns the sum. */\n"
            b"export function add(a: number, b: number): number {\n  const c = a + b;\n"
            b"  return c;\n}\n",
            "Adds two numbers and returns the sum.",
            "export function add(a: number, b: number): number {",
        ),
        (
            "x/sum.go",
            b"package x\n\n// Sum returns the total of the values.\nfunc Sum(xs []int) int {\n"
            b"\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n",
            "Sum returns the total of the values.",
            "func Sum(xs []int) int {",
        ),
        (
            "a/C.java",
            b"package a;\nclass C {\n  /**\n   * Returns the {@code name} of <b>this</b> thing.\n"
            b"   * @return the name\n   */\n  String name() {\n    String n = this.n;\n"
            b"    return n.trim();\n  }\n}\n",
            "Returns the name of this thing.",
            "String name() {",
        ),
    ],
)
def test_doc_comment_is_the_query_and_not_in_the_code(
    path: str, source: bytes, query: str, first_line: str
) -> None:
    [pair] = file_pairs(path, source).pairs
    assert pair["query"] == query
    assert pair["code"].splitlines()[0] == first_line
    assert "/*" not in pair["code"] and "//" not in pair["code"]


def test_summary_keeps_the_first_paragraph_without_sections_or_markup() -> None:
    doc = "Return :func:`foo` applied to ``x``.\nSecond line.\n\nMore detail.\n"
    assert summary(doc) == "Return foo applied to x. Second line."
    assert summary("Parse it.\n\nParameters\n----------\nx : int") == "Parse it."
    assert summary("Send the {@link Message} now.\n@param m the message") == (
        "Send the Message now."
    )


def test_trivial_pairs_are_dropped_with_a_reason() -> None:
    short = b'def f():\n    """Do a thing well."""\n    return 1\n'
    assert file_pairs("m.py", short).dropped == Counter({"short_code": 1})
    terse = b'def f(x):\n    """Frob."""\n    y = x\n    z = y\n    return z\n'
    assert file_pairs("m.py", terse).dropped == Counter({"short_query": 1})


# -- dedup ---------------------------------------------------------------------------------

CODE = "\n".join(f"    total = total + compute_{i}(value, {i}) * scale" for i in range(30))


def test_exact_and_near_duplicates_are_dropped_and_different_code_kept() -> None:
    dedup = Deduper()
    assert dedup.check(CODE) is None
    assert dedup.check(CODE.replace("    ", "\t")) == "duplicate"
    assert dedup.check(CODE.replace("compute_7(", "compute_seven(")) == "near_duplicate"
    assert dedup.check("def other(a):\n    return sorted(set(a), key=len)[::-1]\n") is None
    assert (signature(CODE) == signature(CODE)).all()


# -- hostile archives ----------------------------------------------------------------------


def _hostile_tar(path: Path) -> Path:
    with tarfile.open(path, "w:gz") as tf:

        def add(name: str, data: bytes = b"x = 1\n", **kw: object) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data) if kw.get("type", tarfile.REGTYPE) == tarfile.REGTYPE else 0
            for key, value in kw.items():
                setattr(info, key, value)
            tf.addfile(info, io.BytesIO(data) if info.size else None)

        add("pkg-1.0/ok.py")
        add("pkg-1.0/../../evil.py")
        add("/abs/evil.py")
        add("pkg-1.0/link.py", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        add("pkg-1.0/hard.py", type=tarfile.LNKTYPE, linkname="pkg-1.0/ok.py")
        add("pkg-1.0/fifo.py", type=tarfile.FIFOTYPE)
        add("pkg-1.0/big.py", b"#" * 5000)
        add("pkg-1.0/latin1.py", "é = 1\n".encode("latin-1"))
    return path


def test_hostile_tar_members_are_skipped_with_reasons_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    tar = _hostile_tar(work / "pkg.tar.gz")
    limits = archive.Limits(member_bytes=1000)
    items = list(archive.members(tar, lambda p: True, "first", limits))
    got = {(i.path, i.reason) if isinstance(i, archive.Skip) else (i.path, "ok") for i in items}
    assert got == {
        ("ok.py", "ok"),
        ("latin1.py", "ok"),
        ("pkg-1.0/../../evil.py", "unsafe_path"),
        ("/abs/evil.py", "unsafe_path"),
        ("link.py", "link"),
        ("hard.py", "link"),
        ("fifo.py", "special"),
        ("big.py", "too_large"),
    }
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["pkg.tar.gz", "work"]
    skipped: Counter[str] = Counter()
    files = dict(package.source_files("pypi", tar, heldout.load(), skipped))
    assert list(files) == ["ok.py"]
    assert skipped["not_utf8"] == 1 and skipped["unsafe_path"] == 2 and skipped["link"] == 2


def test_hostile_zip_members_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "m.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("m@v1/ok.go", "package m\n")
        zf.writestr("m@v1/../../evil.go", "package evil\n")
        link = zipfile.ZipInfo("m@v1/link.go")
        link.external_attr = 0o120777 << 16
        zf.writestr(link, "/etc/passwd")
        zf.writestr("m@v1/big.go", "// " + "x" * 5000)
    items = list(archive.members(path, lambda p: True, "go", archive.Limits(member_bytes=1000)))
    reasons = {i.path: i.reason if isinstance(i, archive.Skip) else "ok" for i in items}
    assert reasons == {
        "ok.go": "ok",
        "m@v1/../../evil.go": "unsafe_path",
        "link.go": "link",
        "big.go": "too_large",
    }


def test_a_tarbomb_is_refused_whole(tmp_path: Path) -> None:
    tar = _tar(tmp_path / "bomb.tgz", {f"p/{i}.py": b"0" * 400 for i in range(20)})
    with pytest.raises(archive.ArchiveRefused, match="declared contents"):
        list(archive.members(tar, lambda p: True, "first", archive.Limits(total_bytes=4000)))
    with pytest.raises(archive.ArchiveRefused, match="members"):
        list(archive.members(tar, lambda p: True, "first", archive.Limits(members=5)))
    junk = tmp_path / "junk.tgz"
    junk.write_bytes(b"\x1f\x8b not really gzip")
    with pytest.raises(archive.ArchiveRefused):
        list(archive.members(junk, lambda p: True, "first"))


def test_source_files_skip_tests_vendored_generated_and_minified() -> None:
    keep = ("pkg/core.py", "lib/index.js", "src/a.ts", "x/y.go", "a/B.java")
    assert [sourcefiles.path_reason(p)[0] for p in keep] == [
        "python",
        "javascript",
        "typescript",
        "go",
        "java",
    ]
    for path in (
        "pkg/tests/t.py",
        "test_x.py",
        "x_test.go",
        "a.spec.ts",
        "types.d.ts",
        "dist/index.js",
        "node_modules/a/b.js",
        "a/b.min.js",
        "docs/conf.py",
    ):
        assert sourcefiles.path_reason(path)[1] is not None, path
    assert sourcefiles.path_reason("README.md") == (None, None)
    assert sourcefiles.content_reason(b"// Code generated by x. DO NOT EDIT.\npackage a\n") == (
        "generated"
    )
    assert sourcefiles.content_reason(b"var a=1;" * 1000) == "minified"
    assert sourcefiles.content_reason(b"\xff\xfe bad") == "not_utf8"
    assert sourcefiles.content_reason(b"x = 1\n") is None


# -- split ---------------------------------------------------------------------------------


def test_the_split_is_a_deterministic_hash_of_the_package_about_two_percent_valid() -> None:
    names = [f"package-{i}" for i in range(5000)]
    first = [build_data.split_of("pypi", n) for n in names]
    assert first == [build_data.split_of("pypi", n) for n in names]
    assert 0.01 < first.count("valid") / len(names) < 0.03
    # the package's identity decides, not its spelling or version
    assert build_data.split_of("pypi", "Foo_Bar") == build_data.split_of("pypi", "foo-bar")


def test_round_robin_keeps_every_registry_in_a_limited_run() -> None:
    sources = [
        build_data.Source(r, f"{r}{i}", "1") for r in ("pypi", "npm", "go") for i in range(3)
    ]
    assert [s.registry for s in build_data.round_robin(sources)[:3]] == ["pypi", "npm", "go"]


def test_free_text_licence_names_and_dual_licences_read_as_their_spdx_ids() -> None:
    for text, spdx in [
        ("Apache 2.0 License", "Apache-2.0"),
        ("The MIT Licence", "MIT"),
        ("Apache License, Version 2.0", "Apache-2.0"),
        ("BSD 3-Clause License", "BSD-3-Clause"),
    ]:
        assert licences.from_free_text(text) == spdx, text
    dual = (
        "Metadata-Version: 2.1\nName: a\nLicense: Dual License\n"
        "Classifier: License :: OSI Approved :: Apache Software License\n"
        "Classifier: License :: OSI Approved :: BSD License\n"
    )
    assert licences.from_pkg_info(dual) == "Apache-2.0"
    unknown = "Metadata-Version: 2.1\nName: a\nLicense: Dual License\n"
    assert not licences.allowed(licences.from_pkg_info(unknown))
