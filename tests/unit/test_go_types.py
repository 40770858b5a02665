"""Go receiver text rules of semgraph.resolve.go_types, with malformed, hostile and oversized
input (the receiver text comes from the parsed source)."""

from __future__ import annotations

import time

import pytest

from semgraph.resolve.go_types import element_type, is_go_key, unwrap


@pytest.mark.parametrize(
    ("receiver", "plain"),
    [
        ("(*node)", "node"),
        ("( * a.b )", "a.b"),
        ("new(Checker)", "Checker"),
        ("BarImpl{}", "BarImpl"),
        ("&pkg.T{}", "pkg.T"),
        ("T{a: 1}", "T{a: 1}"),  # a literal with fields: left as written
        ("new(T).a()", "T().a()"),  # the head of a chain: a value of T
        ("new(pkg.T).a().b", "pkg.T().a().b"),
        ("T{}.a()", "T().a()"),
        ("&T{}.a", "T().a"),
        ("(*x).a().b()", "x.a().b()"),
        ("new(T)[0].a", "new(T)[0].a"),
        ("newT(x).a()", "newT(x).a()"),
        ("new(T).", "new(T)."),
        ("(*x)[0]", "(*x)[0]"),
        ("newer(T)", "newer(T)"),
        ("((x))", "((x))"),
        ("", ""),
        ("(", "("),
    ],
)
def test_unwrap(receiver: str, plain: str) -> None:
    assert unwrap(receiver) == plain


@pytest.mark.parametrize(
    ("text", "elem"),
    [
        ("[]*Item", "*Item"),
        ("[4]T", "T"),
        ("map[string]*T", "*T"),
        ("map[K][]T", "[]T"),
        ("*T", None),
        ("T", None),
        ("", None),
        ("[", None),
        ("map[", None),
    ],
)
def test_element_type(text: str, elem: str | None) -> None:
    assert element_type(text) == elem


def test_keys_and_oversized_or_hostile_text_are_quick() -> None:
    assert is_go_key("r|pkg/a.go|pkg.a.T") and not is_go_key("r|a.py|a.T")
    assert not is_go_key("no-separators") and not is_go_key("r|a.go")
    started = time.monotonic()
    for text in ("(" * 50_000 + "*x" + ")" * 50_000, "[" * 100_000, "map[" * 30_000, "a." * 50_000):
        unwrap(text)
        element_type(text)
    assert time.monotonic() - started < 1.0
