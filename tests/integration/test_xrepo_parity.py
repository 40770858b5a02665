"""Freshness of the cross-repository links, model-based against the real graph
server: after any sequence of publishes of a library, a fork of it and a dependent, in any
order (each library publish re-linking its dependents, as the reindex job does: only the
sites that meet a name the publish touched), the links and counts equal those of a fresh
index of the same commits."""

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
from semgraph.xrepo.relink import relink_dependents
from tests.integration.xrepo_repos import LIB, SVC, counts, publish, xcalls

pytestmark = pytest.mark.integration

_BASE = "class Root:\n    def route(self):\n        pass\n"
_INHERITS = (
    "from .base import Base\n\n\nclass Flask(Base):\n    pass\n\n\ndef helper():\n    pass\n"
)
_APP2 = "class Flask:\n    pass\n\n\ndef missing():\n    pass\n\n\ndef helper():\n    pass\n"
LIBS = [
    LIB,
    {**LIB, "src/lib/app.py": _APP2},  # helper moved, missing() added (not re-exported)
    {**LIB, "src/lib/__init__.py": "from .app import Flask, missing\n", "src/lib/app.py": _APP2},
    {**LIB, "src/lib/__init__.py": ""},  # no re-export at all
    # route inherited through bases in another file (Flask(Base), Base(Root)), then Base
    # without its base, or without Base: the re-link follows a change in a file the site
    # never names (the member's definition, the subclass of a class whose bases changed)
    {**LIB, "src/lib/base.py": _BASE.replace("Root", "Base"), "src/lib/app.py": _INHERITS},
    {
        **LIB,
        "src/lib/base.py": _BASE + "\n\nclass Base(Root):\n    pass\n",
        "src/lib/app.py": _INHERITS,
    },
    {**LIB, "src/lib/base.py": _BASE + "\n\nclass Base:\n    pass\n", "src/lib/app.py": _INHERITS},
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

# npm: a TypeScript library whose package.json names its build output (dist/index.js, read
# as src/index.ts), with a default export, a named re-export, ``export *`` and a class
_JSPKG = (
    '{"name": "jslib", "exports": {".": {"types": "./dist/index.d.ts", "import": '
    '"./dist/index.js"}}}'
)
_JSINDEX = (
    "export default function make() {}\nexport {helper} from './util';\nexport * from './more';\n"
    "export {default as disc} from './disc';\n"
)
_MORE = "export class Thing {\n  run() {}\n}\n"
JSLIB = {
    "package.json": _JSPKG,
    "src/index.ts": _JSINDEX,
    "src/util.ts": "export function helper() {}\n",
    "src/more.ts": _MORE,
    # an instance exported: its members are its class's
    "src/disc.ts": (
        "class Disc {\n  start() {}\n}\nconst disc = new Disc();\nexport default disc;\n"
    ),
}
JSLIBS = [
    JSLIB,
    {**JSLIB, "src/index.ts": _JSINDEX.replace("make", "build")},  # the default renamed
    {**JSLIB, "src/index.ts": _JSINDEX.replace("export * from './more';\n", "")},
    {  # helper moved into the module re-exported whole; util.ts gone
        "package.json": _JSPKG,
        "src/index.ts": "export default function make() {}\nexport * from './more';\n",
        "src/more.ts": _MORE + "export function helper() {}\n",
    },
    {**JSLIB, "src/index.ts": _JSINDEX.replace("function make() {}", "class make {}")},
    {**JSLIB, "src/more.ts": "export class Thing {}\n"},  # run() gone
    {  # the instance exported is of another class now: no name the site spells changed
        **JSLIB,
        "src/disc.ts": "class Other {}\nclass Disc {\n  start() {}\n}\n"
        "const disc = new Other();\nexport default disc;\n",
    },
]
_JSUSE = (
    "import make, {helper, Thing, disc} from 'jslib';\nimport * as lib from 'jslib';\n\n"
    "export function go() {\n  make();\n  helper();\n  const t = new Thing();\n  t.run();\n"
    "  lib.helper();\n  lib.default();\n  disc.start();\n}\n"
)
JSSVCS = [
    {"package.json": '{"name": "svc", "dependencies": {"jslib": "^1"}}', "src/use.ts": _JSUSE},
    {"package.json": '{"name": "svc"}', "src/use.ts": _JSUSE},  # depends on nothing
]
SETS = {"python": (REPOS, KEYS), "js": ({"lib": JSLIBS, "fork": JSLIBS, "svc": JSSVCS}, KEYS)}


def _snapshot(graph: Graph) -> tuple[Any, ...]:
    return (
        sorted(xcalls(graph, "svc")),
        counts(graph, "svc"),
        sorted(
            graph.query(
                "dep",
                "MATCH (:Repository {key: 'svc'})-[e:DEPENDS_ON]->(p) "
                "RETURN p.key AS p, e.chosen AS c, e.why AS w, e.candidates AS k",
            ),
            key=str,
        ),
    )


@pytest.mark.parametrize("lang", sorted(SETS))
@hsettings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["lib", "fork", "svc"]), st.integers(0, 6)),
        min_size=1,
        max_size=6,
    )
)
def test_links_after_any_publish_order_equal_a_fresh_index(
    graph: Graph, settings: Settings, tmp_path: Path, lang: str, steps: list[tuple[str, int]]
) -> None:
    repos, keys = SETS[lang]
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    tmp_path = Path(tempfile.mkdtemp(dir=tmp_path))  # one per example: hypothesis reuses it
    final: dict[str, tuple[int, str]] = {}
    steps = [("svc", 0), *steps]  # the dependent exists from the start
    for n, (which, version) in enumerate(steps):
        files = repos[which][version % len(repos[which])]
        key, commit = keys[which], f"c{n}"
        publish(graph, settings, tmp_path / f"s{n}", files, key, commit)
        relink_dependents(graph, key)  # what the reindex job does after a publish
        final[which] = (version % len(repos[which]), commit)
    live = _snapshot(graph)
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    for which in ("lib", "fork", "svc"):  # the same commits, libraries first, no relink
        if which in final:
            version, commit = final[which]
            publish(
                graph,
                settings,
                tmp_path / f"fresh-{which}",
                repos[which][version],
                keys[which],
                commit,
            )
    assert live == _snapshot(graph), steps


def test_a_base_dropped_in_another_file_relinks_the_site_through_its_subclass(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """``lib.Flask.route`` links to ``Root.route`` through ``Flask(Base)``, ``Base(Root)``;
    base.py drops ``Base``'s base: the publish's names are Base's and its subclass Flask's
    (not ``route``, which stays), and the site meets ``Flask``."""
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    publish(graph, settings, tmp_path, SVC, "svc")
    publish(graph, settings, tmp_path, LIBS[5], "lib", "c1")
    relink_dependents(graph, "lib")
    route = ("svc.main.go", 11, "lib", "lib.base.Root.route", "cross_repo", "c1", "inherited")
    assert route in xcalls(graph, "svc")
    publish(graph, settings, tmp_path, LIBS[6], "lib", "c2")
    pending = graph.query("p", "MATCH (p:RelinkPending {library: 'lib'}) RETURN p.names AS p")
    assert {"Base", "Flask"} <= set(pending[0]["p"]) and "route" not in pending[0]["p"]
    relink_dependents(graph, "lib")
    assert not any(e[1] == 11 for e in xcalls(graph, "svc"))
    assert all(e[5] == "c2" for e in xcalls(graph, "svc"))


def test_js_links_through_the_entry_and_its_exports(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """The exact links of the npm set's first versions: the entry read from package.json's
    build path, a default export, ``export {helper} from``, ``export *``, a class's method
    through ``new``, and a namespace import."""
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    publish(graph, settings, tmp_path, JSSVCS[0], "svc")
    publish(graph, settings, tmp_path, JSLIB, "lib", "c1")
    relink_dependents(graph, "lib")
    go = "src.use.go"
    assert xcalls(graph, "svc") == {
        (go, 5, "lib", "src.index.make", "cross_repo", "c1", "definition"),
        (go, 6, "lib", "src.util.helper", "cross_repo", "c1", "re-export"),
        (go, 7, "lib", "src.more.Thing", "cross_repo", "c1", "re-export"),
        (go, 8, "lib", "src.more.Thing.run", "cross_repo", "c1", "re-export"),
        (go, 9, "lib", "src.util.helper", "cross_repo", "c1", "re-export"),
        (go, 10, "lib", "src.index.make", "cross_repo", "c1", "definition"),
        (go, 11, "lib", "src.disc.Disc.start", "cross_repo", "c1", "re-export"),
    }


def test_a_change_behind_a_re_export_alias_relinks_the_sites_of_the_alias(
    graph: Graph, settings: Settings, tmp_path: Path
) -> None:
    """``disc.start()`` reaches ``Disc.start`` through ``export {default as disc} from
    "./disc"`` and disc.ts's ``export default disc`` (``new Disc()``); disc.ts now makes an
    ``Other`` (no ``start``): the change's names (``default``, ``Other``) are not what the
    site spells, the re-link follows the library's re-exports to the alias ``disc``."""
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    publish(graph, settings, tmp_path, JSSVCS[0], "svc")
    publish(graph, settings, tmp_path, JSLIBS[0], "lib", "c1")
    relink_dependents(graph, "lib")
    publish(graph, settings, tmp_path, JSLIBS[-1], "lib", "c2")
    pending = graph.query("p", "MATCH (p:RelinkPending {library: 'lib'}) RETURN p.names AS p")
    assert "disc" not in pending[0]["p"] and "src/disc.ts\tdefault" in pending[0]["p"]
    stats = relink_dependents(graph, "lib")
    # disc.start() through the alias; make() and lib.default() through ``default``
    assert stats["svc"].sites == 3
    assert not any(e[1] == 11 for e in xcalls(graph, "svc"))  # Other has no start()
    live = _snapshot(graph)
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    publish(graph, settings, tmp_path / "fresh", JSLIBS[-1], "lib", "c2")
    publish(graph, settings, tmp_path / "fresh", JSSVCS[0], "svc")
    assert live == _snapshot(graph)


SVC2 = {**SVC, "svc/other.py": "import requests\n\n\ndef get():\n    requests.post('x')\n"}


@pytest.mark.parametrize("svc_between", [False, True])
def test_a_definition_dropped_with_its_links_is_counted_as_a_fresh_index_counts_it(
    graph: Graph, settings: Settings, tmp_path: Path, svc_between: bool
) -> None:
    """The re-link counts only the calls it touches, before and after. ``Flask.route`` goes
    (its XCALLS with it, in the library's publish): the publish records the call that was
    linked into it, so the re-link counts it linked before (the dependent's last count did)
    and unmatched after. A publish of the dependent in between counts everything again and
    drops that record (counted twice otherwise)."""
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    publish(graph, settings, tmp_path / "a", SVC, "svc")
    publish(graph, settings, tmp_path / "a", LIB, "lib", "c1")
    relink_dependents(graph, "lib")
    assert (
        "svc.main.go",
        11,
        "lib",
        "lib.app.Flask.route",
        "cross_repo",
        "c1",
        "re-export",
    ) in xcalls(graph, "svc")
    linked = counts(graph, "svc")["linked"]
    publish(graph, settings, tmp_path / "b", LIBS[1], "lib", "c2")  # no route any more
    lost_q = "MATCH (p:RelinkPending {library: 'lib'}) RETURN p.lost AS p"
    assert graph.query("p", lost_q) == [
        {"p": ["svc\tsvc|svc/main.py|svc.main.go\t11\tlib.Flask.route"]}
    ]
    if svc_between:  # a new commit of the dependent, an external site changed: a full count
        publish(graph, settings, tmp_path / "c", SVC2, "svc", "s2")
        assert graph.query("p", lost_q) == [{"p": []}]
    stats = relink_dependents(graph, "lib")
    assert stats["svc"].linked == linked - 1 == counts(graph, "svc")["linked"]
    assert graph.query("p", lost_q) == []
    live = _snapshot(graph)
    graph.query("reset", "MATCH (n) DETACH DELETE n")
    publish(graph, settings, tmp_path / "fresh", LIBS[1], "lib", "c2")
    svc = SVC2 if svc_between else SVC
    publish(graph, settings, tmp_path / "fresh", svc, "svc", "s2" if svc_between else "c1")
    assert live == _snapshot(graph)
