"""The parsed model: plain dataclasses, one :class:`FileFacts` per indexed file and one
:class:`SkippedFile` per file not indexed. These are what the parse pool produces, what the
spill stores (msgpack of ``to_record()``), and what resolution, the graph writer and the
search indexer consume.

Conventions shared by every consumer:

* lines are 1-based and inclusive;
* ``qualified_name`` of a symbol is ``<module>.<Outer>.<name>`` where ``<module>`` is
  :func:`module_name` of the file's path (Python: dotted package path; every other
  language: the path without its extension, ``/`` replaced by ``.``);
* ``parent`` is the parent symbol's qualified name (None at module level);
* ``enclosing`` of a call site is the qualified name of the innermost function/method/class
  containing it (the module's qualified name at top level);
* a chunk's ``content_hash`` is the sha256 of its text (embedding reuse keys on
  (model id, embedded text) separately).
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any

MODEL_VERSION = 6  # 2: FileFacts.bindings (typed names); 3: Binding.end, decorators, unpacking;
# 4: a one-line Go defined type is no chunk of its own (semgraph.indexer.chunking); 5:
# FileFacts.exports (JS/TS); 6: CallSite.args (overloads by arity)


class ParseStatus(enum.StrEnum):
    OK = "ok"
    PARTIAL = "partial"  # syntax errors: whatever tree-sitter recovered
    PARSE_FAILED = "parse_failed"  # crashed / timed out / over memory twice: plain-text chunks
    TEXT = "text"  # not a code language: chunked for search only


class SkipReason(enum.StrEnum):
    IGNORED = "ignored"  # .gitignore / .semgraphignore
    VENDORED = "vendored"  # vendor/, node_modules/, third_party/ ...
    GENERATED = "generated"  # dist/, build/, minified bundles, lock files
    BINARY = "binary"
    TOO_LARGE = "too_large"
    SYMLINK = "symlink"  # a symlink that leaves the repository (or any symlink)
    UNREADABLE = "unreadable"
    EMPTY = "empty"


class SymbolKind(enum.StrEnum):
    MODULE = "module"
    CLASS = "class"
    INTERFACE = "interface"
    STRUCT = "struct"
    ENUM = "enum"
    TRAIT = "trait"
    TYPE = "type"  # a Go defined type that is no struct or interface (`type Attr int32`)
    FUNCTION = "function"
    METHOD = "method"


@dataclass(slots=True)
class Symbol:
    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    signature: str = ""
    docstring: str | None = None
    parent: str | None = None
    bases: list[str] = field(default_factory=list)  # base class / interface texts


@dataclass(slots=True)
class Import:
    module: str  # the imported module text as written ("os.path", "./util", "fmt")
    names: list[str] = field(default_factory=list)  # imported names ("join"), empty = module
    alias: str | None = None
    start_line: int = 0
    end_line: int = 0


@dataclass(slots=True)
class CallSite:
    enclosing: str  # qualified name of the innermost enclosing symbol (or the module)
    callee: str  # the called name as written, without receiver ("join", "run")
    receiver: str | None  # receiver text ("self", "os.path", "this.repo"), None for bare calls
    line: int
    args: int = -1  # the number of arguments written; -1: unknown (a spread, no argument list)


@dataclass(slots=True)
class Binding:
    """A name whose type the source states or implies, seen from one scope: ``x = Cls()``,
    ``with Cls() as x``, ``x: Cls``, a parameter ``p: Cls``, ``self.attr = Cls()`` (scope:
    the class), and a function's declared return type or ``return Cls()`` (name
    :data:`RETURN`), and a function's outermost decorator (name :data:`DECORATOR`, kind
    ``value``, the decorator as written). ``kind`` says what ``text`` is: ``type`` (a type
    expression as written), ``call`` (the called expression of the value: ``Cls``,
    ``pkg.make``, ``a.b``) or ``name`` (a parameter or local whose type is not stated: it
    still shadows other meanings)."""

    scope: str  # qualified name of the function / class / module the name belongs to
    name: str
    kind: str  # "type" | "call" | "name"
    text: str
    line: int  # the first line on which the name is in effect
    end: int = 0  # the last one, where it ends before its scope does (a Go function literal's)


RETURN = "<return>"  # the Binding name of a function's return type
DECORATOR = "<decorator>"  # the Binding name of a function's outermost decorator (its text)


@dataclass(slots=True)
class Chunk:
    start_line: int
    end_line: int
    text: str
    content_hash: str
    symbol: str | None = None  # qualified name of the symbol the chunk is aligned to
    kind: str | None = None  # that symbol's kind


@dataclass(slots=True)
class FileFacts:
    path: str  # repository-relative, posix
    language: str  # "python", "javascript", "typescript", "tsx", "go", "java", "rust",
    # "c", "cpp", or a text kind ("markdown", "yaml", "text", ...)
    blob_sha: str
    size_bytes: int
    line_count: int
    parse_status: str
    parse_error: str | None = None
    symbols: list[Symbol] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    # JS/TS: what the module exports beyond its named definitions, as ``Import(module,
    # [member], exported)`` (semgraph.indexer.imports.js_exports)
    exports: list[Import] = field(default_factory=list)

    @property
    def module(self) -> str:
        return module_name(self.path, self.language)

    def to_record(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> FileFacts:
        return cls(
            path=rec["path"],
            language=rec["language"],
            blob_sha=rec["blob_sha"],
            size_bytes=rec["size_bytes"],
            line_count=rec["line_count"],
            parse_status=rec["parse_status"],
            parse_error=rec.get("parse_error"),
            symbols=[Symbol(**s) for s in rec.get("symbols", ())],
            imports=[Import(**i) for i in rec.get("imports", ())],
            calls=[CallSite(**c) for c in rec.get("calls", ())],
            chunks=[Chunk(**c) for c in rec.get("chunks", ())],
            bindings=[Binding(**b) for b in rec.get("bindings", ())],
            exports=[Import(**e) for e in rec.get("exports", ())],
        )


@dataclass(slots=True)
class SkippedFile:
    path: str
    reason: str  # a SkipReason value
    detail: str = ""

    def to_record(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> SkippedFile:
        return cls(**rec)


@dataclass(frozen=True, slots=True)
class FileSummary:
    """A parsed file known by what its resolution rows depend on, its record not decoded (a
    parse-cache hit in the spill): the incremental resolver compares ``row_digest``
    with the previous resolution's and calls ``load`` only for the files that differ."""

    path: str
    language: str
    parse_status: str
    row_digest: bytes  # resolve.ledger.row_digest of the record
    load: Callable[[], FileFacts]


def module_name(path: str, language: str) -> str:
    """The module part of qualified names for a file at ``path``."""
    p = PurePosixPath(path)
    if language == "python":
        parts = list(p.with_suffix("").parts)
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts) or p.stem
    return ".".join(p.with_suffix("").parts)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
