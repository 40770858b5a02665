"""The repository's symbol table, on disk (SQLite), built by streaming the parsed model once.

Only names, keys and the raw import/call facts go in; symbol bodies, chunks and signatures
stay in the spill. Node keys are computed here, by :func:`symbol_rows`, and the graph writer
calls the same function, so both agree on every key without holding a map in memory.

The typed names of each file (``typed_raw``, :class:`semgraph.model.Binding`) go in too: the
receiver types of call resolution (:mod:`semgraph.resolve.typed`) are read from them.

It is a little over 300 lines because the DDL, the inserts and the row builder of one table
change together and stay in one place.

Keys embed the repository key, so they are unique across repositories:

* ``File``: ``<repo>|<path>``
* ``Symbol``: ``<repo>|<path>|<qualified_name>`` (``|2``, ``|3``... for a second definition
  of the same qualified name in one file, such as Java overloads)
* ``ExternalModule``: ``<repo>|ext|<name>``
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import ClassVar

from semgraph.model import FileFacts, ParseStatus, SkippedFile, SymbolKind
from semgraph.resolve import pyroots

CODE_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx", "go", "java", "rust"}) | {
    *("c", "cpp", "csharp", "kotlin", "ruby", "php", "swift", "scala", "bash", "lua")
}
_FAMILY = {"javascript": "js", "typescript": "js", "tsx": "js", "cpp": "c"}
CLASS_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "type"})
INSERT_BATCH = 2000
MAX_PARSE_ERROR_CHARS = 500  # of a parse error kept on the File node


def family(language: str) -> str:
    """Languages whose names can refer to each other (JS/TS, C/C++)."""
    return _FAMILY.get(language, language)


def file_key(repo_key: str, path: str) -> str:
    return f"{repo_key}|{path}"


def external_key(repo_key: str, name: str) -> str:
    return f"{repo_key}|ext|{name}"


def is_code(facts: FileFacts) -> bool:
    return facts.language in CODE_LANGUAGES and facts.parse_status in (
        ParseStatus.OK,
        ParseStatus.PARTIAL,
    )


@dataclass(frozen=True, slots=True)
class SymbolRow:
    key: str
    kind: str
    name: str
    qualified_name: str
    parent_key: str | None  # None only for the module symbol
    start_line: int
    end_line: int
    signature: str
    bases: tuple[str, ...]


def symbol_rows(repo_key: str, facts: FileFacts) -> list[SymbolRow]:
    """Every symbol of a code file with its key, the module symbol first (synthesized when
    the parser did not emit one). Non-code and unparsed files have none."""
    if not is_code(facts):
        return []
    module = facts.module
    symbols = list(facts.symbols)
    mod_sym = next(
        (s for s in symbols if s.kind == SymbolKind.MODULE and s.qualified_name == module), None
    )
    if mod_sym is not None:
        symbols.remove(mod_sym)
    mod_key = f"{repo_key}|{facts.path}|{module}"
    rows = [
        SymbolRow(
            key=mod_key,
            kind=SymbolKind.MODULE.value,
            name=module.rsplit(".", 1)[-1],
            qualified_name=module,
            parent_key=None,
            start_line=1,
            end_line=max(1, facts.line_count),
            signature=mod_sym.signature if mod_sym else "",
            bases=(),
        )
    ]
    seen: dict[str, int] = {module: 1}
    by_qn: dict[str, list[SymbolRow]] = {module: [rows[0]]}
    for sym in symbols:
        n = seen.get(sym.qualified_name, 0) + 1
        seen[sym.qualified_name] = n
        key = f"{repo_key}|{facts.path}|{sym.qualified_name}" + (f"|{n}" if n > 1 else "")
        parent_key = mod_key
        if sym.parent:
            parents = by_qn.get(sym.parent)
            if parents:
                parent_key = _innermost(parents, sym.start_line).key
        row = SymbolRow(
            key=key,
            kind=str(sym.kind),
            name=sym.name,
            qualified_name=sym.qualified_name,
            parent_key=parent_key,
            start_line=sym.start_line,
            end_line=sym.end_line,
            signature=sym.signature,
            bases=tuple(sym.bases),
        )
        rows.append(row)
        by_qn.setdefault(sym.qualified_name, []).append(row)
    return rows


def _innermost(rows: list[SymbolRow], line: int) -> SymbolRow:
    """Of several definitions with one qualified name, the one whose range holds ``line``."""
    for row in reversed(rows):
        if row.start_line <= line <= row.end_line:
            return row
    return rows[0]


_DDL = """
CREATE TABLE files (path TEXT PRIMARY KEY, key TEXT, module TEXT, language TEXT,
                    family TEXT, dir TEXT, code INTEGER, blob_sha TEXT, loc INTEGER,
                    size_bytes INTEGER, parse_status TEXT, parse_error TEXT, bundle BLOB);
CREATE TABLE skipped (path TEXT, reason TEXT);
CREATE TABLE symbols (key TEXT PRIMARY KEY, path TEXT, qn TEXT, name TEXT, kind TEXT,
                      parent_key TEXT, family TEXT, start_line INTEGER, end_line INTEGER,
                      toplevel INTEGER, signature TEXT);
CREATE TABLE bases (child_key TEXT, path TEXT, text TEXT);
CREATE TABLE modsuffix (suffix TEXT, path TEXT, family TEXT);
CREATE TABLE dirsuffix (suffix TEXT, dir TEXT, family TEXT);
CREATE TABLE imports_raw (id INTEGER PRIMARY KEY, path TEXT, module TEXT, names TEXT,
                          alias TEXT, line INTEGER);
CREATE TABLE exports_raw (path TEXT, module TEXT, member TEXT, exported TEXT, line INTEGER);
CREATE TABLE calls_raw (id INTEGER PRIMARY KEY, path TEXT, enclosing TEXT, callee TEXT,
                        receiver TEXT, line INTEGER, args INTEGER);
CREATE TABLE go_modules (dir TEXT, module TEXT);
CREATE TABLE packaging (path TEXT, text TEXT);
CREATE TABLE typed_raw (path TEXT, scope TEXT, name TEXT, kind TEXT, text TEXT, line INTEGER,
                        end_line INTEGER);
"""
_INDEXES = """
CREATE INDEX symbols_qn ON symbols (qn);
CREATE INDEX symbols_name ON symbols (name, family);
CREATE INDEX symbols_path ON symbols (path, name);
CREATE INDEX symbols_parent ON symbols (parent_key, name);
CREATE INDEX modsuffix_s ON modsuffix (suffix, family);
CREATE INDEX dirsuffix_s ON dirsuffix (suffix, family);
CREATE INDEX files_dir ON files (dir, family);
CREATE INDEX imports_raw_path ON imports_raw (path);
CREATE INDEX calls_raw_path ON calls_raw (path);
CREATE INDEX exports_raw_path ON exports_raw (path);
CREATE INDEX bases_path ON bases (path);
CREATE INDEX bases_child ON bases (child_key);
CREATE INDEX typed_raw_path ON typed_raw (path);
"""


def _project_files(
    facts: FileFacts, directory: str, buf: dict[str, list[tuple[object, ...]]]
) -> None:
    """What a go.mod (its module path) and a Python packaging file (its text) say."""
    packaging = pyroots.packaging_text(facts)
    if packaging is not None:
        buf.setdefault("packaging", []).append((facts.path, packaging))
    if PurePosixPath(facts.path).name == "go.mod" and facts.chunks:
        for line in facts.chunks[0].text.splitlines():
            if line.startswith("module "):
                buf.setdefault("go_modules", []).append((directory, line.split()[1]))
                break


class SymbolTable:
    """A SQLite file holding the repository's names, keys and raw facts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode=OFF")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("PRAGMA cache_size=-16000")  # 16 MB page cache: bounded memory

    def close(self) -> None:
        self.db.close()

    @classmethod
    def build(
        cls, path: Path, repo_key: str, files: Iterable[FileFacts | SkippedFile]
    ) -> SymbolTable:
        """Stream ``files`` once into a fresh table at ``path``."""
        path.unlink(missing_ok=True)
        table = cls(path)
        table.db.executescript(_DDL)
        buf: dict[str, list[tuple[object, ...]]] = {}
        for item in files:
            if isinstance(item, SkippedFile):
                buf.setdefault("skipped", []).append((item.path, str(item.reason)))
            else:
                table._add(repo_key, item, buf)
            if sum(len(v) for v in buf.values()) >= INSERT_BATCH:
                table._flush(buf)
        table._flush(buf)
        table.db.executescript(_INDEXES)
        table.db.commit()
        return table

    _INSERTS: ClassVar[dict[str, str]] = {
        "files": "INSERT OR IGNORE INTO files VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        "skipped": "INSERT INTO skipped VALUES (?,?)",
        "symbols": "INSERT OR IGNORE INTO symbols VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        "bases": "INSERT INTO bases VALUES (?,?,?)",
        "modsuffix": "INSERT INTO modsuffix VALUES (?,?,?)",
        "imports_raw": "INSERT INTO imports_raw (path, module, names, alias, line) "
        "VALUES (?,?,?,?,?)",
        "calls_raw": "INSERT INTO calls_raw (path, enclosing, callee, receiver, line, args) "
        "VALUES (?,?,?,?,?,?)",
        "go_modules": "INSERT INTO go_modules VALUES (?,?)",
        "exports_raw": "INSERT INTO exports_raw VALUES (?,?,?,?,?)",
        "typed_raw": "INSERT INTO typed_raw VALUES (?,?,?,?,?,?,?)",
        "packaging": "INSERT INTO packaging VALUES (?,?)",
    }

    def _flush(self, buf: dict[str, list[tuple[object, ...]]]) -> None:
        for table, rows in buf.items():
            if rows:
                self.db.executemany(self._INSERTS[table], rows)
        buf.clear()

    def _add(
        self, repo_key: str, facts: FileFacts, buf: dict[str, list[tuple[object, ...]]]
    ) -> None:
        path = facts.path
        fam = family(facts.language)
        directory = str(PurePosixPath(path).parent)
        directory = "" if directory == "." else directory
        code = is_code(facts)
        _project_files(facts, directory, buf)
        file_row = (
            path,
            file_key(repo_key, path),
            facts.module,
            facts.language,
            fam,
            directory,
            code,
            facts.blob_sha,
            facts.line_count,
            facts.size_bytes,
            str(facts.parse_status),
            facts.parse_error[:MAX_PARSE_ERROR_CHARS] if facts.parse_error else None,
        )
        symbols: list[tuple[object, ...]] = []
        if code:
            module_key = ""
            for row in symbol_rows(repo_key, facts):
                if row.parent_key is None:
                    module_key = row.key
                symbols.append(
                    (
                        row.key,
                        path,
                        row.qualified_name,
                        row.name,
                        row.kind,
                        row.parent_key,
                        fam,
                        row.start_line,
                        row.end_line,
                        int(row.parent_key == module_key),
                        row.signature,
                    )
                )
                for base in row.bases:
                    buf.setdefault("bases", []).append((row.key, path, base))
        # what the file's nodes are made of; the resolver adds what its edges are made of
        facts_digest = hashlib.blake2b(
            repr((file_row, symbols)).encode("utf-8", "surrogatepass"), digest_size=16
        ).digest()
        buf.setdefault("files", []).append((*file_row, facts_digest))
        buf.setdefault("symbols", []).extend(symbols)
        if not code:
            return
        parts = facts.module.split(".")
        for i in range(len(parts)):
            buf.setdefault("modsuffix", []).append((".".join(parts[i:]), path, fam))
        for imp in facts.imports:
            buf.setdefault("imports_raw", []).append(
                (path, imp.module, json.dumps(imp.names), imp.alias, imp.start_line)
            )
        buf.setdefault("exports_raw", []).extend(
            (path, e.module, e.names[0] if e.names else "", e.alias or "", e.start_line)
            for e in facts.exports
        )
        for call in facts.calls:
            buf.setdefault("calls_raw", []).append(
                (path, call.enclosing, call.callee, call.receiver, call.line, call.args)
            )
        typed = buf.setdefault("typed_raw", [])
        typed += [(path, b.scope, b.name, b.kind, b.text, b.line, b.end) for b in facts.bindings]

    def build_dir_suffixes(self) -> None:
        """Dotted suffixes of every directory holding code (Go packages, Java wildcards)."""
        rows = self.db.execute("SELECT DISTINCT dir, family FROM files WHERE code = 1").fetchall()
        out: list[tuple[str, str, str]] = []
        for directory, fam in rows:
            parts = directory.split("/") if directory else []
            for i in range(len(parts)):
                out.append((".".join(parts[i:]), directory, fam))
        self.db.executemany("INSERT INTO dirsuffix VALUES (?,?,?)", out)
        self.db.execute("CREATE INDEX IF NOT EXISTS dirsuffix_s2 ON dirsuffix (suffix, family)")
        self.db.commit()

    def iter_files(self) -> Iterator[tuple[str, str, str, str, str]]:
        """(path, module, language, family, dir) of every code file, by path."""
        yield from self.db.execute(
            "SELECT path, module, language, family, dir FROM files WHERE code = 1 ORDER BY path"
        )
