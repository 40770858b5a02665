"""Go *conversion facts*: where a value may become a value of another (interface)
type, recorded as :class:`semgraph.model.Binding` rows that :mod:`semgraph.resolve.go_reach`
reads to tell which of the repository's types reach an external interface (``http.Handler``,
``http.ResponseWriter``), so that a call on a value of that interface dispatches to exactly
those types' methods.

The query's ``@conv`` captures name a *slot* and a value; the value is kept only in a shape
whose type the resolver can tell (a name, ``&name``, ``T{}``, ``&T{}``, ``new(T)``, a call):

* ``@conv.slot`` (a call's function) + ``@conv.arg`` (one of its arguments): the Binding is
  named ``<to:arg:N>`` + the function as written (N: the argument's position);
* ``@conv.slot`` (an assignment's left side, ``x.f = v``, or a declared ``var x T = v``) +
  ``@conv.arg``: ``<to:set>`` + the left side;
* ``@conv.lit`` (a composite literal's type) + ``@conv.slot`` (a key) + ``@conv.arg``:
  ``<to:key:T>`` + the key (``&http.Server{Handler: h}``);
* ``@conv.ret`` (a ``return v``): ``<to:ret>``, scope the enclosing function;
* ``@conv.params`` (a declared function's parameter list): ``<to:param:N>`` for each
  parameter whose type names another package's type (``w http.ResponseWriter``), text that
  type, so that an argument's slot type is known by position.

The binding's kind is that of the value (``value``: a name, ``type``: a literal's type,
``call``: the called expression), as for the other typed names.
"""

from __future__ import annotations

from tree_sitter import Node

from semgraph.indexer.describe import MAX_EXPR, one_line
from semgraph.indexer.imports import text

CONV = "<to:"  # the prefix of every conversion fact's name
_BUILTIN_TYPES = frozenset(
    {
        "bool",
        "string",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
        "byte",
        "rune",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "error",
        "any",
    }
)
_SKIP_NAMES = frozenset({"nil", "true", "false", "iota", "_", "err"})
_SKIP_CALLS = frozenset(  # builtins: their arguments reach no interface of another package
    {
        "len",
        "cap",
        "append",
        "make",
        "new",
        "panic",
        "print",
        "println",
        "copy",
        "delete",
        "close",
        "min",
        "max",
        "clear",
        "complex",
        "real",
        "imag",
        "recover",
    }
)


def may_reach(kind: str, text: str) -> bool:
    """Whether a local bound so (its :class:`~semgraph.model.Binding` kind and text) may hold
    a value of one of the repository's types with methods: not when it is untyped (the
    resolver knows nothing of it) or declared with a builtin type (``string``, ``error``) or
    an unnamed one (``[]T``, ``map[K]V``, ``func()``). Such facts would only fill the table."""
    if kind == "name":
        return False
    if kind != "type":
        return True
    name = text.strip().lstrip("*")
    parts = name.split(".")
    if len(parts) > 2 or not all(p.isidentifier() for p in parts):
        return False
    return len(parts) == 2 or name not in _BUILTIN_TYPES


def value_of(node: Node) -> tuple[str, str] | None:
    """(kind, text) of a value whose type the resolver can tell, else None."""
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        inner = node.named_children[0]
        return value_of(inner) if inner is not None else None
    if node.type == "unary_expression" and text(node).startswith("&"):
        operand = node.child_by_field_name("operand")
        return value_of(operand) if operand is not None else None
    if node.type == "identifier":
        name = text(node)
        return None if name in _SKIP_NAMES else ("value", name)
    if node.type == "selector_expression":
        return "value", one_line(text(node), MAX_EXPR)
    if node.type == "composite_literal":
        typ = node.child_by_field_name("type")
        return ("type", one_line(text(typ), MAX_EXPR)) if typ is not None else None
    if node.type == "call_expression":
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn is None or args is None:
            return None
        if text(fn) == "new" and args.named_child_count == 1:
            return "type", one_line(text(args.named_children[0]), MAX_EXPR)
        called = text(fn)
        if called in _SKIP_CALLS or called in _BUILTIN_TYPES:  # len(xs), int(n): no type of ours
            return None
        return "call", one_line(called, MAX_EXPR)
    return None


def slot_name(caps: dict[str, list[Node]]) -> str | None:
    """The conversion fact's name for one ``@conv`` match (None: not one to keep)."""
    if "conv.ret" in caps:
        return f"{CONV}ret>"
    slot = caps.get("conv.slot")
    arg = caps.get("conv.arg")
    if not slot or not arg:
        return None
    where = one_line(text(slot[0]), MAX_EXPR)
    lit = caps.get("conv.lit")
    if lit:
        return f"{CONV}key:{one_line(text(lit[0]), MAX_EXPR)}>{where}"
    parent = arg[0].parent
    if parent is not None and parent.type == "argument_list":
        if where in _SKIP_CALLS or where in _BUILTIN_TYPES:  # len(x), int(x)
            return None
        position = [c.id for c in parent.named_children].index(arg[0].id)
        return f"{CONV}arg:{position}>{where}"
    return f"{CONV}set>{where}"


def parameters(params: Node) -> list[tuple[str, str]]:
    """(``<to:param:N>``, type text) of each parameter typed by another package's type."""
    out: list[tuple[str, str]] = []
    position = 0
    for decl in params.named_children:
        if decl.type not in ("parameter_declaration", "variadic_parameter_declaration"):
            continue
        names = decl.children_by_field_name("name")
        typ = decl.child_by_field_name("type")
        for _ in names or [decl]:
            if (
                decl.type == "parameter_declaration"
                and typ is not None
                and typ.type == "qualified_type"
            ):
                out.append((f"{CONV}param:{position}>", one_line(text(typ), MAX_EXPR)))
            position += 1
    return out
