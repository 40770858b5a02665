"""The export's calibration texts (issue 27: 290 of 381 s of the first export were spent
cutting them): each function's source cut from lines split once per file equals
``ast.get_source_segment``, on tricky text and on standard-library files, so the calibrated
model (and every vector keyed by it) is what it was."""

from __future__ import annotations

import ast
import sysconfig
from pathlib import Path

import pytest

from semgraph.search.calibration import calibration_texts, functions, segment, split_lines

TRICKY = (
    "def a():\r\n    x = 'é'\r\n    return x\r\n"
    "\x0cdef b(): return 1\n"
    "class C:\n    async def m(self):\n        '''ünïcode ✓'''\n        await x\n"
    "        def inner():\n            pass\n            return 2\n"
    "@deco\ndef d(\n    y,\n):  # ½\n    return y\r"
    "def e():\r    return 1\r    pass"
)


def _with_ast(source: str, tree: ast.AST, rel: str) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            code = ast.get_source_segment(source, node) or ""
            if code.count("\n") >= 2:
                out.append(f"{rel} {node.name}\n{code}"[:4000])
    return out


def test_segments_equal_ast_on_tricky_text() -> None:
    tree = ast.parse(TRICKY)
    lines = split_lines(TRICKY)
    assert "".join(lines) == TRICKY
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            assert segment(lines, node) == (ast.get_source_segment(TRICKY, node) or "")
    assert functions(TRICKY, tree, "t.py", 4000) == _with_ast(TRICKY, tree, "t.py")


@pytest.mark.parametrize(
    "name", ["argparse.py", "json/decoder.py", "email/_header_value_parser.py"]
)
def test_functions_equal_ast_on_standard_library_files(name: str) -> None:
    path = Path(sysconfig.get_paths()["stdlib"]) / name
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    assert functions(source, tree, name, 4000) == _with_ast(source, tree, name)


def test_calibration_texts_are_deterministic_and_bounded() -> None:
    texts = calibration_texts(50, max_chars=500)
    assert len(texts) == 50 and all(len(t) <= 500 for t in texts)
    assert texts == calibration_texts(50, max_chars=500)
