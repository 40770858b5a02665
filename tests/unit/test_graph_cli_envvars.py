"""Every flag of ``semgraph graph ...``, ``semgraph runs ...`` and ``semgraph search`` maps to
one environment variable, which ``--help`` names, and which the command really reads."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer.main
from typer.core import TyperGroup, TyperOption
from typer.testing import CliRunner

from semgraph.cli import app

runner = CliRunner()

COMMANDS = [
    ["graph", "def"],
    ["graph", "callers"],
    ["graph", "callees"],
    ["graph", "imports"],
    ["runs", "list"],
    ["runs", "show"],
    ["search"],
]


def _command(path: list[str]) -> Any:
    cmd: Any = typer.main.get_command(app)
    for part in path:
        assert isinstance(cmd, TyperGroup)
        cmd = cmd.get_command(typer.Context(cmd), part)  # loads a lazily imported command
    return cmd


def _options(path: list[str]) -> list[TyperOption]:
    params = _command(path).params
    return [p for p in params if isinstance(p, TyperOption) and p.name != "help"]


def _help_text(path: list[str]) -> str:
    result = runner.invoke(app, [*path, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    # the help wraps long lines (inside a box, with rich): compare without boxes and spaces
    return re.sub(r"[\s│╭╮╰╯─]+", "", result.output)


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_flag_names_its_env_var_in_help(path: list[str]) -> None:
    help_text = _help_text(path)
    options = _options(path)
    assert options, path
    for opt in options:
        assert isinstance(opt.envvar, str) and opt.envvar.startswith("SEMGRAPH_"), opt.opts
        named = re.search(rf"envvar:{opt.envvar}[\];]", help_text)  # then the default, if any
        assert named, (path, opt.opts, opt.envvar)


def test_env_var_names_follow_the_command() -> None:
    names = {(tuple(path), tuple(p.opts)): p.envvar for path in COMMANDS for p in _options(path)}
    assert names[("graph", "callers"), ("--depth",)] == "SEMGRAPH_GRAPH_DEPTH"
    assert names[("graph", "imports"), ("--repo",)] == "SEMGRAPH_GRAPH_REPO"
    assert names[("runs", "list"), ("--status",)] == "SEMGRAPH_RUNS_STATUS"
    assert names[("search",), ("--path-prefix",)] == "SEMGRAPH_SEARCH_PATH_PREFIX"
    assert names[("search",), ("-k",)] == "SEMGRAPH_SEARCH_K"
    assert {v for (_, opts), v in names.items() if opts == ("--json",)} == {"SEMGRAPH_JSON"}


def test_the_env_var_is_read_and_validated_like_the_flag() -> None:
    """Bad values from the environment fail as the flag would, before any server is asked."""
    depth = runner.invoke(app, ["graph", "callers", "x"], env={"SEMGRAPH_GRAPH_DEPTH": "0"})
    assert depth.exit_code != 0
    assert "--depth must be at least 1" in str(depth.exception) + depth.output
    k = runner.invoke(app, ["search", "q"], env={"SEMGRAPH_SEARCH_K": "500"}, terminal_width=200)
    assert k.exit_code == 2 and "SEMGRAPH_SEARCH_K" in k.output  # the error names it
    not_a_number = runner.invoke(
        app, ["runs", "list"], env={"SEMGRAPH_RUNS_LIMIT": "many"}, terminal_width=200
    )
    assert not_a_number.exit_code == 2 and "SEMGRAPH_RUNS_LIMIT" in not_a_number.output
