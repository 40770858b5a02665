"""Loop variables over typed collections (resolve/python_types.py ``element``), and the
receivers typed through constructor arguments and factory returns, on parsed Python (the
real extraction, no servers): what the declarations say is linked, nothing else."""

from __future__ import annotations

from pathlib import Path

from tests.parsed_python import edges_from

MODELS = """import typing as t
from collections.abc import Iterator


class Item:
    def close(self):
        return 1


class Other:
    def close(self):
        return 2


class Database:
    def query(self):
        return 3


class Base:
    inherited: list[Item]


class Foo:
    def run(self):
        return 4

    @classmethod
    def create(cls):
        return cls()


def build_foo():
    return Foo()


def make() -> Foo:
    return build_foo()


def chained():
    return make()


def items() -> Iterator[Item]:
    yield Item()


class Bag:
    def __iter__(self) -> "Iterator[Item]":
        return iter([])


class Opaque:
    def __iter__(self):
        return iter([])


class Service(Base):
    items: list[Item]
    pairs: dict[str, Item]
    loose = []

    def __init__(
        self,
        db: Database,
        extra: t.Optional[t.Sequence[Item]] = None,
        raw=None,
        items: list[Item] | None = None,
    ):
        self.db = db
        self.extra = extra or []
        self.raw = raw
        self.items = items  # declared again, up to None

    def get_items(self) -> "tuple[Item, ...]":
        return tuple(self.items)

    def work(self, given: set[Item], mixed: list[Item | Other]):
        self.db.query()
        make().run()
        chained().run()
        Foo.create().run()
        for item in self.items:
            item.close()
        for it in self.get_items():
            it.close()
        for e in self.extra:
            e.close()
        for x in items():
            x.close()
        for k in self.pairs:
            k.close()
        for v in self.pairs.values():
            v.close()
        for b in self.inherited:
            b.close()
        for g in given:
            g.close()
        for m in mixed:
            m.close()
        for r in self.raw:
            r.close()
        for u in self.loose:
            u.close()
        listed = self.get_items()
        for w in listed:
            w.close()
        return [y.close() for y in self.items]

    def bags(self, bag: Bag, opaque: Opaque):
        for one in bag:
            one.close()
        for two in opaque:
            two.close()
"""


def test_declared_collections_type_their_loop_variables(tmp_path: Path) -> None:
    edges = edges_from(tmp_path, {"models.py": MODELS}, "models.Service.work")
    assert edges == {
        (1, "models.Database.query"),  # self.db = db, db: Database (a constructor argument)
        (2, "models.make"),
        (2, "models.Foo.run"),  # make() -> Foo
        (3, "models.chained"),
        (3, "models.Foo.run"),  # return make(): a factory's factory
        (4, "models.Foo.create"),
        (4, "models.Foo.run"),  # a classmethod's `return cls()`
        (6, "models.Item.close"),  # items: list[Item], and the list[Item] | None assigned
        (7, "models.Service.get_items"),
        (8, "models.Item.close"),  # -> "tuple[Item, ...]"
        (10, "models.Item.close"),  # extra or [], extra: Optional[Sequence[Item]]
        (11, "models.items"),
        (12, "models.Item.close"),  # -> Iterator[Item]
        # 14: the keys of dict[str, Item] are str: external, no edge
        (16, "models.Item.close"),  # .values() of dict[str, Item]
        (18, "models.Item.close"),  # inherited: list[Item], declared by the base
        (20, "models.Item.close"),  # given: set[Item]
        # 22: list[Item | Other]: two classes, no edge; 24, 26: nothing declared
        (27, "models.Service.get_items"),
        (29, "models.Item.close"),  # listed = self.get_items(): what it is declared to return
        (30, "models.Item.close"),  # a comprehension's variable
    }


UNPACKED = """import typing as t

from models import Item, Other


class Registry:
    pairs: list[tuple[Item, Other]]
    named: dict[str, Item]
    rows: t.Sequence[t.Tuple[Item, ...]]

    def walk(self, items: list[Item]):
        for item, other in self.pairs:
            item.close()
            other.close()
        for name, found in self.named.items():
            found.close()
        for i, each in enumerate(items):
            each.close()
        for first, second in self.rows:
            first.close()
        for a, *rest in self.pairs:
            a.close()
        for (p, q), r in self.pairs:
            p.close()
        return {k: v.close() for k, v in self.named.items()}

    def pair(self) -> tuple[str | None, Item | None, "Other"]:
        return None, None, Other()

    def assigned(self, anything):
        name, item, other = self.pair()
        item.close()
        other.close()
        first, *rest = self.pair()
        first.close()
        cast = t.cast(Item, anything)
        cast.close()
        left, right = anything
        left.close()
"""


def test_a_class_is_iterated_as_its_iter_declares(tmp_path: Path) -> None:
    assert edges_from(tmp_path, {"models.py": MODELS}, "models.Service.bags") == {
        (2, "models.Item.close")  # Bag.__iter__ -> Iterator[Item]; 4: nothing declared
    }


def test_unpacked_loop_variables(tmp_path: Path) -> None:
    files = {"models.py": MODELS, "registry.py": UNPACKED}
    assert edges_from(tmp_path, files, "registry.Registry.walk") == {
        (2, "models.Item.close"),  # tuple[Item, Other], position 0
        (3, "models.Other.close"),  # position 1
        (5, "models.Item.close"),  # dict[str, Item].items(), position 1
        (7, "models.Item.close"),  # enumerate(list[Item]), position 1
        (14, "models.Item.close"),  # a dict comprehension over .items()
    }  # 9: tuple[Item, ...] has no fixed positions; 11, 13: starred and nested: not followed


def test_unpacked_assignments_and_casts(tmp_path: Path) -> None:
    files = {"models.py": MODELS, "registry.py": UNPACKED}
    assert edges_from(tmp_path, files, "registry.Registry.assigned") == {
        (1, "registry.Registry.pair"),
        (2, "models.Item.close"),  # position 1 of the declared tuple[str | None, Item | None, ..]
        (3, "models.Other.close"),  # position 2, a string annotation
        (4, "registry.Registry.pair"),  # 5: a starred target is not followed
        (7, "models.Item.close"),  # t.cast(Item, ...) is an Item
    }  # 9: an untyped value unpacked: no edge


DEFAULTED = """import typing as t

from models import Database, Item


def default_db() -> Database:
    return Database()


class Live:
    def __init__(self, db: t.Optional[Database] = None, item: Item | None = None):
        self.db = db if db is not None else default_db()
        self.wrong = db if db is None else default_db()
        self.mixed = db if item is not None else default_db()

    def run(self, item: Item | None = None):
        self.db.query()
        self.wrong.query()
        self.mixed.query()
        found = item if item is not None else Item()
        found.close()
        _Item = Item
        _Item.close(found)
        make = default_db
        make().query()
"""


def test_a_value_or_its_default_is_the_value(tmp_path: Path) -> None:
    files = {"models.py": MODELS, "live.py": DEFAULTED}
    assert edges_from(tmp_path, files, "live.Live.run") == {
        (1, "models.Database.query"),  # db if db is not None else default_db()
        (4, "models.Item"),
        (5, "models.Item.close"),  # a local: item if item is not None else Item()
        (7, "models.Item.close"),  # _Item = Item: a local alias names the class
        (9, "models.Database.query"),  # make = default_db: make() returns a Database
    }  # 2: `db if db is None`, 3: a different name tested: not typed; 9: the alias's call
    # itself is not linked in Python (an outside oracle stops at the assignment)
