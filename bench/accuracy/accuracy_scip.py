"""The TypeScript and JavaScript oracle of ``bench.accuracy.bench_accuracy``: scip-typescript
(npm ``@sourcegraph/scip-typescript``, the TypeScript compiler's own symbol resolution written
as a SCIP index), installed under ``accuracy_oracles.ORACLES`` like jedi and callgraph.

Running it (``scip_dump``): the materialised tree is copied to ``ORACLES/scip-work`` (never
the tree semgraph indexes), its own dependencies installed there with ``npm ci
--ignore-scripts`` when it has a ``package-lock.json`` (else ``npm install --ignore-scripts``,
unpinned: the cache file then stands for that run, and the lock npm wrote is kept beside it as
``...package-lock.json``), and its root ``tsconfig.json`` replaced
by ``ORACLE_TSCONFIG`` (``allowJs``, every file under the root but ``node_modules``: the same
files semgraph indexes, where a repository's own configuration leaves out its tests or
examples, or extends a package). ``scip_dump.cjs`` turns the index into JSON lines, cached
per commit (``cache/NAME-COMMIT-scip-typescript-VERSION.jsonl``).

Reading it (``read_scip``): every call semgraph's query captures (``call_expression`` with an
identifier or a member's property as callee, ``new_expression`` with an identifier) is found
again with tree-sitter, keyed as semgraph keys it (the call node's first line, the callee as
written), and the SCIP occurrence at the callee identifier's position names its symbol. The
symbol's definition occurrences are its targets:

* ``external``: a symbol with no definition in the index (npm packages, ``lib.d.ts``, node's
  types), but a ``local N`` one (a CommonJS ``exports.f`` property, which SCIP names only
  locally), which names nothing;
* ``internal``: a definition that is the innermost semgraph definition with its name spanning
  its line (``accuracy_oracles.Definitions``), outside a ``.d.ts`` file. At ``new C()`` the
  compiler names C's constructor (``C#`<constructor>`().``, with no definition when C has
  none of its own); its class ``C#`` is a target beside it, since semgraph (like jedi at a
  Python class call) links a construction to the class;
* ``nondef``, reported as *declaration only*: the symbol is defined in the repository only by
  something that is no semgraph definition, or only in a ``.d.ts`` file (which declares and
  never implements; a class there is a semgraph definition, but what runs is elsewhere). Each
  is kept as ``path:line name (kind)``, the kind being ``d.ts`` or the tree-sitter type of the
  definition's parent node (``method_signature``, ``property_signature``,
  ``required_parameter``, ``variable_declarator``, ``shorthand_property_identifier_pattern``,
  ``member_expression`` for ``this.x = ...``, ...). Like jedi's non-definitions these sites are
  counted in neither recall nor the precision over in-repository sites; an edge semgraph draws
  there counts as a ``false_nondef`` in the all-sites precision only. ``decl_kind`` groups
  them for the report. Where the declaration has implementations in the repository
  (``ScipIndex.implementing``: the class members SCIP relates to an interface member with
  ``is_implementation``; for a ``.d.ts`` declaration, the symbols of the same package with the
  same descriptors after the file, defined outside ``.d.ts`` files, which is how a package's
  hand-written typings name its JavaScript), they are kept as ``implemented_by``, outside the
  verdict: ``bench_accuracy.declarations`` reports semgraph's edges there as a recall apart;
* ``none``: no occurrence at the callee (the compiler has no symbol: an ``any`` receiver).

SCIP positions are 0-based lines and UTF-16 code units; tree-sitter's columns are bytes, so
each is converted through the line's text.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.accuracy.accuracy_oracles import ORACLES, Definitions, _marked
from bench.accuracy.accuracy_score import Key, OracleSite

SCIP_TS_VERSION = "0.4.0"
# typescript pinned beside it (scip-typescript asks for ^5.6.2): its lib.d.ts and checker
SCIP_TS_PACKAGES = {"@sourcegraph/scip-typescript": SCIP_TS_VERSION, "typescript": "5.6.3"}
SCIP_DUMP = Path(__file__).with_name("scip_dump.cjs")
ORACLE_TSCONFIG = {
    "compilerOptions": {
        "allowJs": True,
        "checkJs": False,
        "noEmit": True,
        "target": "esnext",
        "module": "nodenext",
        "moduleResolution": "nodenext",
        "esModuleInterop": True,
        "skipLibCheck": True,
    },
    "include": ["**/*"],
    "exclude": ["node_modules"],
}
CONSTRUCTOR = "`<constructor>`()."  # the descriptor of a class's constructor
GRAMMAR = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx"}
DECLARATION_KINDS = {
    "d.ts",
    "method_signature",
    "property_signature",
    "function_signature",
    "abstract_method_signature",
    "call_signature",
    "construct_signature",
    "index_signature",
    "ambient_declaration",
    "type_alias_declaration",
    "interface_declaration",
}
PARAMETER_KINDS = {"required_parameter", "optional_parameter", "formal_parameters"}
BINDING_KINDS = {
    "shorthand_property_identifier_pattern",
    "pair_pattern",
    "object_pattern",
    "array_pattern",
    "rest_pattern",
    "assignment_pattern",
    "object_assignment_pattern",
}
PROPERTY_KINDS = {
    "member_expression",
    "pair",
    "shorthand_property_identifier",
    "public_field_definition",
    "field_definition",
    "property_identifier",
}


def _npm(*args: str, cwd: Path) -> None:
    cmd = ["npm", *args, "--no-audit", "--no-fund", "--loglevel=error"]
    subprocess.run(cmd, cwd=cwd, check=True)


def ensure_scip_typescript() -> Path:
    """The directory scip-typescript is installed in (``npm install`` unless already done)."""
    where = ORACLES / "scip-typescript"
    marker = where / ".semgraph-bench-installed"
    if not _marked(marker, SCIP_TS_PACKAGES):
        where.mkdir(parents=True, exist_ok=True)
        manifest = {"private": True, "dependencies": SCIP_TS_PACKAGES}
        (where / "package.json").write_text(json.dumps(manifest, indent=1) + "\n")
        _npm("install", "--ignore-scripts", cwd=where)
        marker.write_text(json.dumps(SCIP_TS_PACKAGES))
    return where


def scip_dump(root: Path, name: str, commit: str) -> Path:
    """Run (or reuse the cached run of) scip-typescript on a copy of ``root``: the path of its
    JSON lines (``scip_dump.cjs``)."""
    out = ORACLES / "cache" / f"{name}-{commit[:12]}-scip-typescript-{SCIP_TS_VERSION}.jsonl"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    where = ensure_scip_typescript()
    work = ORACLES / "scip-work" / f"{name}-{commit[:12]}"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(root, work, ignore=shutil.ignore_patterns("node_modules", ".git"))
    locked = (work / "package-lock.json").exists()
    try:
        if locked:
            _npm("ci", "--ignore-scripts", cwd=work)
        elif (work / "package.json").exists():
            # what this run installed, kept beside its answers (over an .npmrc saying no lock)
            _npm("install", "--ignore-scripts", "--package-lock=true", cwd=work)
            if (work / "package-lock.json").exists():
                shutil.copy(work / "package-lock.json", out.with_suffix(".package-lock.json"))
    except subprocess.CalledProcessError as exc:  # the oracle still runs, on fewer types
        print(f"# {name}: installing its dependencies failed ({exc}); going on without", flush=True)
    (work / "tsconfig.json").write_text(json.dumps(ORACLE_TSCONFIG, indent=1) + "\n")
    main = where / "node_modules" / "@sourcegraph" / "scip-typescript" / "dist" / "src" / "main.js"
    index = work / "index.scip"
    cmd = ["node", str(main), "index", "--no-progress-bar", "--output", str(index)]
    subprocess.run(cmd, cwd=work, check=True, stdout=subprocess.DEVNULL)
    tmp = out.with_suffix(".part")
    subprocess.run(["node", str(SCIP_DUMP), str(where), str(index), str(tmp)], check=True)
    tmp.replace(out)
    shutil.rmtree(work)  # its node_modules: hundreds of MB (kept when a step fails)
    return out


@dataclass
class ScipIndex:
    """A SCIP dump read back: references by position, definitions by symbol."""

    refs: dict[tuple[str, int, int], list[str]] = field(default_factory=lambda: defaultdict(list))
    definitions: dict[str, list[tuple[str, int, int, int]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    paths: list[str] = field(default_factory=list)
    implementations: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    _by_descriptor: dict[str, list[str]] | None = None

    def implementing(self, symbol: str) -> list[str]:
        """The symbols that implement a declaration: the classes' members SCIP relates to it
        (``is_implementation``), and for one declared in a ``.d.ts`` file the symbols of its
        package with the same descriptors after the file defined outside ``.d.ts`` files
        (``typings/`index.d.ts`/Command#parse().`` -> ``lib/`command.js`/Command#parse().``)."""
        out = sorted(self.implementations.get(symbol, ()))
        split = _split_file(symbol)
        if split is None or not split[1].endswith(".d.ts`/"):
            return out
        if self._by_descriptor is None:
            self._by_descriptor = defaultdict(list)
            for other, where in self.definitions.items():
                parts = _split_file(other)
                if parts is not None and not all(d[0].endswith(".d.ts") for d in where):
                    self._by_descriptor[f"{parts[0]} {parts[2]}"].append(other)
        return out + self._by_descriptor.get(f"{split[0]} {split[2]}", [])


_FILE = re.compile(r"^(\S+ \S+ \S+ \S+) ((?:[^`/ ]+/|`[^`]*`/)*?`[^`]*\.[cm]?[jt]sx?`/)(.+)$")


def _split_file(symbol: str) -> tuple[str, str, str] | None:
    """A global symbol as (scheme manager package version, its file's descriptors, the rest)."""
    m = _FILE.match(symbol)
    return (m[1], m[2], m[3]) if m else None


def _symbol_key(path: str, symbol: str) -> str:
    """Global symbols as they are; ``local N`` is per document."""
    return f"{path}\0{symbol}" if symbol.startswith("local ") else symbol


def load_scip(path: Path) -> ScipIndex:
    """Read ``scip_dump.cjs``'s lines; a malformed line or occurrence is skipped."""
    idx = ScipIndex()
    with path.open() as fh:
        for text in fh:
            try:
                row = json.loads(text)
            except ValueError:
                continue
            if not isinstance(row, dict):
                continue
            if isinstance(row.get("path"), str):
                doc = row["path"]
                idx.paths.append(doc)
                for occ in row.get("occ") or ():
                    if not (isinstance(occ, list) and len(occ) == 6):
                        continue
                    sl, sc, _el, ec, symbol, roles = occ
                    if not (isinstance(symbol, str) and symbol and isinstance(roles, int)):
                        continue
                    if roles & 1:  # SymbolRole.Definition
                        idx.definitions[_symbol_key(doc, symbol)].append((doc, sl, sc, ec))
                    else:
                        idx.refs[(doc, sl, sc)].append(symbol)
            elif isinstance(row.get("symbol"), str):
                for rel in row.get("rel") or ():
                    if isinstance(rel, list) and len(rel) == 5 and rel[1]:  # is_implementation
                        idx.implementations[rel[0]].add(row["symbol"])
    return idx


class Sources:
    """The repository's files, parsed once, for positions and the kind of a definition."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._data: dict[str, bytes | None] = {}
        self._trees: dict[str, Any] = {}

    def data(self, rel: str) -> bytes | None:
        if rel not in self._data:
            try:
                self._data[rel] = (self.root / rel).read_bytes()
            except OSError:
                self._data[rel] = None
        return self._data[rel]

    def tree(self, rel: str) -> Any:
        if rel not in self._trees:
            from tree_sitter import Parser

            from semgraph.indexer import languages

            data = self.data(rel)
            grammar = GRAMMAR.get(Path(rel).suffix, "javascript")
            self._trees[rel] = (
                None if data is None else Parser(languages.grammar(grammar)).parse(data)
            )
        return self._trees[rel]

    def line(self, rel: str, row: int) -> bytes:
        data = self.data(rel) or b""
        lines = data.split(b"\n")
        return lines[row] if 0 <= row < len(lines) else b""

    def text(self, rel: str, row: int, start16: int, end16: int) -> str:
        """The text of a one-line SCIP range."""
        units = self.line(rel, row).decode("utf-8", "replace").encode("utf-16-le")
        return units[2 * start16 : 2 * end16].decode("utf-16-le", "replace")

    def kind(self, rel: str, row: int, start16: int) -> str:
        """The tree-sitter type of the parent of the node a definition names."""
        tree = self.tree(rel)
        if tree is None:
            return "unreadable"
        line = self.line(rel, row).decode("utf-8", "replace")
        col = len(line.encode("utf-16-le")[: 2 * start16].decode("utf-16-le", "replace").encode())
        node = tree.root_node.descendant_for_point_range((row, col), (row, col))
        parent = node.parent if node is not None else None
        return parent.type if parent is not None else "?"


def utf16_column(line: bytes, byte_col: int) -> int:
    """A tree-sitter byte column as SCIP's UTF-16 character."""
    return len(line[:byte_col].decode("utf-8", "replace").encode("utf-16-le")) // 2


def calls(sources: Sources, rel: str) -> list[tuple[Key, tuple[int, int]]]:
    """The calls semgraph's query captures in ``rel`` (``indexer/queries/typescript.scm`` and
    ``javascript.scm``, the ``@call`` patterns, kept in step by hand): their site key, and the
    callee identifier's position as SCIP has it (0-based line, UTF-16 character)."""
    tree = sources.tree(rel)
    if tree is None:
        return []
    out: list[tuple[Key, tuple[int, int]]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        callee = None
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "await_expression" and fn.named_child_count == 1:
                fn = fn.named_children[0]  # `await f<T>()`: tree-sitter-typescript's reading
            ok: tuple[str, ...] = ("identifier",)
            if fn is not None and fn.type == "member_expression":
                fn = fn.child_by_field_name("property")
                ok = ("property_identifier", "private_property_identifier")
            callee = fn if fn is not None and fn.type in ok else None
        elif node.type == "new_expression":
            fn = node.child_by_field_name("constructor")
            callee = fn if fn is not None and fn.type == "identifier" else None
        if callee is None or not callee.text:
            continue
        row, byte_col = callee.start_point
        key = (rel, node.start_point[0] + 1, callee.text.decode("utf-8", "replace"))
        out.append((key, (row, utf16_column(sources.line(rel, row), byte_col))))
    return out


def decl_kind(entry: str) -> str:
    """The group of one declaration-only target (``path:line name (kind)``)."""
    kind = entry.rsplit("(", 1)[-1].rstrip(")") if entry.endswith(")") else "?"
    if kind in DECLARATION_KINDS:
        return "declaration (.d.ts, signature)"
    if kind in PARAMETER_KINDS:
        return "parameter"
    if kind in BINDING_KINDS:
        return "destructured binding"
    if kind == "variable_declarator":
        return "variable"
    if kind in PROPERTY_KINDS:
        return "property"
    return f"other ({kind})"


def _site(
    idx: ScipIndex, sources: Sources, defs: Definitions, rel: str, symbols: list[str]
) -> OracleSite:
    site = OracleSite()
    for symbol in dict.fromkeys(symbols):
        group = [symbol]
        if symbol.endswith(CONSTRUCTOR):  # `new C()`: the class, as semgraph and jedi have it
            group.append(symbol[: -len(CONSTRUCTOR)])
        targets = [d for s in group for d in idx.definitions.get(_symbol_key(rel, s), [])]
        if not targets:
            # a `local N` symbol defined in no document: a property the compiler typed without
            # a global symbol (CommonJS `exports.f = f` read through `require`): it names
            # nothing, so the site is `none`, not an external call
            if not symbol.startswith("local "):
                site.external += 1
            continue
        for dpath, row, start, end in targets:
            name = sources.text(dpath, row, start, end)
            key = None if dpath.endswith(".d.ts") else defs.at(dpath, row + 1, name)
            if key is not None:
                site.internal.add(key)
                continue
            kind = "d.ts" if dpath.endswith(".d.ts") else sources.kind(dpath, row, start)
            site.nondef.append(f"{dpath}:{row + 1} {name} ({kind})")
        for impl in (i for s in group for i in idx.implementing(s)):
            for ipath, row, start, end in idx.definitions.get(impl, []):
                key = defs.at(ipath, row + 1, sources.text(ipath, row, start, end))
                if key is not None and not ipath.endswith(".d.ts"):
                    site.implemented_by.add(key)
    return site


def read_scip(
    root: Path, dump: Path, defs: Definitions, language: str
) -> tuple[dict[Key, OracleSite], set[str]]:
    """The oracle's sites (every call semgraph's query would capture in the indexed files of
    ``language``) and the files it covers."""
    from semgraph.indexer import languages

    idx, sources = load_scip(dump), Sources(root)
    rels = {p for p in idx.paths if languages.EXTENSIONS.get(Path(p).suffix) == language}
    sites: dict[Key, OracleSite] = {}
    for rel in sorted(rels):
        for key, (row, col) in calls(sources, rel):
            one = _site(idx, sources, defs, rel, idx.refs.get((rel, row, col), []))
            site = sites.setdefault(key, OracleSite())  # one name twice on a line: merged
            site.internal |= one.internal
            site.implemented_by |= one.implemented_by
            site.nondef.extend(one.nondef)
            site.external += one.external
    return sites, rels
