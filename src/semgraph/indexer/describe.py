"""What a definition says about itself, read from its syntax tree: its signature (the
declaration up to the body, on one line), its docstring (Python's string literal, or the
comments just above it in the other languages) and the base types it names."""

from __future__ import annotations

import inspect

from tree_sitter import Node

from semgraph.indexer.imports import text

MAX_SIGNATURE = 400
MAX_DOCSTRING = 4000
MAX_EXPR = 200
_COMMENTS = {"comment", "line_comment", "block_comment"}
_WRAPPERS = {"decorated_definition", "export_statement", "template_declaration"}
_SKIP_BEFORE = {"attribute_item", "decorator", "marker_annotation", "annotation"}


def one_line(value: str, limit: int) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


def outermost(node: Node) -> Node:
    parent = node.parent
    while parent is not None and parent.type in _WRAPPERS:
        node, parent = parent, parent.parent
    return node


def signature(node: Node) -> str:
    body = node.child_by_field_name("body")
    if body is None and node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        body = value.child_by_field_name("body") if value is not None else None
    raw = node.text or b""
    if body is not None and body.start_byte > node.start_byte:
        raw = raw[: body.start_byte - node.start_byte]
    else:
        raw = raw.split(b"\n", 1)[0]
    sig = raw.decode("utf-8", "replace").strip().rstrip("{:").rstrip()
    if sig.endswith("=>"):
        sig = sig[:-2].rstrip()
    return one_line(sig, MAX_SIGNATURE)


def python_docstring(node: Node) -> str | None:
    body = node.child_by_field_name("body")
    if body is None or not body.named_children:
        return None
    first = body.named_children[0]
    if first.type != "expression_statement" or not first.named_children:
        return None
    string = first.named_children[0]
    if string.type != "string":
        return None
    parts = [text(c) for c in string.named_children if c.type == "string_content"]
    return clean_doc("".join(parts))


def clean_comment(raw: str) -> str:
    lines = []
    for line in raw.splitlines():
        s = line.strip()
        for prefix in ("///", "//!", "//", "/**", "/*!", "/*", "*/", "*", "#"):
            if s.startswith(prefix):
                s = s[len(prefix) :]
                break
        if s.endswith("*/"):
            s = s[:-2]
        lines.append(s.strip())
    return "\n".join(lines).strip()


def clean_doc(doc: str) -> str | None:

    cleaned = inspect.cleandoc(doc).strip()
    if not cleaned:
        return None
    return cleaned if len(cleaned) <= MAX_DOCSTRING else cleaned[: MAX_DOCSTRING - 1] + "…"


def comment_docstring(node: Node) -> str | None:
    comments: list[str] = []
    cur = outermost(node)
    row = cur.start_point[0]
    sib = cur.prev_sibling
    while sib is not None and (sib.type in _COMMENTS or sib.type in _SKIP_BEFORE):
        if sib.end_point[0] < row - 1:
            break
        if sib.type in _COMMENTS:
            comments.append(clean_comment(text(sib)))
        row = sib.start_point[0]
        sib = sib.prev_sibling
    if not comments:
        return None
    return clean_doc("\n".join(reversed(comments)))


_BASE_FIELDS = ("superclasses", "superclass", "interfaces")
_BASE_CONTAINERS = {
    "class_heritage",
    "base_class_clause",
    "extends_interfaces",
    "super_interfaces",
    "base_list",  # C#
    "delegation_specifiers",  # Kotlin
    "base_clause",  # PHP extends
    "class_interface_clause",  # PHP implements
    "inheritance_specifier",  # Swift
    "extends_clause",  # Scala (JS/TS keep theirs inside class_heritage)
}
_BASE_NESTED = {
    "extends_clause",
    "implements_clause",
    "type_list",
    "superclass",
    "super_interfaces",
    "extends_interfaces",
    "delegation_specifier",
    "constructor_invocation",
}
_BASE_SKIP = {
    "keyword_argument",
    "access_specifier",
    "comment",
    "type_arguments",
    "value_arguments",
    "arguments",
}


def base_texts(container: Node) -> list[str]:
    out: list[str] = []
    for child in container.named_children:
        if child.type in _BASE_SKIP:
            continue
        if child.type in _BASE_NESTED:
            out.extend(base_texts(child))
        else:
            out.append(one_line(text(child), MAX_EXPR))
    return out


def bases(node: Node) -> list[str]:
    out: list[str] = []
    for name in _BASE_FIELDS:
        child = node.child_by_field_name(name)
        if child is not None:
            out.extend(base_texts(child))
    for child in node.named_children:
        if child.type in _BASE_CONTAINERS:
            out.extend(base_texts(child))
    return list(dict.fromkeys(out))


def dotted_name(node: Node) -> str:
    """A namespace's name as a qualified-name prefix (PHP ``App\\Models`` -> ``App.Models``)."""
    return "".join(text(node).split()).replace("\\", ".").strip(".")


def keyword(node: Node) -> str | None:
    """The keyword a node starts with (Kotlin ``interface``), None when it starts with a name."""
    first = node.child(0)
    return first.type if first is not None and not first.is_named else None


_SPREADS = frozenset(
    {"spread_element", "list_splat", "dictionary_splat", "spread_argument", "variadic_argument"}
)


def arg_count(call: Node) -> int:
    """The arguments a call writes (-1: none written as a list, or a spread among them)."""
    args = call.child_by_field_name("arguments")
    if args is None:
        return -1
    items = [c for c in args.named_children if c.type not in ("comment", "line_comment")]
    return -1 if any(c.type in _SPREADS for c in items) else len(items)
