"""Calls through standard-library interfaces (issue 25, item 5): ``h.ServeHTTP`` with ``h
http.Handler`` and ``w.Write`` with ``w http.ResponseWriter`` dispatch, in tier ``interface``,
to the methods of exactly the repository's types that reach that interface
(semgraph.resolve.go_reach); a type that reaches it only wrapped in another is no candidate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.resolve.resolver import resolve

MOD = "module example.com/web\n\ngo 1.22\n"
ROUTER = """package web

import "net/http"

type Router struct{ NotFound http.Handler }

func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
\tw.WriteHeader(200)
\tr.NotFound.ServeHTTP(w, req)
}

type Wrapper struct{ inner Inner }

func (x *Wrapper) ServeHTTP(w http.ResponseWriter, req *http.Request) {
\tx.inner.ServeHTTP(w, req)
}

type Inner struct{}

func (Inner) ServeHTTP(w http.ResponseWriter, req *http.Request) {}

type Lost struct{}

func (Lost) ServeHTTP(w http.ResponseWriter, req *http.Request) {}

type Missing struct{}

func (Missing) ServeHTTP(w http.ResponseWriter, req *http.Request) {}

type Quiet struct{}

func (Quiet) ServeHTTP(w http.ResponseWriter, req *http.Request) {}

func Logging(next http.Handler) http.Handler {
\treturn http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
\t\tnext.ServeHTTP(w, req)
\t})
}

func Chain() http.Handler { return &Quiet{} }

func Main() {
\tr := &Router{}
\tr.NotFound = Missing{}
\thttp.Handle("/", &Wrapper{inner: Inner{}})
\t_ = Lost{}
\thttp.ListenAndServe(":80", Logging(r))
}
"""
WRITER = """package web

import "net/http"

type Recorder struct{ Code int }

func (rec *Recorder) Header() http.Header        { return nil }
func (rec *Recorder) Write(b []byte) (int, error) { return len(b), nil }
func (rec *Recorder) WriteHeader(code int)        { rec.Code = code }

type statusWriter struct {
\thttp.ResponseWriter
\tstatus int
}

func (s *statusWriter) WriteHeader(code int) {
\ts.status = code
\ts.ResponseWriter.WriteHeader(code)
}

type Unused struct{}

func (Unused) WriteHeader(code int) {}

func Wrap(w http.ResponseWriter, req *http.Request, r *Router) {
\tsw := &statusWriter{ResponseWriter: w}
\tr.ServeHTTP(sw, req)
}

func Test(r *Router, req *http.Request) {
\trec := &Recorder{}
\tr.ServeHTTP(rec, req)
}
"""


def _edges(tmp_path: Path, texts: dict[str, str]) -> dict[tuple[str, str, int], set[str]]:
    files = [extract_file(p, t.encode(), ExtractOptions()) for p, t in sorted(texts.items())]
    res = resolve(lambda: iter(files), "r", tmp_path / "res")
    try:
        out: dict[tuple[str, str, int], set[str]] = {}
        for src, dst, line, tier in res.table.db.execute(
            "SELECT src_key, dst_key, line, tier FROM call_edges"
        ):
            if tier == "interface":
                key = (src.split("|")[2], dst.split("|")[2].rsplit(".", 1)[-1], line)
                out.setdefault(key, set()).add(dst.split("|")[2].rsplit(".", 2)[-2])
        return out
    finally:
        res.close()


def _line(text: str, needle: str) -> int:
    return next(i for i, s in enumerate(text.splitlines(), 1) if needle in s)


def test_handlers_reach_http_handler_through_their_slots(tmp_path: Path) -> None:
    got = _edges(tmp_path, {"go.mod": MOD, "router.go": ROUTER, "writer.go": WRITER})
    # Missing (a field declared http.Handler), Wrapper (http.Handle), Router (an argument
    # of Logging's `next http.Handler`), Quiet (returned as http.Handler); not Inner (it
    # reaches the router only inside Wrapper), not Lost (never converted)
    reach = {"Missing", "Wrapper", "Router", "Quiet"}
    line = _line(ROUTER, "\t\tnext.ServeHTTP")
    assert got[("router.Logging", "ServeHTTP", line)] == reach
    line = _line(ROUTER, "r.NotFound.ServeHTTP")
    assert got[("router.Router.ServeHTTP", "ServeHTTP", line)] == reach


def test_response_writers_reach_through_repository_parameters(tmp_path: Path) -> None:
    got = _edges(tmp_path, {"go.mod": MOD, "router.go": ROUTER, "writer.go": WRITER})
    line = _line(ROUTER, "w.WriteHeader(200)")
    # Recorder and statusWriter are passed as Router.ServeHTTP's `w http.ResponseWriter`;
    # Unused has a WriteHeader but never reaches the interface
    assert got[("router.Router.ServeHTTP", "WriteHeader", line)] == {
        "Recorder",
        "statusWriter",
    }


def test_no_candidate_no_edge_and_wrapped_types_keep_their_own_calls(tmp_path: Path) -> None:
    got = _edges(tmp_path, {"go.mod": MOD, "router.go": ROUTER})
    # without writer.go no type reaches http.ResponseWriter: w.WriteHeader stays external
    assert not any(k[1] == "WriteHeader" for k in got)
    # x.inner is declared Inner: an ordinary receiver call, never dispatched
    assert not any(k[0] == "router.Wrapper.ServeHTTP" for k in got)
    # the embedded ResponseWriter's own call: an external field, no repository type reaches
    # it from there but the writers themselves
    assert all(v <= {"Missing", "Wrapper", "Router", "Quiet"} for v in got.values())


def test_an_incremental_resolve_follows_a_conversion_in_another_file(tmp_path: Path) -> None:
    from semgraph.resolve.compare import differences
    from semgraph.resolve.incremental import resolve_incremental

    serve = (
        'package web\n\nimport "net/http"\n\nfunc Serve(h http.Handler) { h.ServeHTTP(nil, nil) }\n'
    )
    types = "package web\n\ntype T struct{}\n\nfunc (T) ServeHTTP() {}\n\nfunc Use() { _ = T{} }\n"
    before = {"go.mod": MOD, "serve.go": serve, "types.go": types}
    after = {**before, "types.go": types.replace("_ = T{}", "Serve(T{})")}  # T reaches it now

    def parse(texts: dict[str, str]) -> list[Any]:
        return [extract_file(p, t.encode(), ExtractOptions()) for p, t in sorted(texts.items())]

    first = parse(before)
    resolve(lambda: iter(first), "r", tmp_path / "first").close()
    files = parse(after)
    inc = resolve_incremental(
        lambda: iter(files),
        "r",
        tmp_path / "inc",
        tmp_path / "first" / "symtab.sqlite",
        max_fraction=1.0,
    )
    full = resolve(lambda: iter(files), "r", tmp_path / "full")
    try:
        assert inc.incremental["mode"] == "incremental"
        assert inc.incremental["files_resolved"] == 2  # types.go, and serve.go's h.ServeHTTP
        assert differences(inc, full) == []
        edges = full.table.db.execute("SELECT dst_key FROM call_edges WHERE tier = 'interface'")
        assert [r[0] for r in edges] == ["r|types.go|types.T.ServeHTTP"]
    finally:
        inc.close()
        full.close()


def test_conversion_facts_keep_only_values_that_may_be_a_type_of_ours() -> None:
    src = """package web

import "net/http"

func F(s string, xs []int, r *Router, w http.ResponseWriter) {
\tn := 1
\tv, err := G()
\tH(s, xs, n, err, len(xs), int(n), nil, "lit")
\tH(r, &Router{}, new(Router), NewRouter(), v, w)
}
"""
    facts = extract_file("web/f.go", src.encode(), ExtractOptions())
    got = [(b.name, b.kind, b.text) for b in facts.bindings if b.name.startswith("<to:")]
    assert got == [
        ("<to:param:3>", "type", "http.ResponseWriter"),
        ("<to:arg:0>H", "value", "r"),
        ("<to:arg:1>H", "type", "Router"),
        ("<to:arg:2>H", "type", "Router"),
        ("<to:arg:3>H", "call", "NewRouter"),
        ("<to:arg:4>H", "value", "v"),
        ("<to:arg:5>H", "value", "w"),
    ]


def test_a_value_put_in_a_slot_only_by_a_test_reaches_only_test_files(tmp_path: Path) -> None:
    # expr's spew: a test's recorder is stored in a fmt.State field; the library's own
    # fs.Flag(...) runs with what fmt passes, never with the test's type (an outside,
    # flow-sensitive oracle agrees), while the test's own calls may reach it
    lib = (
        'package spew\n\nimport "fmt"\n\ntype formatState struct{ fs fmt.State }\n\n'
        "func (f *formatState) Format() bool { return f.fs.Flag('+') }\n\n"
        "type Real struct{}\n\nfunc (Real) Flag(c int) bool { return false }\n\n"
        "func Keep() { _ = formatState{fs: Real{}} }\n"
    )
    test = (
        'package spew\n\nimport "fmt"\n\ntype fakeState struct{}\n\n'
        "func (fakeState) Flag(c int) bool { return true }\n\n"
        "func TestFormat() {\n\tf := formatState{fs: fakeState{}}\n\tf.Format()\n"
        "\tvar s fmt.State = fakeState{}\n\ts.Flag('-')\n}\n"
    )
    got = _edges(tmp_path, {"go.mod": MOD, "format.go": lib, "format_test.go": test})
    line = _line(lib, "f.fs.Flag")
    assert got[("format.formatState.Format", "Flag", line)] == {"Real"}
    line = _line(test, "s.Flag('-')")
    assert got[("format_test.TestFormat", "Flag", line)] == {"Real", "fakeState"}
