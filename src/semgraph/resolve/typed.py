"""Receiver types for call resolution: what a receiver expression (``x``, ``self.attr``,
``a.b()``, ``super()``, ``pkg.Thing``) evaluates to, from the typed names the parser found
(:class:`semgraph.model.Binding`, table ``typed_raw``), the file's imports and the symbol
table. The ``receiver`` tier (:mod:`semgraph.resolve.tiers`) asks :meth:`TypedNames.receiver`.

A value is one of:

* ``("instance", keys)`` / ``("class", keys)``: an object of, or the class itself, one of the
  repository's classes (the keys; several only when the same type is named by several);
* ``("function", keys)``: a function of the repository (calling it gives its return type);
* ``("module", (kind\\0target,))``: an imported module of the repository (called: its export);
* ``("external", ())``: something outside the repository (an external import, a builtin);
  where known, the import and path it names (:mod:`semgraph.resolve.external_values`);
* ``("unknown", ())``: a local, a parameter or an attribute whose type nothing states.

Everything is looked up lazily and cached per file. The module is over 300 lines: evaluation
is one recursive walk (roots, members, calls, return types, attributes through bases).
Language rules are kept to a few places (:func:`semgraph.resolve.typeexpr.clean_type`,
:data:`SELF_ROOTS`); a language that needs more (Go interface dispatch) extends
:meth:`TypedNames.value_of_type` or :meth:`TypedNames.member`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from semgraph.model import RETURN
from semgraph.resolve import external_values as ext
from semgraph.resolve import go_scope, go_types
from semgraph.resolve.builtins import BUILTIN_CALLS, BUILTIN_RECEIVERS
from semgraph.resolve.decorators import decorated
from semgraph.resolve.imports import MEMBER_SEP, ImportFile
from semgraph.resolve.python_types import element, is_pytest, pytest_fixture
from semgraph.resolve.scope import Ctx, FileScope, NameLookups, Sym
from semgraph.resolve.symtab import CLASS_KINDS
from semgraph.resolve.typeexpr import Segment, clean_type, split_receiver

Value = tuple[str, tuple[str, ...]]
UNKNOWN, EXTERNAL = ext.UNKNOWN, ext.EXTERNAL
SELF_ROOTS = frozenset({"self", "this", "cls", "$this"})
SUPER_ROOTS = frozenset({"super", "base", "parent"})
# families whose files see their package's (directory's) definitions without an import
PACKAGE_SCOPED = frozenset({"java", "kotlin", "scala", "csharp"})
# families whose methods see their class's fields without `this.` (Java `repo.save()`)
IMPLICIT_THIS = frozenset({"java", "kotlin", "scala", "csharp", "c", "swift"})
# Rust's Option/Result methods that give the wrapped value (clean_type reads Result<T> as T)
RUST_UNWRAP = frozenset({"unwrap", "expect", "unwrap_or_default", "as_ref", "as_mut", "clone"})
MAX_DEPTH = 8  # nested evaluations (a return type naming a call naming a return type...)
_FILE_CACHE = 64


class TypedNames:
    """Evaluates receivers of one resolution; caches the files it reads."""

    def __init__(self, db: Any, names: NameLookups) -> None:
        self.db = db
        self.names = names
        self._scopes: OrderedDict[str, tuple[FileScope, ImportFile]] = OrderedDict()
        self._typed: OrderedDict[str, dict[tuple[str, str], list[tuple[int, str, str]]]] = (
            OrderedDict()
        )
        self.made: dict[str, Value | None] = {}  # decorators.decorated, per function
        self.decorating: dict[str, bool] = {}

    # -- files ------------------------------------------------------------------------------

    def file_ctx(self, path: str) -> tuple[FileScope, ImportFile] | None:
        hit = self._scopes.get(path)
        if hit is None:
            row = self.db.execute(
                "SELECT path, module, language, family, dir FROM files WHERE path = ?", (path,)
            ).fetchone()
            if row is None:
                return None
            hit = (FileScope(self.db, path), ImportFile(*row))
            self._scopes[path] = hit
            if len(self._scopes) > _FILE_CACHE:
                self._scopes.popitem(last=False)
        return hit

    def use_scope(self, scope: FileScope, f: ImportFile) -> None:
        """Share the resolver's scope of the file being resolved."""
        self._scopes[f.path] = (scope, f)

    def bindings(self, path: str) -> dict[tuple[str, str], list[tuple[int, str, str]]]:
        hit = self._typed.get(path)
        if hit is None:
            hit = {}
            for scope, name, kind, text, line in self.db.execute(
                "SELECT scope, name, kind, text, line FROM typed_raw WHERE path = ? "
                "AND end_line = 0 AND NOT (name >= '<to:' AND name < '<to;') ORDER BY line",
                (path,),
            ):
                hit.setdefault((scope, name), []).append((line, kind, text))
            self._typed[path] = hit
            if len(self._typed) > _FILE_CACHE:
                self._typed.popitem(last=False)
        return hit

    # -- entry points ------------------------------------------------------------------------

    def receiver(
        self, scope: FileScope, f: ImportFile, src: Sym, receiver: str, line: int
    ) -> tuple[Value, bool] | None:
        """(value of ``receiver``, whether its root is a name the file declares: self, super,
        a parameter, a local or a module-level variable); None when it cannot be split."""
        segs = split_receiver(receiver)
        if segs is None:
            return None
        ctx = Ctx(scope, f, src)
        root = segs[0]
        local = root.name in SELF_ROOTS or root.name in SUPER_ROOTS
        local = local or self.local(ctx, root.name, line) is not None
        local = local or (scope.module_qn, root.name) in self.bindings(f.path)
        return self.evaluate(ctx, segs, line, 0), local

    def local(self, ctx: Ctx, name: str, line: int) -> tuple[str, str] | None:
        """(kind, text) of ``name``'s binding in the enclosing functions (not the module),
        or a field of the enclosing class where fields need no ``this.``: the last one at or
        before ``line``, else the first."""
        typed = self.bindings(ctx.f.path)
        for sym in ctx.scope.ancestors(ctx.src):
            if sym.parent_key is None:
                break
            if sym.kind in CLASS_KINDS and ctx.f.family not in IMPLICIT_THIS:
                continue
            found = typed.get((sym.qn, name))
            if ctx.f.family == go_types.GO:  # declared before use; function literals' names
                return go_scope.local_at(self, ctx, sym.qn, name, found, line)
            if found:
                return _at(found, line)
        return None

    # -- evaluation ----------------------------------------------------------------------------

    def evaluate(self, ctx: Ctx, segs: list[Segment], line: int, depth: int) -> Value:
        if depth > MAX_DEPTH:
            return UNKNOWN
        value = self.root(ctx, segs[0], line, depth)
        if segs[0].called and value[0] != "super":
            value = self.call(value, depth)
        for seg in segs[1:]:
            if value[0] == "external":  # click.Group(...).name: kept for the link
                value = ext.member(value, seg.name)
                value = ext.call(value) if seg.called else value
                continue
            if value[0] == "unknown":
                return value
            owner = value[0]
            if ctx.f.family == "rust" and seg.name in RUST_UNWRAP:
                continue  # x.unwrap(), x?: the wrapped value (Option<T>/Result<T> read as T)
            value = self.member(value, seg.name, depth)
            if seg.called:
                value = self.call(value, depth)
            elif owner == "instance" and value[0] == "function":
                value = self.call(value, depth)  # app.config.x(): a property's return type
        return value

    def root(self, ctx: Ctx, seg: Segment, line: int, depth: int) -> Value:
        name = seg.name
        if name in SUPER_ROOTS and (seg.called or ctx.f.family != "python"):
            cls = self.enclosing_class(ctx)
            if cls is None:
                return UNKNOWN
            parents = self.parents(cls)
            return ("super", tuple(parents)) if parents else EXTERNAL
        if name in SELF_ROOTS:
            cls = self.enclosing_class(ctx)
            if cls is None:
                return UNKNOWN
            kind = "class" if name == "cls" else "instance"
            return (kind, (cls,))
        bound = self.local(ctx, name, line)
        if bound == ("name", "") and ctx.f.family == "python" and is_pytest(ctx.f.path):
            fixture = pytest_fixture(self, ctx, name, depth)  # a test's parameter: its fixture
            if fixture != UNKNOWN:
                return fixture
        if bound is None:
            found = self.bindings(ctx.f.path).get((ctx.scope.module_qn, name))
            bound = _at(found, line) if found else None
        if bound is not None:
            return self.value_of_binding(ctx, bound, depth)
        return self.named(ctx, name, seg.called)

    def named(self, ctx: Ctx, name: str, called: bool) -> Value:
        """A name that is not a typed local: a definition in scope, an import, a builtin."""
        for sym in ctx.scope.ancestors(ctx.src):
            if sym.kind in CLASS_KINDS and sym.parent_key is not None:
                continue
            found = ctx.scope.by_qn.get(f"{sym.qn}.{name}")
            if found:
                return self.of_symbols([s.key for s in found])
        bound = self.names.bound(ctx.scope, name, ctx.f.family, ctx.src)
        if bound is not None:
            if bound[0] == "external":
                return ext.imported(ctx.scope, name, ctx.src)
            if bound[0] == "module":
                return ("module", tuple(bound[1]))
            return self.of_symbols(bound[1])
        target = ctx.scope.binding(name, ctx.src)
        if target is not None and target[0] == "member":  # an imported module-level value
            path, member = target[1].split(MEMBER_SEP, 1)
            return self.module_value(path, member, 0)
        value = self.package_value(ctx, name)
        if value is not None:
            return value
        fam = ctx.f.family
        if name in BUILTIN_CALLS.get(fam, ()) or name in BUILTIN_RECEIVERS.get(fam, ()):
            return EXTERNAL
        return UNKNOWN

    def package_value(self, ctx: Ctx, name: str) -> Value | None:
        """A name of the file's package, visible there without an import."""
        fam = ctx.f.family
        if fam == go_types.GO:  # the package's files see its names (types, funcs, vars)
            return go_types.package_name(self, ctx, name)
        if fam in PACKAGE_SCOPED:  # Java & co.: the package's classes
            same = self.names.package_level(ctx.f.dir, name, fam, tuple(sorted(CLASS_KINDS)))
            return self.of_symbols(same) if same else None
        return None

    def of_symbols(self, keys: list[str]) -> Value:
        keys = list(dict.fromkeys(keys))
        if not keys:
            return UNKNOWN
        kinds = {self.kind(k) for k in keys}
        if kinds <= CLASS_KINDS:
            return ("class", tuple(keys))
        if kinds <= {"function", "method"}:
            made = {decorated(self, k) for k in keys} if kinds == {"function"} else {None}
            if len(made) > 1:  # some made into objects by their decorators, some not
                return UNKNOWN
            return made.pop() or ("function", tuple(keys))
        return UNKNOWN

    def value_of_binding(self, ctx: Ctx, bound: tuple[str, str], depth: int) -> Value:
        kind, text = bound
        if kind == "type":
            return self.value_of_type(ctx, text, depth)
        if kind in ("elem", "part") and ctx.f.family == "python":  # for x in xs; a, b = t
            return element(self, ctx, text, depth, kind == "part")
        if kind == "elem":  # Go `for _, v := range xs`: an element of xs
            found = go_types.indexed(self, ctx, f"{text}[0]", ctx.src.end, depth + 1)
            return found or UNKNOWN
        if kind == "value":  # Go `f := pkg.Func`: what the expression names
            named = split_receiver(text)
            return UNKNOWN if named is None else self.evaluate(ctx, named, ctx.src.end, depth + 1)
        if kind == "call":
            segs = split_receiver(text)
            if segs is None or segs[-1].called:
                return UNKNOWN
            segs[-1].called = True
            return self.evaluate(ctx, segs, ctx.src.end, depth + 1)
        return UNKNOWN

    def value_of_type(self, ctx: Ctx, text: str, depth: int) -> Value:
        """An instance of the class a type expression names, seen from ``ctx``."""
        name = clean_type(text)
        if name is None:
            return UNKNOWN
        if name in ("Self", "typing.Self", "this"):  # TS `): this`
            cls = self.enclosing_class(ctx)
            return ("instance", (cls,)) if cls else UNKNOWN
        segs = [Segment(part, False) for part in name.split(".")]
        value = self.evaluate(ctx, segs, ctx.src.end, depth + 1)
        if value[0] == "module":  # {Thing}, Thing = require("./thing")
            value = self.of_symbols(self.names.js_default(value[1][0]))
        if value[0] == "class":
            return ("instance", value[1])
        return ext.instance(value) if value[0] == "external" else UNKNOWN

    def call(self, value: Value, depth: int) -> Value:
        kind, keys = value
        if kind == "class":
            return ("instance", keys)
        if kind == "function":
            return ext.one(self.returns(k, depth) for k in keys)
        if kind == "external":
            return ext.call(value)
        if kind == "module":  # a CommonJS module called
            return self.call(self.of_symbols(self.names.js_default(keys[0])), depth)
        return UNKNOWN

    def returns(self, key: str, depth: int) -> Value:
        """The value a call of function ``key`` returns, from its declared type or its
        ``return Cls(...)``."""
        row = self.db.execute("SELECT path FROM symbols WHERE key = ?", (key,)).fetchone()
        found = self.file_ctx(row[0]) if row is not None else None
        if found is None:
            return UNKNOWN
        scope, f = found
        sym = scope.by_key.get(key)
        if sym is None:
            return UNKNOWN
        binds = self.bindings(f.path).get((sym.qn, RETURN))
        if not binds:
            return UNKNOWN
        ctx = Ctx(scope, f, sym)
        typed = [b for b in binds if b[1] == "type"] or binds
        return ext.one(self.value_of_binding(ctx, (k, t), depth + 1) for _, k, t in typed)

    def member(self, value: Value, name: str, depth: int) -> Value:
        """``value.name``: an attribute or method of a class, a module's top-level name."""
        kind, keys = value
        if kind == "module":
            mkind, target = keys[0].split(MEMBER_SEP, 1)
            fam = self.family_of(mkind, target)
            found = self.names.top_level(mkind, target, name, fam)
            if found:
                return self.of_symbols(found)
            if mkind != "file":  # a Go package's variable or constant (tui.Esc.Byte())
                return go_types.package_member(self, target, name, fam, depth)
            sub = self.db.execute(  # pkg.sub: a submodule of the package
                "SELECT s.path FROM files m JOIN files s ON s.module = m.module || '.' || ? "
                "AND s.family = m.family WHERE m.path = ? LIMIT 2",
                (name, target),
            ).fetchall()
            if len(sub) == 1:
                return ("module", (f"file{MEMBER_SEP}{sub[0][0]}",))
            return self.module_value(target, name, depth)
        if kind not in ("instance", "class", "super"):
            return UNKNOWN
        methods = [m for c in keys for m in self.names.members(c, name)]
        if methods:
            return self.of_symbols(methods)
        return ext.one(self.attribute(c, name, depth, 0) for c in keys)

    def attribute(self, cls: str, name: str, depth: int, up: int) -> Value:
        """The type of attribute ``name`` of class ``cls`` (or of its bases)."""
        row = self.db.execute("SELECT path, qn FROM symbols WHERE key = ?", (cls,)).fetchone()
        if row is None or depth > MAX_DEPTH:
            return UNKNOWN
        binds = self.bindings(row[0]).get((row[1], name))
        found = self.file_ctx(row[0])
        if binds and found is not None:
            scope, f = found
            sym = scope.by_key.get(cls)
            if sym is not None:
                ctx = Ctx(scope, f, sym)
                for kind in ("type", "call"):
                    for _, k, t in binds:
                        if k == kind:
                            value = self.value_of_binding(ctx, (k, t), depth + 1)
                            if value != UNKNOWN:
                                return value
            return UNKNOWN
        if up < 4:
            for parent in self.parents(cls):
                value = self.attribute(parent, name, depth, up + 1)
                if value != UNKNOWN:
                    return value
        return UNKNOWN

    def module_value(self, path: str, name: str, depth: int) -> Value:
        """A module-level typed name of another file (``from app.cfg import settings``)."""
        found = self.file_ctx(path)
        if found is None:
            return UNKNOWN
        scope, f = found
        binds = self.bindings(path).get((scope.module_qn, name))
        module = scope.by_key.get(scope.module_key)
        if not binds or module is None:
            return UNKNOWN
        return self.value_of_binding(Ctx(scope, f, module), _at(binds, 1 << 30), depth + 1)

    # -- small lookups -----------------------------------------------------------------------

    def enclosing_class(self, ctx: Ctx) -> str | None:
        cls = next((s for s in ctx.scope.ancestors(ctx.src) if s.kind in CLASS_KINDS), None)
        return cls.key if cls is not None else None

    def parents(self, cls: str) -> list[str]:
        sql = "SELECT parent_key FROM inherits WHERE child_key = ? ORDER BY rowid"
        return [r[0] for r in self.db.execute(sql, (cls,))]

    def kind(self, key: str) -> str:
        row = self.db.execute("SELECT kind FROM symbols WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row is not None else ""

    def family_of(self, kind: str, target: str) -> str:
        column = "path" if kind == "file" else "dir"
        row = self.db.execute(  # a package directory's code, not its go.mod or README
            f"SELECT family FROM files WHERE {column} = ? ORDER BY code DESC, path LIMIT 1",
            (target,),
        ).fetchone()
        return str(row[0]) if row is not None else ""


def _at(found: list[tuple[int, str, str]], line: int) -> tuple[str, str]:
    """The binding in effect at ``line``: the last one at or before it, else the first."""
    best = found[0]
    for entry in found:
        if entry[0] <= line:
            best = entry
    return best[1], best[2]
