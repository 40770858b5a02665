"""Go's rules for receiver types, used by :mod:`semgraph.resolve.typed`,
:mod:`semgraph.resolve.scope` and :mod:`semgraph.resolve.tiers` where Go differs.

* A type's methods may be declared in any file of its package: ``func (s *Server) Handle()``
  in ``handler.go`` is a method of ``Server`` of ``server.go`` (its qualified name is the
  file's module, the receiver type and the name; its parent is the file when the type is
  declared elsewhere). :meth:`GoTypes.methods` finds them by that name.
* A package's other files see its top-level names without an import (:meth:`GoTypes.package_name`:
  types, functions, package-level variables).
* A call on a value of an interface type is **interface dispatch**: the candidates are the
  methods of that name of every Go type of the repository whose methods include each method
  the interface declares (the query records an interface's methods as untyped names in its
  scope). Such a call is resolved in tier :data:`INTERFACE_TIER` with an edge to every
  implementation (``candidates`` = their number); an interface no type of the repository
  implements gives none (the call stays unresolved: the value comes from outside).

* A struct's embedded fields of its own package (``type IntegerNode struct { base }``, the
  field named by its type) promote their methods: they are members of the struct and count
  towards the interfaces it implements. Embedded types of other packages and embedded
  interfaces are not followed.

The module is over 300 lines because Go's receiver evaluation (selectors, calls,
indexes, ranges, conversions) shares one depth-bounded walk.
"""

from __future__ import annotations

import re
import weakref
from typing import Any, ClassVar

from semgraph.model import RETURN
from semgraph.resolve.typeexpr import Segment, split_receiver

GO = "go"
INTERFACE_TIER = "interface"  # the tier of a call dispatched through an interface
MAX_IMPLEMENTATIONS = 50  # more and the call is not a dispatch worth listing: none
MAX_EMBED_DEPTH = 3
MAX_NESTING = 8  # as semgraph.resolve.typed.MAX_DEPTH: nested evaluations of one receiver

_ALL_METHODS = (  # (dir, receiver type, name, key) of every Go method
    "SELECT f.dir, substr(s.qn, length(f.module) + 2, length(s.qn) - length(f.module) "
    "- length(s.name) - 2), s.name, s.key FROM symbols s JOIN files f ON f.path = s.path "
    "WHERE f.family = 'go' AND s.kind = 'method' ORDER BY s.key"
)
_EMBEDDINGS = (  # (dir, struct scope, file module, embedded type) of every embedded field
    "SELECT DISTINCT f.dir, t.scope, f.module, t.name FROM typed_raw t JOIN files f "
    "ON f.path = t.path WHERE f.family = 'go' AND t.kind = 'type' AND t.text = t.name"
)

TypeRef = tuple[str, str]  # (package dir, type name)


_PAREN = re.compile(r"^\(\s*\*?\s*([A-Za-z_][\w.]*)\s*\)$")  # (*node), (x)
_NEW = re.compile(r"^(?:new\(\s*([A-Za-z_][\w.]*)\s*\)|&?([A-Za-z_][\w.]*)\{\s*\})$")


_MADE = re.compile(  # new(T).a, T{}.a, &T{}.a, (*x).a: the head of a chain
    r"^(?:new\(\s*(?P<new>[A-Za-z_][\w.]*)\s*\)|&?(?P<lit>[A-Za-z_][\w.]*)\{\s*\}"
    r"|\(\s*\*?\s*(?P<deref>[A-Za-z_][\w.]*)\s*\))(?=\.[A-Za-z_])"
)


def unwrap(receiver: str) -> str:
    """A Go receiver as a name: ``(*node).m()`` is ``node.m()``; ``new(T).m()`` and
    ``T{}.m()`` call a method of ``T``; at the head of a chain, ``new(T).a().b()`` and
    ``T{}.a().b()`` are ``T().a().b()`` (a value of ``T``, as a conversion makes) and
    ``(*x).a().b()`` is ``x.a().b()``."""
    m = _PAREN.match(receiver)
    if m:
        return m.group(1)
    m = _NEW.match(receiver)
    if m:
        return m.group(1) or m.group(2)
    m = _MADE.match(receiver)
    if m is None:
        return receiver
    made = m.group("new") or m.group("lit")
    return (f"{made}()" if made else m.group("deref")) + receiver[m.end() :]


def is_go_key(key: str) -> bool:
    """Whether a symbol key (``repo|path|qn``) is of a Go file."""
    parts = key.split("|", 2)
    return len(parts) == 3 and parts[1].endswith(".go")


class GoTypes:
    """Go lookups over one resolution's symbol table (one per its name lookups, cached)."""

    _by_db: ClassVar[weakref.WeakKeyDictionary[Any, GoTypes]] = weakref.WeakKeyDictionary()

    def __init__(self, db: Any) -> None:
        self.db = db
        self._types: dict[str, tuple[str, str, str, str] | None] = {}
        self._dispatch: dict[tuple[str, str], list[str] | None] = {}
        self._with: dict[str, frozenset[TypeRef]] = {}
        self._own: dict[TypeRef, dict[str, list[str]]] | None = None
        self._by_name: dict[str, set[TypeRef]] = {}
        self._embeds: dict[TypeRef, list[str]] = {}
        self._embedders: dict[TypeRef, set[TypeRef]] = {}

    @classmethod
    def of(cls, names: Any) -> GoTypes:
        """The lookups of one resolution (its :class:`~semgraph.resolve.scope.NameLookups`)."""
        found = cls._by_db.get(names)
        if found is None:
            found = cls._by_db[names] = GoTypes(names.db)
        return found

    def _index(self) -> dict[TypeRef, dict[str, list[str]]]:
        """Every Go method by its type, and every embedded field, read once (the symbol table
        does not change while calls are resolved)."""
        if self._own is None:
            own: dict[TypeRef, dict[str, list[str]]] = {}
            for directory, owner, name, key in self.db.execute(_ALL_METHODS):
                if owner and "." not in owner:
                    own.setdefault((directory, owner), {}).setdefault(name, []).append(key)
                    self._by_name.setdefault(name, set()).add((directory, owner))
            for directory, scope, module, embedded in self.db.execute(_EMBEDDINGS):
                outer = scope[len(module) + 1 :] if scope.startswith(module + ".") else ""
                if outer and "." not in outer:
                    self._embeds.setdefault((directory, outer), []).append(embedded)
                    self._embedders.setdefault((directory, embedded), set()).add((directory, outer))
            self._own = own
        return self._own

    def _type(self, key: str) -> tuple[str, str, str, str] | None:
        """(path, name, kind, package dir) of a Go type's symbol."""
        if key not in self._types:
            row = self.db.execute(
                "SELECT s.path, s.name, s.kind, f.dir FROM symbols s JOIN files f "
                "ON f.path = s.path WHERE s.key = ? AND f.family = 'go'",
                (key,),
            ).fetchone()
            self._types[key] = tuple(row) if row is not None else None
        return self._types[key]

    def methods(self, type_key: str, name: str) -> list[str]:
        """Methods ``name`` of the Go type ``type_key`` declared in any file of its package,
        else promoted from its embedded fields."""
        found = self._type(type_key)
        if found is None:
            return []
        return self._methods_in((found[3], found[1]), name, 0)

    def _methods_in(self, ref: TypeRef, name: str, depth: int) -> list[str]:
        own = self._index().get(ref, {}).get(name, [])
        if own or depth >= MAX_EMBED_DEPTH:
            return list(own)
        for embedded in self._embeds.get(ref, ()):
            promoted = self._methods_in((ref[0], embedded), name, depth + 1)
            if promoted:
                return promoted
        return []

    def implementations(self, iface_key: str, name: str) -> list[str] | None:
        """The methods a call of ``name`` on a value of interface ``iface_key`` may run; None
        when ``iface_key`` is no Go interface."""
        cache_key = (iface_key, name)
        if cache_key in self._dispatch:
            return self._dispatch[cache_key]
        found = self._type(iface_key)
        out: list[str] | None = None
        if found is not None and found[2] == "interface":
            path, _, _, _ = found
            qn = iface_key.split("|", 2)[2]
            declared = {
                r[0]
                for r in self.db.execute(
                    "SELECT DISTINCT name FROM typed_raw WHERE path = ? AND scope = ? "
                    "AND kind = 'name'",
                    (path, qn),
                )
            }
            required = declared | {name}
            types = frozenset.intersection(*(self._types_with(n) for n in sorted(required)))
            out = []
            for ref in sorted(types):
                out += self._methods_in(ref, name, 0)
            out = list(dict.fromkeys(out))
            if len(out) > MAX_IMPLEMENTATIONS:
                out = []
        self._dispatch[cache_key] = out
        return out

    def _by_name_index(self) -> list[str]:
        """Every Go method name of the repository."""
        self._index()
        return sorted(self._by_name)

    def _types_with(self, name: str) -> frozenset[TypeRef]:
        """Every Go type with a method ``name``, its own or promoted from an embedded field
        (an inverted index: dispatch intersects one set per method of the interface)."""
        hit = self._with.get(name)
        if hit is None:
            self._index()
            found = set(self._by_name.get(name, ()))
            frontier = set(found)
            for _ in range(MAX_EMBED_DEPTH):
                frontier = {o for t in frontier for o in self._embedders.get(t, ())} - found
                found |= frontier
            hit = self._with[name] = frozenset(found)
        return hit

    def dispatch(self, type_keys: tuple[str, ...], name: str) -> list[str]:
        """Interface dispatch over the types a receiver may have: every implementation."""
        out: list[str] = []
        for key in type_keys:
            out += self.implementations(key, name) or []
        return list(dict.fromkeys(out))

    def package_var(self, directory: str, name: str) -> str | None:
        """The file of ``directory`` that declares the package-level variable ``name``."""
        row = self.db.execute(
            "SELECT t.path FROM typed_raw t JOIN files f ON f.path = t.path "
            "WHERE f.dir = ? AND f.family = 'go' AND t.scope = f.module AND t.name = ? "
            "ORDER BY t.path LIMIT 1",
            (directory, name),
        ).fetchone()
        return str(row[0]) if row is not None else None


def package_name(typed: Any, ctx: Any, name: str) -> tuple[str, tuple[str, ...]] | None:
    """``name`` seen from a Go file: a type, function or package-level variable of its
    package (any file), as a :mod:`semgraph.resolve.typed` value; None when it is none."""
    keys = typed.names.top_level("dir", ctx.f.dir, name, GO)
    value: tuple[str, tuple[str, ...]] | None = None
    if keys:
        value = typed.of_symbols(keys)
    else:
        path = GoTypes.of(typed.names).package_var(ctx.f.dir, name)
        if path is not None:
            value = typed.module_value(path, name, 0)
    return value


def package_member(
    typed: Any, directory: str, name: str, fam: str, depth: int
) -> tuple[str, tuple[str, ...]]:
    """``pkg.Name`` where ``Name`` is a package-level variable or constant of another Go
    package (``tui.Start`` of ``const ( Rune EventType = iota; Start )``): its value."""
    path = GoTypes.of(typed.names).package_var(directory, name) if fam == GO else None
    return typed.module_value(path, name, depth) if path is not None else ("unknown", ())


_INDEXED = re.compile(r"^(?P<base>[A-Za-z_][\w.]*)\[[^\[\]]*\](?P<rest>(?:\.[A-Za-z_]\w*)*)$")
_CONTAINER = re.compile(r"^(?:\[[^\]]*\]|map\[[^\]]*\])\s*")  # []T, [4]T, map[K]T (flat K)


def element_type(text: str) -> str | None:
    """The element type of a Go slice, array or map type (``[]*Item`` -> ``*Item``)."""
    m = _CONTAINER.match(text.strip())
    return text.strip()[m.end() :] if m else None


def indexed(
    typed: Any, ctx: Any, receiver: str, line: int, depth: int = 0
) -> tuple[str, tuple[str, ...]] | None:
    """The value of a Go receiver that indexes a slice, array or map of a declared type, or
    one a function's declared result is (``xs := Tokenize(s); xs[0]``): ``items[i]``,
    ``c.items[i]``, ``c.items[i].text``; None when it is not one or the type is not known.
    ``depth`` is the evaluation's nesting (a ranged name bound to a call of a ranged name...
    ends there, as every evaluation does)."""
    m = _INDEXED.match(receiver)
    if m is None or depth > MAX_NESTING:
        return None
    *prefix, last = m.group("base").split(".")
    text, where = None, ctx
    if not prefix:
        bound = typed.local(ctx, last, line)
        if bound is not None and bound[0] == "type":
            text = bound[1]
        elif bound is not None and bound[0] == "call":  # tokens := Tokenize(...); tokens[0]
            text, where = _result_type(typed, ctx, bound[1], depth + 1)
    else:
        owner = typed.evaluate(ctx, [Segment(p, False) for p in prefix], line, depth + 1)
        if owner[0] == "instance":
            text, where = _field_type(typed, ctx, owner[1], last)
    elem = element_type(text) if text else None
    if elem is None or where is None:
        return None
    value: tuple[str, tuple[str, ...]] = typed.value_of_type(where, elem, depth + 1)
    for field in filter(None, m.group("rest").split(".")):
        if value[0] != "instance":
            return None
        value = typed.member(value, field, depth + 1)
    return value if value[0] == "instance" else None


def _result_type(typed: Any, ctx: Any, call: str, depth: int) -> tuple[str | None, Any]:
    """The declared (first) result type of the one function ``call`` names, and the context
    to read it in (the function's)."""
    segs = split_receiver(call)
    usable = segs and not segs[-1].called
    value = typed.evaluate(ctx, segs, ctx.src.end, depth) if usable else None
    if value is None or value[0] != "function" or len(value[1]) != 1:
        return None, None
    _, path, qn = value[1][0].split("|", 2)
    texts = [t for _, k, t in typed.bindings(path).get((qn, RETURN), ()) if k == "type"]
    found = typed.file_ctx(path)
    sym = found[0].by_key.get(value[1][0]) if found is not None else None
    return (texts[0], type(ctx)(found[0], found[1], sym)) if texts and sym else (None, None)


def _field_type(typed: Any, ctx: Any, types: tuple[str, ...], field: str) -> tuple[str | None, Any]:
    """The declared type text of a struct field and the context to read it in (the struct's
    file: a context of the same class as ``ctx``)."""
    for key in types:
        _, path, qn = key.split("|", 2)
        binds = typed.bindings(path).get((qn, field))
        found = typed.file_ctx(path)
        texts = [t for _, k, t in binds or () if k == "type"]
        if found is None or not texts:
            continue
        scope, f = found
        sym = scope.by_key.get(key)
        if sym is not None:
            return texts[0], type(ctx)(scope, f, sym)
    return None, None
