"""Python-only rules of the receiver types (:mod:`semgraph.resolve.typed`): a pytest test's
parameter is the value its fixture returns or yields. ``typed`` is the
:class:`~semgraph.resolve.typed.TypedNames` asking, seen through the :class:`Receivers`
protocol (typed.py imports this module, so it cannot import typed.py back)."""

from __future__ import annotations

from typing import Any, Protocol

from semgraph.resolve.import_types import ImportFile
from semgraph.resolve.scope import Ctx, FileScope, NameLookups
from semgraph.resolve.typeexpr import Segment

Value = tuple[str, tuple[str, ...]]  # as resolve/typed.py (which imports this module)


class Receivers(Protocol):
    """What the Python rules ask of :class:`semgraph.resolve.typed.TypedNames`."""

    db: Any
    names: NameLookups
    made: dict[str, Value | None]  # what decorators made of functions (resolve/decorators.py)
    decorating: dict[str, bool]

    def kind(self, key: str) -> str: ...

    def returns(self, key: str, depth: int) -> Value: ...

    def file_ctx(self, path: str) -> tuple[FileScope, ImportFile] | None: ...

    def bindings(self, path: str) -> dict[tuple[str, str], list[tuple[int, str, str]]]: ...

    def evaluate(self, ctx: Ctx, segs: list[Segment], line: int, depth: int) -> Value: ...

    def value_of_type(self, ctx: Ctx, text: str, depth: int) -> Value: ...

    def member(self, value: Value, name: str, depth: int) -> Value: ...


def is_pytest(path: str) -> bool:
    """A file pytest collects fixtures for (a test module or a ``conftest.py``)."""
    name = path.rpartition("/")[2]
    return name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")


def pytest_fixture(typed: Receivers, ctx: Ctx, name: str, depth: int) -> Value:
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
