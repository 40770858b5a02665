"""What every command shares: the two consoles, the ``-v`` switch, the settings of this
invocation and JSON output. The subcommand modules import this; :mod:`semgraph.cli` only
assembles them.
"""

from __future__ import annotations

import json
from typing import Any

import typer
from rich.console import Console

from semgraph.config import Settings, load_settings

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class _State:
    verbose = False


def set_verbose(verbose: bool) -> None:
    _State.verbose = verbose


def is_verbose() -> bool:
    """Whether ``-v`` was given (tracebacks and detail)."""
    return _State.verbose


def settings_from(ctx: typer.Context) -> Settings:
    """The settings the main callback loaded (or the environment's, for a bare sub-app)."""
    settings = ctx.obj if isinstance(ctx.obj, Settings) else None
    if settings is None:
        root = ctx.find_root()
        if not isinstance(root.obj, Settings):
            root.obj = load_settings()
        settings = root.obj
    return settings


def emit_json(data: Any) -> None:
    out.out(json.dumps(data, indent=2, sort_keys=True, default=str))


def json_option() -> Any:
    """``--json``: the same switch and variable on every command."""
    return typer.Option(
        False, "--json", envvar="SEMGRAPH_JSON", show_envvar=True, help="Machine-readable output."
    )
