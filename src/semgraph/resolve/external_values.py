"""Which outside definition an external value names, kept for the cross-repository link:
an ``("external", ...)`` value of :mod:`semgraph.resolve.typed` may carry the
import it started from and the dotted path after it, so that ``runner.invoke()`` with a
fixture ``runner`` returning ``CliRunner()`` (``from click.testing import CliRunner``) is
the site ``("click.testing", "CliRunner", "invoke")``.

The payload is ``(module, path)`` for what a path names (``click.Group``) and ``(module,
path, "()")`` for an instance of it (``click.Group()``, a value annotated ``click.Group``).
Calling is followed only where the call makes an instance of a class by Python's naming
habit (``CliRunner()``, not ``get_current_context()``), and never twice: a function's
result is not read from its name. Anything else is the bare :data:`EXTERNAL`, as before.
JS/TS (``import Queue from "yocto-queue"``, ``new Queue()``): the module and the export the
import reaches, ``("yocto-queue", "default", "()")``.
"""

from __future__ import annotations

from collections.abc import Iterable

from semgraph.resolve.import_types import MEMBER_SEP
from semgraph.resolve.scope import FileScope, Sym

Value = tuple[str, tuple[str, ...]]  # as resolve/typed.py (which imports this module)
UNKNOWN: Value = ("unknown", ())
EXTERNAL: Value = ("external", ())
INSTANCE = "()"
MAX_PATH = 8  # segments kept; a longer chain is plain external


def imported(scope: FileScope, name: str, src: Sym | None) -> Value:
    """What an external import binding ``name`` is: the module it binds, the name itself."""
    bound = scope.binding(name, src)
    if bound is None or bound[0] != "external" or not bound[1]:
        return EXTERNAL
    module, sep, exported = bound[1].partition(MEMBER_SEP)
    if not sep:
        return ("external", (bound[1], name))
    # JS/TS: the export it reaches; a default export is followed as a class only when the
    # file names it like one (``import Queue from``), as :func:`call` reads names
    if exported == "default" and not name[:1].isupper():
        return EXTERNAL
    return ("external", (module, exported))


def member(value: Value, name: str) -> Value:
    """``value.name`` of an external value."""
    payload = value[1]
    if len(payload) < 2 or payload[1].count(".") + 1 >= MAX_PATH:
        return EXTERNAL
    return ("external", (payload[0], f"{payload[1]}.{name}"))


def call(value: Value) -> Value:
    """``value()`` of an external value: an instance of a class named in CapWords."""
    payload = value[1]
    last = payload[1].rpartition(".")[2] if len(payload) == 2 else ""
    if not last[:1].isupper() and last != "default":
        return EXTERNAL
    return ("external", (*payload, INSTANCE))


def instance(value: Value) -> Value:
    """An instance of the external type ``value`` names (an annotation)."""
    return ("external", (*value[1], INSTANCE)) if len(value[1]) == 2 else value


def one(values: Iterable[Value]) -> Value:
    """The one value all of ``values`` are; several external ones, the bare external (what
    they share is that they are outside); else unknown."""
    distinct = set(values)
    if len(distinct) == 1:
        return distinct.pop()
    if distinct and all(v[0] == "external" for v in distinct):
        return EXTERNAL
    return UNKNOWN


def site(value: Value, callee: str) -> tuple[str, str, str] | None:
    """The site ``(module, local, rest)`` of calling ``callee`` on the external ``value``."""
    if value[0] != "external" or len(value[1]) < 2:
        return None
    module, path = value[1][0], value[1][1]
    local, _, rest = f"{path}.{callee}".partition(".")
    return module, local, rest
