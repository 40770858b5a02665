"""Go locals and function literals (semgraph.resolve.go_scope, and the lines the parser
records for them, semgraph.indexer.typed): a name declared inside a function literal is in
effect only there, a local only from its declaration on."""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.indexer.extract import ExtractOptions, extract_all, extract_file
from semgraph.model import FileFacts, SkippedFile
from semgraph.resolve.go_scope import in_effect
from semgraph.resolve.resolver import resolve
from semgraph.resolve.tiers import prefer_source

SRC = b"""package app

func Handle(r *Router) {
\tr.HandleFunc("/", func(w Writer, r *Request) {
\t\tr.Parse()
\t\tq := NewQuery()
\t\tq.Run()
\t}).Methods("GET")
\tr.Use(func(r *Request) { r.Parse() })
\tx := new(Thing)
\tvar y = new(pkg.Other)
\tgo func() {
\t\tfor {
\t\t\tz := func(n int) int { return n }
\t\t\t_ = z
\t\t}
\t}()
}
"""


def _bindings() -> dict[tuple[str, int], tuple[str, str, int]]:
    _, _, _, binds, _ = extract_all("app/h.go", "go", SRC)
    return {(b.name, b.line): (b.kind, b.text, b.end) for b in binds if b.scope == "app.h.Handle"}


def test_names_of_a_function_literal_end_with_it() -> None:
    got = _bindings()
    assert got[("r", 3)] == ("type", "*Router", 0)  # the function's own parameter
    # a multi-line literal: from the line after its first to the line before its last
    assert got[("w", 5)] == ("type", "Writer", 7)
    assert got[("r", 5)] == ("type", "*Request", 7)
    assert got[("q", 6)] == ("call", "NewQuery", 7)
    # a one-line literal: that line
    assert got[("r", 9)] == ("type", "*Request", 9)
    # nested literals: the innermost one's lines
    assert got[("z", 14)] == ("name", "", 16)  # the `go func() {...}()` around it
    assert got[("n", 14)] == ("type", "int", 14)


def test_new_gives_a_pointer_to_its_argument() -> None:
    got = _bindings()
    assert got[("x", 10)] == ("type", "Thing", 0)
    assert got[("y", 11)] == ("type", "pkg.Other", 0)


def test_the_binding_in_effect() -> None:
    outer, param, one_line = (3, 0, "type", "*Router"), (5, 7, "type", "*Req"), (9, 9, "type", "*R")
    found = [outer, param, one_line]
    assert in_effect(found, 4) == ("type", "*Router")  # the literal's first line: the outer r
    assert in_effect(found, 5) == ("type", "*Req")
    assert in_effect(found, 7) == ("type", "*Req")
    assert in_effect(found, 8) == ("type", "*Router")  # after the literal
    assert in_effect(found, 9) == ("type", "*R")  # a one-line literal's line: the narrower
    assert in_effect(found, 10) == ("type", "*Router")
    assert in_effect(found, 2) is None  # above every declaration: no local
    assert in_effect([], 5) is None
    later = (6, 0, "call", "Make")  # a redeclaration inside the literal's lines wins after it
    assert in_effect([outer, param, later], 6) == ("call", "Make")


def test_a_literal_at_package_level_bounds_nothing() -> None:
    src = b"package app\n\nvar hs = []H{{F: func(n int) {\n\tv := make()\n\t_ = v\n}}}\n"
    _, _, _, binds, _ = extract_all("app/v.go", "go", src)
    got = {(b.scope, b.name, b.end) for b in binds}
    assert ("app.v", "n", 0) in got and ("app.v", "v", 0) in got  # read as the module's names


CONSTS = b"""package tui

type EventType int

const (
\tRune EventType = iota
\tCtrlA
\tCtrlB
)

const (
\tKB = 1 << 10
\tMB
)

func (t EventType) Byte() byte { return byte(t) }
"""


def test_a_const_block_repeats_its_type() -> None:
    _, _, _, binds, _ = extract_all("tui/tui.go", "go", CONSTS)
    got = {b.name: (b.kind, b.text) for b in binds if b.scope == "tui.tui"}
    assert got["Rune"] == got["CtrlA"] == got["CtrlB"] == ("type", "EventType")
    assert "MB" not in got  # repeats an untyped expression: no type


def test_a_package_constant_is_a_typed_receiver(tmp_path: Path) -> None:
    use = b'package app\n\nimport "x/tui"\n\nfunc F() byte {\n\treturn tui.CtrlA.Byte()\n}\n'
    files: list[FileFacts | SkippedFile] = [
        extract_file("tui/tui.go", CONSTS, ExtractOptions()),
        extract_file("app/app.go", use, ExtractOptions()),
        extract_file("go.mod", b"module x\n\ngo 1.22\n", ExtractOptions()),
    ]
    with resolve(lambda: iter(files), "g", tmp_path / "work") as res:
        edges = {(e.dst_key.split("|")[2], e.tier) for e in res.iter_calls()}
    assert ("tui.tui.EventType.Byte", "receiver") in edges


def test_a_file_built_for_another_platform_yields(tmp_path: Path) -> None:
    unix = b"package util\n\nfunc IsWindows() bool { return false }\n"
    win = b"package util\n\nfunc IsWindows() bool { return true }\n"
    use = b'package app\n\nimport "x/util"\n\nfunc F() bool {\n\treturn util.IsWindows()\n}\n'
    files: list[FileFacts | SkippedFile] = [
        extract_file("util/util_unix.go", unix, ExtractOptions()),
        extract_file("util/util_windows.go", win, ExtractOptions()),
        extract_file("app/app.go", use, ExtractOptions()),
        extract_file("go.mod", b"module x\n\ngo 1.22\n", ExtractOptions()),
    ]
    with resolve(lambda: iter(files), "g", tmp_path / "work") as res:
        edges = {(e.dst_key.split("|")[1], e.tier) for e in res.iter_calls()}
    assert edges == {("util/util_unix.go", "import")}


@pytest.mark.parametrize(
    ("name", "elsewhere"),
    [
        ("util_windows.go", True),
        ("x_arm64.go", True),
        ("x_linux_arm64.go", True),
        ("x_windows_amd64_test.go", True),
        ("x_js.go", True),
        ("x_linux.go", False),
        ("x_linux_amd64.go", False),
        ("x_amd64.go", False),
        ("foo_js_helpers.go", False),  # only the last one or two elements count
        ("util_unix.go", False),  # `unix` is a build tag, not a file-name constraint
    ],
)
def test_go_file_name_constraints(name: str, elsewhere: bool) -> None:
    keys = [f"r|p/{name}|p.F", "r|p/plain.go|p.F"]
    assert prefer_source(keys) == (keys[1:] if elsewhere else keys)
