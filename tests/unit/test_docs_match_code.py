"""The contributor docs say what the code does, read against the code so that they cannot
drift: AGENTS.md's list of where Cypher lives and what ``./dev lint`` runs, and
docs/architecture.md's layer table and its list of deferred imports."""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path

from tests.unit.test_architecture import HEAVY, LAYERS
from tests.unit.test_schema_indexes import _leaves, cypher_modules

ROOT = Path(__file__).resolve().parents[2]
STATEMENT = re.compile(r"\b(MATCH|MERGE|CREATE)\b")


def _section(path: Path, heading: str) -> str:
    text = path.read_text()
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def cypher_homes() -> set[str]:
    """The modules that hold a statement as a module-level constant."""
    homes = set()
    for name in cypher_modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if attr.isupper() and any(STATEMENT.search(t) for _, t in _leaves(attr, value)):
                homes.add(name)
    return homes


def test_agents_md_lists_every_home_of_cypher() -> None:
    section = _section(ROOT / "AGENTS.md", "## Where Cypher goes")
    listed = {
        "semgraph." + p.removesuffix(".py").replace("/", ".")
        for p in re.findall(r"`((?:[a-z_]+/)+[a-z_]+\.py)`", section)
        if not p.startswith("tests/")
    }
    assert listed == cypher_homes()


def test_agents_md_says_what_lint_type_checks() -> None:
    """AGENTS.md's ``./dev lint`` line names the folders mypy checks, as pyproject says."""
    line = next(x for x in (ROOT / "AGENTS.md").read_text().splitlines() if "./dev lint" in x)
    said = re.search(r"mypy --strict \(([^)]*)\)", line)
    assert said is not None, line
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    checked = {Path(f).parts[0] for f in pyproject["tool"]["mypy"]["files"]}
    assert {x.strip() for x in said.group(1).split(",")} == checked


def _room(cell: str) -> str:
    return "semgraph." + cell.strip("`").rstrip("/").replace("/", ".")


def test_the_layer_table_is_the_one_the_architecture_test_enforces() -> None:
    section = _section(ROOT / "docs" / "architecture.md", "## Layers")
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| floor")
    ]
    table = [(row[0], sorted(_room(r) for r in re.findall(r"`[^`]+`", row[1]))) for row in rows]
    enforced = [
        (floor, sorted("semgraph" if u == "semgraph" else u for u in units))
        for floor, units in reversed(LAYERS)
        if floor != "errors"
    ]
    # the errors floor also holds the package's __init__ (``semgraph``), which the table omits
    assert table[:-1] == enforced
    assert table[-1] == ("errors", ["semgraph.errors"])


def test_the_deferred_imports_the_docs_name_are_the_ones_allowed() -> None:
    section = _section(ROOT / "docs" / "architecture.md", "## Layers")
    paragraph = section[: section.index("| floor")]
    named = set(re.findall(r"`([a-z_]+)`", paragraph.split("no import inside a function")[1]))
    assert {h.replace("_", "-") for h in HEAVY} <= {n.replace("_", "-") for n in named}
