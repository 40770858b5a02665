"""Extract one file's :class:`FileFacts` with tree-sitter (runs in a pool child).

The per-language query (``queries/<language>.scm``) captures:

* ``@definition.<kind>`` with ``@name`` (and ``@owner`` for a method defined outside its
  type: Go receivers, C++ ``Type::name``);
* ``@scope.impl`` (Rust ``impl``, Swift ``extension``: the methods' parent type) and
  ``@scope.namespace`` (C++ / C# / PHP namespaces, Rust inline modules, TS namespaces: a
  qualified-name prefix only; a top-level C# or PHP one replaces the module);
* ``@package`` with ``@name`` (Kotlin / Scala ``package``, C# ``namespace X;``, PHP
  ``namespace X;``): the file's package, which replaces the module in qualified names;
* ``@import`` (interpreted by :mod:`semgraph.indexer.imports`);
* ``@call`` with ``@callee`` and optional ``@receiver``;
* ``@bind`` / ``@returns`` and their parts: typed names (:mod:`semgraph.indexer.typed`).

A function whose nearest enclosing symbol is a class-like type becomes a method. Qualified
names are ``<module>.<Outer>.<name>`` (model.py); overloads may repeat a qualified name, the
start line tells them apart. A tree with errors still yields what was recovered, ``partial``.

It is a little over 300 lines because definitions, calls and typed names are placed by one
walk over the open definitions (:func:`_walk`); apart, each would need that walk again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node, QueryCursor

from semgraph import model
from semgraph.indexer import chunking, jsdoc, languages, typed
from semgraph.indexer.describe import (
    MAX_EXPR,
    arg_count,
    bases,
    comment_docstring,
    dotted_name,
    keyword,
    one_line,
    outermost,
    python_docstring,
    signature,
)
from semgraph.indexer.imports import IMPORTERS, js_exports, text
from semgraph.indexer.namespace_imports import NAMESPACE_IMPORTERS
from semgraph.indexer.treeparse import PARSE_BUDGET_S, first_error_line, longest_line, parse_within
from semgraph.model import Binding, CallSite, FileFacts, Import, ParseStatus, Symbol, SymbolKind

CLASS_LIKE = {"class", "interface", "struct", "enum", "trait", "impl"}
# block namespaces that are a language's module system (C#, PHP): no file-path prefix
ROOT_NAMESPACES = {"csharp", "php"}


@dataclass(frozen=True, slots=True)
class ExtractOptions:
    chunk_max_lines: int = 60
    chunk_max_chars: int = 2400
    # a code file with a longer line (generated or minified: one 5 MB line is a million call
    # sites) is indexed as text, with the reason in parse_error
    max_code_line_bytes: int = 200_000
    parse_budget_s: float = PARSE_BUDGET_S  # then the prefix parsed so far (treeparse.py)


@dataclass(slots=True)
class _Def:
    node: Node
    kind: str  # a SymbolKind value, or "impl" / "namespace" for scopes
    name: str
    owner: str | None
    scope: bool
    qualified_name: str = ""
    parent: str | None = None  # nearest enclosing symbol (or impl type)


def blob_sha(data: bytes) -> str:
    """The git blob id of ``data`` (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def line_count(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


_Collected = tuple[
    list[_Def], list[Node], list[tuple[Node, ...]], dict[int, typed.RawBinding], list[Node]
]


def _typed_facts(caps: dict[str, list[Node]], binds: dict[int, typed.RawBinding]) -> None:
    """Typed names a query pattern cannot state alone: a Go conversion fact
    (:mod:`semgraph.indexer.go_conv`), a Go const block's implicit types, JSDoc types
    (:mod:`semgraph.indexer.jsdoc`)."""
    if "conv" in caps:
        typed.conversion(caps, binds)
    elif "consts" in caps:
        typed.go_consts(caps["consts"][0], binds)
    else:
        jsdoc.collect(caps, binds)


def _collect(language: str, root: Node) -> _Collected:
    defs: dict[int, _Def] = {}
    import_nodes: dict[int, Node] = {}
    export_nodes: dict[int, Node] = {}
    calls: dict[int, tuple[Node, ...]] = {}
    binds: dict[int, typed.RawBinding] = {}
    for _, caps in QueryCursor(languages.query(language)).matches(root):
        if "conv" in caps or "consts" in caps or "jsdoc" in caps:
            _typed_facts(caps, binds)
        elif "bind" in caps or "returns" in caps or "decorated" in caps or "bind.scope" in caps:
            typed.collect(caps, binds)
        elif "package" in caps:  # a file-level package / namespace: the root of its names
            node = caps["package"][0]
            package = _Def(node, "package", dotted_name(caps["name"][0]), None, scope=True)
            defs.setdefault(node.id, package)
        elif "import" in caps:
            node = caps["import"][0]
            import_nodes.setdefault(node.id, node)
        elif "export" in caps:
            node = caps["export"][0]
            export_nodes.setdefault(node.id, node)
        elif "call" in caps:
            call = caps["call"][0]
            receiver = caps.get("receiver")
            calls.setdefault(
                call.id, (call, caps["callee"][0], *(receiver[:1] if receiver else ()))
            )
        else:
            for key, nodes in caps.items():
                kind_tag, _, kind = key.partition(".")
                if kind_tag not in {"definition", "scope"} or "name" not in caps:
                    continue
                node = nodes[0]
                owner = caps.get("owner")
                if kind == "class" and keyword(node) == "interface":
                    kind = "interface"  # Kotlin: `interface X` is a class_declaration
                defs.setdefault(
                    node.id,
                    _Def(
                        node=node,
                        kind=kind,
                        name=dotted_name(caps["name"][0])
                        if kind_tag == "scope"
                        else text(caps["name"][0]),
                        owner=text(owner[0]).replace("::", ".") if owner else None,
                        scope=kind_tag == "scope",
                    ),
                )
    ordered = sorted(defs.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte))
    imports = sorted(import_nodes.values(), key=lambda n: n.start_byte)
    call_list = sorted(calls.values(), key=lambda c: c[0].start_byte)
    exports = sorted(export_nodes.values(), key=lambda n: n.start_byte)
    return ordered, imports, call_list, binds, exports


class _Open:
    """The definitions open at a position, outermost first, for nodes visited in source
    order: containment by byte range (tree nodes nest), never ``Node.parent``, which costs
    a walk from the root each time (quadratic in the depth of deeply nested code)."""

    def __init__(self) -> None:
        self.stack: list[_Def] = []

    def at(self, node: Node) -> list[_Def]:
        start, end = node.start_byte, node.end_byte
        stack = self.stack
        while stack and not (stack[-1].node.start_byte <= start and end <= stack[-1].node.end_byte):
            stack.pop()
        return stack


def _innermost(open_defs: list[_Def], *, symbols_only: bool) -> _Def | None:
    for found in reversed(open_defs):
        if not (symbols_only and found.scope):
            return found
    return None


def _qualify(defs: list[_Def], module: str, language: str) -> None:
    package = next((d for d in defs if d.kind == "package"), None)
    if package is not None:
        module = package.name
    opened = _Open()
    for d in defs:
        if d.kind == "package":
            d.qualified_name = module
            continue
        outer = _innermost(opened.at(d.node), symbols_only=False)
        prefix = outer.qualified_name if outer else module
        if outer is None:
            d.parent = None
        elif outer.kind == "namespace":
            d.parent = outer.parent
        else:
            d.parent = outer.qualified_name
        if d.owner:
            owner_prefix = outer.qualified_name if outer and outer.kind == "namespace" else module
            prefix = d.parent = f"{owner_prefix}.{d.owner}"
        if d.kind == SymbolKind.FUNCTION and outer is not None and outer.kind in CLASS_LIKE:
            d.kind = SymbolKind.METHOD
        d.qualified_name = f"{prefix}.{d.name}"
        if d.kind == "namespace" and outer is None and language in ROOT_NAMESPACES:
            d.qualified_name = d.name
        opened.stack.append(d)


def _symbols(defs: list[_Def], language: str) -> list[Symbol]:
    out: list[Symbol] = []
    for d in defs:
        if d.scope:
            continue
        span = (
            outermost(d.node)
            if d.node.parent is not None and d.node.parent.type in {"decorated_definition"}
            else d.node
        )
        doc = python_docstring(d.node) if language == "python" else comment_docstring(d.node)
        out.append(
            Symbol(
                kind=d.kind,
                name=d.name,
                qualified_name=d.qualified_name,
                start_line=span.start_point[0] + 1,
                end_line=d.node.end_point[0] + 1,
                signature=signature(d.node),
                docstring=doc,
                parent=d.parent,
                bases=bases(d.node) if d.kind in CLASS_LIKE else [],
            )
        )
    return out


def _walk(nodes: list[Node], defs: list[_Def]) -> Iterator[list[_Def]]:
    """The definitions open at each of ``nodes`` (both in source order), outermost first."""
    opened = _Open()
    pending = iter(defs)  # open every definition starting before the node
    upcoming = next(pending, None)
    for node in nodes:
        while upcoming is not None and upcoming.node.start_byte <= node.start_byte:
            opened.at(upcoming.node)
            opened.stack.append(upcoming)
            upcoming = next(pending, None)
        yield opened.at(node)


def _calls(call_nodes: list[tuple[Node, ...]], defs: list[_Def], module: str) -> list[CallSite]:
    out: list[CallSite] = []
    walk = _walk([c[0] for c in call_nodes], defs)
    for (call, callee, *rest), open_defs in zip(call_nodes, walk, strict=True):
        enclosing = _innermost(open_defs, symbols_only=True)
        receiver = one_line(text(rest[0]), MAX_EXPR) if rest else None
        out.append(
            CallSite(
                enclosing=enclosing.qualified_name if enclosing else module,
                callee=one_line(text(callee), MAX_EXPR),
                receiver=receiver,
                line=call.start_point[0] + 1,
                args=arg_count(call),
            )
        )
    return out


def _bindings(binds: dict[int, typed.RawBinding], defs: list[_Def], module: str) -> list[Binding]:
    raws = typed.ordered(binds)
    items = []
    for raw, open_defs in zip(raws, _walk([b.node for b in raws], defs), strict=True):
        inner = _innermost(open_defs, symbols_only=True)
        owner = next((d for d in reversed(open_defs) if d.kind in CLASS_LIKE), None)
        owner_qn = owner.qualified_name if owner is not None else None
        items.append((raw, inner.qualified_name if inner else module, owner_qn))
    return typed.to_bindings(items, module)


_OVERLOAD = frozenset({"overload", "typing.overload", "t.overload", "typing_extensions.overload"})


def _is_overload(d: _Def) -> bool:
    wrapper = d.node.parent
    if wrapper is None or wrapper.type != "decorated_definition":
        return False
    return any(
        c.type == "decorator" and text(c).lstrip("@").strip() in _OVERLOAD for c in wrapper.children
    )


def _collapse_overloads(
    defs: list[_Def], binds: dict[int, typed.RawBinding]
) -> tuple[list[_Def], dict[int, typed.RawBinding]]:
    """Python ``@overload`` stubs that have an implementation are dropped, with the typed
    names inside them: one function, not several (a stub-only name keeps its stubs)."""
    stubs = [d for d in defs if _is_overload(d)]
    implemented = {d.qualified_name for d in defs if not d.scope and not _is_overload(d)}
    drop = [d for d in stubs if d.qualified_name in implemented]
    if not drop:
        return defs, binds
    ids = {d.node.id for d in drop}
    spans = [(d.node.start_byte, d.node.end_byte) for d in drop]
    kept = {k: b for k, b in binds.items() if not any(a <= b.node.start_byte < z for a, z in spans)}
    return [d for d in defs if d.node.id not in ids], kept


def extract_code(
    path: str, language: str, data: bytes, budget_s: float = PARSE_BUDGET_S
) -> tuple[list[Symbol], list[Import], list[CallSite], str | None]:
    """Symbols, imports, calls, and a syntax-error note (None when the tree is clean)."""
    symbols, imports, calls, _, error = extract_all(path, language, data, budget_s)
    return symbols, imports, calls, error


def extract_all(
    path: str, language: str, data: bytes, budget_s: float = PARSE_BUDGET_S
) -> tuple[list[Symbol], list[Import], list[CallSite], list[Binding], str | None]:
    """:func:`extract_code` and the file's typed names."""
    symbols, imports, calls, bindings, error, _ = extract_facts(path, language, data, budget_s)
    return symbols, imports, calls, bindings, error


def extract_facts(
    path: str, language: str, data: bytes, budget_s: float = PARSE_BUDGET_S
) -> tuple[list[Symbol], list[Import], list[CallSite], list[Binding], str | None, list[Import]]:
    """:func:`extract_all` and the file's exports (JS/TS, :func:`js_exports`)."""
    module = model.module_name(path, language)
    tree, stopped = parse_within(language, data, budget_s)
    root = tree.root_node
    defs, import_nodes, call_nodes, binds, export_nodes = _collect(language, root)
    _qualify(defs, module, language)
    if language == "python":
        defs, binds = _collapse_overloads(defs, binds)
    symbols = _symbols(defs, language)
    importer = (IMPORTERS | NAMESPACE_IMPORTERS)[language]
    imports = [imp for node in import_nodes for imp in importer(node)]
    calls = _calls(call_nodes, defs, module)
    bindings = _bindings(binds, defs, module)
    error = f"syntax error near line {first_error_line(root)}" if root.has_error else None
    if stopped is not None:
        error = f"parse stopped after {budget_s:g} s at byte {stopped} of {len(data)}"
    exports = [e for node in export_nodes for e in js_exports(node)]
    return symbols, imports, calls, bindings, error, exports


def extract_file(path: str, data: bytes, options: ExtractOptions) -> FileFacts:
    """The :class:`FileFacts` of one file's bytes (code: parsed; other text: chunked)."""
    language = languages.detect_language(path, data[: languages.SHEBANG_MAX_BYTES])
    source = data.decode("utf-8", "replace")
    facts = FileFacts(
        path=path,
        language=language,
        blob_sha=blob_sha(data),
        size_bytes=len(data),
        line_count=line_count(data),
        parse_status=ParseStatus.TEXT,
    )
    code = languages.is_code(language)
    longest = longest_line(data) if code and len(data) > options.max_code_line_bytes else 0
    if longest > options.max_code_line_bytes:
        facts.parse_error = (
            f"a line of {longest} bytes (over {options.max_code_line_bytes}): indexed as text"
        )
    elif languages.is_code(language):
        symbols, imports, calls, binds, error, exports = extract_facts(
            path, language, data, options.parse_budget_s
        )
        facts.symbols, facts.imports, facts.calls, facts.bindings = symbols, imports, calls, binds
        facts.exports = exports
        facts.parse_status = ParseStatus.PARTIAL if error else ParseStatus.OK
        facts.parse_error = error
    facts.chunks = chunking.chunk_lines(
        chunking.split_lines(source),
        facts.symbols,
        max_lines=options.chunk_max_lines,
        max_chars=options.chunk_max_chars,
    )
    return facts


def failed_file(path: str, data: bytes, reason: str, options: ExtractOptions) -> FileFacts:
    """A file whose parse failed twice: plain-text chunks, ``parse_failed`` and the reason."""
    facts = FileFacts(
        path=path,
        language=languages.detect_language(path, data[: languages.SHEBANG_MAX_BYTES]),
        blob_sha=blob_sha(data),
        size_bytes=len(data),
        line_count=line_count(data),
        parse_status=ParseStatus.PARSE_FAILED,
        parse_error=reason,
    )
    facts.chunks = chunking.chunk_lines(
        chunking.split_lines(data.decode("utf-8", "replace")),
        [],
        max_lines=options.chunk_max_lines,
        max_chars=options.chunk_max_chars,
    )
    return facts
