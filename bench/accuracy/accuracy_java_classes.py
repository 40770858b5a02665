"""The Java disagreements by class (``bench/accuracy/accuracy_verdicts.md``, "Java against
javac"): every site javac resolves inside the repository that semgraph does not resolve to the
same definition, counted under the first rule that fits, with examples.

    python -m bench.accuracy.accuracy_java_classes [--repos gson,jsoup] [--examples 3]

The rules read what ``JavacCalls.java`` writes beside each answer (the argument count, the
receiver's static type, a variable receiver's declared type as written) and semgraph's
definitions (the parameters of a candidate's signature): an overload set the argument count
settles, a receiver whose type lives in the same package under another source root, and so on.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.accuracy import accuracy_java as java
from bench.accuracy import accuracy_oracles as oracles
from bench.accuracy.accuracy_score import AMBIGUOUS, RESOLVED, Key, OracleSite, OurSite
from bench.accuracy.bench_accuracy import REPOS, index, materialise, our_sites

_OVERLOAD = re.compile(r"\|\d+$")
VARARGS = -1
CLASSES = frozenset({"class", "interface", "enum"})
SAME_PACKAGE = " [its class in the site's package, another source root]"


@dataclass
class Defs:
    """What the rules need of semgraph's definitions: kind and parameter count by key."""

    kind: dict[str, str] = field(default_factory=dict)
    arity: dict[str, int | None] = field(default_factory=dict)


def arity(signature: str | None) -> int | None:
    """The parameter count of a Java signature (``VARARGS`` for ``T...``), None if unread."""
    m = re.search(r"\((.*)\)", signature or "", re.S)
    if m is None:
        return None
    inner = m.group(1).strip()
    if "..." in inner:
        return VARARGS
    if not inner:
        return 0
    depth, n = 0, 1
    for ch in inner:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            n += 1
    return n


def _fits(defs: Defs, key: str, args: object) -> bool:
    return defs.arity.get(key) in (args, VARARGS)


def _package(path: str) -> str:
    folder = path.rpartition("/")[0]
    return folder.split("/java/", 1)[-1] if "/java/" in folder else folder


def classify(
    key: Key, truth: OracleSite, mine: OurSite | None, row: dict[str, Any], defs: Defs
) -> str:
    """The class of one disagreement (a site javac resolves inside the repository)."""
    if mine is None:
        return "no semgraph call site"
    args = row.get("args")
    if mine.cls == AMBIGUOUS:
        return _ambiguous(truth, mine, args, defs)
    if mine.cls == RESOLVED:
        ours, theirs = next(iter(mine.targets)), next(iter(truth.internal))
        if defs.kind.get(ours) == "method" and defs.kind.get(theirs) in CLASSES:
            return "wrong: `new` resolved to a same-named member, javac names the class"
        if defs.arity.get(ours) != args and _fits(defs, theirs, args):
            return "wrong: the receiver class's method of another arity hides the superclass's"
        return "wrong: another class's method of that name"
    receiver, target = mine.receiver or "", next(iter(truth.internal))
    shape, typed = _no_edge(key, receiver, row, target)
    site_dir, target_dir = key[0].rpartition("/")[0], target.split("|")[1].rpartition("/")[0]
    same = _package(key[0]) == _package(target.split("|")[1])
    return shape + SAME_PACKAGE if typed and site_dir != target_dir and same else shape


def _ambiguous(truth: OracleSite, mine: OurSite, args: object, defs: Defs) -> str:
    right = bool(mine.targets & truth.internal)
    families = {_OVERLOAD.sub("", t) for t in mine.targets}
    if right and families <= {_OVERLOAD.sub("", t) for t in truth.internal}:
        exact = [t for t in mine.targets if defs.arity.get(t) == args]
        pick = exact or [t for t in mine.targets if _fits(defs, t, args)]
        if len(pick) == 1 and pick[0] in truth.internal:
            return "ambiguous between overloads of one method: the argument count settles it"
        return "ambiguous between overloads of one method: the argument count does not"
    if right:
        return "ambiguous between same-named methods of several classes, the right one among them"
    fits = any(_fits(defs, t, args) for t in truth.internal)
    if fits and all(defs.arity.get(t) != args for t in mine.targets):
        return "ambiguous, no right candidate: the receiver class's overloads hide the superclass's"
    return "ambiguous, no right candidate"


def _no_edge(key: Key, receiver: str, row: dict[str, Any], target: str) -> tuple[str, bool]:
    """The receiver's shape, and whether it is one whose type semgraph had to know."""
    static, var = row.get("recv"), row.get("recv_var")
    if receiver.startswith("new "):
        return "no edge: receiver `new T(...)`", True
    if not receiver:
        if target.split("|")[1] != key[0]:
            return "no edge: bare call of a method of another file (a static import)", False
        return "no edge: bare call of an inherited or outer class's method", False
    if receiver in ("this", "super") or receiver.endswith(".this"):
        return "no edge: this.m() / super.m() / Outer.this.m()", False
    if "(" in receiver:
        return "no edge: chained a.b().m()", True
    if isinstance(var, str):
        kind, _, written = var.partition(" ")
        kind = kind.lower()
        if not written:
            return "no edge: a variable untyped in source (lambda parameter, `var`)", False
        static_name = static if isinstance(static, str) else ""
        if "<" in written and static_name and written.split("<")[0] not in static_name:
            return f"no edge: {kind} of a generic type", False
        if re.fullmatch(r"[A-Z]\w*", written) and static_name.split(".")[-1] != written:
            return f"no edge: {kind} typed by a type variable", False
        qn = target.split("|")[2]
        owner = qn.rsplit(".", 1)[0].split(".")[-1] if "." in qn else ""
        if owner and written.split("<")[0].split(".")[-1] != owner:
            return f"no edge: {kind} of a declared type (the method inherited)", True
        return f"no edge: {kind} of a declared type", True
    if re.fullmatch(r"[A-Z][\w.]*", receiver):
        return "no edge: Name.m() / CONSTANT.m()", False
    return "no edge: other receiver (a.b.m() on a field path, a cast, an array)", False


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, cls: str, example: str, keep: int) -> None:
        self.counts[cls] += 1
        if len(self.examples[cls]) < keep:
            self.examples[cls].append(example)


def run(name: str, keep: int) -> Tally:
    """Index one pinned repository, read its cached javac answer, and sort the disagreements."""
    repo = next(r for r in REPOS if r.name == name)
    root = materialise(repo, Path("/work/.mirror"), oracles.ORACLES / "repos")
    jsonl = java.javac_sites(root, repo.name, repo.commit, repo.deps)
    rows: dict[Key, dict[str, Any]] = {}
    for text in jsonl.read_text().splitlines():
        row = json.loads(text)
        if "path" in row and row.get("kind") != java.CHAIN:
            rows.setdefault((row["path"], row["line"], row["callee"]), row)
    with tempfile.TemporaryDirectory(prefix="semgraph-java-classes-") as tmp:
        db = sqlite3.connect(index(root, Path(tmp), repo.name))
        symbols = "SELECT key, path, name, start_line, end_line FROM symbols WHERE kind != 'module'"
        found = oracles.Definitions(db.execute(symbols))
        defs = Defs()
        for key, kind, signature in db.execute("SELECT key, kind, signature FROM symbols"):
            defs.kind[key], defs.arity[key] = kind, arity(signature)
        read = java.read_javac(jsonl.read_text().splitlines(), found)
        ours, _ = our_sites(db, "java", read.files)
        db.close()
    tally = Tally()
    for key, truth in read.sites.items():
        mine = ours.get(key)
        if truth.verdict != "internal":
            continue
        if mine is not None and mine.cls == RESOLVED and mine.targets & truth.internal:
            continue
        cls = classify(key, truth, mine, rows.get(key, {}), defs)
        tally.add(cls, f"{key[0]}:{key[1]} `{_source(root, key)}`", keep)
    return tally


def _source(root: Path, key: Key) -> str:
    try:
        return (root / key[0]).read_text(errors="replace").splitlines()[key[1] - 1].strip()
    except (OSError, IndexError):
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repos", default="gson,jsoup")
    parser.add_argument("--examples", type=int, default=3)
    args = parser.parse_args()
    for name in filter(None, args.repos.split(",")):
        tally = run(name, args.examples)
        print(f"## {name}: {sum(tally.counts.values()):,} disagreements")
        for cls, n in tally.counts.most_common():
            print(f"{n:7,}  {cls}")
            for example in tally.examples[cls]:
                print(f"         {example[:160]}")


if __name__ == "__main__":
    main()
