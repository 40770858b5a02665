"""Parity is the proof of the delta publish: against the real Bolt server, random sequences
of changes to a repository are published as deltas, each step by one of two worker hosts
(two state directories, one of them wiped at random steps), and after every step the
delta-published graph must equal a fresh full publish of the same commit (written into an
empty repository of another key), node for node, edge for edge and property for property,
and so must the published state the next delta compares against. The delta must have written
rows only for the files whose bundle changed, whichever host ran it. The same graph must also
equal the model's rows (what ``semgraph check --graph-parity`` compares)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph import parity, pubstate, rows
from semgraph.graph.publish_stats import PublishStats
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.model import FileFacts, Import, SkippedFile
from semgraph.resolve.resolver import resolve
from semgraph.resolve.symtab import external_key
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


@dataclasses.dataclass
class Model:
    """What one resolution of the repository holds, file by file: each file's bundle digest
    and the graph rows a publish of it writes (nodes, their structural edges, its groups'
    edges), and the external modules."""

    bundles: dict[str, bytes]
    rows: dict[str, int]
    externals: int


def _model(res: Any) -> Model:
    bundles = dict(res.file_bundles())
    per_file = {}
    for path in bundles:
        nodes, groups = rows.file_nodes(res, path)
        edges = sum(len(g.dst) for g in [*groups, *rows.file_groups(res, path)])
        per_file[path] = 2 * len(nodes) + edges  # a node and the edge that holds it
    return Model(bundles, per_file, sum(1 for _ in rows.external_rows(res)))


def _publish(
    graph: Any, settings: Any, tmp: Path, key: str, files: list[Any], run: str, **kw: Any
) -> tuple[PublishStats, Model]:
    # a cap of 2 candidates makes over-cap ambiguous calls (counted as possible callers on
    # every same-named symbol, wherever it lives) as common as the other outcomes
    with resolve(lambda: iter(files), key, tmp / f"{key}-{run}", ambiguous_cap=CAP) as res:
        stats = GraphWriter(graph, settings).publish(
            RepoInfo(key, f"https://git.example/{key}.git", "main", run),
            res,
            run_id=f"{key}-{run}",
            fingerprint="fp",
            now=1000.0,
            **kw,
        )
        return stats, _model(res)


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
    """The repository node's properties that do not name the repository or the run (the
    published state's are compared by :func:`_state`)."""
    [row] = graph.query("repo", "MATCH (r:Repository {key: $k}) RETURN properties(r) AS p", k=key)
    return {
        k: v
        for k, v in row["p"].items()
        if k not in ("key", "run_id", "url", "commit", "indexed_at", "fingerprint")
        and not k.startswith("delta_")
    }


def _state(graph: Any, key: str) -> dict[str, Any]:
    """The published state the graph holds for ``key``, decoded (which checks every
    checksum): path -> (bundle, entries); ``""`` -> the external modules' entries."""
    out: dict[str, Any] = {}
    for r in graph.query(
        "state",
        "MATCH (f:File {repo: $k}) "
        "RETURN f.key AS f, f.path AS p, f.delta_bundle AS b, f.delta_rows AS r",
        k=key,
    ):
        out[r["p"]] = r["b"], pubstate.decode(r["f"], r["f"], r["b"], r["r"])
    [repo] = graph.query(
        "ext", "MATCH (r:Repository {key: $k}) RETURN r.delta_externals AS e", k=key
    )
    out[""] = pubstate.decode(key, external_key(key, ""), "", repo["e"])
    return out


def _model_state(res: Any) -> dict[str, Any]:
    """The state a publish of ``res`` must leave: each file's bundle and the digest of every
    node row and edge group it owns (semgraph.graph.rows), and the external modules'."""
    out: dict[str, Any] = {}
    for path, bundle in res.file_bundles():
        nodes, groups = rows.file_nodes(res, path)
        entries = {(n.key, pubstate.NODE + n.label): n.digest for n in nodes}
        entries |= {(g.src, g.kind): g.digest for g in [*groups, *rows.file_groups(res, path)]}
        out[path] = pubstate.bundle_text(bundle), entries
    out[""] = {(e.key, pubstate.NODE + e.label): e.digest for e in rows.external_rows(res)}
    return out


#: two worker hosts: each has its own state directory, and one may lose it before a step
HOSTS = (0, 1)


@hsettings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    start=st.dictionaries(st.sampled_from(["a", "b", "c"]), mods, min_size=1),
    steps=st.lists(
        st.tuples(changes, st.sampled_from(HOSTS), st.booleans()), min_size=1, max_size=5
    ),
)
def test_delta_publish_equals_a_fresh_full_publish(
    graph: Graph,
    settings: Settings,
    tmp_path: Path,
    start: dict[str, Mod],
    steps: list[tuple[tuple[str, str, Any], int, bool]],
) -> None:
    """Each step runs on one of two hosts (two state directories; the host's directory is
    wiped first when ``wipe`` is drawn): the delta is the same whichever host runs it."""
    _wipe(graph, DELTA)
    hosts = [settings.model_copy(update={"state_dir": tmp_path / f"host-{h}"}) for h in HOSTS]
    state = {k: dataclasses.replace(v, defs=list(v.defs)) for k, v in start.items()}
    first, before = _publish(graph, hosts[0], tmp_path, DELTA, render(state), "0")
    assert first.mode == "first"
    empty = not state  # a repository without files has no node: its next publish is a first
    for n, (change, host, wipe) in enumerate(steps, 1):
        apply(state, change)
        files = render(state)
        if wipe:
            shutil.rmtree(hosts[host].state_dir, ignore_errors=True)
        stats, model = _publish(graph, hosts[host], tmp_path, DELTA, files, str(n))
        assert stats.mode == ("first" if empty else "delta") and not stats.delta_fallback, stats
        if not empty:
            _assert_proportional(stats, before, model)
        empty, before = not state, model
        _wipe(graph, FRESH)
        fresh, _ = _publish(graph, settings, tmp_path, FRESH, files, str(n), delta=False)
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
        assert not any((h.state_dir / "graph-state").exists() for h in hosts)


def _assert_proportional(stats: PublishStats, old: Model, new: Model) -> None:
    """The delta touched exactly the files whose bundle changed, and wrote no more rows than
    those files hold before and after (plus the external modules): never the repository."""
    changed = sorted(p for p, b in new.bundles.items() if old.bundles.get(p) != b)
    removed = sorted(set(old.bundles) - set(new.bundles))
    assert (stats.files_changed, stats.files_removed) == (len(changed), len(removed))
    bound = sum(old.rows.get(p, 0) + new.rows[p] for p in changed)
    bound += sum(old.rows[p] for p in removed) + old.externals + new.externals
    assert stats.rows_written <= bound, (stats, changed, removed)
    assert stats.state_rows <= len(changed) + 1  # the changed files' state, the externals'


def _against_model(graph: Any, files: list[Any], tmp: Path) -> parity.ParityReport:
    with resolve(lambda: iter(files), DELTA, tmp, ambiguous_cap=CAP) as res:
        model = parity.model_rows(res)
        report = parity.compare(DELTA, parity.live_rows(graph, DELTA), model, tmp / "cmp")
        # and the state the next delta compares against is what a full publish writes
        assert _state(graph, DELTA) == _model_state(res)
    assert report.ok, report.samples
    return report
