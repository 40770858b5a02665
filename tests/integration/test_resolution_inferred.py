"""Python receivers the parser does not type directly, against the real graph server (issue
25, item 5): objects made by decorators (``@click.group()``), constructor arguments stored on
``self``, factory returns, loop variables over typed collections; and what stays unlinked
where nothing declares a type."""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from tests.integration.resolution_repo import callees, callers, publish

pytestmark = pytest.mark.integration

FILES = {
    "cli/__init__.py": "",
    "cli/core.py": """import typing as t


class Command:
    def invoke(self, ctx):
        return 1


class Group(Command):
    def command(self, *args: t.Any, **kw: t.Any) -> t.Callable[[t.Callable], Command] | Command:
        return Command()


class Param:
    def process(self):
        return 2


class Store:
    def query(self):
        return 3
""",
    "cli/decorators.py": """import typing as t

from .core import Group

G = t.TypeVar("G", bound=Group)
F = t.TypeVar("F")


def group(name=None, cls: type[G] | None = None) -> t.Callable[[t.Callable], Group | G]:
    return Group


def keep(f: F) -> F:
    return f
""",
    "cli/app.py": """from . import decorators as click
from .core import Group, Param, Store


@click.group()
def cli():
    pass


@cli.command("sync", help="a, b (c)")
def sync():
    pass


@click.group(cls=Group)
def chosen():
    pass


@click.keep
def kept():
    pass


class Runner:
    params: list[Param]

    def __init__(self, store: Store, extra=None):
        self.store = store
        self.extra = extra

    def run(self):
        self.store.query()
        sync.invoke(None)
        chosen.command()
        kept.command()
        for param in self.params:
            param.process()
        for other in self.extra:
            other.process()
""",
}


def test_inferred_receivers(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    reader, _ = publish(graph, settings, tmp_path, FILES, "inferred")
    assert callers(reader, "cli.core.Group.command", "inferred") == {
        ("cli.app", "receiver")  # @cli.command(...): cli is the Group @click.group() made
    }
    assert callees(reader, "cli.app.Runner.run", "inferred") == {
        ("cli.core.Store.query", "receiver"),  # self.store = store, store: Store
        ("cli.core.Command.invoke", "receiver"),  # sync: what Group.command's callable makes
        ("cli.core.Param.process", "receiver"),  # param in self.params: list[Param]
    }  # chosen (cls= can bind G), kept (F -> F), other (nothing declared): no edge
