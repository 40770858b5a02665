"""Import statements of the languages whose imports name a namespace, a package or a script
(csharp, kotlin, scala, ruby, php, swift, bash, lua), from the ``@import`` nodes of their
extraction queries (python, javascript, typescript, go, java, rust, c and cpp are in
:mod:`semgraph.indexer.imports`).

What :class:`Import` holds, per language:

* csharp: ``using A.B;`` -> ("A.B", ["*"]) (a namespace: everything in it is visible);
  ``using static A.B.C;`` -> ("A.B.C", ["*"]); ``using X = A.B.C;`` -> ("A.B", ["C"], "X").
* kotlin: ``import a.b.C`` -> ("a.b", ["C"]); ``import a.b.*`` -> ("a.b", ["*"]);
  ``import a.b.C as D`` -> ("a.b", ["C"], "D").
* scala: ``import a.b.C`` -> ("a.b", ["C"]); ``import a.b.{C, D => E}`` -> ("a.b", ["C"])
  and ("a.b", ["D"], "E"); ``import a.b._`` / ``a.b.*`` -> ("a.b", ["*"]).
* ruby: ``require "json"`` -> ("json", []); ``require_relative "lib/x"`` -> ("./lib/x", []).
* php: ``use A\\B\\C;`` -> ("A\\B", ["C"]); ``use A\\B\\{C, D as E};`` -> ("A\\B", ["C"]) and
  ("A\\B", ["D"], "E"); ``require __DIR__ . "/x.php"`` -> ("./x.php", []), ``require
  "x.php"`` -> ("x.php", []).
* swift: ``import Foundation`` -> ("Foundation", []); ``import struct A.B`` -> ("A", ["B"]).
* bash: ``source lib/x.sh`` / ``. "$(dirname "$0")/x.sh"`` -> ("lib/x.sh", []) /
  ("./x.sh", []) (a leading directory expansion of the script's own directory becomes ``./``).
* lua: ``local u = require("a.b")`` -> ("a.b", [], "u").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tree_sitter import Node

from semgraph.indexer.imports import _imp, _named, _strip_quotes, text
from semgraph.model import Import

# "$(dirname "$0")/", "${BASH_SOURCE%/*}/", "$SCRIPT_DIR/": the sourcing script's directory
_SH_SELF_DIR = re.compile(
    r"""^(?:"?\$\(\s*dirname\s+["']?\$\{?(?:0|BASH_SOURCE(?:\[0\])?)\}?["']?\s*\)"?"""
    r"""|"?\$\{(?:BASH_SOURCE(?:\[0\])?|0)%/\*\}"?"""
    r"""|"?\$\{?[A-Z_]*DIR\}?"?)/"""
)


def _squash(node: Node) -> str:
    return "".join(text(node).split())


def csharp_imports(node: Node) -> list[Import]:
    body = _squash(node).removeprefix("global").removeprefix("using").rstrip(";")
    if body.startswith("static"):
        return [_imp(node, body.removeprefix("static"), ["*"])]
    alias, eq, target = body.partition("=")
    if eq:
        module, _, last = target.rpartition(".")
        return [_imp(node, module or last, [last] if module else [], alias)]
    return [_imp(node, body, ["*"])]


def kotlin_imports(node: Node) -> list[Import]:
    path = next((c for c in node.named_children if c.type == "qualified_identifier"), None)
    alias = next((c for c in node.named_children if c.type == "identifier"), None)
    dotted = _squash(path) if path is not None else ""
    if text(node).rstrip().endswith("*"):
        return [_imp(node, dotted, ["*"])]
    module, _, last = dotted.rpartition(".")
    if not module:
        return [_imp(node, dotted, [], text(alias) or None)]
    return [_imp(node, module, [last], text(alias) or None)]


def scala_imports(node: Node) -> list[Import]:
    out: list[Import] = []
    for module, items in _scala_paths(node):
        if items == [("*", None)]:
            out.append(_imp(node, module, ["*"]))
        else:
            out.extend(_named(node, module, items))
    return out


def _scala_paths(node: Node) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """(package, [(name, alias)]) of each path of one import (``import a.B, c.D``)."""
    groups: list[tuple[str, list[tuple[str, str | None]]]] = []
    path: list[str] = []
    for child in node.named_children:
        field = node.field_name_for_named_child(node.named_children.index(child))
        if field == "path" and child.type in ("identifier", "operator_identifier"):
            path.append(text(child))
        elif child.type in ("namespace_wildcard", "wildcard"):
            groups.append((".".join(path), [("*", None)]))
            path = []
        elif child.type == "namespace_selectors":
            items: list[tuple[str, str | None]] = []
            for sel in child.named_children:
                if sel.type in ("arrow_renamed_identifier", "as_renamed_identifier"):
                    name = text(sel.child_by_field_name("name"))
                    alias = text(sel.child_by_field_name("alias"))
                    items.append((name, None if alias == "_" else alias))
                elif sel.type in ("namespace_wildcard", "wildcard"):
                    items.append(("*", None))
                else:
                    items.append((text(sel), None))
            groups.append((".".join(path), items))
            path = []
        elif child.type in ("arrow_renamed_identifier", "as_renamed_identifier"):
            name = text(child.child_by_field_name("name"))
            groups.append((".".join(path), [(name, text(child.child_by_field_name("alias")))]))
            path = []
    if path:
        *pkg, last = path
        groups.append((".".join(pkg), [(last, None)]) if pkg else (last, []))
    return [(pkg, items) for pkg, items in groups if pkg or items]


def ruby_imports(node: Node) -> list[Import]:
    method = text(node.child_by_field_name("method"))
    args = node.child_by_field_name("arguments")
    string = next((c for c in (args.named_children if args else []) if c.type == "string"), None)
    if string is None or any(c.type == "interpolation" for c in string.named_children):
        return []
    value = _strip_quotes(text(string))
    if method == "require_relative" and not value.startswith(("./", "../", "/")):
        value = f"./{value}"
    return [_imp(node, value, [])]


def php_imports(node: Node) -> list[Import]:
    if node.type != "namespace_use_declaration":
        return _php_require(node)
    prefix = ""
    group = node.child_by_field_name("body")
    for child in node.named_children:
        if child.type == "namespace_name":
            prefix = text(child)
    clauses = [c for c in (group or node).named_children if c.type == "namespace_use_clause"]
    by_module: dict[str, list[tuple[str, str | None]]] = {}
    for clause in clauses:
        alias_node = clause.child_by_field_name("alias")
        full = "\\".join(p for p in (prefix, _php_clause_name(clause)) if p).lstrip("\\")
        module, _, last = full.rpartition("\\")
        by_module.setdefault(module, []).append((last, text(alias_node) or None))
    out: list[Import] = []
    for module, items in by_module.items():
        out.extend(
            _named(node, module, items) if module else [_imp(node, n, [], a) for n, a in items]
        )
    return out


def _php_clause_name(clause: Node) -> str:
    alias = clause.child_by_field_name("alias")
    for child in clause.named_children:
        if child.type in ("qualified_name", "name") and (alias is None or child.id != alias.id):
            return text(child)
    return ""


def _php_require(node: Node) -> list[Import]:
    arg = next(iter(node.named_children), None)
    if arg is None:
        return []
    if arg.type == "parenthesized_expression" and arg.named_children:
        arg = arg.named_children[0]
    if arg.type in ("string", "encapsed_string"):
        if any(c.type not in ("string_content", "string_value") for c in arg.named_children):
            return []
        return [_imp(node, _strip_quotes(text(arg)), [])]
    if arg.type == "binary_expression":
        left, right = arg.child_by_field_name("left"), arg.child_by_field_name("right")
        if text(left) in ("__DIR__", "dirname(__FILE__)") and right is not None:
            rest = _strip_quotes(text(right)).lstrip("/")
            return [_imp(node, f"./{rest}", [])] if rest and "$" not in rest else []
    return []


def swift_imports(node: Node) -> list[Import]:
    ident = next((c for c in node.named_children if c.type == "identifier"), None)
    dotted = _squash(ident) if ident is not None else ""
    module, _, rest = dotted.partition(".")
    return [_imp(node, module, [rest.rsplit(".", 1)[-1]] if rest else [])] if module else []


def bash_imports(node: Node) -> list[Import]:
    arg = node.child_by_field_name("argument")
    if arg is None:
        return []
    raw = text(arg).strip()
    raw = _SH_SELF_DIR.sub("./", raw, count=1)
    value = _strip_quotes(raw) if raw[:1] in "\"'" else raw
    value = value.replace('"', "").replace("'", "")
    value = value.removeprefix("./") if value.startswith("./../") else value
    if not value or "$" in value or "`" in value:
        return []
    return [_imp(node, value, [])]


def lua_imports(node: Node) -> list[Import]:
    args = node.child_by_field_name("arguments")
    string = next(
        (
            c
            for c in ((args.named_children if args.type == "arguments" else [args]) if args else [])
            if c.type == "string"
        ),
        None,
    )
    if string is None:
        return []
    content = string.child_by_field_name("content")
    value = text(content) if content is not None else _strip_quotes(text(string))
    alias = None
    parent = node.parent
    if parent is not None and parent.type == "expression_list":
        assign = parent.parent
        names = assign.child_by_field_name("variable_list") if assign is not None else None
        if assign is not None and assign.type == "assignment_statement":
            var_list = next((c for c in assign.named_children if c.type == "variable_list"), names)
            first = var_list.named_children[0] if var_list and var_list.named_children else None
            if first is not None and first.type == "identifier":
                alias = text(first)
    return [_imp(node, value, [], alias)] if value else []


NAMESPACE_IMPORTERS: dict[str, Callable[[Node], list[Import]]] = {
    "csharp": csharp_imports,
    "kotlin": kotlin_imports,
    "scala": scala_imports,
    "ruby": ruby_imports,
    "php": php_imports,
    "swift": swift_imports,
    "bash": bash_imports,
    "lua": lua_imports,
}
