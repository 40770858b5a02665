"""The scip-typescript oracle's reading (bench.accuracy.accuracy_scip): hand-made SCIP dumps
(the JSON lines ``scip_dump.cjs`` writes) over small sources, no oracle run."""

from __future__ import annotations

import json
from pathlib import Path

from bench.accuracy.accuracy_oracles import Definitions
from bench.accuracy.accuracy_scip import (
    Sources,
    calls,
    decl_kind,
    load_scip,
    read_scip,
    utf16_column,
)
from bench.accuracy.accuracy_score import OracleSite, OurSite
from bench.accuracy.bench_accuracy import declarations

PKG = "scip-typescript npm demo 1.0.0 "
LIB = f"{PKG}src/`lib.js`/"

LIB_JS = """\
export class Box {
  constructor(v) { this.v = v; }
  get() { return this.v; }
}
export function make(v) {
  return new Box(v);
}
"""
# line 1: a call through a parameter (declaration only), line 2 a function, 3 a method,
# 4 an external, 5 a chained call spanning lines, 7 nothing the compiler knows
MAIN_JS = """\
function run(cb) { cb(); }
const b = make(1);
b.get(); new Box(2);
console.log("x");
make(3)
  .get();
unknown.thing();
"""
TYPES = """\
export declare function make(v: number): Box;
"""


def _dump(tmp_path: Path, docs: dict[str, list[object]], extra: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps({"path": p, "occ": occ}) for p, occ in docs.items()]
    out = tmp_path / "dump.jsonl"
    out.write_text("".join(f"{x}\n" for x in [*lines, *extra]))
    return out


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "lib.js").write_text(LIB_JS)
    (root / "src" / "main.js").write_text(MAIN_JS)
    (root / "src" / "types.d.ts").write_text(TYPES)
    return root


def test_load_scip_skips_malformed_lines_and_keys_locals_by_document(tmp_path: Path) -> None:
    dump = _dump(
        tmp_path,
        {
            "a.js": [
                [0, 9, 0, 10, "local 1", 1],
                [1, 0, 1, 1, "local 1", 0],
                [2, 0, 2, 1, f"{LIB}make().", 0],
                [3, 0, 3, 1],  # too short
                [4, 0, 4, 1, "", 0],  # no symbol
                "garbage",
            ],
            "b.js": [[0, 0, 0, 1, "local 1", 1]],
        },
        (
            "not json",
            "[1, 2]",
            json.dumps({"symbol": "S", "rel": [["I", True, False, False, False]]}),
        ),
    )
    idx = load_scip(dump)
    assert idx.paths == ["a.js", "b.js"]
    assert idx.definitions["a.js\0local 1"] == [("a.js", 0, 9, 10)]
    assert idx.definitions["b.js\0local 1"] == [("b.js", 0, 0, 1)]
    assert idx.refs[("a.js", 1, 0)] == ["local 1"]
    assert idx.refs[("a.js", 2, 0)] == [f"{LIB}make()."]
    assert len(idx.refs) == 2
    assert idx.implementations == {"I": {"S"}}
    assert idx.implementing("I") == ["S"]


def test_load_scip_of_an_empty_dump(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    idx = load_scip(empty)
    assert not idx.paths and not idx.refs and not idx.definitions


def test_calls_key_like_semgraph_and_point_at_the_callee(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    got = sorted(calls(Sources(root), "src/main.js"))
    assert got == [
        (("src/main.js", 1, "cb"), (0, 19)),
        (("src/main.js", 2, "make"), (1, 10)),
        (("src/main.js", 3, "Box"), (2, 13)),
        (("src/main.js", 3, "get"), (2, 2)),
        (("src/main.js", 4, "log"), (3, 8)),
        (("src/main.js", 5, "get"), (5, 3)),  # the call's first line, the callee's own
        (("src/main.js", 5, "make"), (4, 0)),
        (("src/main.js", 7, "thing"), (6, 8)),
    ]
    assert calls(Sources(root), "src/missing.js") == []


def test_calls_read_await_with_type_arguments_as_a_call_of_the_awaited(tmp_path: Path) -> None:
    (tmp_path / "a.ts").write_text("async function m() {\n  await f<T>(1);\n  await o.g<T>();\n}\n")
    got = sorted(calls(Sources(tmp_path), "a.ts"))
    assert got == [(("a.ts", 2, "f"), (1, 8)), (("a.ts", 3, "g"), (2, 10))]


def test_positions_count_utf16_units() -> None:
    line = "é😀 f()".encode()
    assert utf16_column(line, line.index(b"f")) == 4  # é one unit, the emoji two, a space
    root = Path("/nonexistent")
    assert Sources(root).text("x.js", 0, 0, 3) == ""


def _defs() -> Definitions:
    rows = [
        ("BOX", "src/lib.js", "Box", 1, 4),
        ("BOX.CTOR", "src/lib.js", "constructor", 2, 2),
        ("BOX.GET", "src/lib.js", "get", 3, 3),
        ("MAKE", "src/lib.js", "make", 5, 7),
        ("RUN", "src/main.js", "run", 1, 1),
        ("DTS.MAKE", "src/types.d.ts", "make", 1, 1),
    ]
    return Definitions(rows)


def test_read_scip_maps_targets_constructors_externals_and_declarations(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    box, get, make = f"{LIB}Box#", f"{LIB}Box#get().", f"{LIB}make()."
    ctor = f"{LIB}Box#`<constructor>`()."
    dump = _dump(
        tmp_path,
        {
            "src/lib.js": [
                [0, 13, 0, 16, box, 1],
                [1, 2, 1, 13, ctor, 1],
                [2, 2, 2, 5, get, 1],
                [4, 16, 4, 20, make, 1],
                [5, 13, 5, 16, ctor, 0],
            ],
            "src/main.js": [
                [0, 13, 0, 15, "local 0", 1],  # the parameter cb
                [0, 19, 0, 21, "local 0", 0],
                [1, 10, 1, 14, make, 0],
                [2, 2, 2, 5, get, 0],
                [2, 13, 2, 16, ctor, 0],
                [3, 8, 3, 11, "scip-typescript npm typescript 5.6.3 lib/`lib.dom.d.ts`/log().", 0],
                [4, 0, 4, 4, f"{PKG}src/`types.d.ts`/make().", 0],
                [5, 3, 5, 6, get, 0],
            ],
            "src/types.d.ts": [[0, 24, 0, 28, f"{PKG}src/`types.d.ts`/make().", 1]],
        },
    )
    sites, files = read_scip(root, dump, _defs(), "javascript")
    assert files == {"src/lib.js", "src/main.js"}
    main = {k[1:]: v for k, v in sites.items() if k[0] == "src/main.js"}
    assert main[(2, "make")].internal == {"MAKE"}
    assert main[(3, "get")].internal == {"BOX.GET"}
    assert main[(3, "Box")].internal == {"BOX", "BOX.CTOR"}  # the class beside its constructor
    assert main[(4, "log")].verdict == "external"
    assert main[(1, "cb")].nondef == ["src/main.js:1 cb (formal_parameters)"]
    assert main[(5, "make")].nondef == ["src/types.d.ts:1 make (d.ts)"]  # never the d.ts "def"
    assert main[(5, "make")].implemented_by == {"MAKE"}  # same descriptors, outside the d.ts
    assert main[(2, "make")].implemented_by == set()
    assert main[(5, "get")].internal == {"BOX.GET"}
    assert main[(7, "thing")].verdict == "none"
    assert sites[("src/lib.js", 6, "Box")].internal == {"BOX", "BOX.CTOR"}
    # a class without a constructor of its own: the constructor symbol has no definition
    dump2 = _dump(tmp_path, {"src/main.js": [[2, 13, 2, 16, ctor, 0]], "src/lib.js": []})
    sites2, _ = read_scip(root, dump2, _defs(), "javascript")
    assert sites2[("src/main.js", 3, "Box")].verdict == "external"
    dump3 = _dump(
        tmp_path, {"src/main.js": [[2, 13, 2, 16, ctor, 0]], "src/lib.js": [[0, 13, 0, 16, box, 1]]}
    )
    sites3, _ = read_scip(root, dump3, _defs(), "javascript")
    assert sites3[("src/main.js", 3, "Box")].internal == {"BOX"}
    # a `local N` symbol no document defines (SCIP's name for a CommonJS `exports.f` read
    # through `require`): the oracle names nothing, the site is `none`, never external
    dump4 = _dump(tmp_path, {"src/main.js": [[6, 8, 6, 13, "local 9", 0]], "src/lib.js": []})
    sites4, _ = read_scip(root, dump4, _defs(), "javascript")
    assert sites4[("src/main.js", 7, "thing")].verdict == "none"


def test_read_scip_of_an_empty_dump_has_no_sites(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert read_scip(root, empty, _defs(), "javascript") == ({}, set())
    # a document the tree lacks: no calls, no error
    dump = _dump(tmp_path, {"src/gone.js": [[0, 0, 0, 1, "local 1", 0]]})
    assert read_scip(root, dump, _defs(), "javascript") == ({}, {"src/gone.js"})


def test_declaration_kinds_group_and_count_our_edges() -> None:
    assert decl_kind("a.ts:1 f (method_signature)") == "declaration (.d.ts, signature)"
    assert decl_kind("a.d.ts:1 f (d.ts)") == "declaration (.d.ts, signature)"
    assert decl_kind("a.js:1 f (formal_parameters)") == "parameter"
    assert decl_kind("a.ts:1 f (shorthand_property_identifier_pattern)") == "destructured binding"
    assert decl_kind("a.ts:1 f (variable_declarator)") == "variable"
    assert decl_kind("a.js:1 f (member_expression)") == "property"
    assert decl_kind("a.js:1 f (for_in_statement)") == "other (for_in_statement)"
    assert decl_kind("malformed") == "other (?)"
    truth = {
        ("a.ts", 1, "f"): OracleSite(nondef=["a.ts:9 f (required_parameter)"]),
        ("a.ts", 2, "g"): OracleSite(nondef=["a.d.ts:3 g (d.ts)"], implemented_by={"G"}),
        ("a.ts", 3, "h"): OracleSite(internal={"H"}),
    }
    ours = {
        ("a.ts", 1, "f"): OurSite("resolved", "unique", {"F"}),
        ("a.ts", 2, "g"): OurSite("ambiguous", None, {"G", "G2"}),
    }
    assert declarations(truth, ours) == {
        "sites": {"parameter": 1, "declaration (.d.ts, signature)": 1},
        "our_resolved_edges": {"parameter / unique": 1},
        "with_implementations": {"sites": 1, "ambiguous to an implementation": 1},
    }


def test_misses_group_by_the_receivers_binding(tmp_path: Path) -> None:
    from bench.accuracy.accuracy_scip_misses import groups

    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.ts").write_text(
        "import Box from './box.js';\n"  # 0
        "const b = new Box();\n"  # 1
        "b.get();\n"  # 2
        "function f(x: Box) { x.get(); }\n"  # 3
        "this.get();\n"  # 4
    )
    get = f"{PKG}`box.ts`/Box#get()."
    dump = _dump(
        tmp_path,
        {
            "m.ts": [
                [1, 6, 1, 7, "local 1", 1],
                [2, 0, 2, 1, "local 1", 0],
                [2, 2, 2, 5, get, 0],
                [3, 11, 3, 12, "local 2", 1],
                [3, 21, 3, 22, "local 2", 0],
                [3, 23, 3, 26, get, 0],
                [4, 5, 4, 8, get, 0],
            ],
            "box.ts": [[1, 2, 1, 5, get, 1]],
        },
    )
    (root / "box.ts").write_text("export default class Box {\n  get() { return 1; }\n}\n")
    defs = Definitions([("GET", "box.ts", "get", 2, 2), ("BOX", "box.ts", "Box", 1, 3)])
    truth, files = read_scip(root, dump, defs, "typescript")
    ours = {("m.ts", 4, "get"): OurSite("resolved", "receiver", {"GET"})}
    ours[("m.ts", 5, "get")] = OurSite("resolved", "unique", {"OTHER"})
    misses, edges = groups(truth, ours, root, dump, files)
    assert {k: len(v) for k, v in misses.items()} == {
        "no call site | const = new_expression": 1,
        "resolved elsewhere | this": 1,
    }
    assert misses["no call site | const = new_expression"] == ["m.ts:3 get | b.get();"]
    assert list(edges) == ["unique | wrong"]
