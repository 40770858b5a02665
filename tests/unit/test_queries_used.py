"""Every Cypher constant is run by something: a statement no code reads is dead text that the
index check (tests/unit/test_schema_indexes.py) would still hold an index for, and that a
reader would take for a query the store runs.

The constants are those of every module that holds Cypher (the same modules
``cypher_modules()`` finds for the index check): module-level upper-case names defined in
that module whose value is a statement, or a dict of statements. One is used when some code
in ``src/`` loads it (a name or an attribute read, not its assignment and not a mention in a
comment or docstring).
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterable

from tests.unit.test_schema_indexes import SRC, cypher_modules

_STATEMENT = re.compile(r"\b(MATCH|MERGE|CREATE|UNWIND|RETURN)\b")


def _is_statement(value: object) -> bool:
    texts = value.values() if isinstance(value, dict) else [value]
    return any(isinstance(t, str) and _STATEMENT.search(t) for t in texts)


def defined_at_top(source: str) -> set[str]:
    """Upper-case names a module assigns at its top level."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper())
    return names


def query_constants() -> list[tuple[str, str]]:
    """(module, name) of every Cypher constant of every Cypher module."""
    found = []
    for module_name in cypher_modules():
        path = SRC.joinpath(*module_name.split(".")).with_suffix(".py")
        module = importlib.import_module(module_name)
        for name in sorted(defined_at_top(path.read_text())):
            if _is_statement(getattr(module, name, None)):
                found.append((module_name, name))
    return found


def loaded_names(sources: Iterable[str]) -> set[str]:
    """Every name and attribute some code reads."""
    used: set[str] = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                used.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                used.add(node.attr)
    return used


def unused(constants: Iterable[tuple[str, str]], sources: Iterable[str]) -> list[str]:
    used = loaded_names(sources)
    return [f"{module}.{name}" for module, name in constants if name not in used]


def test_the_queue_statements_are_found() -> None:
    names = {name for module, name in query_constants() if module == "semgraph.queue.queries"}
    assert {"CLAIM_ONE", "ENQUEUE_WRITE", "WORKER_HEARTBEAT_AGE", "PURGE_WORKERS"} <= names
    assert len(names) >= 20


def test_every_query_constant_is_used_in_src() -> None:
    sources = [path.read_text() for path in sorted((SRC / "semgraph").rglob("*.py"))]
    assert unused(query_constants(), sources) == []


def test_the_check_itself_finds_an_unused_constant() -> None:
    module = '''
USED = """MATCH (n) RETURN n"""
UNUSED = """MATCH (n) RETURN n"""
BY_LABEL = {"A": """MATCH (a:A) RETURN a"""}
'''
    caller = """
from semgraph.queue import queries as q

def run(graph):
    # UNUSED is only mentioned here, in a comment
    graph.query("x", q.USED)
    return BY_LABEL["A"]
"""
    constants = [("m", name) for name in sorted(defined_at_top(module))]
    assert constants == [("m", "BY_LABEL"), ("m", "UNUSED"), ("m", "USED")]
    assert unused(constants, [module, caller]) == ["m.UNUSED"]
