"""Overloads by arity (Java, Kotlin, C#, Scala): of several same-named methods a call could
mean, the ones whose parameters accept the number of arguments it writes
(:attr:`semgraph.model.CallSite.args`).

A definition's parameters are read from its signature as written (``void error(String msg,
Object... args)``): a varargs parameter (``...``, C# ``params``, Kotlin ``vararg``) accepts
any number from the ones before it on, a parameter with a default (``= 1``) may be left out.
A signature that cannot be read accepts everything, so a call is never narrowed to nothing by
what we failed to read.

The first class that declares a name hides its bases' same-named methods from the plain
member lookup (:meth:`semgraph.resolve.scope.NameLookups.members`). In these languages a
subclass's ``error(String)`` does not hide its base's ``error(String, Object...)`` or
``error(int)``: the bases' same-named methods that accept the call join the candidates unless
one found before has the same parameter types (an override); as in javac, a varargs overload
is a candidate only when no fixed-arity one accepts the call. Types are not matched against
the arguments, so ``error(3)`` stays ambiguous between ``error(String)`` and ``error(int)``
(:meth:`Overloads.narrow`).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from semgraph.resolve.typeexpr import split_top

FAMILIES = frozenset({"java", "kotlin", "csharp", "scala"})
MAX_PARAMS_TEXT = 2_000  # a signature's parameter list read at most this far
_OPEN, _CLOSE = "(<[{", ")>]}"
_MAX_UP = 4  # base classes followed for an inherited overload
_ANNOTATION = re.compile(r"@[\w.]+(?:\([^()]*\))?")


@functools.lru_cache(maxsize=65_536)
def _split(signature: str) -> tuple[str, ...] | None:
    """The parameters of a signature as written, or None when the list cannot be read."""
    signature = _ANNOTATION.sub("", signature[: MAX_PARAMS_TEXT * 2])  # @SuppressWarnings("x")
    start = signature.find("(")
    end = signature.rfind(")")
    if start < 0 or end < start or end - start > MAX_PARAMS_TEXT:
        return None
    inner = signature[start + 1 : end].replace("->", "  ").strip()  # Kotlin (Int) -> Unit
    if not inner:
        return ()
    if any(inner.count(o) != inner.count(c) for o, c in zip(_OPEN, _CLOSE, strict=True)):
        return None  # cut or unbalanced: not read
    params = split_top(inner, ",", _OPEN, _CLOSE)
    return tuple(params) if all(params) else None


def parameters(signature: str) -> tuple[int, int | None] | None:
    """(least, most) arguments a signature accepts (most None: any number), or None when its
    parameter list cannot be read."""
    params = _split(signature)
    if params is None:
        return None
    varargs = any("..." in p or p.split()[0] in ("params", "vararg") for p in params)
    optional = sum(1 for p in params if "=" in p)
    least = len(params) - optional - (1 if varargs else 0)
    return max(least, 0), None if varargs else len(params)


def types(signature: str) -> tuple[str, ...] | None:
    """The parameter types of a signature (``(String, Object...)``), names and annotations
    left out: two methods with the same types are an override, not two overloads."""
    params = _split(signature)
    if params is None:
        return None
    out = []
    for p in params:
        p = re.sub(r"@\w+(?:\([^)]*\))?|\bfinal\b", "", p.split("=")[0]).strip()
        out.append(p.split(":", 1)[1].strip() if ":" in p else re.sub(r"\s*\w+$", "", p))
    return tuple(re.sub(r"\s+", "", t) for t in out)


def accepts(signature: str, n: int) -> bool:
    """Whether a definition with this signature can take ``n`` arguments (True when its
    parameters cannot be read)."""
    found = parameters(signature)
    if found is None:
        return True
    least, most = found
    return n >= least and (most is None or n <= most)


class Overloads:
    """Overloads by arity over one resolution's symbol table, with what it reads remembered per
    run (a method's parameters, a class's bases, a class's methods of a name): a pure
    function of the tables, like the memos of :mod:`semgraph.resolve.memo`."""

    def __init__(self, db: Any) -> None:
        self.db = db
        self._params: dict[str, tuple[tuple[int, int | None] | None, tuple[str, ...] | None]] = {}
        self._bases: dict[str, list[str]] = {}
        self._named: dict[tuple[str, str], list[str]] = {}

    def narrow(self, keys: list[str], name: str, n: int) -> list[str]:
        """The same-named methods a call of ``n`` arguments may run: those of ``keys`` that
        accept it, and the overloads of their classes' bases that do and that nothing found
        before overrides (same parameter types); a varargs one only when no fixed-arity one
        accepts it; ``keys`` as they were when none accepts it."""
        fits = [k for k in keys if self._accepts(k, n)]
        known = {self._of(k)[1] for k in fits}
        seen: set[str] = set()
        parents = [b for o in self._owners(keys) for b in self._bases_of(o)]
        for _ in range(_MAX_UP):
            if not parents:
                break
            for parent in parents:
                for k in self._methods(parent, name):
                    if self._accepts(k, n) and self._of(k)[1] not in known:
                        fits.append(k)
                        known.add(self._of(k)[1])
            seen.update(parents)
            parents = [b for p in parents for b in self._bases_of(p) if b not in seen]
        fixed = [k for k in fits if (self._of(k)[0] or (0, 0))[1] is not None]
        return fixed or fits or keys  # a varargs overload only when no fixed one accepts the call

    def _of(self, key: str) -> tuple[tuple[int, int | None] | None, tuple[str, ...] | None]:
        found = self._params.get(key)
        if found is None:
            row = self.db.execute("SELECT signature FROM symbols WHERE key = ?", (key,)).fetchone()
            sig = str(row[0] or "") if row is not None else ""
            found = self._params[key] = (parameters(sig), types(sig))
        return found

    def _accepts(self, key: str, n: int) -> bool:
        found = self._of(key)[0]
        return found is None or (n >= found[0] and (found[1] is None or n <= found[1]))

    def _owners(self, keys: list[str]) -> list[str]:
        owners = {
            row[0]
            for k in keys
            for row in self.db.execute("SELECT parent_key FROM symbols WHERE key = ?", (k,))
            if row[0]
        }
        return sorted(owners)

    def _bases_of(self, cls: str) -> list[str]:
        found = self._bases.get(cls)
        if found is None:
            found = self._bases[cls] = [
                b
                for (b,) in self.db.execute(
                    "SELECT parent_key FROM inherits WHERE child_key = ? ORDER BY rowid", (cls,)
                )
            ]
        return found

    def _methods(self, cls: str, name: str) -> list[str]:
        found = self._named.get((cls, name))
        if found is None:
            found = self._named[(cls, name)] = [
                k
                for (k,) in self.db.execute(
                    "SELECT key FROM symbols WHERE parent_key = ? AND name = ?", (cls, name)
                )
            ]
        return found
