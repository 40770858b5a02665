"""The texts the int8 export calibrates on: functions from the Python standard library's own
sources (deterministic: sorted files, every n-th function), never from a hub.

Each function's source is cut from its file's lines, split once per file. ``ast``'s own
``get_source_segment`` splits the whole file again for every function, which made this
step most of the first export's time (290 of 381 s wall, ``embedding_export_done``'s
``steps_s``); the texts are the same (a test compares them).
"""

from __future__ import annotations

import ast
import sysconfig
from pathlib import Path


def calibration_texts(count: int, max_chars: int = 4000) -> list[str]:
    """``count`` functions from the standard library's sources, as "path name\\ncode" texts
    (the shape of the product's embedded texts), chosen deterministically."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found: list[str] = []
    for path in sorted(root.glob("*.py")) + sorted(root.glob("*/*.py")):
        if "test" in path.parts[-2:] or path.name.startswith("test"):
            continue
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        rel = path.relative_to(root).as_posix()
        found += functions(source, tree, rel, max_chars)
    if len(found) < min(count, 50):
        raise RuntimeError(f"only {len(found)} calibration functions found under {root}")
    step = max(len(found) // count, 1)
    return found[::step][:count]


def functions(source: str, tree: ast.AST, rel: str, max_chars: int) -> list[str]:
    """Every function of ``tree`` with at least three lines, in ``ast.walk`` order."""
    lines = split_lines(source)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            code = segment(lines, node)
            if code.count("\n") >= 2:
                out.append(f"{rel} {node.name}\n{code}"[:max_chars])
    return out


def split_lines(source: str) -> list[str]:
    """The lines of ``source`` with their ends, split at ``\\r\\n``, ``\\n`` and ``\\r`` only
    (what the parser counts as lines; ``str.splitlines`` also splits at form feeds)."""
    lines, start, n = [], 0, len(source)
    i = 0
    while i < n:
        c = source[i]
        i += 1
        if c == "\r" and i < n and source[i] == "\n":
            i += 1
        if c in "\r\n":
            lines.append(source[start:i])
            start = i
    if start < n:
        lines.append(source[start:])
    return lines


def segment(lines: list[str], node: ast.stmt) -> str:
    """``ast.get_source_segment(source, node)`` from the file's lines (offsets are UTF-8)."""
    if node.end_lineno is None or node.end_col_offset is None:
        return ""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode()[node.col_offset : node.end_col_offset].decode()
    head = lines[first].encode()[node.col_offset :].decode()
    tail = lines[last].encode()[: node.end_col_offset].decode()
    return "".join([head, *lines[first + 1 : last], tail])
