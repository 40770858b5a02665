"""Incremental resolution equals a full one (issue 25): a Hypothesis state machine edits a
small Python + Go repository of real source text, parses it with the product's extractor,
and after every step compares the incremental resolution (from the previous step's) with a
full resolution of the same tree, table by table and bundle by bundle."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import hypothesis.strategies as st
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.model import FileFacts, FileSummary
from semgraph.resolve import ledger
from semgraph.resolve.compare import differences
from semgraph.resolve.incremental import resolve_incremental
from semgraph.resolve.resolver import resolve

FUNCS = ("f", "g", "make", "get")
CLASSES = ("A", "B", "C")
METHODS = ("go", "run", "stop")
RETURNS = (None, "A", "B", "C", "click.Group")
PARAMS = ("", "x", "x: A", "x, y=1")
STMTS = (
    "f()",
    "g()",
    "A()",
    "B().stop()",
    "make().go()",
    "x = make()\n    x.run()",
    "y: A = get()\n    y.stop()",
    "m0.f()",
    "m1.make()",
    "pkg.m2.g()",
    "C.run(None)",
    # external sites (issue 30): through an import, a value, a class with an imported base
    "click.Group().add_command()",
    "A().add_command()",
    "make().add_command()",
)
SELF_STMTS = (
    "self.go()",
    "self.run()",
    "super().stop()",
    "self.a.go()",
    "self.add_command()",
    "self.a.add_command()",
)
IMPORTS = (
    "from .m0 import A",
    "from .m1 import f",
    "from .m2 import make",
    "from . import m0",
    "import pkg.m1 as m1",
    "from pkg.m2 import *",
    "from pkg import A",
    "from pkg import get",
    "from .m3 import B as C",
    "import click",
    "from click import Group",
)
BASES = ("A", "B", "C", "click.Group", "Group")
REEXPORTS = ("from .m0 import A", "from .m1 import f", "from .m2 import *", "from .m3 import B")
MODULES = ("m0", "m1", "m2", "m3", "m4")
GO_TYPES = ("T", "U")
GO_METHODS = ("Run", "Stop", "Close", "ServeHTTP")
GO_FILES = ("gopkg/a.go", "gopkg/b.go")
GO_MAIN = (
    "var r gopkg.Runner = gopkg.NewT()\n\tr.Run()",
    "t := gopkg.NewT()\n\tt.Stop()",
    "u := &gopkg.U{}\n\tu.Close()",
    "var r gopkg.Runner = nil\n\tr.Stop()",
    "gopkg.Helper()",
    # values of the repository's types reaching an external interface (go_reach)
    "gopkg.Serve(gopkg.NewT())",
    "gopkg.Serve(&gopkg.U{})",
    'http.Handle("/", &gopkg.U{})',
    "var h http.Handler = &gopkg.T{}\n\th.ServeHTTP(nil, nil)",
)
# JS/TS: the entry's export lines (File.reexports follow the files they name) and the files
JS_EXPORTS = (
    "export {f} from './a';",
    "export * from './b';",
    "export default g;",
    "import {h} from './a';\nexport {h as k};",
    "export * as ns from './b';",
)
JS_FILES = {
    "web/a.ts": "export function f() {}\nexport function h() {}\n",
    "web/b.ts": "export class B {\n  run() {}\n}\n",
}
JS_USE = (
    "import d, {x} from 'ext';\nimport * as n from 'ext';\nimport Q from 'ext/sub';\n"
    "export function u() {\n  d();\n  x.y();\n  n.z();\n  new Q().run();\n}\n"
)
SERVE_PARAMS = ("http.Handler", "*T")  # gopkg.Serve's parameter: the interface, or not


def summarised(files: list[FileFacts], loaded: list[str]) -> Iterator[FileSummary]:
    """Each file as a :class:`FileSummary` whose ``load`` records that it was decoded."""
    for f in files:

        def load(f: FileFacts = f) -> FileFacts:
            loaded.append(f.path)
            return f

        yield FileSummary(f.path, f.language, f.parse_status, ledger.row_digest(f), load)


@dataclass
class PyClass:
    bases: list[str] = field(default_factory=list)
    methods: dict[str, tuple[str | None, list[str]]] = field(default_factory=dict)
    attr: str | None = None  # the type of self.a


@dataclass
class PyModule:
    imports: list[str] = field(default_factory=list)
    funcs: dict[str, tuple[str, str | None, list[str]]] = field(default_factory=dict)
    classes: dict[str, PyClass] = field(default_factory=dict)

    def render(self) -> str:
        out = [*self.imports, ""]
        for name, (params, ret, body) in self.funcs.items():
            ann = f" -> {ret}" if ret else ""
            out += [f"def {name}({params}){ann}:", *(f"    {s}" for s in body or ["pass"]), ""]
        for name, cls in self.classes.items():
            out.append(f"class {name}({', '.join(cls.bases)}):" if cls.bases else f"class {name}:")
            if cls.attr:
                out += ["    def __init__(self):", f"        self.a = {cls.attr}()"]
            for meth, (ret, body) in cls.methods.items():
                ann = f" -> {ret}" if ret else ""
                out.append(f"    def {meth}(self){ann}:")
                out += [f"        {s.replace(chr(10), chr(10) + '    ')}" for s in body or ["pass"]]
            out += ["    pass", ""]
        return "\n".join(out) + "\n"


@dataclass
class GoModel:
    iface: list[str] = field(default_factory=lambda: ["Run"])
    methods: dict[tuple[str, str], str] = field(  # (type, name) -> file
        default_factory=lambda: {("T", "ServeHTTP"): "gopkg/a.go", ("U", "ServeHTTP"): "gopkg/b.go"}
    )
    main: list[str] = field(default_factory=lambda: [GO_MAIN[0]])
    serve: str = SERVE_PARAMS[0]

    def render(self) -> dict[str, str]:
        head = "package gopkg\n\n"
        a = head + "type Runner interface {\n" + "".join(f"\t{m}()\n" for m in self.iface) + "}\n"
        a += "\ntype T struct{}\n\nfunc NewT() *T { return &T{} }\n"
        b = head + "type U struct{ t T }\n\nfunc Helper() {}\n"
        web = head + 'import "net/http"\n\n'
        web += f"func Serve(h {self.serve}) {{ h.ServeHTTP(nil, nil) }}\n"
        texts = {"gopkg/a.go": a, "gopkg/b.go": b, "gopkg/web.go": web}
        for (typ, name), path in sorted(self.methods.items()):
            texts[path] += f"\nfunc (x *{typ}) {name}() {{}}\n"
        body = "".join(f"\t{s}\n" for s in self.main)
        texts["cmd/main.go"] = (
            'package main\n\nimport (\n\t"net/http"\n\n\t"example.com/proj/gopkg"\n)\n\n'
            + "func main() {\n"
            + body
            + "}\n"
        )
        texts["go.mod"] = "module example.com/proj\n\ngo 1.22\n"
        return texts


names = st.sampled_from


class IncrementalMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="inc-"))
        self.py: dict[str, PyModule] = {
            "m0": PyModule(funcs={"f": ("", None, ["g()"])}, classes={"A": PyClass()}),
            "m1": PyModule(imports=["from .m0 import A"], funcs={"make": ("", "A", ["A()"])}),
        }
        self.init = PyModule(imports=["from .m0 import A"])
        self.go = GoModel()
        self.js_exports = [JS_EXPORTS[0]]
        self.js_files = set(JS_FILES)
        self.step = 0
        self.cache: Path | None = None

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _files(self) -> list[FileFacts]:
        texts = {f"pkg/{m}.py": mod.render() for m, mod in self.py.items()}
        texts["pkg/__init__.py"] = self.init.render()
        texts["main.py"] = "import pkg\nfrom pkg.m1 import make\n\nmake().go()\npkg.A().run()\n"
        texts |= self.go.render()
        texts["web/index.ts"] = "function g() {}\n" + "\n".join(self.js_exports) + "\n"
        texts |= {path: JS_FILES[path] for path in self.js_files} | {"web/use.ts": JS_USE}
        opts = ExtractOptions()
        return [extract_file(p, t.encode(), opts) for p, t in sorted(texts.items())]

    # -- Python ---------------------------------------------------------------------------

    @rule(
        m=names(MODULES),
        name=names(FUNCS),
        params=names(PARAMS),
        ret=names(RETURNS),
        body=st.lists(names(STMTS), max_size=2),
    )
    def add_function(
        self, m: str, name: str, params: str, ret: str | None, body: list[str]
    ) -> None:
        self.py.setdefault(m, PyModule()).funcs[name] = (params, ret, body)

    @rule(m=names(MODULES), name=names(FUNCS + CLASSES))
    def remove_definition(self, m: str, name: str) -> None:
        mod = self.py.get(m)
        if mod is not None:
            mod.funcs.pop(name, None)
            mod.classes.pop(name, None)

    @rule(m=names(MODULES), name=names(FUNCS), params=names(PARAMS), ret=names(RETURNS))
    def change_signature(self, m: str, name: str, params: str, ret: str | None) -> None:
        mod = self.py.get(m)
        if mod is not None and name in mod.funcs:
            mod.funcs[name] = (params, ret, mod.funcs[name][2])

    @rule(m=names(MODULES), name=names(FUNCS), body=st.lists(names(STMTS), max_size=3))
    def edit_body(self, m: str, name: str, body: list[str]) -> None:
        mod = self.py.get(m)
        if mod is not None and name in mod.funcs:
            params, ret, _ = mod.funcs[name]
            mod.funcs[name] = (params, ret, body)

    @rule(
        m=names(MODULES),
        name=names(CLASSES),
        bases=st.lists(names(BASES), max_size=2),
        attr=names(RETURNS),
    )
    def set_class(self, m: str, name: str, bases: list[str], attr: str | None) -> None:
        cls = self.py.setdefault(m, PyModule()).classes.setdefault(name, PyClass())
        cls.bases = [b for b in dict.fromkeys(bases) if b != name]
        cls.attr = attr

    @rule(
        m=names(MODULES),
        name=names(CLASSES),
        meth=names(METHODS),
        ret=names(RETURNS),
        body=st.lists(names(STMTS + SELF_STMTS), max_size=2),
        drop=st.booleans(),
    )
    def set_method(
        self, m: str, name: str, meth: str, ret: str | None, body: list[str], drop: bool
    ) -> None:
        cls = self.py.get(m, PyModule()).classes.get(name)
        if cls is None:
            return
        if drop:
            cls.methods.pop(meth, None)
        else:
            cls.methods[meth] = (ret, body)

    @rule(m=names(MODULES), line=names(IMPORTS), drop=st.booleans())
    def set_import(self, m: str, line: str, drop: bool) -> None:
        mod = self.py.setdefault(m, PyModule())
        if drop and line in mod.imports:
            mod.imports.remove(line)
        elif not drop and line not in mod.imports:
            mod.imports.append(line)

    @rule(line=names(REEXPORTS), drop=st.booleans())
    def set_reexport(self, line: str, drop: bool) -> None:
        if drop and line in self.init.imports:
            self.init.imports.remove(line)
        elif not drop and line not in self.init.imports:
            self.init.imports.append(line)

    @rule(src=names(MODULES), dst=names(MODULES))
    def move_file(self, src: str, dst: str) -> None:
        if src in self.py and dst not in self.py:
            self.py[dst] = self.py.pop(src)

    # -- Go -------------------------------------------------------------------------------

    @rule(typ=names(GO_TYPES), name=names(GO_METHODS), path=names(GO_FILES), drop=st.booleans())
    def go_method(self, typ: str, name: str, path: str, drop: bool) -> None:
        if drop:
            self.go.methods.pop((typ, name), None)
        else:
            self.go.methods[(typ, name)] = path

    @rule(methods=st.lists(names(GO_METHODS), min_size=1, max_size=3, unique=True))
    def go_interface(self, methods: list[str]) -> None:
        self.go.iface = methods

    @rule(param=names(SERVE_PARAMS))
    def go_serve(self, param: str) -> None:
        self.go.serve = param

    @rule(body=st.lists(names(GO_MAIN), min_size=1, max_size=3))
    def go_main(self, body: list[str]) -> None:
        self.go.main = body

    # -- JS/TS ----------------------------------------------------------------------------

    @rule(line=names(JS_EXPORTS), drop=st.booleans())
    def js_export(self, line: str, drop: bool) -> None:
        if drop and line in self.js_exports:
            self.js_exports.remove(line)
        elif not drop and line not in self.js_exports:
            self.js_exports.append(line)

    @rule(path=names(sorted(JS_FILES)), present=st.booleans())
    def js_file(self, path: str, present: bool) -> None:
        self.js_files = self.js_files | {path} if present else self.js_files - {path}

    # -- the check ------------------------------------------------------------------------

    @invariant()
    def incremental_equals_full(self) -> None:
        files = self._files()
        self.step += 1
        work = self.tmp / f"s{self.step}"
        full = resolve(lambda: iter(files), "r", work / "full")
        loaded: list[str] = []  # every file comes as a summary, as parse-cache hits do
        inc = resolve_incremental(
            lambda: iter(files),
            "r",
            work / "inc",
            self.cache,
            max_fraction=1.0,
            summaries=lambda: summarised(files, loaded),
            consume=True,
        )
        try:
            assert self.cache is None or inc.incremental["mode"] == "incremental", inc.incremental
            if self.cache is not None:  # only the files whose row digest changed are decoded
                assert len(loaded) == inc.incremental["files_changed"], (loaded, inc.incremental)
                assert not self.cache.exists()  # consumed: moved into the job, not copied
            diffs = differences(inc, full)
            assert diffs == [], "\n".join(diffs)
            # the scenario is not empty: calls resolve, classes inherit
            assert full.total_calls > 0
        finally:
            full.close()
            inc.close()
        self.cache = self.tmp / f"cache{self.step}.sqlite"
        shutil.copyfile(work / "inc" / "symtab.sqlite", self.cache)
        shutil.rmtree(work)


IncrementalMachine.TestCase.settings = settings(
    max_examples=30,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestIncremental = IncrementalMachine.TestCase


# -- the cache never decides the answer: every unusable one is a full resolve -------------

SMALL = {
    "pkg/__init__.py": "from .a import f\n",
    "pkg/a.py": "def f():\n    return g()\n\n\ndef g():\n    return 1\n",
    "main.py": "from pkg import f\n\nf()\n",
}


def _parse(texts: dict[str, str]) -> list[FileFacts]:
    return [extract_file(p, t.encode(), ExtractOptions()) for p, t in sorted(texts.items())]


def _cached(tmp_path: Path) -> Path:
    files = _parse(SMALL)
    resolve(lambda: iter(files), "r", tmp_path / "first").close()
    return tmp_path / "first" / "symtab.sqlite"


def _again(
    tmp_path: Path,
    texts: dict[str, str],
    cache: Path,
    *,
    repo: str = "r",
    tag: str = "",
    max_fraction: float = 0.3,
) -> dict[str, object]:
    files = _parse(texts)
    inc = resolve_incremental(
        lambda: iter(files), repo, tmp_path / "inc", cache, tag=tag, max_fraction=max_fraction
    )
    full = resolve(lambda: iter(files), "r", tmp_path / "full")
    try:
        if inc.repo_key == "r":
            assert differences(inc, full) == []
        return inc.incremental
    finally:
        inc.close()
        full.close()


def test_a_body_change_resolves_one_file(tmp_path: Path) -> None:
    cache = _cached(tmp_path)
    texts = {**SMALL, "pkg/a.py": SMALL["pkg/a.py"].replace("return 1", "return g() + 1")}
    info = _again(tmp_path, texts, cache, max_fraction=1.0)  # 1 of 3 files: over 0.3
    assert info["mode"] == "incremental" and info["files_resolved"] == 1


def test_a_corrupt_cache_is_a_full_resolve(tmp_path: Path) -> None:
    cache = tmp_path / "junk.sqlite"
    cache.write_bytes(b"no database here" * 64)
    info = _again(tmp_path, SMALL, cache)
    assert info["mode"] == "full" and "unreadable" in str(info["reason"])


def test_a_foreign_or_stale_cache_is_a_full_resolve(tmp_path: Path) -> None:
    cache = _cached(tmp_path)
    info = _again(tmp_path, SMALL, cache, repo="other")
    assert info["mode"] == "full" and "another repository" in str(info["reason"])
    info = _again(tmp_path, SMALL, cache, tag="another parser")
    assert info["mode"] == "full" and "version" in str(info["reason"])


def test_packaging_and_threshold_fall_back(tmp_path: Path) -> None:
    cache = _cached(tmp_path)
    texts = {**SMALL, "pyproject.toml": '[tool.setuptools.packages.find]\nwhere = ["src"]\n'}
    info = _again(tmp_path, texts, cache)
    assert info["mode"] == "full" and "packaging" in str(info["reason"])
    texts = {**SMALL, "pkg/a.py": "def f():\n    return 2\n"}
    info = _again(tmp_path, texts, cache, max_fraction=0.0)
    assert info["mode"] == "full" and "changed" in str(info["reason"])


def _facts(files: dict[str, str]) -> list[FileFacts]:
    return [extract_file(p, t.encode(), ExtractOptions()) for p, t in sorted(files.items())]


def test_a_member_is_looked_up_through_the_bases_in_their_written_order(tmp_path: Path) -> None:
    """``class C(B, Z)`` finds ``m`` through ``B`` first, as a full resolve does, also when
    the cached resolution's index on (child, parent) would list ``Z``'s key first (found on
    sympy: ``Function(Application, Expr)``)."""
    files = {  # B's key sorts after Z's: only the written order puts B first
        "pkg/__init__.py": "",
        "pkg/a.py": "class A:\n    def m(self):\n        pass\n",
        "pkg/zb.py": "from pkg.a import A\n\n\nclass B(A):\n    pass\n",
        "pkg/az.py": "class Z:\n    def m(self):\n        pass\n",
        "pkg/c.py": (
            "from pkg.zb import B\nfrom pkg.az import Z\n\n\nclass C(B, Z):\n"
            "    def run(self):\n        self.m()\n"
        ),
    }
    with resolve(lambda: iter(_facts(files)), "r", tmp_path / "base"):
        pass
    edited = {**files, "pkg/c.py": files["pkg/c.py"] + "        self.m()\n"}
    cache = tmp_path / "base" / "symtab.sqlite"
    with (
        resolve_incremental(lambda: iter(_facts(edited)), "r", tmp_path / "inc", cache) as inc,
        resolve(lambda: iter(_facts(edited)), "r", tmp_path / "full") as full,
    ):
        assert differences(inc, full) == []
        edges = inc.table.db.execute("SELECT dst_key FROM call_edges").fetchall()
        assert {e[0] for e in edges} == {"r|pkg/a.py|pkg.a.A.m"}


def test_a_go_method_in_another_file_changes_the_interfaces_its_type_implements() -> None:
    """Found by the state machine: ``T.Run`` added in ``b.go`` (``T`` is declared in ``a.go``)
    makes ``T`` implement ``Runner``, so ``r.Stop()`` on a ``gopkg.Runner`` now dispatches
    to ``T.Stop``; the incremental resolve must re-resolve that call although ``Stop`` did
    not change."""
    machine = IncrementalMachine()
    try:
        machine.incremental_equals_full()
        machine.go_main(body=["var r gopkg.Runner = nil\n\tr.Stop()"])
        machine.incremental_equals_full()
        machine.go_method(typ="T", name="Stop", path="gopkg/a.go", drop=False)
        machine.incremental_equals_full()
        machine.go_method(typ="T", name="Run", path="gopkg/b.go", drop=False)
        machine.incremental_equals_full()  # failed: cmd/main.go's bundle kept the old answer
        machine.go_method(typ="T", name="Run", path="gopkg/b.go", drop=True)
        machine.incremental_equals_full()
    finally:
        machine.teardown()


def test_a_star_re_export_added_re_resolves_the_files_using_its_names(tmp_path: Path) -> None:
    """``from .m2 import *`` added to ``pkg/__init__.py`` brings ``A``: main.py's
    ``pkg.A()`` resolves again though it spells neither ``m2`` nor ``*`` (found by the state
    machine above; before, main.py kept its stale answer)."""
    base = {
        "pkg/m2.py": "def f():\n    g()\n\n\nclass A:\n    pass\n",
        "pkg/__init__.py": "from .m0 import A\n",
        "main.py": "import pkg\n\npkg.A().run()\n",
    }
    cache = tmp_path / "first"
    files = _parse(base)
    resolve(lambda: iter(files), "r", cache).close()
    star = dict(base, **{"pkg/__init__.py": "from .m0 import A\nfrom .m2 import *\n"})
    got = _again(tmp_path, star, cache / "symtab.sqlite", max_fraction=1.0)
    assert got["mode"] == "incremental" and int(str(got["files_resolved"])) >= 2


def test_a_class_named_by_a_return_type_re_resolves_the_callers_of_the_function(
    tmp_path: Path,
) -> None:
    """``make() -> C`` before any class ``C``: ``make().go()`` in main.py is an untyped
    expression; a class ``C`` added to m1 makes it a ``C`` (no member ``go``), though
    main.py spells no ``C`` and ``make``'s text did not change (found by the state machine)."""
    before = {
        "pkg/__init__.py": "",
        "pkg/m1.py": "def make() -> C:\n    pass\n",
        "main.py": "from pkg.m1 import make\n\nmake().go()\n",
        "other.py": "def x():\n    pass\n",
    }
    files = _parse(before)
    resolve(lambda: iter(files), "r", tmp_path / "first").close()
    after = {**before, "pkg/m1.py": before["pkg/m1.py"] + "\n\nclass C:\n    pass\n"}
    info = _again(tmp_path, after, tmp_path / "first" / "symtab.sqlite", max_fraction=1.0)
    assert info["mode"] == "incremental" and info["files_resolved"] == 2  # m1.py, main.py
