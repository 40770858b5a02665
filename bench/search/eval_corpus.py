"""The outside retrieval evaluation's corpus: public repositories at pinned commits, copied
with every docstring and comment removed, and the queries that point into them.

    python -m bench.search.eval_corpus [--mirrors /work/.mirror] [--out DIR] [--write-queries]

The method is CodeSearchNet's: a function's documentation is its query, and the target is
the same function in a copy of the repository from which all documentation was stripped, so
a retriever cannot match the query against the text it came from.

- **Sources** (``bench/search/eval/sources.json``): each repository's git directory (as the
  ``fetch`` tool brings it: ``<mirrors>/<owner>+<name>/repo``), its pinned commit and the
  source paths taken (tests, docs and examples are left out).
- **Stripping.** Python: every docstring (the first string statement of a module, class or
  function, found with :mod:`ast`) and every ``#`` comment (:mod:`tokenize`); a body left
  empty gets ``pass``. Other languages: every comment node of the product's own tree-sitter
  grammar (``comment``; Java's ``line_comment`` and ``block_comment``); a line left blank by
  it is dropped. The stripped copy must parse.
- **Queries** (``bench/search/eval/queries.jsonl``, written by ``--write-queries``): the first
  sentence of each documented function or method of the *original* (as the product's
  extractor reads its docstring or doc comment), at least three words, targeting that
  symbol's qualified name in the stripped copy. A sentence documenting several symbols
  targets all of them. A Go doc comment's leading symbol name (GoDoc's "Name does X") is
  dropped, so Go queries are as free of the name as Python docstrings are. Each query's id
  is ``<repo>:<qualified name>``; the split into the tuning and test halves is by the id's
  hash (:func:`half`). A target is hit by a chunk of its file whose lines overlap the
  symbol's (a small class is one chunk that holds its methods).
- **Questions** (``bench/search/eval/questions.json``): natural questions written by reading the
  code, each with its target symbol(s), in the same form.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import re
import subprocess
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVAL_DIR = Path(__file__).resolve().parent / "eval"
SOURCES = EVAL_DIR / "sources.json"
QUERIES = EVAL_DIR / "queries.jsonl"
QUESTIONS = EVAL_DIR / "questions.json"
DEFAULT_MIRRORS = Path("/work/.mirror")
MIN_QUERY_WORDS = 3
MAX_QUERY_CHARS = 300
_DROP = "\0drop"  # a line removed (kept in place so positions still refer to the original)
COMMENT_NODES = frozenset({"comment", "line_comment", "block_comment"})  # Java: the latter two
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"'])|(?<=[.!?])$|\n\s*\n")


@dataclass(frozen=True)
class Source:
    repo: str  # owner/name
    commit: str
    include: tuple[str, ...]  # path prefixes taken
    exclude: tuple[str, ...]  # path fragments left out
    suffixes: tuple[str, ...]


def load_sources() -> list[Source]:
    raw = json.loads(SOURCES.read_text("utf-8"))
    return [
        Source(
            s["repo"],
            s["commit"],
            tuple(s["include"]),
            tuple(s.get("exclude", ())),
            tuple(s["suffixes"]),
        )
        for s in raw
    ]


def half(query_id: str) -> str:
    """``tune`` or ``test``, from the first byte of the sha256 of the query id."""
    return "tune" if hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0 else "test"


def git_files(git_dir: Path, commit: str, source: Source) -> dict[str, bytes]:
    """The source's files at its commit (path -> bytes), read straight from the git dir."""
    listing = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    out: dict[str, bytes] = {}
    for path in sorted(p for p in listing if p):
        if not path.endswith(source.suffixes) or not path.startswith(source.include):
            continue
        if any(part in path for part in source.exclude):
            continue
        out[path] = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
            check=True,
            capture_output=True,
        ).stdout
    return out


# -- stripping -----------------------------------------------------------------------------------


def _docstring_nodes(tree: ast.AST) -> list[tuple[ast.Expr, bool]]:
    """Each docstring statement, and whether it is its body's only statement."""
    out: list[tuple[ast.Expr, bool]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = node.body
        first = body[0] if body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            out.append((first, len(body) == 1 and not isinstance(node, ast.Module)))
    return out


def strip_python(source: str) -> str:
    """``source`` without docstrings and ``#`` comments (raises SyntaxError if unparsable)."""
    ast.parse(source)  # before tokenize, whose errors are not SyntaxError
    lines = source.splitlines(keepends=True)
    # comments first (tokenize positions refer to the original lines)
    cuts: dict[int, int] = {}  # line (1-based) -> column where a comment starts
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            cuts[tok.start[0]] = tok.start[1]
    for row, col in cuts.items():
        text = lines[row - 1]
        ending = "\n" if text.endswith("\n") else ""
        kept = text[:col].rstrip()
        lines[row - 1] = (kept + ending) if kept else _DROP
    tree = ast.parse("".join("\n" if line is _DROP else line for line in lines))
    for node, only in sorted(_docstring_nodes(tree), key=lambda n: -n[0].lineno):
        assert node.end_lineno is not None and node.end_col_offset is not None
        first, last = node.lineno - 1, node.end_lineno - 1
        head = lines[first][: node.col_offset]
        tail = lines[last][node.end_col_offset :]
        filler = "pass" if only else ""
        if head.strip() or tail.strip().strip(";"):
            # shares its line with code: replace just the string
            replaced = head + (filler or "None") + tail
            lines[first : last + 1] = [replaced]
        else:
            lines[first : last + 1] = [f"{head}{filler}\n"] if filler else [_DROP]
    out = "".join(line for line in lines if line is not _DROP)
    ast.parse(out)
    return out


def strip_comments_treesitter(language: str, data: bytes) -> bytes:
    """``data`` without the grammar's comment nodes; lines they leave blank are dropped."""
    from tree_sitter import Parser

    from semgraph.indexer import languages

    tree = Parser(languages.grammar(language)).parse(data)
    spans: list[tuple[int, int]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in COMMENT_NODES:
            spans.append((node.start_byte, node.end_byte))
            continue
        stack.extend(node.children)
    out = bytearray(data)
    for start, end in sorted(spans, reverse=True):
        line_start = out.rfind(b"\n", 0, start) + 1
        line_end = out.find(b"\n", end)
        line_end = len(out) if line_end < 0 else line_end
        if not out[line_start:start].strip() and not out[end:line_end].strip():
            del out[line_start : min(line_end + 1, len(out))]  # the whole line(s)
        else:
            del out[start:end]
    return bytes(out)


def strip(path: str, language: str, data: bytes) -> bytes:
    if language == "python":
        return strip_python(data.decode("utf-8")).encode("utf-8")
    return strip_comments_treesitter(language, data)


# -- queries -------------------------------------------------------------------------------------


def first_sentence(doc: str) -> str:
    """The first sentence of a docstring or doc comment, on one line."""
    text = doc.strip()
    text = re.sub(r"^\s*[*]+\s?", "", text, flags=re.MULTILINE)  # JSDoc / block comment stars
    text = text.split("\n\n", 1)[0]
    match = _SENTENCE_END.search(text)
    if match:
        text = text[: match.start()]
    text = " ".join(text.split())
    return text[:MAX_QUERY_CHARS]


def build(mirrors: Path, out_dir: Path) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Write the stripped copies under ``out_dir/<owner>+<name>/``; return the file count
    per repository and the docstring queries of the originals."""
    from semgraph.indexer.extract import ExtractOptions, extract_file
    from semgraph.indexer.languages import detect_language

    options = ExtractOptions()
    counts: dict[str, int] = {}
    by_text: dict[tuple[str, str], list[str]] = {}
    for source in load_sources():
        slug = source.repo.replace("/", "+")
        git_dir = mirrors / slug / "repo"
        files = git_files(git_dir, source.commit, source)
        counts[source.repo] = len(files)
        for path, data in files.items():
            language = detect_language(path, data[:256])
            stripped = strip(path, language, data)
            target = out_dir / slug / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(stripped)
            original = extract_file(path, data, options)
            kept = {s.qualified_name for s in extract_file(path, stripped, options).symbols}
            for sym in original.symbols:
                if sym.kind not in ("function", "method") or not sym.docstring:
                    continue
                if sym.qualified_name not in kept:
                    continue
                query = first_sentence(sym.docstring)
                if language == "go" and query.split(" ", 1)[0] == sym.name:
                    query = query.split(" ", 1)[-1]  # GoDoc's "Name does X": not the name
                if len(query.split()) < MIN_QUERY_WORDS:
                    continue
                by_text.setdefault((source.repo, query), []).append(f"{path}::{sym.qualified_name}")
    queries = [
        {
            "id": f"{repo}:{targets[0].split('::', 1)[1]}",
            "repo": repo,
            "query": query,
            "targets": sorted(set(targets)),
        }
        for (repo, query), targets in sorted(by_text.items())
    ]
    return counts, queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--write-queries", action="store_true")
    args = parser.parse_args()
    counts, queries = build(args.mirrors, args.out)
    for repo, n in counts.items():
        mine = [q for q in queries if q["repo"] == repo]
        tune = sum(half(q["id"]) == "tune" for q in mine)
        print(f"{repo}: {n} files, {len(mine)} queries ({tune} tuning, {len(mine) - tune} test)")
    if args.write_queries:
        QUERIES.write_text("".join(json.dumps(q) + "\n" for q in queries), "utf-8")
        print(f"wrote {len(queries)} queries to {QUERIES}")


if __name__ == "__main__":
    main()
