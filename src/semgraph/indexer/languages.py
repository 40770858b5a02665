"""Which language a file is, and the tree-sitter grammar for the code languages.

Code languages (definitions, imports, call sites via ``queries/<language>.scm``): python,
javascript, typescript, tsx, go, java, rust, c, cpp, csharp, kotlin, ruby, php, swift,
scala, bash, lua. Text kinds (markdown, yaml, json, toml, ...) are chunked for search only.
A file whose name says nothing (no known extension) is read by its shebang line
(``#!/usr/bin/env ruby``). Grammars are loaded lazily, in the process that parses (a pool
child), never at import time.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from importlib.resources import files
from pathlib import PurePosixPath

from tree_sitter import Language, Query

CODE_LANGUAGES: dict[str, tuple[str, str]] = {
    # language -> (grammar module, function returning the language pointer)
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "java": ("tree_sitter_java", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "kotlin": ("tree_sitter_kotlin", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "swift": ("tree_sitter_swift", "language"),
    "scala": ("tree_sitter_scala", "language"),
    "bash": ("tree_sitter_bash", "language"),
    "lua": ("tree_sitter_lua", "language"),
}

# the query file each language uses (tsx shares typescript's, javascript has its own)
QUERY_FILE = {lang: lang for lang in CODE_LANGUAGES} | {"tsx": "typescript"}

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".java": "java",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".ipp": "cpp",
    ".cs": "csharp",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
    ".phtml": "php",
    ".swift": "swift",
    ".scala": "scala",
    ".sc": "scala",
    ".sh": "bash",
    ".bash": "bash",
    ".lua": "lua",
    # text kinds: chunked for search only
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".conf": "ini",
    ".xml": "xml",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "css",
    ".sql": "sql",
    ".zsh": "shell",
    ".proto": "proto",
    ".gradle": "gradle",
    ".properties": "ini",
    ".env": "ini",
}

FILENAMES: dict[str, str] = {
    "Dockerfile": "dockerfile",
    "Makefile": "makefile",
    "GNUmakefile": "makefile",
    "CMakeLists.txt": "cmake",
    "README": "markdown",
    "LICENSE": "text",
    "COPYING": "text",
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    ".bashrc": "bash",
    ".bash_profile": "bash",
}

# the interpreter a shebang names -> language (``#!/usr/bin/env ruby``, ``#!/bin/sh``)
SHEBANGS: dict[str, str] = {
    "sh": "bash",
    "bash": "bash",
    "dash": "bash",
    "ksh": "bash",
    "ruby": "ruby",
    "php": "php",
    "lua": "lua",
    "luajit": "lua",
    "swift": "swift",
    "kotlin": "kotlin",
    "kscript": "kotlin",
    "scala": "scala",
    "python": "python",
    "python3": "python",
    "node": "javascript",
}
SHEBANG_MAX_BYTES = 256  # of the first line read for a shebang


def detect_language(path: str, head: bytes = b"") -> str:
    """Language of ``path`` by name: a code language, a text kind, or ``"text"``; a name
    without a known extension is read by the shebang at the start of ``head``."""
    p = PurePosixPath(path)
    if p.name in FILENAMES:
        return FILENAMES[p.name]
    by_name = EXTENSIONS.get(p.suffix.lower())
    if by_name is not None:
        return by_name
    return shebang_language(head) or "text"


def shebang_language(head: bytes) -> str | None:
    """The language a ``#!`` line names (``/usr/bin/env -S ruby -w``, ``/bin/bash``,
    ``python3.12``), or None."""
    if not head.startswith(b"#!"):
        return None
    line = head[2:SHEBANG_MAX_BYTES].split(b"\n", 1)[0].decode("utf-8", "replace")
    words = line.split()
    if words and words[0].endswith("/env"):
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    if not words:
        return None
    interpreter = words[0].rsplit("/", 1)[-1]
    found = SHEBANGS.get(interpreter)
    if found is None:  # python3.12, ruby3.3, lua5.4
        found = SHEBANGS.get(interpreter.rstrip("0123456789.")) or SHEBANGS.get(
            interpreter.split("-", 1)[0]
        )
    return found


def is_code(language: str) -> bool:
    return language in CODE_LANGUAGES


@cache
def grammar(language: str) -> Language:
    module_name, func = CODE_LANGUAGES[language]
    return Language(getattr(import_module(module_name), func)())


@cache
def query_source(language: str) -> str:
    name = QUERY_FILE[language]
    return (files("semgraph.indexer") / "queries" / f"{name}.scm").read_text("utf-8")


@cache
def query(language: str) -> Query:
    return Query(grammar(language), query_source(language))


def queries_digest() -> str:
    """A digest of every language's query file (part of the index fingerprint: a changed
    query extracts other facts, so parse caches written with the old one are not reused)."""
    h = hashlib.sha256()
    for language in sorted(QUERY_FILE):
        h.update(language.encode() + b"\0" + query_source(language).encode() + b"\0")
    return h.hexdigest()[:16]


def grammar_versions() -> dict[str, str]:
    """Installed grammar package versions (part of the index fingerprint)."""

    out: dict[str, str] = {}
    for module_name, _ in CODE_LANGUAGES.values():
        dist = module_name.replace("_", "-")
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "unknown"
    try:
        out["tree-sitter"] = version("tree-sitter")
    except PackageNotFoundError:
        out["tree-sitter"] = "unknown"
    return out
