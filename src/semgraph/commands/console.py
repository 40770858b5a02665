"""What every command shares: the two consoles, the ``-v`` switch, the settings of this
invocation and JSON output. The subcommand modules import this; :mod:`semgraph.cli` only
assembles them. Like every command module it imports what it uses when it runs (the
settings, pydantic-settings, when a command first asks for them).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

import typer

from semgraph.commands.invocation import Invocation, is_verbose, set_verbose

if TYPE_CHECKING:
    from rich.console import Console

    from semgraph.config import Settings

__all__ = [
    "emit_json",
    "env_option",
    "err",
    "is_verbose",
    "json_option",
    "out",
    "set_verbose",
    "settings_from",
]


class _LazyConsole:
    """A rich console made on first use (importing rich costs a tenth of a second, which a
    ``--help`` does not need)."""

    def __init__(self, *, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console  # deferred: only output needs rich

            self._console = Console(stderr=self._stderr, highlight=False, soft_wrap=True)
        return getattr(self._console, name)


out = cast("Console", _LazyConsole(stderr=False))
err = cast("Console", _LazyConsole(stderr=True))


def settings_from(ctx: typer.Context) -> Settings:
    """The settings of this invocation: loaded on first use from the environment and the
    global options the root callback recorded, with logging configured from them (the
    environment's alone for a bare sub-app)."""
    from semgraph import logs  # deferred: a command's --help loads no settings
    from semgraph.config import Settings, load_settings

    root = ctx.find_root()
    if isinstance(root.obj, Settings):
        return root.obj
    invocation = root.obj if isinstance(root.obj, Invocation) else Invocation()
    settings = load_settings(**invocation.overrides)
    verbose = invocation.verbose or is_verbose()
    logs.configure("DEBUG" if verbose else settings.log_level, settings.log_json)
    root.obj = settings
    return settings


def emit_json(data: Any) -> None:
    out.out(json.dumps(data, indent=2, sort_keys=True, default=str))


def json_option(help: str = "Machine-readable output.") -> Any:
    """``--json``: the same switch and variable on every command."""
    return typer.Option(False, "--json", envvar="SEMGRAPH_JSON", show_envvar=True, help=help)


def env_option(default: Any, *flags: str, env: str, help: str, **extra: Any) -> Any:
    """An option that names its environment variable in ``--help``, as every option does."""
    return typer.Option(default, *flags, envvar=env, show_envvar=True, help=help, **extra)
