"""Which of the repository's Go types reach an *external* interface, from the
conversion facts the parser records (:mod:`semgraph.indexer.go_conv`), so that a call on a
value of that interface (``h.ServeHTTP(w, r)`` with ``h http.Handler``, ``w.Write(b)`` with
``w http.ResponseWriter``) is dispatched in tier ``interface`` to exactly those types' methods.

A type *reaches* an external interface ``pkg.I`` when a value of it is put in a slot whose
declared type is ``pkg.I`` (``pkg`` an import the repository does not hold): an argument of a
function or method of the repository whose parameter at that position is declared ``pkg.I``,
an assignment to a variable or struct field declared ``pkg.I``, a keyed field of a literal of
a struct of the repository, a ``return`` from a function declared to return ``pkg.I``, or one
of the few standard-library slots in :data:`STDLIB_SLOTS` (their signatures are not parsed).
Only the value's own type counts: a type that reaches the slot wrapped in another
(``http.Handle("/", &Wrapper{inner: T{}})``) does not, unless its own field is so declared.
Dispatching to every type with a method of that name would add false edges; so would guessing
a value's type: a value of no known repository type adds nothing. A value put in a slot only
by a ``_test.go`` file exists only in the package's test binary: it reaches the calls of test
files, not those of the package's own code (a test's recorder stored in an ``fmt.State``
field is no candidate for the library's ``fs.Flag``).

The table is global (one pass over every file's facts, once per resolution) and kept in the
resolution's table ``go_reach``, so that an incremental resolution re-resolves the files whose
calls name an interface whose types changed (:mod:`semgraph.resolve.incremental`).

The module is over 300 lines because the slot kinds (arguments, assignments, keyed
fields, returns, the standard-library table) share one reach table and its prefilters.
"""

from __future__ import annotations

import re
import weakref
from typing import Any, ClassVar

from semgraph.model import RETURN
from semgraph.resolve import go_types
from semgraph.resolve.scope import Ctx
from semgraph.resolve.typeexpr import Segment, split_receiver

Iface = tuple[str, str]  # (import path, interface name): ("net/http", "Handler")
TypeRef = go_types.TypeRef
# (import path, function or Type.field, argument position or -1) -> the interface it takes
STDLIB_SLOTS: dict[tuple[str, str, int], Iface] = {
    ("net/http", "Handle", 1): ("net/http", "Handler"),
    ("net/http", "ListenAndServe", 1): ("net/http", "Handler"),
    ("net/http", "ListenAndServeTLS", 3): ("net/http", "Handler"),
    ("net/http", "Serve", 1): ("net/http", "Handler"),
    ("net/http", "StripPrefix", 1): ("net/http", "Handler"),
    ("net/http", "TimeoutHandler", 0): ("net/http", "Handler"),
    ("net/http", "MaxBytesHandler", 0): ("net/http", "Handler"),
    ("net/http", "Server.Handler", -1): ("net/http", "Handler"),
    ("net/http/httptest", "NewServer", 0): ("net/http", "Handler"),
    ("net/http/httptest", "NewTLSServer", 0): ("net/http", "Handler"),
    ("net/http/httptest", "NewUnstartedServer", 0): ("net/http", "Handler"),
}
_FACTS = (  # every conversion fact of the Go files, in a fixed order
    "SELECT t.path, t.scope, t.name, t.kind, t.text, t.line, t.end_line FROM typed_raw t "
    "JOIN files f ON f.path = t.path WHERE f.family = 'go' AND t.name >= '<to:' "
    "AND t.name < '<to;' ORDER BY t.path, t.rowid"
)
_PARAM = "<to:param:"
_ARG = "<to:arg:"
_RET = "<to:ret>"
_QUALIFIED = "SELECT DISTINCT name, text FROM typed_raw WHERE kind = 'type' AND text LIKE '%.%'"
_PKG_TYPE = re.compile(r"^[A-Za-z_]\w*\.[A-Za-z_]\w*$")
_TABLE = "CREATE TABLE IF NOT EXISTS go_reach (iface TEXT, dir TEXT, type TEXT)"
TEST_SUFFIX = "_test.go"  # a file compiled only into the package's test binary
TEST_KEY = "@test"  # go_reach: the types that reach an interface only from test files


class Reach:
    """The external interfaces the repository's Go types reach, over one resolution."""

    _by_typed: ClassVar[weakref.WeakKeyDictionary[Any, Reach]] = weakref.WeakKeyDictionary()

    def __init__(self, typed: Any) -> None:
        self.typed = typed
        self._table: dict[Iface, frozenset[TypeRef]] | None = None
        self._tests: dict[Iface, frozenset[TypeRef]] = {}  # reached only in test files
        self.methods: set[str] | None = None  # the method names of the types that reach one

    @classmethod
    def of(cls, typed: Any) -> Reach:
        """The table of one resolution (its :class:`~semgraph.resolve.typed.TypedNames`)."""
        found = cls._by_typed.get(typed)
        if found is None:
            found = cls._by_typed[typed] = Reach(typed)
        return found

    def table(self) -> dict[Iface, frozenset[TypeRef]]:
        """The types that reach each interface from the package's own (non-test) files."""
        if self._table is None:
            self._table = self._build()
        return self._table

    def reaching(self, iface: Iface, in_test: bool) -> frozenset[TypeRef]:
        """The types a call in a test file (``in_test``) or in a package file may dispatch to:
        a value put in a slot only by a ``_test.go`` file exists only in the test binary, so
        it reaches the calls of test files, not those of the package's own code."""
        found = self.table().get(iface, frozenset())
        return found | self._tests.get(iface, frozenset()) if in_test else found

    def keyed(self) -> dict[str, frozenset[TypeRef]]:
        """The table as kept (``go_reach``): ``path.Name``, and ``path.Name@test`` for the
        types that reach it only from test files."""
        out = {f"{i[0]}.{i[1]}": refs for i, refs in self.table().items()}
        out.update({f"{i[0]}.{i[1]}{TEST_KEY}": refs for i, refs in self._tests.items()})
        return out

    def _build(self) -> dict[Iface, frozenset[TypeRef]]:
        db = self.typed.db
        facts = db.execute(_FACTS).fetchall()
        self.params: dict[tuple[str, str], dict[int, Iface]] = {}
        for path, scope, name, _, text, _, _ in facts:
            where = self._ctx(path, scope) if name.startswith(_PARAM) else None
            iface = external(self.typed, where, text) if where is not None else None
            if iface is not None:  # a parameter declared with an external type
                self.params.setdefault((path, scope), {})[int(name[len(_PARAM) : -1])] = iface
        # (function name, position) of every slot an argument may fill: the rest is skipped
        slots = {(q.rsplit(".", 1)[-1], n) for (_, q), ps in self.params.items() for n in ps}
        slots |= {(k[1], k[2]) for k in STDLIB_SLOTS if k[2] >= 0}
        # names declared `pkg.T` (fields, variables, results): a slot assigned or keyed is
        # evaluated only when its name is one of them
        declared = {n for n, t in db.execute(_QUALIFIED) if _PKG_TYPE.match(t)}
        declared |= {k[1].split(".")[-1] for k in STDLIB_SLOTS if k[2] < 0} | {RETURN}
        found: dict[Iface, set[TypeRef]] = {}
        tests: dict[Iface, set[TypeRef]] = {}
        for path, scope, name, kind, text, line, end in facts:
            if name.startswith(_PARAM) or (name == "<to:ret>" and end):
                continue
            if name.startswith(_ARG):
                position, _, callee = name[len(_ARG) :].partition(">")
                if (callee.rsplit(".", 1)[-1], int(position)) not in slots:
                    continue
            elif name.rsplit(">", 1)[-1].rsplit(".", 1)[-1] not in declared and name != _RET:
                continue
            ctx = self._ctx(path, scope)
            if ctx is None:
                continue
            iface = self._slot(ctx, name, line)
            if iface is None:
                continue
            ref = self._value_type(ctx, kind, text, line)
            if ref is not None:
                (tests if path.endswith(TEST_SUFFIX) else found).setdefault(iface, set()).add(ref)
        extra = {k: frozenset(v - found.get(k, set())) for k, v in sorted(tests.items())}
        self._tests = {k: v for k, v in extra.items() if v}
        return {k: frozenset(v) for k, v in sorted(found.items())}

    def _ctx(self, path: str, scope: str) -> Ctx | None:
        found = self.typed.file_ctx(path)
        if found is None:
            return None
        fscope, f = found
        syms = fscope.by_qn.get(scope) or [fscope.by_key.get(fscope.module_key)]
        return Ctx(fscope, f, syms[0]) if syms and syms[0] is not None else None

    # -- slots -----------------------------------------------------------------------------

    def _slot(self, ctx: Ctx, name: str, line: int) -> Iface | None:
        """The external interface a fact's slot is declared with, if it is one."""
        kind, _, where = name[len("<to:") :].partition(">")
        if kind == "ret":
            texts = [
                t
                for _, k, t in self.typed.bindings(ctx.f.path).get((ctx.src.qn, RETURN), ())
                if k == "type"
            ]
            return external(self.typed, ctx, texts[0]) if texts else None
        if kind == "set":
            return self._declared(ctx, where, line)
        if kind.startswith("key:"):
            return self._keyed(ctx, kind[4:], where)
        if kind.startswith("arg:"):
            return self._argument(ctx, where, int(kind[4:]), line)
        return None

    def _argument(self, ctx: Ctx, callee: str, position: int, line: int) -> Iface | None:
        segs = split_receiver(callee)
        if segs is None:
            return None
        if len(segs) == 2:  # pkg.Func of the standard library
            path = _import_path(ctx, segs[0].name)
            if path is not None:
                return STDLIB_SLOTS.get((path, segs[1].name, position))
        if len(segs) > 1:  # the method or package function itself, not its result
            owner = self.typed.evaluate(ctx, segs[:-1], line, 0)
            value = self.typed.member(owner, segs[-1].name, 0)
        else:
            value = self.typed.evaluate(ctx, segs, line, 0)
        if value[0] != "function":
            return None
        out = {self.params.get(tuple(k.split("|", 2)[1:]), {}).get(position) for k in value[1]}
        return out.pop() if len(out) == 1 else None

    def _declared(self, ctx: Ctx, where: str, line: int) -> Iface | None:
        """The declared type of a variable or a field ``a.b`` assigned to."""
        *prefix, last = where.split(".")
        if not prefix:
            bound = self.typed.local(ctx, last, line)
            return external(self.typed, ctx, bound[1]) if bound and bound[0] == "type" else None
        owner = self.typed.evaluate(ctx, [Segment(p, False) for p in prefix], line, 0)
        if owner[0] != "instance":
            return None
        text, at = go_types._field_type(self.typed, ctx, owner[1], last)
        return external(self.typed, at, text) if text and at else None

    def _keyed(self, ctx: Ctx, lit: str, field: str) -> Iface | None:
        """A keyed field of a literal: of a struct of the repository, or ``http.Server``."""
        name = lit.lstrip("*&")
        head, _, rest = name.partition(".")
        path = _import_path(ctx, head) if rest else None
        if path is not None:
            return STDLIB_SLOTS.get((path, f"{rest}.{field}", -1))
        value = self.typed.value_of_type(ctx, name, 0)
        if value[0] != "instance":
            return None
        text, at = go_types._field_type(self.typed, ctx, value[1], field)
        return external(self.typed, at, text) if text and at else None

    # -- values ----------------------------------------------------------------------------

    def _value_type(self, ctx: Ctx, kind: str, text: str, line: int) -> TypeRef | None:
        """The one concrete Go type of the repository a value is of, else None."""
        if kind == "type":
            value = self.typed.value_of_type(ctx, text, 0)
        else:
            segs = split_receiver(text)
            if segs is None or (kind == "call" and segs[-1].called):
                return None
            if kind == "call":
                segs[-1].called = True
            value = self.typed.evaluate(ctx, segs, line, 0)
        if value[0] != "instance" or len(value[1]) != 1:
            return None
        found = GoTypesRef.of(self.typed, value[1][0])
        return found

    def write(self, db: Any) -> None:
        """Keep the table in the resolution (``go_reach``), in a fixed order."""
        write_keyed(db, self.keyed())


class GoTypesRef:
    """A concrete (non-interface) Go type's reference, from its symbol key."""

    @staticmethod
    def of(typed: Any, key: str) -> TypeRef | None:
        row = typed.db.execute(
            "SELECT s.name, s.kind, f.dir FROM symbols s JOIN files f ON f.path = s.path "
            "WHERE s.key = ? AND f.family = 'go'",
            (key,),
        ).fetchone()
        if row is None or row[1] == "interface":
            return None
        return str(row[2]), str(row[0])


def write_keyed(db: Any, keyed: dict[str, frozenset[TypeRef]]) -> None:
    """Keep a table (:meth:`Reach.keyed`) in the resolution, in a fixed order."""
    db.execute(_TABLE)
    db.execute("DELETE FROM go_reach")
    rows = [(i, d, t) for i, refs in keyed.items() for d, t in sorted(refs)]
    db.executemany("INSERT INTO go_reach VALUES (?,?,?)", rows)


def stored(db: Any) -> dict[str, set[TypeRef]]:
    """The table a resolution kept (empty when it kept none)."""
    db.execute(_TABLE)
    out: dict[str, set[TypeRef]] = {}
    for iface, directory, name in db.execute("SELECT iface, dir, type FROM go_reach"):
        out.setdefault(iface, set()).add((directory, name))
    return out


def changed_names(db: Any, old: dict[str, set[TypeRef]], new: Any) -> set[str]:
    """The names a change of the table (:meth:`Reach.keyed`) touches: each interface whose
    types changed, and every method name (own or promoted) of a type that came or went,
    which the calls it changes name (:mod:`semgraph.resolve.incremental`)."""
    now = {iface: set(refs) for iface, refs in new.items()}
    names: set[str] = set()
    gt = go_types.GoTypes(db)
    own = gt._index()
    for iface in set(old) | set(now):
        moved = old.get(iface, set()) ^ now.get(iface, set())
        if moved:
            names.add(iface.removesuffix(TEST_KEY).rsplit(".", 1)[-1])
        for ref in moved:
            frontier, seen = [ref], set[TypeRef]()
            while frontier and len(seen) < 64:
                cur = frontier.pop()
                if cur in seen:
                    continue
                seen.add(cur)
                names |= set(own.get(cur, {}))
                frontier += [(cur[0], e) for e in gt._embeds.get(cur, ())]
    return names


def _import_path(ctx: Ctx, name: str) -> str | None:
    """The import path of an external package ``name`` in the file of ``ctx``."""
    bound = ctx.scope.binding(name, ctx.src)
    return bound[1] if bound is not None and bound[0] == "external" else None


def external(typed: Any, ctx: Ctx, text: str) -> Iface | None:
    """``pkg.I`` as an interface identity, when ``pkg`` is an external import of ``ctx``."""
    head, dot, name = text.strip().partition(".")
    if not dot or "." in name or not name.isidentifier() or not head.isidentifier():
        return None
    path = _import_path(ctx, head)
    return (path, name) if path is not None else None


def receiver_iface(typed: Any, ctx: Ctx, receiver: str, line: int) -> Iface | None:
    """The external interface a receiver (a local, ``a.b``) is declared with, if any."""
    *prefix, last = receiver.split(".")
    if not last.isidentifier() or not all(p.isidentifier() for p in prefix):
        return None
    if not prefix:
        bound = typed.local(ctx, last, line)
        return external(typed, ctx, bound[1]) if bound and bound[0] == "type" else None
    owner = typed.evaluate(ctx, [Segment(p, False) for p in prefix], line, 0)
    if owner[0] != "instance":
        return None
    text, at = go_types._field_type(typed, ctx, owner[1], last)
    return external(typed, at, text) if text and at else None


def dispatch(typed: Any, ctx: Ctx, receiver: str, callee: str, line: int) -> list[str]:
    """The methods ``callee`` of the types that reach the receiver's external interface
    (the receiver is evaluated only when some type that reaches one has such a method)."""
    reach = Reach.of(typed)
    gt = go_types.GoTypes.of(typed.names)
    if reach.methods is None:
        every = {r for refs in reach.keyed().values() for r in refs}
        reach.methods = {n for n in gt._by_name_index() if gt._types_with(n) & every}
    if callee not in reach.methods:
        return []
    iface = receiver_iface(typed, ctx, receiver, line)
    if iface is None:
        return []
    refs = reach.reaching(iface, ctx.f.path.endswith(TEST_SUFFIX))
    out: list[str] = []
    for ref in sorted(refs):
        out += gt._methods_in(ref, callee, 0)
    out = list(dict.fromkeys(out))
    return out if len(out) <= go_types.MAX_IMPLEMENTATIONS else []
