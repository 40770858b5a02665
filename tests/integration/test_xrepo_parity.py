"""Freshness of the cross-repository links (issue 30), model-based against the real graph
server: after any sequence of publishes of a library, a fork of it and a dependent, in any
order (each library publish re-linking its dependents, as the reindex job does), the links
and counts equal those of a fresh index of the same commits."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.xrepo import relink_dependents
from tests.integration.xrepo_repos import LIB, SVC, counts, publish, xcalls

pytestmark = pytest.mark.integration

_APP2 = "class Flask:\n    pass\n\n\ndef missing():\n    pass\n\n\ndef helper():\n    pass\n"
LIBS = [
    LIB,
    {**LIB, "src/lib/app.py": _APP2},  # helper moved, missing() added (not re-exported)
    {**LIB, "src/lib/__init__.py": "from .app import Flask, missing\n", "src/lib/app.py": _APP2},
    {**LIB, "src/lib/__init__.py": ""},  # no re-export at all
]
SVCS = [
    SVC,
    {
        **SVC,
        "svc/main.py": "from lib import missing\nfrom lib.app import helper\n\n\n"
        "def go():\n    missing()\n    helper()\n",
    },
    {**SVC, "pyproject.toml": '[project]\nname = "svc"\n'},  # depends on nothing
]
REPOS = {"lib": LIBS, "fork": LIBS, "svc": SVCS}
KEYS = {"lib": "lib", "fork": "lib-fork", "svc": "svc"}


def _snapshot(graph: Graph) -> tuple[Any, ...]:
    return (
        sorted(xcalls(graph, "svc")),
        counts(graph, "svc"),
        sorted(graph.query("dep", "MATCH (:Repository {key: 'svc'})-[e:DEPENDS_ON]->(p) "
                           "RETURN p.key AS p, e.chosen AS c, e.why AS w, e.candidates AS k")
               , key=str),
    )  # fmt: skip


@hsettings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["lib", "fork", "svc"]), st.integers(0, 3)),
        min_size=1,
        max_size=6,
    )
)
def test_links_after_any_publish_order_equal_a_fresh_index(
    graph: Graph, settings: Settings, tmp_path: Path, steps: list[tuple[str, int]]
) -> None:
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    tmp_path = Path(tempfile.mkdtemp(dir=tmp_path))  # one per example: hypothesis reuses it
    final: dict[str, tuple[int, str]] = {}
    steps = [("svc", 0), *steps]  # the dependent exists from the start
    for n, (which, version) in enumerate(steps):
        files = REPOS[which][version % len(REPOS[which])]
        key, commit = KEYS[which], f"c{n}"
        publish(graph, settings, tmp_path / f"s{n}", files, key, commit)
        relink_dependents(graph, key)  # what the reindex job does after a publish
        final[which] = (version % len(REPOS[which]), commit)
    live = _snapshot(graph)
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    for which in ("lib", "fork", "svc"):  # the same commits, libraries first, no relink
        if which in final:
            version, commit = final[which]
            publish(graph, settings, tmp_path / f"fresh-{which}", REPOS[which][version],
                    KEYS[which], commit)  # fmt: skip
    assert live == _snapshot(graph), steps
