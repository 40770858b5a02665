"""TypeScript and JavaScript calls with evidence (issue 44): default and CommonJS imports,
typed receivers (annotations, parameter properties, constructor assignments, JSDoc), platform
globals as external, a name alone as a candidate, declaration files never over the source. The
real parser and resolver, no servers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.indexer.jsdoc import MAX_COMMENT, clean
from semgraph.model import FileFacts, SkippedFile
from semgraph.resolve.resolution import Resolution
from semgraph.resolve.resolver import resolve

SOURCES = {
    "src/client.ts": """\
import Headers from './headers.js';
import { helper } from './util.js';
import got from 'got';

export interface Options { headers: Headers }

export class Client {
  headers: Headers;
  private extra: Headers;
  constructor(private readonly base: Headers, opts: Options) {
    this.headers = new Headers();
    this.extra = base;
  }
  send(h: Headers): void {
    h.set('a', 'b');
    this.headers.has('x');
    this.extra.get('y');
    this.base.get('z');
    const copy = Headers.from({});
    copy.get('q');
    got.get('http://x');
    Buffer.from('abc');
    JSON.parse('{}');
    helper();
  }
  make(): Headers { return new Headers(); }
  chain(): void { this.make().get('a'); }
  fact(n: number): number { return n <= 1 ? 1 : n * this.fact(n - 1); }
}

export function recurse(n: number): number { return n ? recurse(n - 1) : 0; }

export async function load(): Promise<Headers> {
  const r = await build<Map<string, Headers>>();
  return new Headers();
}
export async function build<T>(): Promise<T> { return null as any; }
""",
    "src/headers.d.ts": """\
export declare class Headers {
  get(name: string): string | undefined;
}
export default Headers;
""",
    "src/headers.ts": """\
export class Headers {
  private map = new Map<string, string>();
  get(name: string): string | undefined { return this.map.get(name); }
  set(name: string, value: string): this { this.map.set(name, value); return this; }
  has(name: string): boolean { return this.map.has(name); }
  static from(init: Record<string, string>): Headers { const h = new Headers(); return h; }
}
export default Headers;
""",
    "src/helpers.js": """\
function helper2() { return 2; }
module.exports = { helper2 };
""",
    "src/legacy.js": """\
const Thing = require('./thing');
const { helper2 } = require('./helpers');

/**
 * @param {Thing} t a thing
 * @returns {Thing}
 */
function useThing(t) {
  t.run();
  return t;
}

/** @type {Thing} */
let cached = null;

function go() {
  const x = new Thing();
  x.run();
  helper2();
  cached.run();
  useThing(x).run();
  ky.get('/');
}
module.exports = { useThing, go };
""",
    "src/thing.js": """\
class Thing {
  constructor() { this.parts = new Map(); }
  run() { return this.parts.size; }
}
module.exports = Thing;
""",
    "src/util.ts": """\
export function helper(): void {}
export function customGet(): void {}
export const customFetch = { get() { return 1; } };
""",
    "test/t.ts": """\
import { customFetch } from '../src/util.js';
export const something = 1;
function t(): void { customFetch.get(); }
""",
}


Sites = dict[tuple[str, int, str], set[tuple[str, str, int]]]


def _resolve(tmp_path: Path, sources: dict[str, str]) -> Resolution:
    files: list[FileFacts | SkippedFile] = [
        extract_file(path, text.encode(), ExtractOptions()) for path, text in sources.items()
    ]
    return resolve(lambda: iter(files), "fx", tmp_path / "work")


@pytest.fixture
def sites(tmp_path: Path) -> Iterator[Sites]:
    """(path, line, callee) -> {(target qualified name, tier, candidates)}."""
    with _resolve(tmp_path, SOURCES) as res:
        out: Sites = {}
        for path, line, callee, dst, tier, n in res.table.db.execute(
            "SELECT s.path, e.line, d.name, d.qn, e.tier, e.candidates FROM call_edges e "
            "JOIN symbols s ON s.key = e.src_key JOIN symbols d ON d.key = e.dst_key"
        ):
            out.setdefault((path, line, callee), set()).add((dst, tier, n))
        yield out


def _one(sites: Sites, path: str, line: int, name: str) -> tuple[str, str]:
    found = sites.get((path, line, name), set())
    assert len(found) == 1, (path, line, name, found)
    dst, tier, _ = next(iter(found))
    return dst, tier


def test_default_import_and_typed_receivers(sites: Sites) -> None:
    c = "src/client.ts"
    assert _one(sites, c, 11, "Headers") == ("src.headers.Headers", "import")  # new, default
    assert _one(sites, c, 15, "set") == ("src.headers.Headers.set", "receiver")  # h: Headers
    assert _one(sites, c, 16, "has") == ("src.headers.Headers.has", "receiver")  # field
    assert _one(sites, c, 17, "get") == ("src.headers.Headers.get", "receiver")  # this.x = p
    assert _one(sites, c, 18, "get") == ("src.headers.Headers.get", "receiver")  # private base
    assert _one(sites, c, 19, "from") == ("src.headers.Headers.from", "import")  # static
    assert _one(sites, c, 20, "get") == ("src.headers.Headers.get", "receiver")  # its result
    assert _one(sites, c, 27, "get") == ("src.headers.Headers.get", "receiver")  # make().get
    assert _one(sites, c, 28, "fact") == ("src.client.Client.fact", "receiver")  # recursion
    assert _one(sites, c, 31, "recurse") == ("src.client.recurse", "module")
    assert _one(sites, c, 34, "build") == ("src.client.build", "module")  # await f<T<U>>()


def test_platform_globals_and_packages_are_external(sites: Sites) -> None:
    c = "src/client.ts"
    for line, name in ((21, "get"), (22, "from"), (23, "parse")):  # got.get, Buffer, JSON
        assert (c, line, name) not in sites


def test_commonjs_and_jsdoc(sites: Sites) -> None:
    js = "src/legacy.js"
    assert _one(sites, js, 17, "Thing") == ("src.thing.Thing", "import")  # module.exports = C
    assert _one(sites, js, 18, "run") == ("src.thing.Thing.run", "receiver")  # new (require)
    assert _one(sites, js, 19, "helper2") == ("src.helpers.helper2", "import")  # {a} = require
    assert _one(sites, js, 9, "run") == ("src.thing.Thing.run", "receiver")  # @param {Thing}
    assert _one(sites, js, 20, "run") == ("src.thing.Thing.run", "receiver")  # @type {Thing}
    assert _one(sites, js, 21, "run") == ("src.thing.Thing.run", "receiver")  # @returns


def test_a_name_alone_is_a_candidate(tmp_path: Path, sites: Sites) -> None:
    # ky.get(): nothing says what ky is; customFetch.get(): a value, no class
    for path, line in (("src/legacy.js", 22), ("test/t.ts", 3)):
        assert {(t, n) for _, t, n in sites[(path, line, "get")]} == {("ambiguous", 2)}
    only = {
        "src/util.ts": "export function helper(): void {}\n",
        "src/use.ts": "export function f() {\n  api.helper();\n  helper();\n}\n",
    }
    with _resolve(tmp_path / "only", only) as res:
        edges = {(e.tier, e.candidates) for e in res.iter_calls()}
        assert edges == {("ambiguous", 1)}  # both: the only `helper`, never resolved
        assert res.ambiguous_counts == {"name_only": 2}
        assert res.counts["calls"]["resolved"] == 0


def test_declaration_files_never_beat_the_source(tmp_path: Path) -> None:
    src = {
        "lib/box.ts": "export class Box { open(): void {} }\n",
        "lib/box.d.ts": "export declare class Box { open(): void; }\n",
        "app.ts": "function f() { const b = new Box(); }\n",  # no import: the name only
    }
    with _resolve(tmp_path, src) as res:
        targets = {e.dst_key.split("|")[1] for e in res.iter_calls()}
        assert targets == {"lib/box.ts"}


def test_c_and_php_bare_names_stay_resolved(tmp_path: Path) -> None:
    src = {
        "a.c": "int helper(int x) { return x; }\n",
        "b.c": "int main(void) { return helper(1); }\n",
    }
    with _resolve(tmp_path, src) as res:
        assert {(e.tier, e.candidates) for e in res.iter_calls()} == {("unique", 1)}


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("Thing", "Thing"),
        ("?Thing", "Thing"),
        ("Thing=", "Thing"),
        ("(Thing|null)", "Thing"),
        ("Thing | undefined", "Thing"),
        ("Promise<Thing>", "Promise<Thing>"),
        ("ns.Thing", "ns.Thing"),
        ("A|B", None),
        ("Thing[]", None),
        ("Array<Thing>", None),
        ("import('./x').Thing", None),
        ("function(string): number", None),
        ("{a: number}", None),
        ("", None),
        ("*", None),
    ],
)
def test_jsdoc_types(raw: str, want: str | None) -> None:
    assert clean(raw) == want


def test_hostile_jsdoc_is_bounded(tmp_path: Path) -> None:
    huge = "/**\n" + " * @param {Thing} t\n" * 50_000 + " */\nfunction f(t) { t.run(); }\n"
    broken = "/** @param {Thing t\n@returns {{{ */\nfunction g(t) { t.run(); }\n"
    facts = extract_file("h.js", huge.encode(), ExtractOptions())
    assert isinstance(facts, FileFacts) and len(facts.bindings) < 10
    assert len(huge) > MAX_COMMENT
    facts = extract_file("b.js", broken.encode(), ExtractOptions())
    assert {(b.name, b.kind) for b in facts.bindings} == {("t", "name")}  # no type read


def test_export_star_never_reexports_a_default(tmp_path: Path) -> None:
    src = {
        "core/request.ts": "export default class Request { send(): void {} }\n",
        "index.ts": (
            "import create from './create.js';\nexport * from './core/request.js';\n"
            "const got = create();\nexport default got;\n"
        ),
        "create.ts": "export default function create(): any { return null; }\n",
        "use.ts": "import got from './index.js';\nfunction f() {\n  got('x');\n}\n",
    }
    with _resolve(tmp_path, src) as res:
        targets = {e.dst_key.split("|")[2] for e in res.iter_calls() if e.line == 3}
        # got is a value the call of create() made (a function's result): no class, no edge
        assert "core.request.Request" not in {t for t in targets}


def test_a_helper_returning_its_local_types_the_caller(tmp_path: Path) -> None:
    src = {
        "lib/cmd.js": "class Command {\n  opts() { return 1; }\n}\nmodule.exports = { Command };\n",
        "test/t.js": (
            "const { Command } = require('../lib/cmd.js');\n"
            "function makeProgram() {\n  const program = new Command();\n  return program;\n}\n"
            "function t() {\n  const program = makeProgram();\n  program.opts();\n"
            "  [1].map((x) => { return new Command(); });\n}\n"
        ),
    }
    with _resolve(tmp_path, src) as res:
        got = {(e.line, e.dst_key.split("|")[2], e.tier) for e in res.iter_calls()}
    assert (8, "lib.cmd.Command.opts", "receiver") in got
    binds = extract_file("test/t.js", src["test/t.js"].encode(), ExtractOptions()).bindings
    returns = {(b.scope, b.kind, b.text) for b in binds if b.name == "<return>"}
    # the callback's `return new Command()` is the callback's, not t's
    assert returns == {("test.t.makeProgram", "call", "Command")}


def test_a_jvm_package_spans_its_source_roots(tmp_path: Path) -> None:
    src = {
        "src/main/java/a/b/Repo.java": "package a.b;\npublic class Repo { void save() {} }\n",
        "src/test/java/a/b/RepoTest.java": (
            "package a.b;\nclass RepoTest {\n  void t() {\n    Repo r = new Repo();\n"
            "    r.save();\n    new Repo().save();\n  }\n}\n"
        ),
        "src/test/java/x/b/Other.java": "package x.b;\nclass Other { void t() { new Repo(); } }\n",
    }
    with _resolve(tmp_path, src) as res:
        got = {
            (e.src_key.split("|")[1], e.line, e.dst_key.split("|")[2], e.tier)
            for e in res.iter_calls()
        }
    t = "src/test/java/a/b/RepoTest.java"
    repo = "src.main.java.a.b.Repo.Repo"
    assert {(t, 4, repo, "module"), (t, 5, f"{repo}.save", "receiver")} <= got
    assert (t, 6, f"{repo}.save", "receiver") in got  # new Repo().save()
    # another package names Repo without an import: a candidate only
    assert ("src/test/java/x/b/Other.java", 2, repo, "ambiguous") in got


def test_recursion_and_calls_of_arrow_functions(tmp_path: Path) -> None:
    src = {
        "a.ts": (
            "export function outer(n: number): number {\n"
            "  function walk(k: number): number { return k ? walk(k - 1) : 0; }\n"
            "  return walk(n);\n}\n"
            "export const fib = (n: number): number => (n < 2 ? n : fib(n - 1));\n"
            "const helper = () => 1;\nexport function use() {\n  return helper();\n}\n"
        )
    }
    with _resolve(tmp_path, src) as res:
        got = {(e.line, e.dst_key.split("|")[2], e.tier) for e in res.iter_calls()}
    assert {(2, "a.outer.walk", "scope"), (5, "a.fib", "module"), (8, "a.helper", "module")} <= got


def test_commonjs_export_chains(tmp_path: Path) -> None:
    src = {
        "index.js": "'use strict';\nmodule.exports = require('./lib/express');\n",
        "lib/express.js": (
            "exports = module.exports = createApplication;\n"
            "function createApplication() { return 1; }\n"
        ),
        "test/support/utils.js": "exports.skip = skip\nfunction skip(v) { return v; }\n",
        "test/a.js": (
            "var express = require('../');\nvar skip = require('./support/utils').skip\n"
            "var utils = require('./support/utils');\nvar other = require('./support/utils').nope\n"
            "function t() {\n  express();\n  skip(1);\n  utils.skip(2);\n  other();\n}\n"
        ),
    }
    with _resolve(tmp_path, src) as res:
        got = {(e.line, e.dst_key.split("|")[2], e.tier) for e in res.iter_calls()}
    assert got == {
        (6, "lib.express.createApplication", "import"),  # require("../") -> index.js -> lib
        (7, "test.support.utils.skip", "import"),  # const f = require("m").f
        (8, "test.support.utils.skip", "import"),
    }  # `other`: a name the module does not export, no edge
