"""Typed names of one file (:class:`semgraph.model.Binding`), read from the query's
``@bind`` and ``@returns`` captures, for the receiver types of call resolution.

A language's query declares them with these captures (all optional but the first two):

* ``@bind`` (the declaring node) with ``@bind.name`` (the name declared);
* ``@bind.type`` (a type expression as written) or ``@bind.call`` (the called expression of
  the value, ``Cls`` in ``x = Cls()``); with neither, the name is declared untyped
  (a parameter, a plain local), which still tells the resolver it is a local;
* ``@bind.self`` (``self`` / ``this`` in ``self.attr = ...``): the name is an attribute of the
  enclosing class, so its scope is that class;
* ``@bind.ref`` (a plain name as the value, ``self.ctx = ctx``): the binding takes the type of
  that name's binding in the same function, when it has one; a name bound nowhere in that
  function (``_Style = Style``, an outer local, a module's name) makes it a ``value``;
* ``@bind.value`` (a name or ``pkg.Name`` as the value, Go ``f := pkg.Func``): the name holds
  what that expression names (a function value: calling the local calls it);
* ``@bind.elem`` (a name or ``a.b`` ranged over, Go ``for _, v := range xs``): the name holds
  an element of that slice, array or map; a name unpacked from it (Python ``for k, v in
  xs``) has its position after a ``#`` (``xs#1``);
* ``@bind.part`` (the value unpacked, Python ``a, b = pair``): the name holds that position of
  it (``pair#1``);
* ``@returns`` (a function, or a ``return`` statement) with ``@bind.type`` / ``@bind.call``:
  the enclosing function's return type, named :data:`semgraph.model.RETURN`;
* ``@decorated`` (a function) with ``@bind.value`` (its outermost decorator as written,
  ``click.group()``): named :data:`semgraph.model.DECORATOR`, in the function's own scope;
* ``@bind.scope`` alone (a nested function literal, Go ``func(r *Request) {...}``): the names
  declared inside it (its parameters, its locals) are in effect only within it
  (:attr:`semgraph.model.Binding.end`), not for the rest of the enclosing function.

When several patterns capture one name node the most specific wins: type, then call, then
none (``y: Client = make()`` is a ``Client``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tree_sitter import Node

from semgraph.indexer import go_conv
from semgraph.indexer.describe import MAX_EXPR, one_line
from semgraph.indexer.imports import text
from semgraph.model import DECORATOR, RETURN, Binding

_INFERRED = frozenset({"var", "val", "let", "auto", "_"})  # a declared type that says nothing
_UNPACKING = frozenset({"pattern_list", "tuple_pattern"})  # Python's `for a, b in xs`
_RANK = {"name": 0, "ref": 1, "elem": 2, "part": 2, "value": 3, "call": 4, "type": 5, "import": 6}
_IMPORTING = frozenset({"require"})  # `const x = require("m")`: an import binds x, no local
MAX_BINDINGS = 20_000  # per file: generated code must not flood the symbol table


@dataclass(slots=True)
class RawBinding:
    node: Node  # where the name is declared (its position finds the enclosing scope)
    name: str  # RETURN for a return type
    kind: str  # "type" | "call" | "name"
    value: str
    on_self: bool  # `self.attr` / `this.attr`: an attribute of the enclosing class


_SCOPE = "scope"  # the kind of a RawBinding that is a function literal (no name of its own)


def rank(kind: str) -> int:
    """How specific a binding of this kind is: the most specific one of a name node wins."""
    return _RANK[kind]


def collect(caps: dict[str, list[Node]], found: dict[int, RawBinding]) -> None:
    """Fold one query match's binding captures into ``found`` (keyed by the name node)."""
    literal = caps.get("bind.scope")
    if literal and len(caps) == 1:
        if len(found) < MAX_BINDINGS:
            found.setdefault(-literal[0].id - 1, RawBinding(literal[0], "", _SCOPE, "", False))
        return
    kind, value = _kind_value(caps)
    if "returns" in caps:
        if kind == "name" or _in_callback(caps["returns"][0]):
            return
        node = caps["returns"][0]
        key, name = -node.id - 1, RETURN
    elif "decorated" in caps:  # keyed by the function node: no name node has its id
        node = caps["decorated"][0]
        key, name = node.id, DECORATOR
    else:
        names = caps.get("bind.name")
        if not names or "bind" not in caps or (kind == "name" and _defines(caps["bind"][0])):
            return
        node, key, name = caps["bind"][0], names[0].id, text(names[0])
        if "bind.self" in caps:  # a TS parameter property is a local and a field: two names
            key = hash(("self", key))
    if not name or len(found) >= MAX_BINDINGS:
        return
    old = found.get(key)
    if old is None or _RANK[kind] > _RANK[old.kind]:
        found[key] = RawBinding(node, name, kind, value, "bind.self" in caps)


_JS_FUNCTIONS = frozenset(
    {
        "arrow_function",
        "function_expression",
        "function",
        "function_declaration",
        "generator_function_declaration",
        "generator_function",
        "method_definition",
    }
)


def _defines(node: Node) -> bool:
    """``const f = () => ...`` (JS/TS): a definition of its own (the query's
    ``@definition.function``), not a local of no known type that would hide it."""
    value = node.child_by_field_name("value") if node.type == "variable_declarator" else None
    return value is not None and value.type in ("arrow_function", "function_expression", "function")


def _in_callback(node: Node) -> bool:
    """A JS/TS ``return`` inside an anonymous function (``xs.map(x => { return y })``): it
    is the callback's, not the named function's around it."""
    if node.type != "return_statement":
        return False
    fn = node.parent
    while fn is not None and fn.type not in _JS_FUNCTIONS:
        fn = fn.parent
    if fn is None or fn.type not in ("arrow_function", "function_expression", "function"):
        return False
    return fn.parent is None or fn.parent.type != "variable_declarator"


def _kind_value(caps: dict[str, list[Node]]) -> tuple[str, str]:
    """The kind of one match's binding (the most specific capture) and its value."""
    kind, value = "name", ""
    for tag in ("type", "call", "value", "elem", "part", "ref"):
        nodes = caps.get(f"bind.{tag}")
        if nodes and not (tag == "type" and text(nodes[0]) in _INFERRED):
            kind, value = tag, one_line(text(nodes[0]), MAX_EXPR)
            break
    if kind == "call":  # `await f<T>()` reads as a call of `await f` (tree-sitter-typescript)
        value = value.removeprefix("await ").lstrip()
    if kind == "call" and value in _IMPORTING:
        kind = "import"  # kept (it outranks a plain name) and dropped by to_bindings
    if kind in ("elem", "part") and caps.get("bind.name"):
        value = _unpacked(caps["bind.name"][0], value)
    return kind, value


def go_consts(block: Node, found: dict[int, RawBinding]) -> None:
    """A Go ``const ( ... )`` block: a spec with neither a type nor a value repeats the
    previous spec's (``Esc EventType = iota`` then ``CtrlA``: both ``EventType``)."""
    carried = ""
    for spec in block.named_children:
        if spec.type != "const_spec":
            continue
        declared, value = spec.child_by_field_name("type"), spec.child_by_field_name("value")
        if declared is not None:
            carried = one_line(text(declared), MAX_EXPR)
        elif value is not None:
            carried = ""  # an untyped constant expression: nothing to repeat
        elif carried:
            for ident in spec.children_by_field_name("name"):
                if len(found) < MAX_BINDINGS:
                    found.setdefault(
                        ident.id, RawBinding(spec, text(ident), "type", carried, False)
                    )


def conversion(caps: dict[str, list[Node]], found: dict[int, RawBinding]) -> None:
    """A Go conversion fact (:mod:`semgraph.indexer.go_conv`), keyed apart from names."""
    node = caps["conv"][0]
    params = caps.get("conv.params")
    facts: list[tuple[int, str, str, str]] = []
    if params:
        facts = [(hash((node.id, n)), n, "type", t) for n, t in go_conv.parameters(params[0])]
    else:
        name = go_conv.slot_name(caps)
        args = caps.get("conv.arg") or caps.get("conv.ret")
        shape = go_conv.value_of(args[0]) if args and name else None
        if args and name and shape is not None:
            facts = [(hash(("conv", args[0].id)), name, shape[0], shape[1])]
    for key, name, kind, value in facts:
        if len(found) < MAX_BINDINGS:
            found.setdefault(key, RawBinding(node, name, kind, value, False))


def _unpacked(name: Node, iterable: str) -> str:
    """``xs#i`` for the ``i``-th name of a flat unpacking target (``for k, v in xs``)."""
    target = name.parent
    if target is None or target.type not in _UNPACKING:
        return iterable
    names = target.named_children
    if any(n.type != "identifier" for n in names):  # *rest, nested (a, b): not followed
        return "" if len(names) > 1 else iterable
    return f"{iterable}#{[n.id for n in names].index(name.id)}"


def to_bindings(items: Iterable[tuple[RawBinding, str, str | None]], module: str) -> list[Binding]:
    """Bindings from (raw binding, enclosing scope, enclosing class) triples; an attribute
    outside any class is dropped (``self`` there is nothing we know)."""
    out: list[Binding] = []
    seen: dict[tuple[str, str], Binding] = {}
    literals: list[Node] = []  # the function literals open at the current binding
    for raw, scope, owner in items:
        while literals and literals[-1].end_byte <= raw.node.start_byte:
            literals.pop()
        if raw.kind == _SCOPE:
            literals.append(raw.node)
            continue
        if raw.kind == "import":
            continue
        scope = scope or module
        kind, value = raw.kind, raw.value
        if kind == "ref":  # the named value's own binding in this function, if typed; a
            ref = seen.get((scope, value))  # name bound nowhere here holds what it names
            kind, value = (ref.kind, ref.text) if ref is not None else ("value", value)
        if raw.on_self:
            if owner is None:
                continue
            scope = owner
        if kind == "value" and raw.name.startswith(go_conv.CONV):
            local = seen.get((scope, value))  # a local of a type that has no methods
            if local is not None and not go_conv.may_reach(local.kind, local.text):
                continue
        # a literal at package level (`var x = T{F: func(n int) {...}}`) bounds nothing: the
        # module's names are read without lines
        literal = literals[-1] if literals and scope != module else None
        first, last = _extent(raw.node, literal)
        bind = Binding(scope, raw.name, kind, value, first, last)
        seen[(scope, raw.name)] = bind
        out.append(bind)
    return out


def _extent(node: Node, literal: Node | None) -> tuple[int, int]:
    """The first and last line on which a name declared at ``node`` is in effect (last 0: to
    the end of its scope). Within a function literal spanning several lines, its lines but
    the first and the last (which hold code around it: ``r.Handle("/", func(r *Req) {`` and
    ``}).Methods()`` call the outer ``r``); within a one-line literal, that line."""
    line = node.start_point[0] + 1
    if literal is None:
        return line, 0
    first, last = literal.start_point[0] + 1, literal.end_point[0] + 1
    if first == last:
        return line, last
    return max(line, first + 1), last - 1


def ordered(found: dict[int, RawBinding]) -> Sequence[RawBinding]:
    return sorted(found.values(), key=lambda b: b.node.start_byte)
