"""resolve/memo.py: the memoised lookups give what the plain ones give, whatever order the call
sites are resolved in (an incremental resolve visits any subset of files in any order)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.resolve import resolver
from semgraph.resolve.compare import differences
from semgraph.resolve.imports import ImportFile
from semgraph.resolve.memo import MemoNames, MemoTypedNames
from semgraph.resolve.resolution import Resolution
from semgraph.resolve.scope import FileScope, NameLookups
from semgraph.resolve.tiers import CallTiers
from semgraph.resolve.typed import MAX_DEPTH, TypedNames

MODELS = """
class Node:
    def next(self) -> "Node":
        return Node()

    def go(self):
        pass


class Client:
    def sub(self) -> "Sub":
        return Sub()

    def ping(self):
        pass


class Sub:
    def run(self):
        pass


class Base:
    def __init__(self):
        self.client = Client()


class Service(Base):
    def work(self):
        self.client.sub().run()
        self.client.ping()


def make() -> Client:
    return Client()
"""
# a chain of typed module-level names longer than the evaluation's depth limit: the same
# binding is reached at several depths, and far enough down its type is no longer followed
CHAIN = "from app.models import Node, make\n\nn0 = Node()\n"
CHAIN += "".join(f"n{i} = n{i - 1}.next()\n" for i in range(1, 13))
CHAIN += """

def use():
    n12.go()
    n2.go()
    n6.go()
    n12.go()
    c = make()
    c.sub().run()
    c.ping()
"""
FILES = {"app/__init__.py": "", "app/models.py": MODELS, "app/chain.py": CHAIN}


def _resolve(tmp_path: Path, name: str) -> Resolution:
    facts = [extract_file(p, s.encode(), ExtractOptions()) for p, s in FILES.items()]
    return resolver.resolve(lambda: iter(facts), "memo", tmp_path / name)


def _plain(db: Any, cap: int) -> tuple[NameLookups, TypedNames, CallTiers]:
    names = NameLookups(db, cap)
    typed = TypedNames(db, names)
    return names, typed, CallTiers(names, typed)


def _edges(res: Resolution) -> set[tuple[str, str, int, str]]:
    return {
        (e.src_key.split("|")[2], e.dst_key.split("|")[2], e.line, e.tier) for e in res.iter_calls()
    }


def test_memoised_resolve_equals_the_plain_lookups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _resolve(tmp_path, "memo") as memo:
        monkeypatch.setattr(resolver, "memoised", _plain)
        with _resolve(tmp_path, "plain") as plain:
            assert differences(memo, plain) == []
        edges = _edges(memo)
    # the fixture exercises the memoised steps: attributes through bases, return types, chains
    work, use = "app.models.Service.work", "app.chain.use"
    assert (work, "app.models.Sub.run", 30, "receiver") in edges  # self.client.sub().run()
    assert (work, "app.models.Client.ping", 31, "receiver") in edges  # through Base
    assert (use, "app.models.Sub.run", 24, "receiver") in edges  # c = make(); c.sub().run()
    assert (use, "app.models.Node.go", 20, "receiver") in edges  # n2
    assert (use, "app.models.Node.go", 21, "receiver") in edges  # n6: within the depth limit
    assert not any(e[0] == use and e[2] in (19, 22) for e in edges)  # n12: past it
    assert ("app.chain", "app.models.Node.next", 10, "receiver") in edges  # n7 = n6.next()
    assert not any(e[0] == "app.chain" and e[2] == 11 for e in edges)  # n8 = n7.next()
    assert MAX_DEPTH == 8


def _outcomes(res: Resolution, names: NameLookups, typed: TypedNames, order: int) -> list[Any]:
    """Every call site's outcome through the given lookups, visited in ``order`` (1 or -1);
    returned in the sites' own order."""
    db = res.table.db
    files = {row[0]: ImportFile(*row) for row in res.table.iter_files()}
    tiers = CallTiers(names, typed)
    sites = db.execute(
        "SELECT id, path, enclosing, callee, receiver, line FROM calls_raw ORDER BY id"
    ).fetchall()
    out: dict[int, Any] = {}
    for site, path, enclosing, callee, receiver, line in sites[::order]:
        scope = FileScope(db, path)
        src = scope.enclosing(enclosing, line)
        assert src is not None
        out[site] = tiers.classify(scope, files[path], src, callee, receiver, line)
    return [out[s[0]] for s in sites]


def test_an_outcome_does_not_depend_on_the_sites_resolved_before(tmp_path: Path) -> None:
    with _resolve(tmp_path, "r") as res:
        db, cap = res.table.db, res.ambiguous_cap
        plain_names = NameLookups(db, cap)
        plain = _outcomes(res, plain_names, TypedNames(db, plain_names), 1)
        for order in (1, -1):
            names = MemoNames(db, cap)
            assert _outcomes(res, names, MemoTypedNames(db, names), order) == plain
    assert len(plain) > 20
