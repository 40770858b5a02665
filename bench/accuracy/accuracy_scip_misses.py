"""Every disagreement of ``bench.accuracy.bench_accuracy`` on its scip-typescript repositories,
grouped for the hand check (``bench/accuracy/accuracy_verdicts.md``):

    python -m bench.accuracy.accuracy_scip_misses [--repos got,commander] [--examples 10]

A missed site (the oracle resolves it inside the repository, semgraph has no right edge) is
grouped by semgraph's state and by how the compiler binds the call's receiver: its leading
identifier's definition, read from the SCIP index (a parameter with or without a type or a
JSDoc ``@param``, a ``const`` from a ``new`` or a call, a destructuring, ...), or the
receiver's own shape when it is no identifier (``this``, a call's result, a ``new``).
An edge the oracle does not confirm is grouped by tier and the oracle's verdict. Examples are
drawn at random (seeded) with their source line. Reuses the bench's cached oracle runs and
materialised trees; indexes inline (``pool_size`` 1).
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.accuracy import accuracy_oracles as oracles
from bench.accuracy import accuracy_scip as scip
from bench.accuracy.accuracy_score import INTERNAL, NONDEF, RESOLVED, Key, OracleSite, OurSite


def receivers(sources: scip.Sources, files: set[str]) -> dict[Key, Any]:
    """The receiver node of every ``a.m()`` call, by its site key."""
    out: dict[Key, Any] = {}
    for rel in sorted(files):
        tree = sources.tree(rel)
        stack = [tree.root_node] if tree is not None else []
        while stack:
            node = stack.pop()
            stack.extend(node.children)
            fn = node.child_by_field_name("function") if node.type == "call_expression" else None
            if fn is None or fn.type != "member_expression":
                continue
            prop, obj = fn.child_by_field_name("property"), fn.child_by_field_name("object")
            if prop is not None and obj is not None and prop.text:
                out[(rel, node.start_point[0] + 1, prop.text.decode())] = obj
    return out


def _node_at(sources: scip.Sources, rel: str, row: int, start16: int) -> Any:
    tree = sources.tree(rel)
    line = sources.line(rel, row).decode("utf-8", "replace")
    col = len(line.encode("utf-16-le")[: 2 * start16].decode("utf-16-le", "replace").encode())
    node = tree.root_node.descendant_for_point_range((row, col), (row, col))
    return node.parent if node is not None else None


def binding(idx: scip.ScipIndex, sources: scip.Sources, rel: str, obj: Any) -> str:
    """How the compiler binds a receiver (see the module's doc)."""
    if obj.type == "this":
        return "this"
    if obj.type == "member_expression":
        inner = obj.child_by_field_name("object")
        return "this.member" if inner is not None and inner.type == "this" else "a.member"
    if obj.type != "identifier":
        return str(obj.type)  # call_expression, new_expression, subscript_expression, ...
    row, byte_col = obj.start_point
    col = scip.utf16_column(sources.line(rel, row), byte_col)
    symbols = idx.refs.get((rel, row, col), [])
    for symbol in symbols:
        for dpath, drow, dcol, _end in idx.definitions.get(scip._symbol_key(rel, symbol), []):
            node = _node_at(sources, dpath, drow, dcol)
            kind = node.type if node is not None else "?"
            if kind == "variable_declarator":
                value, typ = node.child_by_field_name("value"), node.child_by_field_name("type")
                if typ is not None:
                    return "const: annotated"
                if value is not None and value.type == "await_expression" and value.named_children:
                    value = value.named_children[0]
                return f"const = {value.type if value is not None else 'nothing'}"
            if kind in ("required_parameter", "optional_parameter"):
                typed = node.child_by_field_name("type") is not None
                return f"parameter: {'annotated' if typed else 'untyped'}"
            if kind in ("formal_parameters", "arrow_function"):
                above = b"\n".join(sources.line(dpath, k) for k in range(max(0, drow - 12), drow))
                return f"parameter: {'JSDoc @param' if b'@param' in above else 'untyped'}"
            return f"bound by {kind}"
    return "external binding" if symbols else "no symbol"


def _line(sources: scip.Sources, key: Key) -> str:
    return sources.line(key[0], key[1] - 1).decode("utf-8", "replace").strip()[:120]


def groups(
    truth: dict[Key, OracleSite], ours: dict[Key, OurSite], root: Path, dump: Path, files: set[str]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The missed sites by state and receiver binding; the unconfirmed edges by tier and the
    oracle's verdict. Each entry is ``path:line name | source``."""
    idx, sources = scip.load_scip(dump), scip.Sources(root)
    recv = receivers(sources, files)
    misses: dict[str, list[str]] = defaultdict(list)
    edges: dict[str, list[str]] = defaultdict(list)
    for key, site in sorted(truth.items()):
        mine = ours.get(key)
        right = mine is not None and bool(mine.targets & site.internal)
        if site.verdict == INTERNAL and not (right and mine is not None and mine.cls == RESOLVED):
            state = "no call site" if mine is None else mine.cls
            if mine is not None and mine.cls == RESOLVED:
                state = "resolved elsewhere"
            obj = recv.get(key)
            how = "bare f()" if obj is None else binding(idx, sources, key[0], obj)
            misses[f"{state} | {how}"].append(f"{key[0]}:{key[1]} {key[2]} | {_line(sources, key)}")
        if mine is None or mine.cls != RESOLVED or (site.verdict == INTERNAL and right):
            continue
        verdict = "wrong" if site.verdict == INTERNAL else site.verdict
        if site.verdict == NONDEF:
            verdict = f"declaration only: {scip.decl_kind(site.nondef[0])}"
        target = sorted(mine.targets)[0].rsplit("|", 1)[-1]
        edges[f"{mine.tier} | {verdict}"].append(
            f"{key[0]}:{key[1]} {key[2]} -> {target} | {_line(sources, key)}"
        )
    return misses, edges


def _print(title: str, grouped: dict[str, list[str]], examples: int) -> None:
    print(f"## {title}")
    for kind, rows in sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"{len(rows):6d}  {kind}")
        for row in random.Random(1).sample(rows, min(examples, len(rows))):
            print(f"          {row}")


def main() -> None:
    from bench.accuracy.bench_accuracy import REPOS, SCIP_LANGUAGES, index, materialise, our_sites

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repos", default="", help="comma-separated names (default: all)")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--work", type=Path, default=oracles.ORACLES / "repos")
    parser.add_argument("--examples", type=int, default=10)
    args = parser.parse_args()
    os.environ.setdefault("SEMGRAPH_POOL_SIZE", "1")
    wanted = {s for s in args.repos.split(",") if s}
    for repo in REPOS:
        if repo.language not in SCIP_LANGUAGES or (wanted and repo.name not in wanted):
            continue
        print(f"# {repo.name} ({repo.github} at {repo.commit[:12]})", flush=True)
        root = materialise(repo, args.mirrors, args.work)
        dump = scip.scip_dump(root, repo.name, repo.commit)
        with tempfile.TemporaryDirectory(prefix="semgraph-bench-accuracy-") as tmp:
            db = sqlite3.connect(index(root, Path(tmp), repo.name))
            defs = oracles.Definitions(
                db.execute(
                    "SELECT key, path, name, start_line, end_line FROM symbols "
                    "WHERE kind != 'module'"
                )
            )
            truth, files = scip.read_scip(root, dump, defs, repo.language)
            ours, _ = our_sites(db, repo.language, files)
            db.close()
        misses, edges = groups(truth, ours, root, dump, files)
        _print(
            f"{repo.name}: missed sites, by semgraph's state | the receiver", misses, args.examples
        )
        _print(
            f"{repo.name}: edges the oracle does not confirm, by tier | verdict",
            edges,
            args.examples,
        )


if __name__ == "__main__":
    main()
