"""Subcommands that are imported when they run, so that the command line answers at once.

:class:`LazyGroup` is the root group of ``semgraph``: it lists its subcommands from a table
of ``name -> (module, attribute, help)`` (:data:`semgraph.cli.COMMANDS`) without importing
them, and imports a subcommand's module only when that subcommand is invoked or asked for
its own ``--help``. The table is a literal, so ``tests/unit/test_architecture.py`` reads its
modules as imports of :mod:`semgraph.cli` and holds them to the layers like any other
import; ``tests/unit/test_cli_lazy.py`` checks that each help text is the command's own.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

import typer
from typer import _click as click
from typer.core import TyperCommand, TyperGroup

Table = dict[str, tuple[str, str, str]]


def load(table: Table, name: str) -> click.Command:
    """The click command for ``name``: its module imported, its Typer app or function made a
    command the way ``app.add_typer`` / ``app.command`` would."""
    module, attribute, _ = table[name]
    target: Any = getattr(importlib.import_module(module), attribute)
    if isinstance(target, typer.Typer):
        command = typer.main.get_command(target)
    else:
        single = typer.Typer(rich_markup_mode=None, add_completion=False)
        single.command(name)(target)
        command = typer.main.get_command(single)
    command.name = name
    return command


class LazyGroup(TyperGroup):
    """A group whose subcommands come from :attr:`table`, loaded on first use."""

    table: ClassVar[Table] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.commands, *self.table]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in self.table:
            return self.commands.get(cmd_name)
        if self._listing:  # the root's --help: the name and its help line, nothing imported
            return TyperCommand(cmd_name, help=self.table[cmd_name][2])
        command = load(self.table, cmd_name)
        self.commands[cmd_name] = command
        return command

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
