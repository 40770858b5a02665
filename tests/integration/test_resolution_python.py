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
    # cls(None) calls a parameter (what jedi says too): no edge
    assert callees(reader, "shop.models.Cart.make", "typed") == set()
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


SRC_LAYOUT = {
    "pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.setuptools.packages.find]\n"
    "where = ['src']\n",
    "src/pkg/__init__.py": "from .api import fetch\n",
    "src/pkg/api.py": (
        "def fetch():\n    return 1\n\n\nclass Client:\n"
        "    def get(self):\n        return fetch()\n"
    ),
    "src/pkg/sub/__init__.py": "",
    "src/pkg/sub/mod.py": "from ..api import Client\n\n\ndef run():\n    return Client().get()\n",
    "tests/conftest.py": (
        "import pytest\nfrom pkg.api import Client\n\n\n@pytest.fixture\ndef client():\n"
        "    c = Client()\n    yield c\n"
    ),
    "tests/test_api.py": (
        "import pkg\n\n\ndef test_fetch(client, tmp_path):\n    pkg.fetch()\n    client.get()\n"
        "    tmp_path.joinpath('x')\n"
    ),
}


def test_src_layout_names_and_fixtures(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    reader, _ = publish(graph, settings, tmp_path, SRC_LAYOUT, "srclay")
    # the module is what an import says (pkg.api), found from pyproject.toml's `where`
    found = reader.definitions("fetch", repo="srclay")
    assert [m["qualified_name"] for m in found.matches] == ["pkg.api.fetch"]
    assert [
        m["qualified_name"] for m in reader.definitions("api.fetch", repo="srclay").matches
    ] == ["pkg.api.fetch"]
    assert reader.definitions("src.pkg.api.fetch", repo="srclay").matches == []
    assert callers(reader, "api.fetch", repo="srclay") == {
        ("pkg.api.Client.get", "module"),
        ("tests.test_api.test_fetch", "import"),  # pkg.fetch through the package __init__
    }
    assert callees(reader, "pkg.sub.mod.run", "srclay") == {
        ("pkg.api.Client", "import"),  # from ..api: relative to the renamed package
        ("pkg.api.Client.get", "receiver"),
    }
    # the `client` parameter is the conftest fixture's yielded Client; tmp_path is no
    # definition of the repository
    assert callees(reader, "test_fetch", "srclay") == {
        ("pkg.api.fetch", "import"),
        ("pkg.api.Client.get", "receiver"),
    }


FALSE_EDGES = {
    "kit/__init__.py": '"""Kit."""\n',
    "kit/json/__init__.py": (
        "import json as _json\n\n\ndef dumps(obj):\n    return _json.dumps(obj)\n\n\n"
        "def loads(s):\n    return _json.loads(s)\n"
    ),
    "kit/globals.py": (
        "from contextvars import ContextVar\n\n\nclass Config:\n    def load(self):\n"
        "        return 1\n\n    @property\n    def child(self) -> 'Config':\n"
        "        return self\n\n\n"
        "current: ContextVar[int] = ContextVar('current')\nsettings = Config()\n"
    ),
    "kit/registry.py": (
        "class Registry:\n    def command(self):\n        return 1\n\n    def clear(self):\n"
        "        return 2\n\n    def getvalue(self):\n        return 3\n"
    ),
    "kit/use.py": (
        "import kit\nfrom kit.globals import current, settings\n\n\n"
        "def group(f):\n    return f\n\n\n"
        "def main(runner):\n    current.set(1)\n    settings.load()\n    settings.child.load()\n"
        "    @group\n    def cli():\n        pass\n\n    cli.command()\n"
        "    with runner.isolation() as (out, err):\n        out.getvalue()\n"
        "    kit.missing.clear()\n    kit.nothing_here()\n    [].clear()\n"
    ),
}


def test_no_invented_edges(graph: Graph, settings: Settings, tmp_path: Path) -> None:
    reader, counts = publish(graph, settings, tmp_path, FALSE_EDGES, "falsy")
    # the standard library's json, not the package's own kit.json (a suffix match)
    assert callees(reader, "kit.json.dumps", "falsy") == set()
    assert callees(reader, "kit.use.main", "falsy") == {
        ("kit.globals.Config.load", "receiver"),  # an imported module-level value; a property
    }
    # ContextVar.set, a decorated function's .command(), a with-target's .getvalue(), a
    # missing submodule's .clear() and a list literal's: none is the repository's Registry
    for name in ("command", "clear", "getvalue"):
        assert callers(reader, f"kit.registry.Registry.{name}", "falsy") == set()
    reasons = counts["calls_unresolved_by_reason"]
    assert reasons["untyped_local"] >= 1  # out.getvalue()
    assert reasons["untyped_expression"] >= 2  # cli.command(), kit.missing.clear()
    assert reasons["no_member"] >= 1  # kit.nothing_here()


DOTTED = {
    "pk/__init__.py": '"""Pk."""\n',
    "pk/views.py": "class View:\n    @classmethod\n    def as_view(cls):\n        return 1\n",
    "pk/core.py": (
        "class Err(Exception):\n    def show(self):\n        return 1\n\n\n"
        "def it():\n    try:\n        return 1\n    except Err as e:\n        e.show()\n"
    ),
    "t.py": (
        "import pk\nimport pk.core\nimport pk.views\n\n\nclass Con:\n    def show(self):\n"
        "        return 1\n\n\ndef make() -> Con:\n    return Con()\n\n\nclass Live:\n"
        "    def __init__(self, console=None):\n        self.console = console or make()\n\n"
        "    def go(self):\n        self.console.show()\n\n\ndef test():\n"
        "    class Index(pk.views.View):\n        pass\n\n    Index.as_view()\n    pk.core.it()\n"
    ),
}


def test_dotted_bases_submodules_and_or_defaults(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    reader, _ = publish(graph, settings, tmp_path, DOTTED, "dotted")
    # class Index(pk.views.View) inherits View through the module path; pk.core.it() is the
    # submodule's function, not pk's
    assert callees(reader, "t.test", "dotted") == {
        ("pk.views.View.as_view", "receiver"),
        ("pk.core.it", "import"),
    }
    assert callees(reader, "pk.core.it", "dotted") == {("pk.core.Err.show", "receiver")}  # except
    # self.console = console or make(): the call's declared return type
    assert callees(reader, "t.Live.go", "dotted") == {("t.Con.show", "receiver")}
