"""What the root callback records about one invocation of ``semgraph``: the ``-v`` switch and
the global options given on the command line. Settings are loaded from them when a command
first asks (:func:`semgraph.commands.console.settings_from`), so that ``semgraph --help`` and
a command's ``--help`` load nothing. Imports nothing but the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Invocation:
    verbose: bool = False
    overrides: dict[str, Any] = field(default_factory=dict)  # option name -> value given


class _State:
    verbose = False


def set_verbose(verbose: bool) -> None:
    _State.verbose = verbose


def is_verbose() -> bool:
    """Whether ``-v`` was given (tracebacks and detail)."""
    return _State.verbose
