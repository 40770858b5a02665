"""Python-only rules of the receiver types (:mod:`semgraph.resolve.typed`): a pytest test's
parameter is the value its fixture returns or yields; a loop variable is an element of the
collection type its iterable declares (``for item in self.items`` with ``items:
list[Item]``). ``typed`` is the
:class:`~semgraph.resolve.typed.TypedNames` asking, seen through the :class:`Receivers`
protocol (typed.py imports this module, so it cannot import typed.py back)."""

from __future__ import annotations

import re
from typing import Any, Protocol

from semgraph.model import RETURN
from semgraph.resolve.import_types import ImportFile
from semgraph.resolve.scope import Ctx, FileScope, NameLookups
from semgraph.resolve.typeexpr import Segment, alternatives, split_receiver, split_top

Value = tuple[str, tuple[str, ...]]  # as resolve/typed.py (which imports this module)
UNKNOWN: Value = ("unknown", ())
_ABC = r"^(?:typing\.|t\.|cabc\.|abc\.|collections\.abc\.|collections\.)?"
_ITERABLE = re.compile(  # what iterating gives: the first argument (a mapping's keys)
    _ABC + r"(?:list|List|Sequence|MutableSequence|Iterable|Iterator|Collection|Reversible"
    r"|set|Set|MutableSet|AbstractSet|frozenset|FrozenSet|Generator|deque|Deque|KeysView"
    r"|ValuesView|dict|Dict|Mapping|MutableMapping|OrderedDict|defaultdict)\[(.*)\]$",
    re.S,
)
_MAPPING = re.compile(
    _ABC + r"(?:dict|Dict|Mapping|MutableMapping|OrderedDict|defaultdict)\[(.*)\]$", re.S
)
_TUPLE = re.compile(r"^(?:typing\.|t\.)?(?:tuple|Tuple)\[(.*),\s*\.\.\.\]$", re.S)
_FIXED_TUPLE = re.compile(r"^(?:typing\.|t\.)?(?:tuple|Tuple)\[(.*)\]$", re.S)
MAX_BASES = 4  # an attribute declared by a base of a base...


class Receivers(Protocol):
    """What the Python rules ask of :class:`semgraph.resolve.typed.TypedNames`."""

    db: Any
    names: NameLookups
    made: dict[str, Value | None]  # what decorators made of functions (resolve/decorators.py)
    decorating: dict[str, bool]

    def kind(self, key: str) -> str: ...

    def returns(self, key: str, depth: int) -> Value: ...

    def file_ctx(self, path: str) -> tuple[FileScope, ImportFile] | None: ...

    def bindings(self, path: str) -> dict[tuple[str, str], list[tuple[int, str, str]]]: ...

    def evaluate(self, ctx: Ctx, segs: list[Segment], line: int, depth: int) -> Value: ...

    def value_of_type(self, ctx: Ctx, text: str, depth: int) -> Value: ...

    def member(self, value: Value, name: str, depth: int) -> Value: ...

    def local(self, ctx: Ctx, name: str, line: int) -> tuple[str, str] | None: ...

    def parents(self, cls: str) -> list[str]: ...


def is_pytest(path: str) -> bool:
    """A file pytest collects fixtures for (a test module or a ``conftest.py``)."""
    name = path.rpartition("/")[2]
    return name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")


def pytest_fixture(typed: Receivers, ctx: Ctx, name: str, depth: int) -> Value:
    """What the fixture ``name`` returns or yields: the one top-level function of that name
    in the test's file, else in a ``conftest.py`` of its directory or one above."""
    directory = ctx.f.dir
    paths = [ctx.f.path]
    while True:
        paths.append(f"{directory}/conftest.py" if directory else "conftest.py")
        if not directory:
            break
        directory = directory.rpartition("/")[0]
    for path in paths:
        keys = [
            k
            for k in typed.names.top_level("file", path, name, "python")
            if typed.kind(k) == "function" and k != ctx.src.key
        ]
        if len(keys) == 1:
            value: Value = typed.returns(keys[0], depth + 1)
            return value
    return ("unknown", ())


def element(typed: Receivers, ctx: Ctx, text: str, depth: int, part: bool = False) -> Value:
    """An element of the iterable ``text`` (``for x in self.items``, ``[... for x in xs]``)
    from the collection type declared for it where it is defined: ``list[Item]``,
    ``Sequence[Item]``, ``set[Item]``, ``Iterator[Item]``, ``tuple[Item, ...]``, a mapping's
    keys, ``m.values()`` of a ``dict[K, V]``; unpacked (``xs#1``, ``for k, v in xs``): that
    position of a ``tuple[A, B]`` element, of ``m.items()``, of ``enumerate(xs)``. A ``part``
    (``a, b = pair``) is that position of ``pair``'s own ``tuple[A, B]``. UNKNOWN for
    anything else."""
    head, _, tail = text.rpartition("#")
    if part and tail.isdigit():
        found = declared(typed, ctx, head, depth)
        found = _position(found[0], found[1], int(tail)) if found else None
    else:
        found = element_type(typed, ctx, text, depth) if not part else None
    return typed.value_of_type(found[0], found[1], depth + 1) if found else UNKNOWN


def element_type(typed: Receivers, ctx: Ctx, text: str, depth: int) -> tuple[Ctx, str] | None:
    """:func:`element`'s type as written, and where it is written."""
    head, _, tail = text.rpartition("#")
    pos = int(tail) if head and tail.isdigit() else None
    text = head if pos is not None else text
    if pos is not None and text.startswith("enumerate(") and text.endswith(")"):
        return element_type(typed, ctx, text[10:-1], depth + 1) if pos == 1 else None
    view = next((v for v in (".values()", ".keys()", ".items()") if text.endswith(v)), None)
    found = declared(typed, ctx, text[: -len(view)] if view else text, depth)
    alts = alternatives(found[1]) if found is not None else []
    if found is None or len(alts) != 1:
        return None
    match = _MAPPING.match(alts[0]) if view else _ITERABLE.match(alts[0]) or _TUPLE.match(alts[0])
    if match is None and view is None:  # a class of the repository: what its __iter__ yields
        found = _iterated(typed, found[0], alts[0], depth)
        match = _ITERABLE.match(found[1]) if found is not None else None
    if match is None or found is None:
        return None
    args = split_top(match[1], ",")
    if view == ".items()":  # (key, value) pairs
        return (found[0], args[pos]) if pos is not None and len(args) == 2 and pos < 2 else None
    index = 1 if view == ".values()" else 0
    if len(args) <= index:
        return None
    if pos is None:
        return found[0], args[index]
    return _position(found[0], args[index], pos)  # unpacked: a tuple[A, B] element


def _iterated(typed: Receivers, where: Ctx, text: str, depth: int) -> tuple[Ctx, str] | None:
    """The declared return of ``__iter__`` of the repository's class named by ``text``."""
    value = typed.value_of_type(where, text, depth + 1)
    if value[0] != "instance" or len(value[1]) != 1:
        return None
    methods = typed.names.members(value[1][0], "__iter__")
    found = declared_return(typed, methods[0]) if len(methods) == 1 else None
    alts = alternatives(found[1]) if found is not None else []
    return (found[0], alts[0]) if found is not None and len(alts) == 1 else None


def _position(where: Ctx, text: str, pos: int) -> tuple[Ctx, str] | None:
    """Position ``pos`` of the fixed-length tuple type ``text`` (``tuple[A, B | None]``)."""
    members = alternatives(text)
    fixed = _FIXED_TUPLE.match(members[0]) if len(members) == 1 else None
    parts = split_top(fixed[1], ",") if fixed is not None else []
    if "..." in parts or pos >= len(parts):
        return None
    return where, parts[pos]


def declared(typed: Receivers, ctx: Ctx, text: str, depth: int) -> tuple[Ctx, str] | None:
    """The type the source declares for the expression ``text`` (a typed local or
    parameter, a function's or method's declared return, a class's typed attribute), with
    where it is written (names in it are looked up there)."""
    segs = split_receiver(text)
    if segs is None or depth > 8:
        return None
    last, line = segs[-1], ctx.src.end
    if len(segs) > 1:
        owner = typed.evaluate(ctx, segs[:-1], line, depth + 1)
        if owner[0] not in ("instance", "class") or len(owner[1]) != 1:
            return None
        if last.called:
            methods = typed.names.members(owner[1][0], last.name)
            return declared_return(typed, methods[0]) if len(methods) == 1 else None
        return _attribute(typed, owner[1][0], last.name)
    if last.called:
        value = typed.evaluate(ctx, [Segment(last.name, False)], line, depth + 1)
        return declared_return(typed, value[1][0]) if value[0] == "function" else None
    bound = typed.local(ctx, last.name, line)
    if bound is None:
        module = typed.bindings(ctx.f.path).get((ctx.scope.module_qn, last.name), [])
        bound = (module[-1][1], module[-1][2]) if len(module) == 1 else None
    if bound is not None and bound[0] == "call":  # xs = self.items_of(...): what it returns
        return declared(typed, ctx, f"{bound[1]}()", depth + 1)
    return (ctx, bound[1]) if bound is not None and bound[0] == "type" else None


def declared_return(typed: Receivers, key: str) -> tuple[Ctx, str] | None:
    """A function's declared return type (one annotation) and where it is written."""
    row = typed.db.execute("SELECT path FROM symbols WHERE key = ?", (key,)).fetchone()
    found = typed.file_ctx(row[0]) if row is not None else None
    sym = found[0].by_key.get(key) if found is not None else None
    if found is None or sym is None:
        return None
    binds = typed.bindings(found[1].path).get((sym.qn, RETURN), [])
    text = _one_type(binds)
    return (Ctx(found[0], found[1], sym), text) if text is not None else None


def _attribute(typed: Receivers, cls: str, name: str) -> tuple[Ctx, str] | None:
    """The declared type of attribute ``name`` of class ``cls`` or, undeclared there, of a
    base; an attribute bound there only untyped (``self.x = f()``) has none."""
    for _ in range(MAX_BASES + 1):
        row = typed.db.execute("SELECT path FROM symbols WHERE key = ?", (cls,)).fetchone()
        found = typed.file_ctx(row[0]) if row is not None else None
        sym = found[0].by_key.get(cls) if found is not None else None
        if found is None or sym is None:
            return None
        binds = typed.bindings(found[1].path).get((sym.qn, name))
        if binds:
            text = _one_type(binds)
            return (Ctx(found[0], found[1], sym), text) if text is not None else None
        parents = typed.parents(cls)
        if len(parents) != 1:
            return None
        cls = parents[0]
    return None


def _one_type(binds: list[tuple[int, str, str]]) -> str | None:
    """The one type the typed bindings declare, up to ``None`` (``items: list[Item]`` and
    ``self.items = items`` with ``items: list[Item] | None``); None when they differ."""
    texts = {tuple(alternatives(t)): t for _, k, t in binds if k == "type"}
    return next(iter(texts.values())) if len(texts) == 1 else None
