"""Receiver and type expressions (resolve/typeexpr.py) and typed names from the parser
(indexer/typed.py), including malformed, hostile and oversized input."""

from __future__ import annotations

import time

import pytest

from semgraph.indexer.extract import extract_all
from semgraph.indexer.typed import MAX_BINDINGS
from semgraph.model import RETURN
from semgraph.resolve.resolver import clean_base
from semgraph.resolve.typeexpr import Segment, clean_type, split_receiver


def test_split_receiver_segments() -> None:
    assert split_receiver("a.b(x, y.z).c") == [
        Segment("a", False),
        Segment("b", True),
        Segment("c", False),
    ]
    assert split_receiver("super()") == [Segment("super", True)]
    assert split_receiver("Pool::new()?") == [Segment("Pool", False), Segment("new", True)]
    assert split_receiver("this.repo?.find(1)!") == [
        Segment("this", False),
        Segment("repo", False),
        Segment("find", True),
    ]
    assert split_receiver("Vec::<u8>::new()") is None  # a turbofish segment: not followed


@pytest.mark.parametrize(
    "text", ["", "x[0]", "(a or b)", "lambda: 1", '"s"', "a.", "1 + 2", "a b", "f()[1]"]
)
def test_split_receiver_refuses_what_it_cannot_follow(text: str) -> None:
    assert split_receiver(text) is None


def test_clean_type_forms() -> None:
    assert clean_type("Optional[Client]") == "Client"
    assert clean_type("t.Optional['Client']") == "Client"
    assert clean_type("Client | None") == "Client"
    assert clean_type("Union[None, pkg.Client]") == "pkg.Client"
    assert clean_type('"pkg.Client"') == "pkg.Client"
    assert clean_type("List[Client]") == "List"
    assert clean_type("&mut Conn") == "Conn"
    assert clean_type("Result<Conn, Error>") == "Conn"
    assert clean_type("Promise<Row>") == "Row"
    assert clean_type("std::sync::Arc<Pool>") == "Pool"
    assert clean_type("A | B") is None  # two classes: no single type
    assert clean_type("Callable[[int], str]") == "Callable"
    assert clean_type("int[]") == "int"
    assert clean_type("() => void") is None


def test_hostile_expressions_are_bounded() -> None:
    deep = "Option<" * 5000 + "X" + ">" * 5000
    started = time.monotonic()
    assert clean_type(deep) is None  # over the length bound
    assert clean_type("Optional[" * 30 + "X" + "]" * 30) == "X"
    assert split_receiver("a(" * 3000 + ")" * 3000) is not None
    assert split_receiver(")" * 5000) is None
    assert clean_base("Base[" * 500 + "]" * 500) != "Base]"
    assert clean_base("Base[t.IO[t.Any]]") == "Base"
    assert time.monotonic() - started < 5.0


def test_typed_names_from_python() -> None:
    src = b"""
class A:
    def __init__(self, c: "Client"):
        self.c = c
        self.d = Dee()

    def f(self, a, ctx: Context) -> Optional[R]:
        x = Cls(1)
        y: Client = make()
        with Cls() as z:
            pass
        return cls(1)
"""
    _, _, _, binds, _ = extract_all("m.py", "python", src)
    got = {(b.scope, b.name, b.kind, b.text) for b in binds}
    assert ("m.A", "c", "type", '"Client"') in got  # self.c = c takes c's annotation
    assert ("m.A", "d", "call", "Dee") in got
    assert ("m.A.f", "a", "name", "") in got  # untyped parameter: still a local
    assert ("m.A.f", "ctx", "type", "Context") in got
    assert ("m.A.f", "x", "call", "Cls") in got
    assert ("m.A.f", "y", "type", "Client") in got  # the annotation wins over the call
    assert ("m.A.f", "z", "call", "Cls") in got
    assert ("m.A.f", RETURN, "type", "Optional[R]") in got
    assert ("m.A.f", RETURN, "call", "cls") in got


def test_self_attribute_outside_a_class_is_dropped_and_java_var_is_no_type() -> None:
    _, _, _, binds, _ = extract_all("m.py", "python", b"def f(self):\n    self.x = A()\n")
    assert [(b.scope, b.name) for b in binds] == [("m.f", "self")]
    java = b"class S { void r() { var o = new Repo(); } }"
    _, _, _, binds, _ = extract_all("S.java", "java", java)
    assert [(b.name, b.kind, b.text) for b in binds if b.name != RETURN] == [("o", "call", "Repo")]


def test_oversized_file_keeps_a_bounded_number_of_typed_names() -> None:
    src = "".join(f"x{i} = C{i}()\n" for i in range(MAX_BINDINGS + 500)).encode()
    _, _, _, binds, _ = extract_all("big.py", "python", src, budget_s=60.0)
    assert len(binds) == MAX_BINDINGS


def test_malformed_source_yields_what_was_recovered() -> None:
    src = b"def f(a: \n    x = Cls(\n  with as z:\n    y: = 3\n"
    _, _, _, binds, error = extract_all("bad.py", "python", src)
    assert error is not None
    assert all(b.name and b.kind in {"type", "call", "name", "ref"} for b in binds)
