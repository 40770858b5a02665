"""Go external test packages (issue 25, item 5): a ``package mux_test`` file beside the package
imports its own module; the values the module's constructors return are typed there, so
``r := mux.NewRouter(); r.HandleFunc(...).Methods(...)`` resolves into the repository. The
package directory is the module root, where ``go.mod`` (a text file) sorts before the code:
the package's family is its code's, not go.mod's."""

from __future__ import annotations

from pathlib import Path

from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.resolve.resolver import resolve

MOD = "module github.com/ex/mux\n\ngo 1.22\n"
MUX = """package mux

type Router struct{ routes []*Route }

type Route struct{ name string }

func NewRouter() *Router { return &Router{} }

func (r *Router) HandleFunc(path string, f func()) *Route { return &Route{} }

func (r *Route) Methods(m ...string) *Route { return r }

func (r *Route) Name(n string) *Route { return r }
"""
EXTERNAL_TEST = """package mux_test

import (
\t"testing"

\t"github.com/ex/mux"
)

func TestRoutes(t *testing.T) {
\tr := mux.NewRouter()
\tr.HandleFunc("/", nil).Methods("GET")
\tvar q *mux.Router = mux.NewRouter()
\tq.HandleFunc("/a", nil)
\tmux.NewRouter().HandleFunc("/b", nil).Name("b")
}
"""
OTHER_MODULE = """package mux_test

import (
\t"testing"

\tmux "github.com/someone/else"
)

func TestOther(t *testing.T) {
\tr := mux.NewRouter()
\tr.HandleFunc("/", nil).Methods("GET")
}
"""


def _edges(tmp_path: Path, texts: dict[str, str]) -> set[tuple[str, int, str, str]]:
    files = [extract_file(p, t.encode(), ExtractOptions()) for p, t in sorted(texts.items())]
    res = resolve(lambda: iter(files), "r", tmp_path / "res")
    try:
        return {
            (src.split("|")[1], line, dst.split("|")[2], tier)
            for src, dst, line, tier in res.table.db.execute(
                "SELECT src_key, dst_key, line, tier FROM call_edges"
            )
        }
    finally:
        res.close()


def test_constructor_results_are_typed_in_an_external_test_package(tmp_path: Path) -> None:
    got = _edges(tmp_path, {"go.mod": MOD, "mux.go": MUX, "mux_ext_test.go": EXTERNAL_TEST})
    ext = {(line, dst, tier) for path, line, dst, tier in got if path == "mux_ext_test.go"}
    assert ext == {
        (10, "mux.NewRouter", "import"),
        (11, "mux.Router.HandleFunc", "receiver"),  # r := mux.NewRouter()
        (11, "mux.Route.Methods", "receiver"),  # the chain on its result
        (12, "mux.NewRouter", "import"),
        (13, "mux.Router.HandleFunc", "receiver"),  # var q *mux.Router
        (14, "mux.NewRouter", "import"),
        (14, "mux.Router.HandleFunc", "receiver"),  # mux.NewRouter().HandleFunc(...)
        (14, "mux.Route.Name", "receiver"),
    }


def test_another_module_of_the_same_name_stays_outside(tmp_path: Path) -> None:
    got = _edges(tmp_path, {"go.mod": MOD, "mux.go": MUX, "other_test.go": OTHER_MODULE})
    assert not [e for e in got if e[0] == "other_test.go"]


def test_a_package_directory_of_text_files_only_binds_nothing(tmp_path: Path) -> None:
    # the module root holds go.mod and a README, no Go code: the import binds no definition
    texts = {
        "go.mod": MOD,
        "README.md": "# mux\n",
        "cmd/main_test.go": EXTERNAL_TEST.replace("package mux_test", "package main"),
    }
    got = _edges(tmp_path, texts)
    assert not [e for e in got if e[0] == "cmd/main_test.go"]
