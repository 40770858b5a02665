"""Which declaration of a Go local a line sees, for :meth:`semgraph.resolve.typed.TypedNames.local`.

* A local is in effect from its declaration on: Go has no use before declaration, so a name
  used above every declaration of it in the function is no local there (an import, a name of
  the package).
* A name declared inside a function literal (its parameters, its locals) is in effect only
  within the literal (the parser records the lines, :attr:`semgraph.model.Binding.end`):
  in ``r.HandleFunc("/", func(w W, r *Request) {...}).Methods("GET")`` both calls are on the
  outer ``r``, and so is every later ``r.m()`` of the function.

Such names are kept apart from the function's own (``end_line > 0`` in ``typed_raw``) and
read here, per file, the way :class:`~semgraph.resolve.typed.TypedNames` reads the others.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, ClassVar

Scoped = tuple[int, int, str, str]  # (first line, last line or 0, kind, text) of a binding
_FOREVER = 1 << 62
_FILES = 8  # files whose literals' names are kept (calls are resolved file by file)
_SCOPED = (  # the names declared inside function literals of one file
    "SELECT scope, name, line, end_line, kind, text FROM typed_raw WHERE path = ? "
    "AND end_line > 0 AND NOT (name >= '<to:' AND name < '<to;') ORDER BY line"  # no go_reach fact
)


class LiteralNames:
    """The names declared inside function literals, of one resolution's files."""

    _by_names: ClassVar[weakref.WeakKeyDictionary[Any, LiteralNames]] = weakref.WeakKeyDictionary()

    def __init__(self, db: Any) -> None:
        self.db = db
        self._files: OrderedDict[str, dict[tuple[str, str], list[Scoped]]] = OrderedDict()

    @classmethod
    def of(cls, names: Any) -> LiteralNames:
        """The lookups of one resolution (its :class:`~semgraph.resolve.scope.NameLookups`)."""
        found = cls._by_names.get(names)
        if found is None:
            found = cls._by_names[names] = LiteralNames(names.db)
        return found

    def of_file(self, path: str) -> dict[tuple[str, str], list[Scoped]]:
        """The names of ``path`` declared inside function literals, by (scope, name)."""
        hit = self._files.get(path)
        if hit is None:
            hit = {}
            for scope, name, line, end, kind, text in self.db.execute(_SCOPED, (path,)):
                hit.setdefault((scope, name), []).append((line, end, kind, text))
            self._files[path] = hit
            if len(self._files) > _FILES:
                self._files.popitem(last=False)
        return hit


def in_effect(found: Iterable[Scoped], line: int) -> tuple[str, str] | None:
    """(kind, text) of the binding in effect at ``line``: of those whose lines hold it
    (declared at or before it, and not ended), the latest; of two declared on one line, the
    narrower (a one-line literal's parameter); None when there is none."""
    best: Scoped | None = None
    best_rank = (0, 0)
    for entry in found:
        first, last = entry[0], entry[1] or _FOREVER
        if first <= line <= last and (best is None or (first, -last) > best_rank):
            best, best_rank = entry, (first, -last)
    return (best[2], best[3]) if best is not None else None


def local_at(
    typed: Any, ctx: Any, scope: str, name: str, found: Any, line: int
) -> tuple[str, str] | None:
    """``name`` as a local of the Go function ``scope`` at ``line``: its bindings of the whole
    function (``found``: (line, kind, text), from :meth:`TypedNames.bindings`) and of the
    function literals there, through :func:`in_effect`. At the function's last line, where a
    binding's value is evaluated (its own line is not kept), the latest declaration at or
    before it applies, else the first, wherever declared (as for other languages)."""
    scoped = LiteralNames.of(typed.names).of_file(ctx.f.path).get((scope, name), [])
    if not found and not scoped:
        return None
    entries = [(n, 0, k, t) for n, k, t in found or ()] + scoped
    if line >= ctx.src.end:
        entries.sort(key=lambda e: e[0])
        latest = [e for e in entries if e[0] <= line] or entries[:1]
        return latest[-1][2], latest[-1][3]
    return in_effect(entries, line)
