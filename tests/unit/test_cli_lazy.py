"""The command line answers at once: ``semgraph --help`` imports no subcommand module, a
group's ``--help`` imports its own module and not the stores, and the help line the root
lists for each lazily loaded subcommand is that command's own."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import typer.main
from typer.testing import CliRunner

from semgraph.cli import COMMANDS, app
from semgraph.commands.lazy import load

runner = CliRunner()

PROBE = """
import json, sys
from semgraph.cli import main
sys.argv = ["semgraph", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
watched = ("semgraph", "neo4j", "elasticsearch", "pydantic", "rich", "fastapi", "mcp")
print("\\nMODULES " + json.dumps(sorted(m for m in sys.modules if m.startswith(watched))))
"""


def loaded_by(args: list[str]) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    line = proc.stdout.rsplit("MODULES ", 1)[1]
    return list(json.loads(line))


def first_paragraph(text: str | None) -> str:
    return " ".join((text or "").split("\n\n")[0].split())


def test_root_help_imports_no_subcommand_and_no_store() -> None:
    modules = loaded_by(["--help"])
    assert "semgraph.cli" in modules
    heavy = [
        m
        for m in modules
        if m.startswith(("neo4j", "elasticsearch", "pydantic", "rich", "fastapi", "mcp"))
        or m.startswith(("semgraph.commands.graph", "semgraph.commands.queue"))
        or m in ("semgraph.config", "semgraph.db")
    ]
    assert heavy == []


@pytest.mark.parametrize("group", ["graph", "jobs", "repos", "services"])
def test_a_group_help_imports_its_module_but_no_store(group: str) -> None:
    modules = loaded_by([group, "--help"])
    assert COMMANDS[group][0] in modules
    stores = [m for m in modules if m.startswith(("neo4j", "elasticsearch", "semgraph.db"))]
    assert stores == [] and "semgraph.config" not in modules


def test_root_help_lists_every_command_with_its_own_help_line() -> None:
    result = runner.invoke(app, ["--help"], terminal_width=400)
    assert result.exit_code == 0, result.output
    for name in COMMANDS:
        real = load(COMMANDS, name)
        own = first_paragraph(real.help)
        assert own == first_paragraph(COMMANDS[name][2]), name
        assert name in result.output


def test_a_lazy_command_runs_through_the_root() -> None:
    result = runner.invoke(app, ["graph", "callers", "--help"])
    assert result.exit_code == 0, result.output
    assert "SEMGRAPH_GRAPH_REPO" in result.output


def test_an_unknown_command_is_refused() -> None:
    result = runner.invoke(app, ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command" in result.output


def test_the_table_and_the_group_agree() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    assert set(COMMANDS) <= set(group.list_commands(typer.Context(group)))
