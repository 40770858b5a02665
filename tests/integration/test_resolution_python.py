"""Python call resolution against the real graph server (issue 14): each fixture repository
is one miss or false edge, with the exact callers and callees asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from tests.integration.resolution_repo import callees, callers, publish

pytestmark = pytest.mark.integration

TYPED = {
    "shop/__init__.py": "from .models import Cart\nfrom .cli import command\n",
    "shop/cli.py": "def command():\n    return 1\n",
    "shop/models.py": """import threading
from typing import Optional


class Base:
    def save(self):
        return 1


class Client:
    def send(self):
        return 2


class Helper:
    def assist(self):
        return 3

    def set(self):
        return 4


class Cart(Base):
    def __init__(self, client: "Client"):
        self.client = client
        self.helper = Helper()
        self.spare: Optional[Helper] = None

    def checkout(self):
        self.client.send()
        self.helper.assist()
        self.spare.assist()
        super().save()

    @classmethod
    def make(cls) -> "Cart":
        return cls(None)

    def helper_of(self):
        return Helper()


def use(ctx: Client, other, maybe: Client | None = None):
    event = threading.Event()
    event.set()
    cart = Cart(ctx)
    cart.checkout()
    with Helper() as h:
        h.assist()
    ctx.send()
    maybe.send()
    other.set()
    Cart.make().checkout()
    cart.helper_of().assist()
""",
    "main.py": """import shop

default: shop.Cart = shop.Cart(None)


@shop.command()
def main(fixture):
    cart = shop.Cart(None)
    cart.checkout()
    fixture()
    default.save()
""",
}


def test_typed_receivers_resolve(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    reader, counts = publish(graph, settings, tmp_path, TYPED, "typed")
    assert callees(reader, "shop.models.Cart.checkout", "typed") == {
        ("shop.models.Client.send", "receiver"),  # self.client = client (annotated param)
        ("shop.models.Helper.assist", "receiver"),  # self.helper = Helper(); Optional[Helper]
        ("shop.models.Base.save", "receiver"),  # super().save()
    }
    assert callees(reader, "shop.models.use", "typed") == {
        ("shop.models.Cart", "module"),
        ("shop.models.Cart.checkout", "receiver"),  # cart = Cart(...); Cart.make() -> "Cart"
        ("shop.models.Helper", "module"),
        ("shop.models.Helper.assist", "receiver"),  # with Helper() as h; helper_of() returns
        ("shop.models.Client.send", "receiver"),  # ctx: Client; maybe: Client | None
        ("shop.models.Cart.make", "receiver"),
        ("shop.models.Cart.helper_of", "receiver"),
    }
    # event.set() is threading's (external), other.set() an untyped parameter: neither is
    # the repository's Helper.set through the unique tier
    assert callers(reader, "shop.models.Helper.set", "typed") == set()
    assert counts["calls_unresolved_by_reason"]["untyped_local"] >= 2  # other.set(), fixture()


def test_reexports_and_module_values(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    reader, _ = publish(graph, settings, tmp_path, TYPED, "reexp")
    assert callees(reader, "main.main", "reexp") == {
        ("shop.models.Cart", "import"),  # shop.Cart through shop/__init__.py
        ("shop.models.Cart.checkout", "receiver"),
        ("shop.models.Base.save", "receiver"),  # default: shop.Cart, a module-level value
    }
    assert callers(reader, "shop.cli.command", "reexp") == {("main", "import")}  # decorator
    # the called fixture parameter is not linked to anything
    assert callers(reader, "main.main", "reexp") == set()


SHAPES = {
    "lib/__init__.py": "",
    "lib/io.py": """import typing as t
from typing import overload


class Base(t.Generic[t.AnyStr]):
    def read(self):
        return 1


class Reader(Base[t.IO[t.Any]]):
    @overload
    def get(self, key: int) -> int: ...
    @overload
    def get(self, key: str) -> str: ...
    def get(self, key):
        return self.read()


def first():
    from lib.other import helper

    return helper()


def second():
    return helper()


def helper():
    return Reader().get(1)
""",
    "lib/other.py": "def helper():\n    return 2\n",
}


def test_overloads_generic_bases_and_function_imports(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    reader, _ = publish(graph, settings, tmp_path, SHAPES, "shapes")
    # one Reader.get (the implementation), reached by its callers without ambiguity
    assert callers(reader, "lib.io.Reader.get", "shapes") == {("lib.io.helper", "receiver")}
    found = reader.definitions("Reader.get", repo="shapes")
    assert [m["start_line"] for m in found.matches] == [15]
    # Base[t.IO[t.Any]] is still the base Base: the inherited call resolves
    assert callees(reader, "lib.io.Reader.get", "shapes") == {("lib.io.Base.read", "receiver")}
    # the import inside first() is first()'s only: second() calls this module's helper
    assert callees(reader, "lib.io.first", "shapes") == {("lib.other.helper", "import")}
    assert callees(reader, "lib.io.second", "shapes") == {("lib.io.helper", "module")}
