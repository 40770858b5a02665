"""Fault points: the one way tests make semgraph crash, pause or fail at a chosen place.

Production code names the places where a fault matters, and nothing else::

    self.faults.point("publish.before_commit")
    self.faults.point("queue.claim:after_read")

A :class:`Faults` registry maps point names to actions. A point nobody armed costs one
dictionary lookup and does nothing. Components take a registry the way they take a clock
(``faults=...``, default :data:`PROCESS`), so a test arms either one component's points (a
registry of its own: two job stores racing, one of them paused) or the whole process.

Processes a test starts are armed from the environment: ``SEMGRAPH_FAULTS`` holds
``point=action`` pairs separated by commas, with the built-in actions of :data:`BUILTIN`,
and :func:`arm_from_env` arms :data:`PROCESS` with them (the parse pool's children do, at
start). ``marker`` is the parse pool's: it reads ``SEMGRAPH_FAULT:<action>`` in the file
being parsed, so one repository can hold files that crash, hang or exhaust memory. Without
the variable every marker is ordinary text.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

from semgraph.errors import ConfigError

ENV = "SEMGRAPH_FAULTS"
MARKER = b"SEMGRAPH_FAULT:"

Action = Callable[..., None]


class Faults:
    """Named fault points and the actions armed at them."""

    def __init__(self) -> None:
        self._armed: dict[str, Action] = {}

    def point(self, name: str, **context: Any) -> None:
        """Run the action armed at ``name`` (with ``context``), if any."""
        action = self._armed.get(name)
        if action is not None:
            action(**context)

    def arm(self, name: str, action: Action) -> None:
        self._armed[name] = action

    def disarm(self, name: str) -> None:
        self._armed.pop(name, None)

    @contextlib.contextmanager
    def armed(self, name: str, action: Action) -> Iterator[None]:
        """Arm ``name`` for the block (what was armed before comes back after it)."""
        previous = self._armed.get(name)
        self._armed[name] = action
        try:
            yield
        finally:
            if previous is None:
                self._armed.pop(name, None)
            else:
                self._armed[name] = previous

    def arm_spec(self, spec: str) -> None:
        """Arm ``point=action`` pairs (comma-separated) with built-in actions."""
        for item in (part.strip() for part in spec.split(",")):
            if not item:
                continue
            name, sep, action = item.partition("=")
            if not sep or action not in BUILTIN:
                known = ", ".join(sorted(BUILTIN))
                raise ConfigError(f"{ENV}: {item[:100]!r} is not point=action ({known})")
            self.arm(name.strip(), BUILTIN[action])


#: the registry of this process: the default of every component that takes one
PROCESS = Faults()


def arm_from_env(faults: Faults = PROCESS) -> None:
    faults.arm_spec(os.environ.get(ENV, ""))


def segfault(**_: Any) -> None:
    ctypes.string_at(0)


def abort(**_: Any) -> None:
    os.abort()


def hang(**_: Any) -> None:
    while True:
        time.sleep(3600)


def oom(**_: Any) -> None:
    hog = []
    while True:
        hog.append(bytearray(64 * 1024 * 1024))


def fail(**_: Any) -> None:
    raise RuntimeError("injected fault")


def sigkill(**_: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def marker(*, data: bytes = b"", **_: Any) -> None:
    """Do what the ``SEMGRAPH_FAULT:<action>`` marker in ``data`` names (nothing without)."""
    at = data.find(MARKER)
    if at < 0:
        return
    word = data[at + len(MARKER) : at + len(MARKER) + 16].split(b"\n")[0].strip()
    for name, action in _MARKED.items():
        if word.startswith(name):
            action()
            return


BUILTIN: dict[str, Action] = {
    "segfault": segfault,
    "abort": abort,
    "hang": hang,
    "oom": oom,
    "raise": fail,
    "sigkill": sigkill,
    "marker": marker,
}
# what a SEMGRAPH_FAULT:<action> marker in a file may name
_MARKED: dict[bytes, Action] = {
    name.encode(): BUILTIN[name] for name in ("segfault", "abort", "hang", "oom", "raise")
}
