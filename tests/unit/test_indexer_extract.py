"""Extraction: exact symbols, imports and call sites per language (tree-sitter, in process)."""

from __future__ import annotations

import pytest

from semgraph.indexer.extract import ExtractOptions, blob_sha, extract_file, failed_file
from semgraph.model import FileFacts

SOURCES = {
    "a.py": '''\
"""Module doc."""
import os.path as osp, sys
from .util import helper, other as o
from pkg import *


class Base:
    pass


class Repo(Base, metaclass=Meta):
    """A repo."""

    def run(self, x):
        """Run it."""
        self.fetch(x)
        helper(osp.join("a", "b"))

    @property
    def name(self):
        def inner():
            return len(self.x)
        return inner()


def main():
    Repo().run(1)
''',
    "b.ts": """\
import fs from "fs";
import * as path from "path";
import { a, b as c } from "./util";
import "./side";
const lib = require("lib");

/** A service. */
export class Service extends Base implements IFoo {
  // runs things
  run(x: number): void {
    this.repo.save(x);
    helper();
  }
}

export interface IFoo { run(x: number): void; }
export enum Color { Red, Green }
export const handler = (req: Req) => {
  return new Service();
};
function top() { fs.readFileSync("x"); }
""",
    "c.go": """\
package main

import (
	"fmt"
	str "strings"
)

// Server serves.
type Server struct {
	name string
}

type Runner interface {
	Run() error
}

// Run runs the server.
func (s *Server) Run() error {
	fmt.Println(str.ToUpper(s.name))
	return helper()
}

func helper() error { return nil }
""",
    "D.java": """\
package com.example;

import java.util.List;
import java.util.*;
import static org.junit.Assert.assertEquals;

/** Greeter greets. */
public class Greeter extends Base implements Runnable, Closeable {
    private final List<String> names;

    /** Build one. */
    public Greeter() { this.names = new ArrayList<>(); }

    @Override
    public void run() {
        System.out.println(greet("x"));
        names.add("y");
    }

    String greet(String n) { return n; }

    interface Inner { void go(); }
    enum Mode { A, B }
}
""",
    "e.rs": """\
use std::collections::{HashMap, HashSet as Set};
use crate::util;
use super::model::*;

/// A point.
#[derive(Debug)]
pub struct Point { x: i32 }

pub enum Shape { Circle }

pub trait Area { fn area(&self) -> f64; }

impl Point {
    /// Make one.
    pub fn new(x: i32) -> Self { Point { x } }
    fn norm(&self) -> i32 { self.x.abs() }
}

impl Area for Point {
    fn area(&self) -> f64 { 0.0 }
}

fn main() {
    let p = Point::new(1);
    println!("{}", p.norm());
    helper(p);
}

mod tests {
    fn t() { super::main(); }
}
""",
    "f.c": """\
#include <stdio.h>
#include "util.h"

/* A node. */
struct node { int v; struct node *next; };

enum color { RED, GREEN };

static char *name(struct node *n) {
    return fmt(n->v);
}

int main(void) {
    printf("%s\\n", name(NULL));
    ops->run(1);
    return 0;
}
""",
    "g.cpp": """\
#include <vector>
#include "widget.hpp"

namespace app {

// A widget.
class Widget : public Base {
public:
    void draw() const { render(this); }
    int size();
};

int Widget::size() { return items.size(); }

}  // namespace app

struct Pt { int x; };

int main() {
    auto w = new app::Widget();
    std::sort(v.begin(), v.end());
    w->draw();
}
""",
    "bad.py": """\
def ok():
    return 1

def broken(:
    pass

class After:
    def m(self):
        ok()
""",
}

# (kind, qualified name, start, end, parent) per symbol
SYMBOLS = {
    "a.py": [
        ("class", "pkg.a.Base", 7, 8, None),
        ("class", "pkg.a.Repo", 11, 23, None),
        ("method", "pkg.a.Repo.run", 14, 17, "pkg.a.Repo"),
        ("method", "pkg.a.Repo.name", 19, 23, "pkg.a.Repo"),
        ("function", "pkg.a.Repo.name.inner", 21, 22, "pkg.a.Repo.name"),
        ("function", "pkg.a.main", 26, 27, None),
    ],
    "b.ts": [
        ("class", "pkg.b.Service", 8, 14, None),
        ("method", "pkg.b.Service.run", 10, 13, "pkg.b.Service"),
        ("interface", "pkg.b.IFoo", 16, 16, None),
        ("enum", "pkg.b.Color", 17, 17, None),
        ("function", "pkg.b.handler", 18, 20, None),
        ("function", "pkg.b.top", 21, 21, None),
    ],
    "c.go": [
        ("struct", "pkg.c.Server", 9, 11, None),
        ("interface", "pkg.c.Runner", 13, 15, None),
        ("method", "pkg.c.Server.Run", 18, 21, "pkg.c.Server"),
        ("function", "pkg.c.helper", 23, 23, None),
    ],
    "D.java": [
        ("class", "pkg.D.Greeter", 8, 24, None),
        ("method", "pkg.D.Greeter.Greeter", 12, 12, "pkg.D.Greeter"),
        ("method", "pkg.D.Greeter.run", 14, 18, "pkg.D.Greeter"),
        ("method", "pkg.D.Greeter.greet", 20, 20, "pkg.D.Greeter"),
        ("interface", "pkg.D.Greeter.Inner", 22, 22, "pkg.D.Greeter"),
        ("method", "pkg.D.Greeter.Inner.go", 22, 22, "pkg.D.Greeter.Inner"),
        ("enum", "pkg.D.Greeter.Mode", 23, 23, "pkg.D.Greeter"),
    ],
    "e.rs": [
        ("struct", "pkg.e.Point", 7, 7, None),
        ("enum", "pkg.e.Shape", 9, 9, None),
        ("trait", "pkg.e.Area", 11, 11, None),
        ("method", "pkg.e.Area.area", 11, 11, "pkg.e.Area"),
        ("method", "pkg.e.Point.new", 15, 15, "pkg.e.Point"),
        ("method", "pkg.e.Point.norm", 16, 16, "pkg.e.Point"),
        ("method", "pkg.e.Point.area", 20, 20, "pkg.e.Point"),
        ("function", "pkg.e.main", 23, 27, None),
        ("function", "pkg.e.tests.t", 30, 30, None),
    ],
    "f.c": [
        ("struct", "pkg.f.node", 5, 5, None),
        ("enum", "pkg.f.color", 7, 7, None),
        ("function", "pkg.f.name", 9, 11, None),
        ("function", "pkg.f.main", 13, 17, None),
    ],
    "g.cpp": [
        ("class", "pkg.g.app.Widget", 7, 11, None),
        ("method", "pkg.g.app.Widget.draw", 9, 9, "pkg.g.app.Widget"),
        ("method", "pkg.g.app.Widget.size", 13, 13, "pkg.g.app.Widget"),
        ("struct", "pkg.g.Pt", 17, 17, None),
        ("function", "pkg.g.main", 19, 23, None),
    ],
    "bad.py": [
        ("function", "pkg.bad.ok", 1, 2, None),
        ("function", "pkg.bad.broken", 4, 5, None),
        ("class", "pkg.bad.After", 7, 9, None),
        ("method", "pkg.bad.After.m", 8, 9, "pkg.bad.After"),
    ],
}

# (module, names, alias, line) per import
IMPORTS = {
    "a.py": [
        ("os.path", [], "osp", 2),
        ("sys", [], None, 2),
        (".util", ["helper"], None, 3),
        (".util", ["other"], "o", 3),
        ("pkg", ["*"], None, 4),
    ],
    "b.ts": [
        ("fs", ["default"], "fs", 1),
        ("path", [], "path", 2),
        ("./util", ["a"], None, 3),
        ("./util", ["b"], "c", 3),
        ("./side", [], None, 4),
        ("lib", [], "lib", 5),
    ],
    "c.go": [
        ("fmt", [], None, 4),
        ("strings", [], "str", 5),
    ],
    "D.java": [
        ("java.util", ["List"], None, 3),
        ("java.util", ["*"], None, 4),
        ("org.junit.Assert", ["assertEquals"], None, 5),
    ],
    "e.rs": [
        ("std::collections", ["HashMap"], None, 1),
        ("std::collections", ["HashSet"], "Set", 1),
        ("crate", ["util"], None, 2),
        ("super::model", ["*"], None, 3),
    ],
    "f.c": [
        ("stdio.h", [], None, 1),
        ("util.h", [], None, 2),
    ],
    "g.cpp": [
        ("vector", [], None, 1),
        ("widget.hpp", [], None, 2),
    ],
    "bad.py": [],
}

# (enclosing, callee, receiver, line) per call site
CALLS = {
    "a.py": [
        ("pkg.a.Repo.run", "fetch", "self", 16),
        ("pkg.a.Repo.run", "helper", None, 17),
        ("pkg.a.Repo.run", "join", "osp", 17),
        ("pkg.a.Repo.name.inner", "len", None, 22),
        ("pkg.a.Repo.name", "inner", None, 23),
        ("pkg.a.main", "Repo", None, 27),
        ("pkg.a.main", "run", "Repo()", 27),
    ],
    "b.ts": [
        ("pkg.b", "require", None, 5),
        ("pkg.b.Service.run", "save", "this.repo", 11),
        ("pkg.b.Service.run", "helper", None, 12),
        ("pkg.b.handler", "Service", None, 19),
        ("pkg.b.top", "readFileSync", "fs", 21),
    ],
    "c.go": [
        ("pkg.c.Server.Run", "Println", "fmt", 19),
        ("pkg.c.Server.Run", "ToUpper", "str", 19),
        ("pkg.c.Server.Run", "helper", None, 20),
    ],
    "D.java": [
        ("pkg.D.Greeter.Greeter", "ArrayList", None, 12),
        ("pkg.D.Greeter.run", "println", "System.out", 16),
        ("pkg.D.Greeter.run", "greet", None, 16),
        ("pkg.D.Greeter.run", "add", "names", 17),
    ],
    "e.rs": [
        ("pkg.e.Point.norm", "abs", "self.x", 16),
        ("pkg.e.main", "new", "Point", 24),
        ("pkg.e.main", "helper", None, 26),
        ("pkg.e.tests.t", "main", "super", 30),
    ],
    "f.c": [
        ("pkg.f.name", "fmt", None, 10),
        ("pkg.f.main", "printf", None, 14),
        ("pkg.f.main", "name", None, 14),
        ("pkg.f.main", "run", "ops", 15),
    ],
    "g.cpp": [
        ("pkg.g.app.Widget.draw", "render", None, 9),
        ("pkg.g.app.Widget.size", "size", "items", 13),
        ("pkg.g.main", "sort", "std", 21),
        ("pkg.g.main", "begin", "v", 21),
        ("pkg.g.main", "end", "v", 21),
        ("pkg.g.main", "draw", "w", 22),
    ],
    "bad.py": [
        ("pkg.bad.After.m", "ok", None, 9),
    ],
}


LANGUAGES = {
    "a.py": "python",
    "b.ts": "typescript",
    "c.go": "go",
    "D.java": "java",
    "e.rs": "rust",
    "f.c": "c",
    "g.cpp": "cpp",
    "bad.py": "python",
}


def _facts(name: str) -> FileFacts:
    return extract_file("pkg/" + name, SOURCES[name].encode(), ExtractOptions())


@pytest.mark.parametrize("name", list(SOURCES))
def test_symbols_imports_calls_exact(name: str) -> None:
    facts = _facts(name)
    assert facts.language == LANGUAGES[name]
    assert [
        (s.kind, s.qualified_name, s.start_line, s.end_line, s.parent) for s in facts.symbols
    ] == SYMBOLS[name]
    assert [(i.module, i.names, i.alias, i.start_line) for i in facts.imports] == IMPORTS[name]
    assert [(c.enclosing, c.callee, c.receiver, c.line) for c in facts.calls] == CALLS[name]


@pytest.mark.parametrize("name", [n for n in SOURCES if n != "bad.py"])
def test_clean_files_are_ok(name: str) -> None:
    facts = _facts(name)
    assert facts.parse_status == "ok"
    assert facts.parse_error is None


def test_syntax_error_is_partial_and_keeps_what_was_recovered() -> None:
    facts = _facts("bad.py")
    assert facts.parse_status == "partial"
    assert facts.parse_error == "syntax error near line 4"
    assert [s.name for s in facts.symbols] == ["ok", "broken", "After", "m"]


def test_signatures_docstrings_bases() -> None:
    by_qn = {s.qualified_name: s for s in _facts("a.py").symbols}
    repo = by_qn["pkg.a.Repo"]
    assert repo.signature == "class Repo(Base, metaclass=Meta)"
    assert repo.docstring == "A repo."
    assert repo.bases == ["Base"]
    assert by_qn["pkg.a.Repo.run"].signature == "def run(self, x)"
    assert by_qn["pkg.a.Repo.run"].docstring == "Run it."
    java = {s.qualified_name: s for s in _facts("D.java").symbols}
    assert java["pkg.D.Greeter"].bases == ["Base", "Runnable", "Closeable"]
    assert java["pkg.D.Greeter"].docstring == "Greeter greets."
    assert java["pkg.D.Greeter.Greeter"].docstring == "Build one."
    go = {s.qualified_name: s for s in _facts("c.go").symbols}
    assert go["pkg.c.Server.Run"].signature == "func (s *Server) Run() error"
    assert go["pkg.c.Server.Run"].docstring == "Run runs the server."
    rust = {s.qualified_name: s for s in _facts("e.rs").symbols}
    assert rust["pkg.e.Point"].docstring == "A point."  # through #[derive]
    assert rust["pkg.e.Point.new"].signature == "pub fn new(x: i32) -> Self"
    ts = {s.qualified_name: s for s in _facts("b.ts").symbols}
    assert ts["pkg.b.Service"].bases == ["Base", "IFoo"]
    assert ts["pkg.b.Service"].docstring == "A service."
    cpp = {s.qualified_name: s for s in _facts("g.cpp").symbols}
    assert cpp["pkg.g.app.Widget"].bases == ["Base"]
    assert cpp["pkg.g.app.Widget"].docstring == "A widget."


def test_tsx_and_javascript() -> None:
    tsx = b"import React from 'react';\nexport function App() { return <div>{render()}</div>; }\n"
    facts = extract_file("web/App.tsx", tsx, ExtractOptions())
    assert facts.language == "tsx"
    assert facts.parse_status == "ok"
    assert [(s.kind, s.qualified_name) for s in facts.symbols] == [("function", "web.App.App")]
    assert [(c.enclosing, c.callee) for c in facts.calls] == [("web.App.App", "render")]
    js = b"const x = require('./x');\nclass A { m() { x.go(); } }\nfunction f() { new A().m(); }\n"
    facts = extract_file("lib/a.js", js, ExtractOptions())
    assert [(s.kind, s.qualified_name, s.parent) for s in facts.symbols] == [
        ("class", "lib.a.A", None),
        ("method", "lib.a.A.m", "lib.a.A"),
        ("function", "lib.a.f", None),
    ]
    assert [(i.module, i.alias) for i in facts.imports] == [("./x", "x")]
    assert [(c.enclosing, c.callee, c.receiver) for c in facts.calls] == [
        ("lib.a", "require", None),
        ("lib.a.A.m", "go", "x"),
        ("lib.a.f", "A", None),
        ("lib.a.f", "m", "new A()"),
    ]


def test_text_files_are_chunked_only() -> None:
    md = b"# Title\n\nSome words.\n\n## Part\n\nMore words.\n"
    facts = extract_file("docs/README.md", md, ExtractOptions())
    assert facts.language == "markdown"
    assert facts.parse_status == "text"
    assert facts.symbols == [] and facts.imports == [] and facts.calls == []
    assert [c.text for c in facts.chunks] == [md.decode().rstrip("\n")]
    assert facts.line_count == 7


def test_blob_sha_matches_git() -> None:
    # `printf 'hello\n' | git hash-object --stdin`
    assert blob_sha(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_undecodable_bytes_do_not_break_extraction() -> None:
    data = b"def f():\n    return '\xff\xfe'\n"
    facts = extract_file("x.py", data, ExtractOptions())
    assert [s.name for s in facts.symbols] == ["f"]
    assert "\ufffd" in facts.chunks[0].text


def test_deeply_nested_hostile_input_is_bounded() -> None:
    data = b"x = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\n" + b"f(" * 2000 + b"\n"
    facts = extract_file("deep.py", data, ExtractOptions())
    assert facts.parse_status in {"ok", "partial"}
    assert all(len(c.text) <= 2400 for c in facts.chunks)


def test_failed_file_is_plain_text_chunks() -> None:
    facts = failed_file(
        "x.py", b"def f():\n    pass\n", "child crashed (SIGSEGV)", ExtractOptions()
    )
    assert facts.parse_status == "parse_failed"
    assert facts.parse_error == "child crashed (SIGSEGV)"
    assert facts.symbols == []
    assert [c.text for c in facts.chunks] == ["def f():\n    pass"]


@pytest.mark.parametrize("language", ["javascript", "typescript", "tsx"])
def test_js_exports_a_name_lookup_does_not_find(language: str) -> None:
    src = (
        "export default async function pLocate(a) {}\n"
        "export {a as b, c};\n"
        "export {x as y, default as z} from './z.js';\n"
        "export * from './w.js';\n"
        "export * as ns from './n.js';\n"
        "export const k = 1;\n"  # found by its name: no row
        "module.exports = parse;\n"
        "export default function () {}\n"  # anonymous: nothing to name
        "export {q} from '';\n"  # hostile: an empty source
        "export default new Discarder();\n"  # an instance: its members are the class's
    )
    ext = {"javascript": "js", "typescript": "ts", "tsx": "tsx"}[language]
    facts = extract_file(f"m.{ext}", src.encode(), ExtractOptions())
    assert [(e.module, e.names, e.alias, e.start_line) for e in facts.exports] == [
        ("", ["pLocate"], "default", 1),
        ("", ["a"], "b", 2),
        ("", ["c"], "c", 2),
        ("./z.js", ["x"], "y", 3),
        ("./z.js", ["default"], "z", 3),
        ("./w.js", ["*"], "*", 4),
        ("./n.js", ["*"], "ns", 5),
        ("", ["parse"], "default", 7),
        ("", ["Discarder"], "default", 10),
    ]
    # ``export ... from`` is also the file's dependency on that module (it binds no name)
    assert [(i.module, i.names) for i in facts.imports] == [
        ("./z.js", ["*"]),
        ("./w.js", ["*"]),
        ("./n.js", ["*"]),
    ]
