"""External call sites for the cross-repository link (issue 30, :mod:`semgraph.resolve.xsites`):
``self.f()`` and ``super().f()`` through the classes' imported bases, values that started at
an import (a pytest fixture's ``CliRunner()``, a module-level ``click.Option(...)``, a
method's declared return), members a repository class inherits from outside, and an
incremental resolution that follows a base changed in another file; through the real
extraction and resolver (no servers)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from semgraph.resolve.compare import differences
from semgraph.resolve.incremental import resolve_incremental
from semgraph.resolve.resolver import resolve
from tests.parsed_python import python_facts, resolution_rows

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
    (rows,) = resolution_rows(
        tmp_path,
        python_facts(files),
        "SELECT path, line, module, local, rest FROM external_sites ORDER BY path, line",
    )
    return rows


def test_self_and_super_calls_reach_the_import_through_an_in_file_base(tmp_path: Path) -> None:
    assert sites(tmp_path, {"pkg/cli.py": CLI}) == [
        ("pkg/cli.py", 6, "click", "click", "Group.group"),
        ("pkg/cli.py", 11, "click", "click", "Group.__init__"),
        ("pkg/cli.py", 12, "click", "click", "Group.add_command"),
        ("pkg/cli.py", 15, "click", "click", "Group.get_command"),
    ]


def test_a_base_from_another_file_is_walked_in_its_own_file(tmp_path: Path) -> None:
    """``Mine(AppGroup)`` with ``AppGroup`` imported from ``pkg/cli.py``: the base is read
    with cli.py's imports; other.py need not import click itself."""
    other = (
        "from pkg.cli import AppGroup\n\n\nclass Mine(AppGroup):\n"
        "    def run(self):\n        self.add_command(1)\n"
    )
    got = sites(tmp_path, {"pkg/cli.py": CLI, "pkg/other.py": other})
    assert [s for s in got if s[0] == "pkg/other.py"] == [
        ("pkg/other.py", 6, "click", "click", "Group.add_command")
    ]


FLASKISH = {
    "pkg/scaffold.py": "from click import Group\n\n\nclass Scaffold:\n    cli: Group\n",
    "pkg/cli.py": CLI
    + "\n\nclass NoApp(click.UsageError):\n    pass\n\n\n"
    + "opt = click.Option(['--x'])\napp_group = FlaskGroup()\n\n\n"
    + "def load() -> FlaskGroup:\n    return FlaskGroup()\n\n\n"
    + "def main():\n    opt.handle_parse_result(1)\n    app_group.main()\n"
    + "    try:\n        load().list_commands(1)\n    except NoApp as e:\n"
    + "        e.format_message()\n    click.get_current_context().find_root()\n",
    "pkg/sessions.py": (
        "from itsdangerous import URLSafeTimedSerializer\n\n\nclass Iface:\n"
        "    def make(self) -> URLSafeTimedSerializer | None:\n"
        "        return URLSafeTimedSerializer('k')\n\n"
        "    def open(self):\n        s = self.make()\n        s.loads(1)\n"
        "        self.make().dumps(2)\n"
    ),
    "pkg/bp.py": (
        "from pkg.scaffold import Scaffold\n\n\ndef register(app: Scaffold):\n"
        "    app.cli.add_command(1)\n"
    ),
    "tests/test_cli.py": (
        "import pytest\nfrom click.testing import CliRunner\n\n\n@pytest.fixture\n"
        "def runner():\n    return CliRunner()\n\n\n"
        "def test_it(runner):\n    runner.invoke(1)\n"
    ),
}


def test_values_that_started_at_an_import_and_inherited_members_have_sites(
    tmp_path: Path,
) -> None:
    got = sites(tmp_path, FLASKISH)
    assert [s for s in got if s[0] != "pkg/cli.py" or s[1] > 22] == [
        ("pkg/bp.py", 5, "click", "Group", "add_command"),  # an attribute annotated in a base
        ("pkg/cli.py", 31, "click", "click", "Option.handle_parse_result"),  # module-level
        ("pkg/cli.py", 32, "click", "click", "Group.main"),  # FlaskGroup -> AppGroup -> base
        ("pkg/cli.py", 34, "click", "click", "Group.list_commands"),  # a declared return
        ("pkg/cli.py", 36, "click", "click", "UsageError.format_message"),  # `except .. as e`
        ("pkg/cli.py", 37, "click", "click", "get_current_context"),
        ("pkg/sessions.py", 6, "itsdangerous", "URLSafeTimedSerializer", ""),
        ("pkg/sessions.py", 10, "itsdangerous", "URLSafeTimedSerializer", "loads"),
        ("pkg/sessions.py", 11, "itsdangerous", "URLSafeTimedSerializer", "dumps"),
        ("tests/test_cli.py", 7, "click.testing", "CliRunner", ""),
        ("tests/test_cli.py", 11, "click.testing", "CliRunner", "invoke"),  # a pytest fixture
    ]
    # a function's result is not read from its name: get_current_context() gives no site
    assert not [s for s in got if s[4].endswith("find_root")]


def test_no_external_ancestor_and_a_cycle_give_no_site(tmp_path: Path) -> None:
    text = (
        "import click\n\n\nclass A(B):\n    def f(self):\n        self.g()\n\n\n"
        "class B(A):\n    pass\n\n\nclass C:\n    def f(self):\n        self.h()\n"
    )
    assert sites(tmp_path, {"pkg/m.py": text}) == []


def _incremental(tmp_path: Path, before: dict[str, str], after: dict[str, str]) -> list[Any]:
    """The sites of an incremental resolution of ``after`` from one of ``before``, checked
    equal to a full resolution of ``after`` (every table, :mod:`semgraph.resolve.compare`)."""
    first = python_facts(before)
    resolve(lambda: iter(first), "r", tmp_path / "first").close()
    facts = python_facts(after)
    inc = resolve_incremental(
        lambda: iter(facts),
        "r",
        tmp_path / "inc",
        tmp_path / "first" / "symtab.sqlite",
        max_fraction=1.0,
    )
    full = resolve(lambda: iter(facts), "r", tmp_path / "full")
    try:
        assert inc.incremental["mode"] == "incremental"
        assert differences(inc, full) == []
        db = sqlite3.connect(inc.path)
        rows = db.execute("SELECT path, line, rest FROM external_sites WHERE path = 'pkg/bp.py'")
        out = rows.fetchall()
        db.close()
        return out
    finally:
        inc.close()
        full.close()


APP = {
    "pkg/cli.py": "import click\n\n\nclass AppGroup(click.Group):\n    pass\n",
    "pkg/app.py": (
        "from pkg.cli import AppGroup\n\n\nclass App:\n    def __init__(self):\n"
        "        self.cli = AppGroup()\n"
    ),
    "pkg/bp.py": "from pkg.app import App\n\n\ndef reg(app: App):\n    app.cli.add_command(1)\n",
}


def test_a_base_changed_in_another_file_re_resolves_the_site_that_went_through_it(
    tmp_path: Path,
) -> None:
    """bp.py spells none of AppGroup, click or Group: its site tokens bring it back when
    cli.py changes AppGroup's base, drops it, or gives it one again."""
    other = dict(APP, **{"pkg/cli.py": APP["pkg/cli.py"].replace("Group)", "MultiCommand)")})
    assert _incremental(tmp_path / "a", APP, other) == [
        ("pkg/bp.py", 5, "MultiCommand.add_command")
    ]
    plain = dict(APP, **{"pkg/cli.py": "class AppGroup:\n    pass\n"})
    assert _incremental(tmp_path / "b", APP, plain) == []
    assert _incremental(tmp_path / "c", plain, APP) == [("pkg/bp.py", 5, "Group.add_command")]
