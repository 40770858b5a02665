"""The import structure of ``src/semgraph`` (docs/architecture.md): read with ``ast`` from the
code's own import statements, every one of them (inside functions and under
``TYPE_CHECKING`` too), and held to the layers drawn there.

A module may import a module of a lower layer, or one of its own unit (the same package, or
itself); never one of a higher layer, and never another unit of its own layer (the commands
excepted: ``semgraph.cli`` assembles the others). The import
graph has no cycle. Imports inside a function body are allowed for the heavy dependencies
that load on demand, each saying so, and in the command modules, whose commands import what
they use when they run (so that ``--help`` answers at once). ``semgraph.cli`` loads its
subcommands' modules from its ``COMMANDS`` table when they run: the test reads that table as
imports of ``semgraph.cli``, held to the same rules.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

# Bottom first. A unit is a module of ``semgraph`` or one of its packages.
LAYERS: list[tuple[str, list[str]]] = [
    ("errors", ["semgraph", "semgraph.errors"]),
    ("base", ["semgraph.faults", "semgraph.logs", "semgraph.metrics", "semgraph.netaddr"]),
    ("settings", ["semgraph.config"]),
    (
        "shared",
        [
            "semgraph.model",
            "semgraph.memory",
            "semgraph.dialect",
            "semgraph.manifests",
            "semgraph.audit",
        ],
    ),
    ("connections", ["semgraph.db", "semgraph.alerts"]),
    ("analysis", ["semgraph.resolve"]),
    ("cross-repository links", ["semgraph.xrepo"]),
    ("stores", ["semgraph.graph", "semgraph.services"]),
    ("queue and search", ["semgraph.queue", "semgraph.search"]),
    ("answers", ["semgraph.localize"]),
    ("indexer", ["semgraph.indexer"]),
    ("repository lifecycle", ["semgraph.repos"]),
    ("checks", ["semgraph.check", "semgraph.doctor"]),
    ("maintenance", ["semgraph.maintenance"]),
    ("job kinds", ["semgraph.jobs"]),
    ("agents", ["semgraph.mcp"]),
    ("web", ["semgraph.web"]),
    ("commands", ["semgraph.commands", "semgraph.cli", "semgraph.__main__"]),
]
COMMANDS = len(LAYERS) - 1
# Deferred because they are heavy (torch alone is seconds and hundreds of MB): the worker and
# the web server load the model only when something is embedded (openvino: ~40 MB, ~1 s).
# the Elasticsearch client (0.15 s) too: a graph-only command (jobs list, graph callers) skips it
HEAVY = {
    "torch",
    "transformers",
    "sentence_transformers",
    "openvino",
    "elasticsearch",
    "elastic_transport",
}


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    in_function: bool


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}


def _targets(source: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
        return
    base = node.module or ""
    if node.level:
        package = source.split(".")
        if MODULES[source].name != "__init__.py":
            package.pop()
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, *([node.module] if node.module else [])])
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        yield sub if sub in MODULES else base


def imports_of(source: str) -> list[Import]:
    tree = ast.parse(MODULES[source].read_text())
    in_function: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            in_function.update(id(n) for n in ast.walk(fn) if n is not fn)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(source, node):
                found.append(Import(source, target, node.lineno, id(node) in in_function))
    return found


def lazy_commands() -> list[Import]:
    """The modules of ``semgraph.cli``'s ``COMMANDS`` table (a literal read with ``ast``), as
    imports of ``semgraph.cli`` made when a command runs."""
    tree = ast.parse(MODULES["semgraph.cli"].read_text())
    found = []
    for node in tree.body:
        named = isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "COMMANDS"
        if isinstance(node, ast.AnnAssign) and named and node.value is not None:
            for entry in ast.literal_eval(node.value).values():
                found.append(Import("semgraph.cli", entry[0], node.lineno, True))
    return found


COMMAND_MODULES = "semgraph.commands"
ALL = [imp for mod in sorted(MODULES) for imp in imports_of(mod)] + lazy_commands()
INTERNAL = [imp for imp in ALL if imp.target.split(".")[0] == "semgraph" and imp.target in MODULES]


def unit_of(module: str) -> str:
    best = ""
    for _, units in LAYERS:
        for unit in units:
            if (module == unit or module.startswith(unit + ".")) and len(unit) > len(best):
                best = unit
    return best


def layer_of(module: str) -> int:
    unit = unit_of(module)
    return next(i for i, (_, units) in enumerate(LAYERS) if unit in units)


def test_every_module_has_a_layer() -> None:
    assert all(unit_of(m) for m in MODULES), [m for m in MODULES if not unit_of(m)]


def upward(imports: list[Import]) -> list[str]:
    bad = []
    for imp in imports:
        src, dst = imp.source, imp.target
        if unit_of(src) == unit_of(dst) or dst == "semgraph":
            continue
        if layer_of(dst) > layer_of(src) or layer_of(dst) == layer_of(src) < COMMANDS:
            bad.append(f"{src}:{imp.line} -> {dst} ({LAYERS[layer_of(dst)][0]})")
    return bad


def cycles(imports: list[Import]) -> list[list[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for imp in imports:
        if imp.target != imp.source and imp.target != "semgraph":
            graph[imp.source].add(imp.target)
    found, state, stack = [], dict.fromkeys(graph, 0), []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state[nxt] == 1:
                found.append([*stack[stack.index(nxt) :], nxt])
            elif state[nxt] == 0:
                visit(nxt)
        state[node], _ = 2, stack.pop()

    for node in sorted(graph):
        if state[node] == 0:
            visit(node)
    return found


def test_no_import_runs_up_the_layers() -> None:
    assert upward(INTERNAL) == []


def test_the_import_graph_has_no_cycle() -> None:
    assert cycles(INTERNAL) == []


def runs_when_called(imp: Import) -> bool:
    """A command's import, made when the command runs (the command modules and the table)."""
    return imp.source == "semgraph.cli" or imp.source.startswith(COMMAND_MODULES + ".")


def test_imports_inside_functions_only_defer_heavy_dependencies() -> None:
    hidden = [
        f"{i.source}:{i.line} {i.target}"
        for i in ALL
        if i.in_function and i.target.split(".")[0] not in HEAVY and not runs_when_called(i)
    ]
    assert hidden == []


def test_the_command_table_names_modules_that_exist() -> None:
    table = lazy_commands()
    assert len(table) >= 10
    assert all(imp.target in MODULES for imp in table), [i.target for i in table]


def test_each_deferred_import_says_why() -> None:
    silent = []
    for imp in ALL:
        if not imp.in_function or runs_when_called(imp):
            continue
        lines = MODULES[imp.source].read_text().splitlines()
        around = " ".join(lines[max(imp.line - 3, 0) : imp.line]).lower()
        if "heavy" not in around and "defer" not in around:
            silent.append(f"{imp.source}:{imp.line}")
    assert silent == []


@pytest.mark.parametrize(
    ("imports", "expect"),
    [
        ([Import("semgraph.db", "semgraph.graph.reader", 1, False)], "up"),
        ([Import("semgraph.queue.store", "semgraph.search.index", 1, False)], "up"),
        ([Import("semgraph.graph.reader", "semgraph.db", 1, False)], "ok"),
        ([Import("semgraph.commands.queue", "semgraph.jobs", 1, False)], "ok"),
        ([Import("semgraph.queue.worker", "semgraph.jobs", 1, False)], "up"),
        ([Import("semgraph.search.index", "semgraph.web.app", 1, False)], "up"),
        ([Import("semgraph.cli", "semgraph.commands.queue", 1, False)], "ok"),
        ([Import("semgraph.web.app", "semgraph.commands.console", 1, False)], "up"),
    ],
)
def test_the_rule_itself(imports: list[Import], expect: str) -> None:
    assert (upward(imports) == []) == (expect == "ok")


def test_the_cycle_finder_itself() -> None:
    loop = [
        Import("semgraph.web.app", "semgraph.web.api", 1, False),
        Import("semgraph.web.api", "semgraph.web.app", 1, False),
    ]
    assert cycles(loop) == [["semgraph.web.api", "semgraph.web.app", "semgraph.web.api"]]


def test_no_module_over_400_lines_and_each_over_300_says_why() -> None:
    long = {m: len(p.read_text().splitlines()) for m, p in MODULES.items()}
    assert {m: n for m, n in long.items() if n > 400} == {}
    unexplained = [
        m
        for m, n in long.items()
        if n > 300
        and "over 300 lines" not in (ast.get_docstring(ast.parse(MODULES[m].read_text())) or "")
    ]
    assert unexplained == []


def _lines_matching(pattern: re.Pattern[str], suffixes: tuple[str, ...]) -> list[str]:
    root = SRC / "semgraph"
    return [
        f"{path.relative_to(SRC)}:{n}"
        for path in sorted(root.rglob("*"))
        if path.suffix in suffixes
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if pattern.search(line)
    ]


def test_the_formatter_output_is_final() -> None:
    """The line cap is met by splitting a module by concept, never by turning the formatter
    off for a statement: no ``fmt: skip`` or ``fmt: off`` in the package, its tests or its
    benchmarks."""
    marker = re.compile(r"#\s*fmt:\s*(skip|off)\b")
    assert _lines_matching(marker, (".py",)) == []
    root = SRC.parent
    marked = [
        f"{path.relative_to(root)}:{n}"
        for folder in ("tests", "bench")
        for path in sorted((root / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if marker.search(line)
    ]
    assert marked == []


def test_code_says_what_not_which_ticket() -> None:
    """Comments and docstrings say what and why; which ticket asked for it belongs in the
    commit message. Module names say what a module is, not when it came."""
    assert _lines_matching(re.compile(r"\bissues? #?\d+", re.I), (".py", ".scm")) == []
    history = re.compile(r"(^|_)(more|new|old|extra|misc|legacy|temp)(_|$)|_v\d+$")
    assert [m for m in MODULES if history.search(m.rsplit(".", 1)[-1])] == []


def test_the_search_never_reads_the_graph() -> None:
    """``semgraph.search`` answers from Elasticsearch alone: no module of it imports the
    graph store or holds a Cypher statement (localisation, which reads both, is a layer up:
    ``semgraph.localize``)."""
    search = [m for m in MODULES if m == "semgraph.search" or m.startswith("semgraph.search.")]
    assert len(search) > 10
    reads = [
        f"{imp.source}:{imp.line} -> {imp.target}"
        for imp in ALL
        if imp.source in search
        and (imp.target == "semgraph.graph" or imp.target.startswith("semgraph.graph."))
    ]
    assert reads == []
    cypher = [m for m in search if re.search(r"\b(MATCH|MERGE)\b", MODULES[m].read_text())]
    assert cypher == []
