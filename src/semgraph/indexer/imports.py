"""Import statements, per language, from the ``@import`` nodes of the extraction queries.

What :class:`Import` holds, per language:

* python: ``import a.b as c`` -> ("a.b", [], "c"); ``from .m import x, y as z`` ->
  (".m", ["x"]) and (".m", ["y"], "z"); ``from m import *`` -> ("m", ["*"]).
* javascript / typescript: the module specifier string; ``import d from "m"`` ->
  ("m", ["default"], "d"); ``import * as ns from "m"`` -> ("m", [], "ns");
  ``import {a, b as c} from "m"`` -> ("m", ["a"]) and ("m", ["b"], "c");
  ``require("m")`` -> ("m", [], <the variable it is assigned to, if any>), ``const {a, b: c}
  = require("m")`` -> ("m", ["a"]) and ("m", ["b"], "c"); ``export ... from
  "m"`` -> ("m", ["*"]) (the dependency; it binds no name).
* go: ("fmt", [], alias) with alias ``.``/``_``/a name when given.
* java: ``import a.b.C;`` -> ("a.b", ["C"]); ``import a.b.*;`` -> ("a.b", ["*"]);
  ``import static a.b.C.m;`` -> ("a.b.C", ["m"]).
* rust: every leaf of a use tree: ``use a::b::{c, d as e};`` -> ("a::b", ["c"]) and
  ("a::b", ["d"], "e"); ``use a;`` -> ("a", []); ``use a::b::{self}`` -> ("a::b", []).
* c / cpp: ``#include <x/y.h>`` -> ("x/y.h", []).

The module is a little over 300 lines: one reader per language's import syntax, each small,
kept together because they share the ``Import`` shape and its helpers.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from semgraph.model import Import


def text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _span(node: Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.end_point[0] + 1


def _imp(node: Node, module: str, names: list[str], alias: str | None = None) -> Import:
    start, end = _span(node)
    return Import(module=module, names=names, alias=alias, start_line=start, end_line=end)


def _strip_quotes(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] in "\"'`<" and value[-1] in "\"'`>":
        return value[1:-1]
    return value


def _named(node: Node, module: str, items: list[tuple[str, str | None]]) -> list[Import]:
    """Group unaliased names into one Import; one Import per aliased name."""
    out: list[Import] = []
    plain = [name for name, alias in items if alias is None]
    if plain:
        out.append(_imp(node, module, plain))
    out.extend(_imp(node, module, [name], alias) for name, alias in items if alias is not None)
    return out


def python_imports(node: Node) -> list[Import]:
    if node.type == "import_statement":
        out = []
        for child in node.named_children:
            if child.type == "aliased_import":
                out.append(
                    _imp(
                        node,
                        text(child.child_by_field_name("name")),
                        [],
                        text(child.child_by_field_name("alias")),
                    )
                )
            elif child.type == "dotted_name":
                out.append(_imp(node, text(child), []))
        return out
    if node.type == "future_import_statement":
        module = "__future__"
    else:
        module = text(node.child_by_field_name("module_name"))
    if any(c.type == "wildcard_import" for c in node.named_children):
        return [_imp(node, module, ["*"])]
    items: list[tuple[str, str | None]] = []
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            items.append(
                (
                    text(child.child_by_field_name("name")),
                    text(child.child_by_field_name("alias")),
                )
            )
        else:
            items.append((text(child), None))
    return _named(node, module, items) or [_imp(node, module, [])]


def _js_require(node: Node) -> list[Import]:
    args = node.child_by_field_name("arguments")
    strings = [c for c in (args.named_children if args else []) if c.type == "string"]
    if not strings:
        return []
    alias = None
    module = _strip_quotes(text(strings[0]))
    parent = node.parent
    prop = parent.child_by_field_name("property") if parent is not None else None
    if parent is not None and parent.type == "member_expression" and prop is not None:
        holder = parent.parent  # const f = require("m").f: an import of f
        name = holder.child_by_field_name("name") if holder is not None else None
        if holder is not None and holder.type == "variable_declarator" and name is not None:
            alias = text(name) if text(name) != text(prop) else None
            return [_imp(node, module, [text(prop)], alias)]
    if parent is not None and parent.type == "variable_declarator":
        name = parent.child_by_field_name("name")
        if name is not None and name.type == "identifier":
            alias = text(name)
        elif name is not None and name.type == "object_pattern":  # const {a, b: c} = require()
            return _named(node, module, _destructured(name)) or [_imp(node, module, [])]
    return [_imp(node, module, [], alias)]


def _destructured(pattern: Node) -> list[tuple[str, str | None]]:
    """The (name, alias) pairs of ``{a, b: c}``; a nested or computed pattern is skipped."""
    items: list[tuple[str, str | None]] = []
    for child in pattern.named_children:
        if child.type == "shorthand_property_identifier_pattern":
            items.append((text(child), None))
        elif child.type == "pair_pattern":
            key, value = child.child_by_field_name("key"), child.child_by_field_name("value")
            if key is not None and value is not None and value.type == "identifier":
                alias = text(value)
                items.append((text(key), alias if alias != text(key) else None))
    return items


def js_imports(node: Node) -> list[Import]:
    if node.type == "call_expression":
        return _js_require(node)
    if node.type == "export_statement":  # export ... from "m": the file depends on m
        module = _strip_quotes(text(node.child_by_field_name("source")))
        return [_imp(node, module, ["*"])] if module else []
    source = node.child_by_field_name("source")
    clause = next((c for c in node.named_children if c.type == "import_clause"), None)
    require = next((c for c in node.named_children if c.type == "import_require_clause"), None)
    if require is not None:  # TypeScript: import x = require("m")
        src = require.child_by_field_name("source")
        ident = next((c for c in require.named_children if c.type == "identifier"), None)
        return [_imp(node, _strip_quotes(text(src)), [], text(ident) or None)]
    module = _strip_quotes(text(source))
    if clause is None:
        return [_imp(node, module, [])]
    out: list[Import] = []
    items: list[tuple[str, str | None]] = []
    for child in clause.named_children:
        if child.type == "identifier":
            out.append(_imp(node, module, ["default"], text(child)))
        elif child.type == "namespace_import":
            ident = next((c for c in child.named_children if c.type == "identifier"), None)
            out.append(_imp(node, module, [], text(ident)))
        elif child.type == "named_imports":
            for spec in child.named_children:
                if spec.type != "import_specifier":
                    continue
                alias_node = spec.child_by_field_name("alias")
                items.append((text(spec.child_by_field_name("name")), text(alias_node) or None))
    return out + _named(node, module, items)


def js_exports(node: Node) -> list[Import]:
    """What a JS/TS module exports that a bare name lookup does not find, as
    ``Import(module, [member], exported)``: the module is the ``from`` source ("" for the file
    itself), ``member`` the name there (``*``: all of it). ``export default function f`` /
    ``export default f`` / ``module.exports = f`` -> ("", ["f"], "default"); ``export {a as
    b}`` -> ("", ["a"], "b"); ``export {x as y} from "./z"`` -> ("./z", ["x"], "y"); ``export
    * from "./w"`` -> ("./w", ["*"], "*"); ``export * as ns from "./n"`` -> ("./n", ["*"],
    "ns"). ``export function f`` is found by its name and needs no row."""
    if node.type == "assignment_expression":  # module.exports = f
        right = node.child_by_field_name("right")
        called = right.child_by_field_name("function") if right is not None else None
        if right is not None and called is not None and text(called) == "require":
            required = _js_require(right)  # module.exports = require("./lib/x"): its export
            return [_imp(node, required[0].module, ["default"], "default")] if required else []
        name = _declared(right) if right is not None else ""
        return [_imp(node, "", [name], "default")] if name else []
    source = node.child_by_field_name("source")
    module = _strip_quotes(text(source)) if source is not None else ""
    if source is not None and not module:
        return []
    if any(c.type == "default" for c in node.children):
        value = node.child_by_field_name("declaration") or node.child_by_field_name("value")
        name = _declared(value) if value is not None else ""
        return [_imp(node, "", [name], "default")] if name else []
    out: list[Import] = []
    for child in node.named_children:
        if child.type == "namespace_export":
            ident = next((c for c in child.named_children if c.type != "string"), None)
            out.append(_imp(node, module, ["*"], text(ident) or None))
        elif child.type == "export_clause":
            for spec in child.named_children:
                if spec.type != "export_specifier":
                    continue
                name = text(spec.child_by_field_name("name")) or "default"
                alias = text(spec.child_by_field_name("alias")) or name
                out.append(_imp(node, module, [name], alias))
    if source is not None and not any(
        c.type in ("export_clause", "namespace_export") for c in node.named_children
    ):
        out.append(_imp(node, module, ["*"], "*"))
    return out


def _declared(node: Node) -> str:
    """The name a default export refers to: an identifier, a named declaration, or the
    class of a ``new`` expression."""
    if node.type in ("identifier", "type_identifier"):
        return text(node)
    if node.type == "new_expression":  # export default new Cls(): its members are Cls's
        made = node.child_by_field_name("constructor")
        return text(made) if made is not None and made.type == "identifier" else ""
    name = node.child_by_field_name("name")
    return text(name) if name is not None and name.type in ("identifier", "type_identifier") else ""


def go_imports(node: Node) -> list[Import]:
    path = _strip_quotes(text(node.child_by_field_name("path")))
    name = node.child_by_field_name("name")
    return [_imp(node, path, [], text(name) or None)]


def java_imports(node: Node) -> list[Import]:
    body = text(node).strip().removeprefix("import").strip().rstrip(";").strip()
    body = body.removeprefix("static").strip()
    body = "".join(body.split())
    module, _, last = body.rpartition(".")
    if not module:
        return [_imp(node, body, [])]
    return [_imp(node, module, [last])]


def _split_top(value: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in value:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _rust_leaves(prefix: str, tree: str, depth: int = 0) -> list[tuple[str, str | None]]:
    if depth > 32:
        return []
    tree = tree.strip()
    brace = tree.find("{")
    if brace >= 0 and tree.endswith("}"):
        head = tree[:brace]
        out: list[tuple[str, str | None]] = []
        for part in _split_top(tree[brace + 1 : -1]):
            out.extend(_rust_leaves(prefix + head, part, depth + 1))
        return out
    path, _, alias = tree.partition(" as ")
    return [(prefix + path.strip(), alias.strip() or None)]


def rust_imports(node: Node) -> list[Import]:
    arg = node.child_by_field_name("argument")
    tree = " ".join(text(arg).split()).replace(" ::", "::").replace(":: ", "::")
    out: list[Import] = []
    for path, alias in _rust_leaves("", tree):
        module, sep, last = path.rpartition("::")
        if last == "self" and sep:
            out.append(_imp(node, module, [], alias))
        elif not sep:
            out.append(_imp(node, path, [], alias))
        else:
            out.append(_imp(node, module, [last], alias))
    return out


def c_imports(node: Node) -> list[Import]:
    path = node.child_by_field_name("path")
    if path is None:
        return []
    return [_imp(node, _strip_quotes(text(path)), [])]


IMPORTERS: dict[str, Callable[[Node], list[Import]]] = {
    "python": python_imports,
    "javascript": js_imports,
    "typescript": js_imports,
    "tsx": js_imports,
    "go": go_imports,
    "java": java_imports,
    "rust": rust_imports,
    "c": c_imports,
    "cpp": c_imports,
}
