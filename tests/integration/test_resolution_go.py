"""Go call resolution against the real graph server (issue 14, item 10): locals from
constructors and composite literals, chained builders through declared results, methods
declared in another file of the package or promoted from embedded fields, interface dispatch
(tier ``interface``, an edge to every implementation), function values, a local that shadows a
package name (from its declaration on), function literals' parameters (inside the literal
only), ``new(T)`` in locals and chains, an external test package, and the false-edge rule
(no ``unique`` edge for a receiver of unknown type or a bare name the package does not
define)."""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.reader import GraphReader
from tests.integration.resolution_repo import callees, callers, publish

pytestmark = pytest.mark.integration

REPO = "gores"
FILES = {
    "go.mod": "module example.com/app\n\ngo 1.22\n",
    "store/store.go": """package store

type DB struct{ name string }

func Open(name string) *DB { return &DB{name: name} }

func (d *DB) Query(q string) int { return len(q) }

func (d *DB) Close() {}

func (d *DB) Name() string { return d.name }

func Name() string { return "store" }

var Handle = struct{ n int }{}
""",
    "app/shape.go": """package app

import "example.com/app/store"

type Shape int

func (s Shape) HasTop() bool { return s > 0 }

type Events map[string]int

func (e Events) Clear() {}

type Panel struct {
\tshape  Shape
\tevents *Events
}

func Shapes(p *Panel, s Shape) bool {
\tq := Shape(2)
\tp.events.Clear()
\treturn s.HasTop() && p.shape.HasTop() && q.HasTop() && Shape(3).HasTop()
}

func PackageValue() string {
\treturn store.Handle.Name()
}

func Panels() []Panel { return nil }

func FromResults() bool {
\tps := Panels()
\tfor _, p := range ps {
\t\tp.events.Clear()
\t}
\treturn ps[0].shape.HasTop()
}
""",
    "app/builder.go": """package app

import "example.com/app/store"

type Builder struct {
\tdb    *store.DB
\tsteps []string
}

func NewBuilder() *Builder { return &Builder{db: store.Open("x")} }

func (b *Builder) Handle(s string, fs ...func(int, *Request)) *Builder {
\tb.steps = append(b.steps, s)
\treturn b
}

func (b *Builder) Each(f func(*Request)) {}
""",
    "app/literal.go": """package app

import "example.com/app/store"

type Request struct{}

func (q *Request) Parse() int { return 0 }

func Literals(b *Builder) {
\tb.Handle("a", func(w int, b *Request) {
\t\tb.Parse()
\t}).With(1)
\tb.Run()
\tb.Each(func(b *Request) { b.Parse() })
}

func Before() {
\tstore.Open("x")
\tstore := NewBuilder()
\tstore.Run()
}

func News() int {
\tx := new(Builder)
\tvar db = new(store.DB)
\treturn x.Run() + db.Query("q") + new(Builder).Handle("a").With(2).Run()
}
""",
    "app/builder_ext_test.go": """package app_test

import (
\t"testing"

\t"example.com/app/app"
)

func TestBuilder(t *testing.T) {
\tb := app.NewBuilder()
\tb.Handle("a", func(w int, b *app.Request) {
\t\tb.Parse()
\t}).With(1).Run()
}
""",
    "app/more.go": """package app

// methods of Builder declared in another file of the package
func (b *Builder) With(n int) *Builder { return b }

func (b *Builder) Run() int { return b.db.Query("q") }

type Runner interface {
\tRun() int
}

type Stopper interface {
\tRun() int
\tStop()
}

type Fake struct{}

func (Fake) Run() int { return 0 }

func (*Fake) Stop() {}

func Helper() int { return 1 }

func Close() {}
""",
    "app/use.go": """package app

import "example.com/app/store"

func Local() int {
\tb := NewBuilder()
\treturn b.Run()
}

func Pointer() int {
\tvar b = &Builder{}
\treturn b.Run()
}

func Literal() int {
\tb := Builder{}
\tvar c Builder
\treturn b.Run() + c.Run()
}

func Anonymous() int {
\treturn new(Builder).Run() + Builder{}.Run()
}

func Chain() int {
\treturn NewBuilder().Handle("a").With(2).Run()
}

func Dispatch(r Runner) int {
\treturn r.Run()
}

func DispatchNarrow(s Stopper) {
\ts.Stop()
}

func FuncValue() int {
\tf := Helper
\tg := store.Open
\treturn f() + g("y").Query("z")
}

func Shadow() int {
\tstore := NewBuilder()
\treturn store.Run()
}

func Unknown(x interface{ Close() }, db *store.DB) {
\tx.Close()
\tdb.Close()
}

func AnonymousStruct() {
\tcases := []struct{ store string }{{store: "x"}}
\t_ = cases
\tstore.Open("y")
}

func Closure() {
\tCloser := func() {}
\tCloser()
\tUndefined()
}
""",
    "app/embed.go": """package app

type base struct{ loc int }

func (b *base) Location() int { return b.loc }

type Node interface {
\tLocation() int
\tString() string
}

type IntNode struct {
\tbase
\tV int
}

func (n *IntNode) String() string { return "" }

type Attr int

func (a Attr) String() string { return "" }

func Promoted(n *IntNode, x Node, p *Node) int {
\t_ = x.String()
\treturn n.Location() + x.Location() + (*p).Location()
}

type Bag struct {
\titems []*IntNode
\tbyKey map[string]*IntNode
}

func Index(b *Bag, nodes []IntNode, k string) string {
\t_ = nodes[0].Location()
\t_ = b.items[1].Location()
\treturn b.byKey[k].String()
}

func Ranges(b *Bag, nodes []*IntNode) {
\tfor _, n := range nodes {
\t\tn.Location()
\t}
\tfor k, v := range b.byKey {
\t\t_ = k
\t\tv.String()
\t}
\tfor i := range nodes {
\t\t_ = i
\t}
}
""",
    "other/other.go": """package other

func Undefined() {}

type Closer struct{}

func (Closer) Close() {}
""",
}
APP = "app"


@pytest.fixture
def reader(graph: Graph, settings: Settings, tmp_path: Path) -> GraphReader:
    found, _ = publish(graph, settings, tmp_path, FILES, REPO)
    return found


def test_locals_from_constructors_and_literals(reader: GraphReader) -> None:
    run = (f"{APP}.more.Builder.Run", "receiver")
    assert callees(reader, f"{APP}.use.Local", REPO) == {
        (f"{APP}.builder.NewBuilder", "module"),
        run,  # b := NewBuilder() -> *Builder; Run is in more.go
    }
    assert callees(reader, f"{APP}.use.Pointer", REPO) == {run}  # var b = &Builder{}
    assert callees(reader, f"{APP}.use.Literal", REPO) == {run}  # b := Builder{}; var c Builder
    assert callees(reader, f"{APP}.use.Anonymous", REPO) == {run}  # new(Builder), Builder{}
    # a struct field's type: b.db is *store.DB
    assert callees(reader, f"{APP}.more.Builder.Run", REPO) == {
        ("store.store.DB.Query", "receiver")
    }


def test_chained_builder_through_declared_results(reader: GraphReader) -> None:
    assert callees(reader, f"{APP}.use.Chain", REPO) == {
        (f"{APP}.builder.NewBuilder", "module"),
        (f"{APP}.builder.Builder.Handle", "receiver"),
        (f"{APP}.more.Builder.With", "receiver"),
        (f"{APP}.more.Builder.Run", "receiver"),
    }
    assert callers(reader, f"{APP}.more.Builder.With", REPO) == {
        (f"{APP}.use.Chain", "receiver"),
        (f"{APP}.literal.Literals", "receiver"),
        (f"{APP}.literal.News", "receiver"),
        (f"{APP}.builder_ext_test.TestBuilder", "receiver"),
    }


def test_interface_calls_dispatch_to_every_implementation(reader: GraphReader) -> None:
    # Runner is implemented by Builder and Fake (the repository's types with a Run method)
    assert callees(reader, f"{APP}.use.Dispatch", REPO) == {
        (f"{APP}.more.Builder.Run", "interface"),
        (f"{APP}.more.Fake.Run", "interface"),
    }
    edges = reader.callees(f"{APP}.use.Dispatch", repo=REPO).edges
    assert {e["candidates"] for e in edges} == {2}
    # Stopper needs Run and Stop: only Fake has both (Builder has no Stop)
    assert callees(reader, f"{APP}.use.DispatchNarrow", REPO) == {
        (f"{APP}.more.Fake.Stop", "interface")
    }


def test_function_values_and_a_local_shadowing_a_package(reader: GraphReader) -> None:
    assert callees(reader, f"{APP}.use.FuncValue", REPO) == {
        (f"{APP}.more.Helper", "scope"),  # f := Helper; f()
        ("store.store.Open", "scope"),  # g := store.Open; g("y")
        ("store.store.DB.Query", "receiver"),  # g("y") returns *store.DB
    }
    # `store := NewBuilder()` shadows the imported package: store.Run() is Builder's
    assert callees(reader, f"{APP}.use.Shadow", REPO) == {
        (f"{APP}.builder.NewBuilder", "module"),
        (f"{APP}.more.Builder.Run", "receiver"),
    }


def test_no_unique_edge_for_unknown_receivers_or_foreign_bare_names(reader: GraphReader) -> None:
    # x's type is an interface no type of the repository declares; db's Close is DB's
    assert callees(reader, f"{APP}.use.Unknown", REPO) == {("store.store.DB.Close", "receiver")}
    # the field `store` of an anonymous struct is no local: store.Open is the package's
    assert callees(reader, f"{APP}.use.AnonymousStruct", REPO) == {("store.store.Open", "import")}
    # a called local closure, and a bare name only another package defines: no edge
    assert callees(reader, f"{APP}.use.Closure", REPO) == set()
    assert callers(reader, "other.other.Undefined", REPO) == set()
    assert callers(reader, "other.other.Closer.Close", REPO) == set()
    assert callers(reader, f"{APP}.more.Close", REPO) == set()


def test_embedded_fields_promote_methods_to_members_and_interfaces(reader: GraphReader) -> None:
    # IntNode embeds base: n.Location() is base's, and IntNode implements Node (Location
    # promoted, String its own); Attr has String but no Location, so it does not
    assert callees(reader, f"{APP}.embed.Promoted", REPO) == {
        (f"{APP}.embed.IntNode.String", "interface"),  # x.String()
        (f"{APP}.embed.base.Location", "receiver"),  # n.Location()
        (f"{APP}.embed.base.Location", "interface"),  # x.Location(), (*p).Location()
    }
    assert callers(reader, f"{APP}.embed.Attr.String", REPO) == set()


def test_elements_of_slices_and_maps_of_declared_types(reader: GraphReader) -> None:
    # nodes []IntNode, the field items []*IntNode, the field byKey map[string]*IntNode
    assert callees(reader, f"{APP}.embed.Index", REPO) == {
        (f"{APP}.embed.base.Location", "receiver"),
        (f"{APP}.embed.IntNode.String", "receiver"),
    }
    # for _, n := range nodes; for k, v := range b.byKey: the element's type
    assert callees(reader, f"{APP}.embed.Ranges", REPO) == {
        (f"{APP}.embed.base.Location", "receiver"),
        (f"{APP}.embed.IntNode.String", "receiver"),
    }


def test_function_literal_parameters_shadow_only_inside_the_literal(reader: GraphReader) -> None:
    # func(w int, b *Request) {...} shadows the parameter b inside the literal only: the calls
    # around it (Handle, With, and Run after it) are on the outer *Builder; on a one-line
    # literal's line the literal's b wins (b.Each and b.Parse share the line: no edge rather
    # than a wrong one)
    assert callees(reader, f"{APP}.literal.Literals", REPO) == {
        (f"{APP}.builder.Builder.Handle", "receiver"),
        (f"{APP}.more.Builder.With", "receiver"),
        (f"{APP}.literal.Request.Parse", "receiver"),
        (f"{APP}.more.Builder.Run", "receiver"),
    }
    assert callers(reader, f"{APP}.builder.Builder.Each", REPO) == set()
    # a local is no local above its declaration: store.Open() is the imported package's
    assert callees(reader, f"{APP}.literal.Before", REPO) == {
        ("store.store.Open", "import"),
        (f"{APP}.builder.NewBuilder", "module"),
        (f"{APP}.more.Builder.Run", "receiver"),
    }


def test_new_in_locals_and_at_the_head_of_chains(reader: GraphReader) -> None:
    # x := new(Builder); var db = new(store.DB); new(Builder).Handle("a").With(2).Run()
    assert callees(reader, f"{APP}.literal.News", REPO) == {
        (f"{APP}.more.Builder.Run", "receiver"),
        ("store.store.DB.Query", "receiver"),
        (f"{APP}.builder.Builder.Handle", "receiver"),
        (f"{APP}.more.Builder.With", "receiver"),
    }


def test_an_external_test_package_types_its_module_s_constructors(reader: GraphReader) -> None:
    # package app_test imports example.com/app/app: b := app.NewBuilder() is a *Builder, and
    # the literal's b *app.Request does not hide it from the chain around the literal
    assert callees(reader, f"{APP}.builder_ext_test.TestBuilder", REPO) == {
        (f"{APP}.builder.NewBuilder", "import"),
        (f"{APP}.builder.Builder.Handle", "receiver"),
        (f"{APP}.more.Builder.With", "receiver"),
        (f"{APP}.more.Builder.Run", "receiver"),
        (f"{APP}.literal.Request.Parse", "receiver"),
    }


def test_methods_of_defined_types_and_conversions(reader: GraphReader) -> None:
    # type Shape int, type Events map[string]int: their methods are members (a parameter, a
    # field, a local made by a conversion, a conversion at the head of a chain); a conversion
    # Shape(2) calls nothing
    assert callees(reader, f"{APP}.shape.Shapes", REPO) == {
        (f"{APP}.shape.Events.Clear", "receiver"),
        (f"{APP}.shape.Shape.HasTop", "receiver"),
    }
    assert callers(reader, f"{APP}.shape.Shape", REPO) == set()
    # store.Handle.Name(): Handle's type is not known, and Name is no function of the package
    # (before, the package's function Name was taken): both candidates, no import edge
    assert callees(reader, f"{APP}.shape.PackageValue", REPO) == {
        ("store.store.Name", "ambiguous"),
        ("store.store.DB.Name", "ambiguous"),
    }


def test_elements_of_slices_a_function_returns(reader: GraphReader) -> None:
    # ps := Panels() (declared result []Panel): ps[0] and the range variable are Panels
    assert callees(reader, f"{APP}.shape.FromResults", REPO) == {
        (f"{APP}.shape.Panels", "module"),
        (f"{APP}.shape.Events.Clear", "receiver"),
        (f"{APP}.shape.Shape.HasTop", "receiver"),
    }
