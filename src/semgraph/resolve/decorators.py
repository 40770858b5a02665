"""Objects made by decorators (Python): ``@click.group()`` over ``def cli()`` makes ``cli`` a
``Group``, so ``cli.command()`` is ``Group.command``. The parser records a function's
outermost decorator as written (:data:`semgraph.model.DECORATOR`); :func:`decorated` applies it
to the function as the decorator's annotations say:

* ``@Cls`` makes an instance of ``Cls``; ``@Cls(...)`` what ``Cls.__call__`` returns;
* ``@deco`` makes what ``deco`` returns (declared, or inferred from ``return Cls(...)``), the
  alternatives of a declared union that are not callables (``Group | Callable[..., Group]``:
  applied to a function, ``click.group`` gives the ``Group``);
* ``@factory(...)`` makes what the callable ``factory`` returns returns: the last argument of
  the ``Callable[[...], X]`` alternatives of its declared type.

A TypeVar among the alternatives (``Group | GrpType``) is the caller's choice: it is dropped
only when no argument of the decorator's call can bind it (no argument reaches a parameter
whose annotation names it), else the decorator makes nothing known. The result counts only
when every alternative names the same class of the repository; anything else (an external
decorator, a wrapper, an identity ``F -> F``) leaves the function a function.
"""

from __future__ import annotations

import re

from semgraph.model import DECORATOR, RETURN
from semgraph.resolve.python_types import Receivers, Value
from semgraph.resolve.scope import Ctx
from semgraph.resolve.typeexpr import (
    BRACKETS_CLOSE,
    BRACKETS_OPEN,
    alternatives,
    outside_quotes,
    split_receiver,
    split_top,
)

_CALLABLE = re.compile(r"^(?:typing\.|t\.|collections\.abc\.|abc\.)?Callable\[(.*)\]$", re.S)
_TYPEVAR = re.compile(r"(?:^|\.)TypeVar$")


def decorated(typed: Receivers, key: str) -> Value | None:
    """The object the function ``key`` is after its outermost decorator, when that is an
    instance of one of the repository's classes; None otherwise (and for a function without
    a decorator). Memoized in ``typed.made``; a decorator that leads back to a function being
    decorated (a cycle) makes nothing known there, and what depended on it is not memoized
    (it would depend on which function was asked first)."""
    if key in typed.made:
        return typed.made[key]
    stack = typed.decorating  # function being decorated -> whether a cycle was met below it
    if key in stack:
        for k in stack:
            stack[k] = True
        return None
    stack[key] = False
    try:
        value = _decorated(typed, key)
    finally:
        cycle = stack.pop(key)
    if not cycle:
        typed.made[key] = value
    return value


def _decorated(typed: Receivers, key: str) -> Value | None:
    row = typed.db.execute("SELECT path, kind FROM symbols WHERE key = ?", (key,)).fetchone()
    found = typed.file_ctx(row[0]) if row is not None and row[1] == "function" else None
    sym = found[0].by_key.get(key) if found is not None else None
    if found is None or sym is None:
        return None
    scope, f = found
    binds = typed.bindings(f.path).get((sym.qn, DECORATOR))
    outer = scope.by_key.get(sym.parent_key or scope.module_key)
    if not binds or outer is None:
        return None
    line, _, text = binds[0]
    called = split_call(text)  # @factory(...): the factory, and the arguments it is given
    segs = split_receiver(called[0] if called else text)
    if segs is None or segs[-1].called:
        return None
    factory, args = called is not None, called[1] if called else ["<the function>"]
    ctx = Ctx(scope, f, outer)
    if len(segs) > 1:  # the method itself (evaluate() would read `cli.command` as a property)
        kind, keys = typed.member(typed.evaluate(ctx, segs[:-1], line, 1), segs[-1].name, 1)
    else:
        kind, keys = typed.evaluate(ctx, segs, line, 1)
    if kind == "class":
        if not factory:
            return ("instance", keys)
        calls = [m for c in keys for m in typed.names.members(c, "__call__")]
        results = {typed.returns(m, 1) for m in calls}
        value = results.pop() if len(results) == 1 else None
    elif kind == "function" and len(keys) == 1:
        value = _returned(typed, keys[0], factory, args)
    else:
        return None
    return value if value is not None and value[0] == "instance" else None


def _returned(typed: Receivers, key: str, factory: bool, args: list[str]) -> Value | None:
    """What calling function ``key`` with ``args`` gives, applied to a function when it is a
    decorator factory (``factory``), from its declared return type."""
    row = typed.db.execute("SELECT path, signature FROM symbols WHERE key = ?", (key,)).fetchone()
    found = typed.file_ctx(row[0]) if row is not None else None
    sym = found[0].by_key.get(key) if found is not None else None
    if found is None or sym is None:
        return None
    scope, f = found
    declared = [t for _, k, t in typed.bindings(f.path).get((sym.qn, RETURN), []) if k == "type"]
    if not declared:
        return None if factory else typed.returns(key, 1)  # `return Cls(...)`
    alts = alternatives(declared[0])
    if factory:
        alts = [a for c in alts if (m := _CALLABLE.match(c)) for a in _callable_returns(m[1])]
    else:
        alts = [a for a in alts if not _CALLABLE.match(a)]
    ctx = Ctx(scope, f, sym)
    module = typed.bindings(f.path)
    typevars = {
        a
        for a in alts
        if any(
            k == "call" and _TYPEVAR.search(t) for _, k, t in module.get((scope.module_qn, a), [])
        )
    }
    if typevars:
        params = parameters(str(row[1] or ""), sym.kind == "method")
        if params is None or _binds_any(params, args, typevars):
            return None
        alts = [a for a in alts if a not in typevars]
    values = {typed.value_of_type(ctx, a, 1) for a in alts}
    return values.pop() if len(values) == 1 else None


def _callable_returns(inner: str) -> list[str]:
    parts = split_top(inner, ",")
    return alternatives(parts[-1]) if len(parts) == 2 else []


def split_call(text: str) -> tuple[str, list[str]] | None:
    """``cli.command("x", cls=C)`` as the called expression and its arguments as written;
    None when ``text`` does not end with a call."""
    text = text.rstrip()
    depth, opened = 0, -1
    for i, ch in outside_quotes(text):
        if ch in BRACKETS_OPEN:
            if depth == 0 and ch == "(":
                opened = i
            depth += 1
        elif ch in BRACKETS_CLOSE:
            depth -= 1
    if opened <= 0 or not text.endswith(")"):
        return None
    return text[:opened], [a for a in split_top(text[opened + 1 : -1], ",") if a]


def parameters(signature: str, method: bool) -> list[str] | None:
    """The parameters of a ``def`` signature as written (without ``self`` of a method)."""
    start = signature.find("(")
    if start < 0:
        return None
    depth, end = 0, -1
    for i in range(start, len(signature)):
        if signature[i] in BRACKETS_OPEN:
            depth += 1
        elif signature[i] in BRACKETS_CLOSE:
            depth -= 1
            if depth == 0:
                end = i
                break
    if end < 0:
        return None
    params = [p for p in split_top(signature[start + 1 : end], ",") if p and p not in ("/", "*")]
    return params[1:] if method and params else params


def _binds_any(params: list[str], args: list[str], typevars: set[str]) -> bool:
    """Whether an argument of the call can reach a parameter annotated with a TypeVar."""
    if any(a.startswith("*") for a in args):
        return True
    keywords = {a.split("=", 1)[0].strip() for a in args if re.match(r"^\w+\s*=[^=]", a)}
    positional = len(args) - len(keywords)
    for i, p in enumerate(params):
        name, _, annotation = re.split(r"=", p, maxsplit=1)[0].partition(":")
        name = name.strip()
        if not any(re.search(rf"\b{re.escape(v)}\b", annotation) for v in typevars):
            continue
        if name.startswith("**"):
            named = {re.split(r"[:=]", q, maxsplit=1)[0].strip().lstrip("*") for q in params}
            if keywords - named:
                return True
        elif name.lstrip("*") in keywords or i < positional:
            return True
    return False
