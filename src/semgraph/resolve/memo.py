"""Memoised receiver types and name lookups for the call phase of one resolution.

Evaluating receivers (:mod:`semgraph.resolve.typed`) is a recursive walk: a receiver names a
binding, whose value is a call, whose function's return type names a class, whose attribute
is another binding... Without memory every call site walks the same bindings again, and the
walks nest, so the work grew with nesting (a full resolve of sympy took ten times as long as
before the typed receivers). :class:`MemoTypedNames` and :class:`MemoNames` remember each
step's result.

**Every memo is a pure function of the symbol table's contents.** A key holds everything the
step reads besides the tables: the symbol it is seen from (which fixes the file and the line
a binding is read at), the name, and the evaluation ``depth`` (the walk stops at
:data:`~semgraph.resolve.typed.MAX_DEPTH`, so the same step can give a different answer
deeper down). So a result never depends on which files or call sites were resolved before,
and an incremental resolve that visits any subset of files in any order gets what a full
resolve gets. The memos live on these per-run objects, never in module state.

They are made only once the tables are final: after the base classes are resolved (the
``inherits`` table that member and attribute lookups read is written during that step), so
the resolver uses the plain lookups up to then. A memo that outgrows :data:`MAX_ENTRIES` is
emptied (which costs time, never a different answer).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from semgraph.resolve.scope import Ctx, NameLookups
from semgraph.resolve.tiers import CallTiers
from semgraph.resolve.typed import TypedNames, Value

T = TypeVar("T")
MAX_ENTRIES = 400_000  # per memo; past it the memo starts again
_MISS: Any = object()


def memoised(db: Any, ambiguous_cap: int) -> tuple[MemoNames, MemoTypedNames, CallTiers]:
    """The call phase's lookups, memoised; made once the tables they read are final (after
    the base classes are resolved)."""
    names = MemoNames(db, ambiguous_cap)
    typed = MemoTypedNames(db, names)
    return names, typed, CallTiers(names, typed)


class _Memo:
    """One memo table: ``get(key, compute)`` computes once per key."""

    __slots__ = ("table",)

    def __init__(self) -> None:
        self.table: dict[Hashable, Any] = {}

    def get(self, key: Hashable, compute: Callable[..., T], *args: Any) -> T:
        hit = self.table.get(key, _MISS)
        if hit is _MISS:
            hit = compute(*args)
            if len(self.table) >= MAX_ENTRIES:
                self.table.clear()
            self.table[key] = hit
        return hit  # type: ignore[no-any-return]


class MemoNames(NameLookups):
    """:class:`~semgraph.resolve.scope.NameLookups` that remembers its symbol table reads
    (class members through bases, top-level names, external bases, kinds)."""

    def __init__(self, db: Any, ambiguous_cap: int) -> None:
        super().__init__(db, ambiguous_cap)
        self._members, self._top, self._external, self._is_class = (_Memo() for _ in range(4))

    def members(self, class_key: str, name: str, depth: int = 0) -> list[str]:
        return list(
            self._members.get((class_key, name, depth), super().members, class_key, name, depth)
        )

    def top_level(self, kind: str, target: str, name: str, fam: str, depth: int = 0) -> list[str]:
        return list(
            self._top.get(
                (kind, target, name, fam, depth), super().top_level, kind, target, name, fam, depth
            )
        )

    def has_external_base(self, cls: str, up: int = 0) -> bool:
        return self._external.get((cls, up), super().has_external_base, cls, up)

    def is_class(self, key: str) -> bool:
        return self._is_class.get(key, super().is_class, key)


class MemoTypedNames(TypedNames):
    """:class:`~semgraph.resolve.typed.TypedNames` that evaluates each binding, return type,
    attribute, member and module-level value once per (symbol, name, depth)."""

    def __init__(self, db: Any, names: NameLookups) -> None:
        super().__init__(db, names)
        self._binding, self._type, self._returns, self._attribute = (_Memo() for _ in range(4))
        self._member, self._module_value, self._kind, self._parents = (_Memo() for _ in range(4))
        self._family = _Memo()

    def value_of_binding(self, ctx: Ctx, bound: tuple[str, str], depth: int) -> Value:
        # a binding's value is read at the end of ctx.src: the symbol fixes file and line
        return self._binding.get(
            (ctx.src.key, bound, depth), super().value_of_binding, ctx, bound, depth
        )

    def value_of_type(self, ctx: Ctx, text: str, depth: int) -> Value:
        return self._type.get((ctx.src.key, text, depth), super().value_of_type, ctx, text, depth)

    def returns(self, key: str, depth: int) -> Value:
        return self._returns.get((key, depth), super().returns, key, depth)

    def attribute(self, cls: str, name: str, depth: int, up: int) -> Value:
        return self._attribute.get((cls, name, depth, up), super().attribute, cls, name, depth, up)

    def member(self, value: Value, name: str, depth: int) -> Value:
        return self._member.get((value, name, depth), super().member, value, name, depth)

    def module_value(self, path: str, name: str, depth: int) -> Value:
        return self._module_value.get((path, name, depth), super().module_value, path, name, depth)

    def kind(self, key: str) -> str:
        return self._kind.get(key, super().kind, key)

    def parents(self, cls: str) -> list[str]:
        return list(self._parents.get(cls, super().parents, cls))

    def family_of(self, kind: str, target: str) -> str:
        return self._family.get((kind, target), super().family_of, kind, target)
