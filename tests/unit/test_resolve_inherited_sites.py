"""External call sites inherited through a file's own classes (issue 30): ``self.f()`` and
``super().f()`` in a class whose in-file ancestor names an imported base, through the real
extraction and resolver (no servers)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

from semgraph.resolve.resolver import resolve
from tests.parsed_python import python_facts

CLI = (
    "import click\n"
    "\n"
    "\n"
    "class AppGroup(click.Group):\n"
    "    def group(self):\n"
    "        return super().group()\n"
    "\n"
    "\n"
    "class FlaskGroup(AppGroup):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.add_command(1)\n"
    "\n"
    "    def get_command(self, ctx):\n"
    "        return super().get_command(ctx)\n"
)


def sites(tmp_path: Path, files: Mapping[str, str]) -> list[tuple[str, int, str, str, str]]:
    facts = python_facts(files)
    with resolve(lambda: iter(facts), "r", tmp_path / "res") as res:
        db = sqlite3.connect(res.path)
        rows = db.execute(
            "SELECT path, line, module, local, rest FROM external_sites ORDER BY path, line"
        ).fetchall()
        db.close()
    return rows


def test_self_and_super_calls_reach_the_import_through_an_in_file_base(tmp_path: Path) -> None:
    assert sites(tmp_path, {"pkg/cli.py": CLI}) == [
        ("pkg/cli.py", 6, "click", "click", "Group.group"),
        ("pkg/cli.py", 11, "click", "click", "Group.__init__"),
        ("pkg/cli.py", 12, "click", "click", "Group.add_command"),
        ("pkg/cli.py", 15, "click", "click", "Group.get_command"),
    ]


def test_a_base_from_another_file_gives_no_site(tmp_path: Path) -> None:
    """The site must depend on its file alone: an ancestor imported from another file of the
    repository is not walked (the call stays external without a site)."""
    other = (
        "from pkg.cli import AppGroup\n\n\nclass Mine(AppGroup):\n"
        "    def run(self):\n        self.add_command(1)\n"
    )
    got = sites(tmp_path, {"pkg/cli.py": CLI, "pkg/other.py": other})
    assert [s for s in got if s[0] == "pkg/other.py"] == []


def test_no_external_ancestor_and_a_cycle_give_no_site(tmp_path: Path) -> None:
    text = (
        "import click\n\n\nclass A(B):\n    def f(self):\n        self.g()\n\n\n"
        "class B(A):\n    pass\n\n\nclass C:\n    def f(self):\n        self.h()\n"
    )
    assert sites(tmp_path, {"pkg/m.py": text}) == []
