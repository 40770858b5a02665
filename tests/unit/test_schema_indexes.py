"""Every key a statement looks up by has an index on Memgraph.

On Memgraph a uniqueness constraint creates no index, and a label scan without a label index
reads every node. So the Memgraph DDL that ``semgraph init`` renders must hold
``CREATE INDEX ON :Label(prop)`` for every property a statement looks a node up by, and
``CREATE INDEX ON :Label`` for every label a statement scans. The statements are collected
from every module that holds Cypher constants (found by grepping the sources for MATCH and
MERGE, so a new module is checked too); a lookup is

* a property map in a MATCH / OPTIONAL MATCH / MERGE node pattern: ``(j:JobQueue {id: $id})``;
* a top-level ``AND`` conjunct ``var.prop = ...`` or ``var.prop IN ...`` of the WHERE that
  belongs to that MATCH, on a variable the MATCH labels (what the planner can seek by; a term
  under OR or NOT cannot use an index);

and a scan is a labelled node pattern of a MATCH that stands alone (no relationship) and is
looked up by nothing.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from semgraph.dialect import Dialect, IndexSpec, ServerKind
from semgraph.graph.schema import SCHEMA

SRC = Path(__file__).resolve().parents[2] / "src"
MEMGRAPH = Dialect(ServerKind.MEMGRAPH)

#: filters the planner could seek by but that deliberately have no index, with the reason
NOT_INDEXED = {
    ("Symbol", "kind"): (
        "a handful of kinds, each held by many symbols: the cross-repository link "
        "(semgraph.xrepo.queries) seeks a symbol by qualified name or by its file's "
        "DEFINES edges and only then checks that it is a module"
    ),
    ("JobQueue", "kind"): (
        "every job has a kind, and only a few kinds exist; the claim statements find jobs by "
        "id or by the claim_key range (set only while pending). Memgraph prefers the index "
        "holding fewer nodes and, without ANALYZE GRAPH, cannot tell id from kind apart, so an "
        "index on kind could make a claim by id scan every job of that kind"
    ),
}

_CLAUSE = re.compile(
    r"\b(OPTIONAL\s+MATCH|MATCH|MERGE|CREATE|WITH|RETURN|WHERE|SET|UNWIND|FOREACH|"
    r"DETACH\s+DELETE|DELETE|REMOVE|ORDER\s+BY|LIMIT|ON\s+CREATE|ON\s+MATCH|CALL|UNION)\b"
)
_NODE = re.compile(r"\(\s*(\w*)\s*((?::\w+)+)\s*(\{[^{}]*\})?\s*\)")
_MAP_KEY = re.compile(r"(\w+)\s*:")
_EQUALITY = re.compile(r"^\(*\s*(\w+)\.(\w+)\s*(?:=|IN\b)", re.S)


@dataclass(frozen=True)
class Use:
    statement: str
    label: str
    prop: str | None  # None: a label scan


def cypher_modules() -> list[str]:
    """Every semgraph module whose source holds MATCH or MERGE."""
    names = []
    for path in sorted((SRC / "semgraph").rglob("*.py")):
        if re.search(r"\b(MATCH|MERGE)\b", path.read_text()):
            names.append(".".join(path.relative_to(SRC).with_suffix("").parts))
    return names


def _leaves(name: str, value: object) -> Iterator[tuple[str, str]]:
    """(name, text) of every string in ``value``, through dicts, tuples and lists."""
    if isinstance(value, str):
        yield name, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(f"{name}[{key!r}]", item)
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from _leaves(f"{name}[{i}]", item)


def statements() -> Iterator[tuple[str, str]]:
    """(name, Cypher) of every module-level constant that is a statement, and of every
    statement held in a constant's dicts, tuples or lists (one per label, or a sequence run
    one after the other such as ``DELETE_SLICES``)."""
    for module_name in cypher_modules():
        module = importlib.import_module(module_name)
        for attr, value in vars(module).items():
            if not attr.isupper():
                continue
            for name, text in _leaves(f"{module_name}.{attr}", value):
                if re.search(r"\b(MATCH|MERGE)\b", text):
                    yield name, text


def _clauses(cypher: str) -> list[tuple[str, str]]:
    """(keyword, body) per clause, in order."""
    text = re.sub(r"//[^\n]*", "", cypher)
    marks = list(_CLAUSE.finditer(text))
    out = []
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out.append((re.sub(r"\s+", " ", mark.group(1).upper()), text[mark.end() : end]))
    return out


def _conjuncts(where: str) -> list[str]:
    """The top-level AND terms of a WHERE body (parentheses respected)."""
    terms, depth, start = [], 0, 0
    for m in re.finditer(r"[()]|\bAND\b", where):
        token = m.group(0)
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
        elif depth == 0:
            terms.append(where[start : m.start()])
            start = m.end()
    terms.append(where[start:])
    return [t.strip() for t in terms if t.strip()]


def _unwrap(term: str) -> str:
    """``(a = b)`` -> ``a = b`` while the outer parentheses enclose the whole term."""
    while term.startswith("(") and term.endswith(")"):
        depth = 0
        for i, ch in enumerate(term):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(term) - 1:
                return term
        term = term[1:-1].strip()
    return term


def uses(name: str, cypher: str) -> list[Use]:
    """The index uses of one statement: lookups by property, and label scans."""
    found: list[Use] = []
    clauses = _clauses(cypher)
    for i, (keyword, body) in enumerate(clauses):
        if keyword not in {"MATCH", "OPTIONAL MATCH", "MERGE"}:
            continue
        labelled: dict[str, str] = {}
        looked_up: set[str] = set()
        bare: list[tuple[str, str]] = []
        for node in _NODE.finditer(body):
            var, labels, props = node.group(1), node.group(2), node.group(3)
            label = labels.split(":")[1]
            if var:
                labelled.setdefault(var, label)
            if props:
                for key in _MAP_KEY.findall(props):
                    found.append(Use(name, label, key))
                looked_up.add(var or f"@{node.start()}")
                continue
            before = body[: node.start()].rstrip()[-1:]
            after = body[node.end() :].lstrip()[:1]
            if before not in {"-", ">", "<"} and after not in {"-", "<"}:
                bare.append((var, label))
        where = clauses[i + 1][1] if i + 1 < len(clauses) else ""
        if keyword != "MERGE" and i + 1 < len(clauses) and clauses[i + 1][0] == "WHERE":
            for term in _conjuncts(where):
                match = _EQUALITY.match(_unwrap(term))
                if match and match.group(1) in labelled:
                    found.append(Use(name, labelled[match.group(1)], match.group(2)))
                    looked_up.add(match.group(1))
        found += [Use(name, label, None) for var, label in bare if not var or var not in looked_up]
    return found


def missing_indexes(all_uses: Iterable[Use], ddl: Iterable[str]) -> list[str]:
    rendered = set(ddl)
    missing = []
    for use in all_uses:
        if use.prop is not None and (use.label, use.prop) in NOT_INDEXED:
            continue
        wanted = (
            f"CREATE INDEX ON :{use.label}"
            if use.prop is None
            else f"CREATE INDEX ON :{use.label}({use.prop})"
        )
        if wanted not in rendered:
            missing.append(f"{use.statement}: {wanted}")
    return sorted(set(missing))


def all_uses() -> list[Use]:
    return [use for name, cypher in statements() for use in uses(name, cypher)]


def test_the_statements_of_every_cypher_module_are_collected() -> None:
    modules = cypher_modules()
    assert {
        "semgraph.graph.publish_queries",
        "semgraph.graph.queries",
        "semgraph.localize.queries",
        "semgraph.queue.queries",
        "semgraph.xrepo.queries",
    } <= set(modules)
    names = [name for name, _ in statements()]
    for expected in (
        "semgraph.queue.queries.CLAIM_ONE",
        "semgraph.graph.queries.RUN_LIST",
        "semgraph.graph.publish_queries.PUBLISH_FILES",
        "semgraph.graph.publish_queries.PUBLISH_DROP['Symbol']",
        "semgraph.queue.queries.WORKER_HEARTBEAT_AGE",
        "semgraph.graph.queries.ABANDON_JOB_RUNS",
        "semgraph.queue.queries.RECORD_ATTEMPT",
        "semgraph.repos.graph.DELETE_SLICES[0][1]",
        "semgraph.localize.queries.LOCALIZE_NAMED",
        "semgraph.xrepo.queries.LINK_CREATE",
        "semgraph.xrepo.queries.RELINK_RECORD",
    ):
        assert expected in names
    assert len(names) >= 60
    # a statement held in a tuple is read like any other
    assert Use("semgraph.repos.graph.DELETE_SLICES[1][1]", "File", "repo") in all_uses()


def test_every_lookup_and_scan_has_an_index_on_memgraph() -> None:
    assert missing_indexes(all_uses(), MEMGRAPH.schema_ddl(SCHEMA)) == []


def test_unique_keys_get_an_index_on_memgraph_and_not_a_second_one_on_neo4j() -> None:
    ddl = MEMGRAPH.schema_ddl(SCHEMA)
    neo4j = Dialect(ServerKind.NEO4J).schema_ddl(SCHEMA)
    for spec in SCHEMA:
        if spec.unique:
            assert f"CREATE INDEX ON :{spec.label}({spec.prop})" in ddl
            assert f"CREATE CONSTRAINT ON (n:{spec.label}) ASSERT n.{spec.prop} IS UNIQUE" in ddl
            assert not any(f"FOR (n:{spec.label}) ON (n.{spec.prop})" in s for s in neo4j)
    assert not any(s.startswith("CREATE INDEX ON") for s in neo4j)
    assert len(ddl) == len(set(ddl))


@pytest.mark.parametrize(
    ("removed", "expected"),
    [
        (IndexSpec("Worker", "name"), "CREATE INDEX ON :Worker(name)"),
        (IndexSpec("RepoLock", "key", unique=True), "CREATE INDEX ON :RepoLock(key)"),
        (IndexSpec("IndexRun"), "CREATE INDEX ON :IndexRun"),
        # looked up by key only in the publish's statements (graph/publish_queries.py)
        (IndexSpec("ExternalModule", "key", unique=True), "CREATE INDEX ON :ExternalModule(key)"),
        (IndexSpec("JobQueue", "claim_key"), None),  # a range, not an equality lookup
    ],
)
def test_a_lookup_without_its_index_is_reported(removed: IndexSpec, expected: str | None) -> None:
    assert removed in SCHEMA
    schema = tuple(spec for spec in SCHEMA if spec != removed)
    missing = missing_indexes(all_uses(), MEMGRAPH.schema_ddl(schema))
    if expected is None:
        assert missing == []
    else:
        assert missing and all(m.endswith(expected) for m in missing), missing


def test_the_extractor_reads_maps_where_terms_and_scans() -> None:
    found = uses(
        "q",
        """
        MATCH (a:A {k: $k})-[:R]->(b:B)
        OPTIONAL MATCH (c:C)
        WHERE c.x = $x AND (c.y IN $ys) AND NOT c.z IN $zs AND ($w IS NULL OR c.w = $w)
        WITH a, c
        WHERE a.v = 1
        MATCH (d:D)
        WHERE d.r >= 0
        MERGE (e:E {key: a.k})
        CREATE (f:F {p: 1})
        RETURN a
        """,
    )
    assert {(u.label, u.prop) for u in found} == {
        ("A", "k"),
        ("C", "x"),
        ("C", "y"),
        ("D", None),
        ("E", "key"),
    }
