"""Python-only rules of the receiver types (:mod:`semgraph.graph.typed`): a pytest test's
parameter is the value its fixture returns or yields. ``typed`` is the
:class:`~semgraph.graph.typed.TypedNames` asking (not imported: typed.py imports this)."""

from __future__ import annotations

from typing import Any

Value = tuple[str, tuple[str, ...]]  # as graph/typed.py (which imports this module)


def is_pytest(path: str) -> bool:
    """A file pytest collects fixtures for (a test module or a ``conftest.py``)."""
    name = path.rpartition("/")[2]
    return name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")


def pytest_fixture(typed: Any, ctx: Any, name: str, depth: int) -> Value:
    """What the fixture ``name`` returns or yields: the one top-level function of that name
    in the test's file, else in a ``conftest.py`` of its directory or one above."""
    directory = ctx.f.dir
    paths = [ctx.f.path]
    while True:
        paths.append(f"{directory}/conftest.py" if directory else "conftest.py")
        if not directory:
            break
        directory = directory.rpartition("/")[0]
    for path in paths:
        keys = [
            k
            for k in typed.names.top_level("file", path, name, "python")
            if typed.kind(k) == "function" and k != ctx.src.key
        ]
        if len(keys) == 1:
            value: Value = typed.returns(keys[0], depth + 1)
            return value
    return ("unknown", ())
