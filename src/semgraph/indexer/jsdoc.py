"""JSDoc types in JavaScript (``/** @param {Headers} h */``), as typed names
(:mod:`semgraph.indexer.typed`) for the receiver types of call resolution.

The query captures a ``/** ... */`` comment as ``@jsdoc`` and the declaration right after it
as ``@jsdoc.target``. What it reads:

* ``@param {T} name`` (also ``@arg``, ``@argument``): the function's parameter ``name`` is a
  ``T``;
* ``@returns {T}`` / ``@return {T}``: the function's return type;
* ``@type {T}`` before ``const x = ...`` / ``let`` / ``var``: ``x`` is a ``T``; before
  ``this.x = ...``: the field ``x`` of the enclosing class is.

A type is kept only when it names one class: ``?T``, ``T=``, ``!T``, ``(T|null)`` and
``Promise<T>`` are ``T``; a union of two classes, an array, a record, a function type or an
``import("m").T`` names none we follow (the name is still a local). A comment is read up to
:data:`MAX_COMMENT` characters, so a generated file's huge comment costs nothing.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from semgraph.indexer.imports import text
from semgraph.indexer.typed import MAX_BINDINGS, RawBinding, rank
from semgraph.model import RETURN

MAX_COMMENT = 4_000
_TAG = re.compile(r"@(param|arg|argument|returns?|type)\s*\{([^{}\n]{1,200})\}[ \t]*(\[?[\w$]+)?")
_NAME = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:<[\w$.<>, ]*>)?$")
_NOTHING = frozenset({"null", "undefined", "void"})
_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
        "function_expression",
        "arrow_function",
    }
)


def clean(raw: str) -> str | None:
    """The one class a JSDoc type names, or None."""
    parts = [p.strip().strip("()").strip() for p in raw.strip().strip("()").split("|")]
    kept = [p.lstrip("?!").rstrip("=").strip() for p in parts if p not in _NOTHING]
    if len(kept) != 1:
        return None
    name = kept[0]
    if not _NAME.match(name) or name.startswith(("Array<", "Object<", "Record<")):
        return None
    return name


def collect(caps: dict[str, list[Node]], found: dict[int, RawBinding]) -> None:
    """Fold one ``@jsdoc`` match into ``found`` (keyed as the query's own bindings are, so a
    JSDoc type outranks an untyped parameter or local of the same name node)."""
    comment = text(caps["jsdoc"][0])[:MAX_COMMENT]
    if not comment.startswith("/**"):
        return
    target = caps["jsdoc.target"][0]
    if target.type == "export_statement":
        target = target.child_by_field_name("declaration") or target
    for tag, raw, name in _TAG.findall(comment):
        kind = (
            tag
            if tag in ("param", "type")
            else ("returns" if tag.startswith("return") else "param")
        )
        cls = clean(raw)
        if cls is None or len(found) >= MAX_BINDINGS:
            continue
        for key, binding in _bindings(target, kind, name.lstrip("["), cls):
            old = found.get(key)
            if old is None or rank(binding.kind) > rank(old.kind):
                found[key] = binding


def _bindings(target: Node, kind: str, name: str, cls: str) -> list[tuple[int, RawBinding]]:
    declarators = [c for c in target.named_children if c.type == "variable_declarator"]
    function = target if target.type in _FUNCTIONS else None
    if function is None and declarators:
        value = declarators[0].child_by_field_name("value")
        function = value if value is not None and value.type in _FUNCTIONS else None
    if kind == "returns" and function is not None:
        node = declarators[0] if declarators and function is not target else function
        return [(-node.id - 1, RawBinding(node, RETURN, "type", cls, False))]
    if kind == "param" and function is not None and name:
        params = function.child_by_field_name("parameters")
        if params is None:
            return []
        for p in params.named_children:
            ident = p.child_by_field_name("left") if p.type == "assignment_pattern" else p
            if ident is not None and ident.type == "identifier" and text(ident) == name:
                return [(ident.id, RawBinding(params, name, "type", cls, False))]
        return []
    if kind == "type" and declarators:
        out = []
        for d in declarators:
            ident = d.child_by_field_name("name")
            if ident is not None and ident.type == "identifier":
                out.append((ident.id, RawBinding(d, text(ident), "type", cls, False)))
        return out
    if kind == "type" and target.type == "expression_statement" and target.named_children:
        return _this_field(target.named_children[0], cls)
    return []


def _this_field(assign: Node, cls: str) -> list[tuple[int, RawBinding]]:
    """``/** @type {T} */ this.x = ...``: the enclosing class's field ``x``."""
    left = assign.child_by_field_name("left") if assign.type == "assignment_expression" else None
    if left is None or left.type != "member_expression":
        return []
    obj, prop = left.child_by_field_name("object"), left.child_by_field_name("property")
    if obj is None or obj.type != "this" or prop is None:
        return []
    return [(hash(("self", prop.id)), RawBinding(assign, text(prop), "type", cls, True))]
