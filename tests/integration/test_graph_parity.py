"""Parity is the proof of the delta publish: against the real Bolt server, random sequences
of changes to a repository are published as deltas, and after every step the delta-published
graph must equal a fresh full publish of the same commit (written into an empty repository of
another key), node for node, edge for edge and property for property. The same graph must
also equal the model's rows (what ``semgraph check --graph-parity`` compares)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph import parity
from semgraph.graph.publish_stats import PublishStats
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.model import FileFacts, Import, SkippedFile
from semgraph.resolve.resolver import resolve
from tests.graph_repos import call, facts, sym

pytestmark = pytest.mark.integration

DELTA, FRESH = "delta", "fresh"
CAP = 2
NAMES = ("load", "save", "run", "render", "helper", "Store", "parse", "emit")


@dataclasses.dataclass
class Def:
    kind: str  # function | class
    name: str
    calls: list[str]
    methods: list[str]


@dataclasses.dataclass
class Mod:
    defs: list[Def]
    imports: list[tuple[str, str]]  # (module name, imported name)
    broken: bool = False
    shift: int = 0


def render(mods: dict[str, Mod]) -> list[FileFacts | SkippedFile]:
    """The parsed facts of the repository the specs describe (one Python package)."""
    out: list[FileFacts | SkippedFile] = []
    for name, mod in sorted(mods.items()):
        qn = f"pkg.{name}"
        line = 10 + mod.shift
        symbols, calls = [], []
        for d in mod.defs:
            dqn = f"{qn}.{d.name}"
            end = line + 4 + 3 * len(d.methods)
            symbols.append(sym(d.kind, dqn, line, end))
            for i, callee in enumerate(d.calls):
                receiver = "self" if d.kind == "class" and i % 2 else None
                calls.append(call(dqn, callee, line + 1 + i % 3, receiver))
            for j, m in enumerate(d.methods):
                mstart = line + 2 + 3 * j
                symbols.append(sym("method", f"{dqn}.{m}", mstart, mstart + 2, parent=dqn))
                calls.append(call(f"{dqn}.{m}", d.calls[0] if d.calls else m, mstart + 1, "self"))
            line = end + 2
        imports = [
            Import(f"pkg.{target}", [imported], None, i + 1, i + 1)
            for i, (target, imported) in enumerate(mod.imports)
        ] + [Import("os", [], None, 9, 9)]
        f = facts(f"pkg/{name}.py", "python", line + 1, symbols, imports, calls)
        if mod.broken:
            f = dataclasses.replace(f, parse_status="partial", parse_error=f"syntax near {line}")
        out.append(f)
    out.append(SkippedFile("pkg/data.bin", "binary"))
    return out


names = st.sampled_from(NAMES)
defs = st.builds(
    Def,
    kind=st.sampled_from(["function", "function", "class"]),
    name=names,
    calls=st.lists(names, max_size=3),
    methods=st.lists(names, max_size=2, unique=True),
)
mods = st.builds(
    Mod,
    defs=st.lists(defs, max_size=3, unique_by=lambda d: d.name),
    imports=st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), names), max_size=2),
    broken=st.booleans(),
    shift=st.integers(0, 3),
)
# one change: a module added or replaced (new content), removed, or shifted by a few lines
changes = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(["a", "b", "c", "d", "e"]), mods),
    st.tuples(st.just("remove"), st.sampled_from(["a", "b", "c", "d", "e"]), st.none()),
    st.tuples(st.just("shift"), st.sampled_from(["a", "b", "c", "d", "e"]), st.none()),
    st.tuples(st.just("calls"), st.sampled_from(["a", "b", "c", "d", "e"]), names),
)


def apply(state: dict[str, Mod], change: tuple[str, str, Any]) -> None:
    op, name, arg = change
    if op == "put":
        state[name] = arg
    elif op == "remove":
        state.pop(name, None)
    elif name in state and op == "shift":
        state[name] = dataclasses.replace(state[name], shift=state[name].shift + 1)
    elif name in state and state[name].defs:  # calls: the first definition calls ``arg`` too
        first = state[name].defs[0]
        state[name].defs[0] = dataclasses.replace(first, calls=[*first.calls, arg])


def _publish(
    graph: Any, settings: Any, tmp: Path, key: str, files: list[Any], run: str, **kw: Any
) -> PublishStats:
    # a cap of 2 candidates makes over-cap ambiguous calls (counted as possible callers on
    # every same-named symbol, wherever it lives) as common as the other outcomes
    with resolve(lambda: iter(files), key, tmp / f"{key}-{run}", ambiguous_cap=CAP) as res:
        return GraphWriter(graph, settings).publish(
            RepoInfo(key, f"https://git.example/{key}.git", "main", run),
            res,
            run_id=f"{key}-{run}",
            fingerprint="fp",
            now=1000.0,
            **kw,
        )


def _wipe(graph: Any, key: str) -> None:
    graph.query("wipe", "MATCH (n) WHERE n.repo = $k OR n.key = $k DETACH DELETE n", k=key)


def _normalised(rows: Any, key: str) -> Any:
    def norm(value: Any) -> Any:
        if isinstance(value, str):
            if value == key:
                return "R"
            return "R|" + value[len(key) + 1 :] if value.startswith(key + "|") else value
        if isinstance(value, list):
            return [norm(v) for v in value]
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        return value

    for kind, ident in rows:
        yield kind, json.dumps(norm(json.loads(ident)), sort_keys=True)


def _repo_props(graph: Any, key: str) -> dict[str, Any]:
    [row] = graph.query("repo", "MATCH (r:Repository {key: $k}) RETURN properties(r) AS p", k=key)
    return {
        k: v
        for k, v in row["p"].items()
        if k not in ("key", "run_id", "url", "commit", "indexed_at", "fingerprint")
    }


@hsettings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    start=st.dictionaries(st.sampled_from(["a", "b", "c"]), mods, min_size=1),
    steps=st.lists(changes, min_size=1, max_size=5),
)
def test_delta_publish_equals_a_fresh_full_publish(
    graph: Graph,
    settings: Settings,
    tmp_path: Path,
    start: dict[str, Mod],
    steps: list[tuple[str, str, Any]],
) -> None:
    _wipe(graph, DELTA)
    state = {k: dataclasses.replace(v, defs=list(v.defs)) for k, v in start.items()}
    first = _publish(graph, settings, tmp_path, DELTA, render(state), "0")
    assert first.mode == "first"
    empty = not state  # a repository without files has no node: its next publish is a first
    for n, change in enumerate(steps, 1):
        apply(state, change)
        files = render(state)
        stats = _publish(graph, settings, tmp_path, DELTA, files, str(n))
        assert stats.mode == ("first" if empty else "delta") and not stats.delta_fallback, stats
        empty = not state
        _wipe(graph, FRESH)
        fresh = _publish(graph, settings, tmp_path, FRESH, files, str(n), delta=False)
        assert fresh.mode == "first"
        report = parity.compare(
            "delta",
            _normalised(parity.live_rows(graph, DELTA), DELTA),
            _normalised(parity.live_rows(graph, FRESH), FRESH),
            tmp_path / "cmp",
        )
        assert report.ok, (change, report.samples)
        assert report.live_rows == report.model_rows
        assert _repo_props(graph, DELTA) == _repo_props(graph, FRESH)
        assert _against_model(graph, files, tmp_path / f"model-{n}").ok


def _against_model(graph: Any, files: list[Any], tmp: Path) -> parity.ParityReport:
    with resolve(lambda: iter(files), DELTA, tmp, ambiguous_cap=CAP) as res:
        model = parity.model_rows(res)
        report = parity.compare(DELTA, parity.live_rows(graph, DELTA), model, tmp / "cmp")
    assert report.ok, report.samples
    return report
