"""The Java oracle of ``bench.accuracy.bench_accuracy``: javac's own attribution of every call
(``bench/accuracy/JavacCalls.java``, the JDK's compiler API, run by the JDK's source launcher),
cached per commit beside the other oracles (``bench.accuracy.accuracy_oracles.ORACLES``).

javac is given every ``.java`` file of the repository at once (no build, no dependencies on
the class path unless a repository names them): a call it resolves to a method or constructor
compiled from those files is ``internal`` (or ``nondef``: a method the compiler made, such as
an enum's ``values()`` or a record's accessor); one it resolves to a class file (the JDK) is
``external``; one it cannot attribute (a missing dependency, an error type) is the oracle's
``none`` ("unknown"), never external.

A ``new`` names the class: semgraph's edge of a constructor call goes to the class (the
resolver's ``BARE_KINDS``), so the oracle site holds the class's definition and, where the
source declares one, the constructor's: either is right. ``this(...)`` / ``super(...)``
(kind ``chain``) are no call site of semgraph's Java extraction (it captures method calls and
``new``): they are counted apart and left out of the score.

Overloads: semgraph keys a second definition of one qualified name in a file with ``|2``,
``|3``... (:mod:`semgraph.resolve.symtab`); the oracle names the exact overload, so an edge to
a sibling overload is ``wrong``. :func:`any_overload` widens the oracle's targets to every
overload of the same name for the second, lenient view.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.accuracy.accuracy_oracles import ORACLES, Definitions
from bench.accuracy.accuracy_score import Key, OracleSite, Score, ratio

JAVA = os.environ.get("SEMGRAPH_JAVA", "/usr/bin/java")
JAVAC_CALLS = Path(__file__).with_name("JavacCalls.java")
CHAIN = "chain"  # this(...) / super(...): no semgraph call site
IMPLICIT = "implicit"  # a member the compiler made: no semgraph definition
_OVERLOAD = re.compile(r"\|\d+$")


@dataclass
class JavacRead:
    """The oracle's sites, the files javac attributed, and what was left out or unmapped."""

    sites: dict[Key, OracleSite] = field(default_factory=dict)
    files: set[str] = field(default_factory=set)
    skipped: Counter[str] = field(default_factory=Counter)  # chain, malformed


def _version() -> str:
    """The oracle's identity: the JDK's version and the program's text."""
    out = subprocess.run([JAVA, "-version"], capture_output=True, text=True, check=True)
    first = (out.stderr or out.stdout).splitlines()[0]
    jdk = re.search(r'"([^"]+)"', first)
    digest = hashlib.sha256(JAVAC_CALLS.read_bytes()).hexdigest()[:8]
    return f"javac{jdk.group(1) if jdk else 'unknown'}-{digest}"


def maven_classpath(coords: Sequence[str]) -> str:
    """The class path of ``coords`` (``group:artifact:version``) and what they depend on,
    resolved by Maven from Maven Central (``mvn dependency:build-classpath`` over a pom that
    only lists them) and kept under the oracles' directory; "" for none."""
    if not coords:
        return ""
    where = ORACLES / "java-deps" / hashlib.sha256("\n".join(coords).encode()).hexdigest()[:12]
    cp = where / "classpath.txt"
    if not cp.exists():
        where.mkdir(parents=True, exist_ok=True)
        (where / "pom.xml").write_text(_pom(coords))
        part = where / "classpath.part"
        cmd = ["mvn", "-q", "-B", "dependency:build-classpath", f"-Dmdep.outputFile={part}"]
        subprocess.run(cmd, cwd=where, check=True, capture_output=True)
        part.replace(cp)
    return cp.read_text().strip()


def _pom(coords: Sequence[str]) -> str:
    deps = ""
    for c in coords:
        group, artifact, version = c.split(":")
        deps += (
            f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version></dependency>"
        )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>semgraph.bench</groupId><artifactId>oracle-deps</artifactId>"
        f"<version>0</version><dependencies>{deps}</dependencies></project>\n"
    )


def javac_sites(root: Path, name: str, commit: str, deps: Sequence[str] = ()) -> Path:
    """Run (or reuse the cached run of) the javac oracle on ``root`` with ``deps`` (Maven
    coordinates) on its class path: its JSON lines."""
    tag = f"-deps{hashlib.sha256(chr(10).join(deps).encode()).hexdigest()[:8]}" if deps else ""
    out = ORACLES / "cache" / f"{name}-{commit[:12]}-{_version()}{tag}.jsonl"
    if not out.exists():
        classpath = maven_classpath(deps)
        out.parent.mkdir(parents=True, exist_ok=True)
        part = out.with_suffix(".part")
        cmd = [JAVA, "-Xmx2g", str(JAVAC_CALLS), str(root), "", str(part), classpath]
        subprocess.run(cmd, check=True, capture_output=True)
        part.replace(out)
    return out


def read_javac(lines: Iterable[str], defs: Definitions) -> JavacRead:
    """The oracle's answer as scoring sites, keyed (path, line, callee as written)."""
    out = JavacRead()
    for text in lines:
        try:
            row = json.loads(text)
        except json.JSONDecodeError:
            out.skipped["malformed"] += 1
            continue
        if not isinstance(row, dict):
            out.skipped["malformed"] += 1
        elif "file" in row:
            out.files.add(str(row["file"]))
        elif not _site(out, row, defs):
            out.skipped["malformed"] += 1
    return out


def _site(out: JavacRead, row: dict[str, object], defs: Definitions) -> bool:
    path, line, callee, kind = (row.get(k) for k in ("path", "line", "callee", "kind"))
    if not (isinstance(path, str) and isinstance(line, int) and isinstance(callee, str)):
        return False
    if kind == CHAIN:
        out.skipped[CHAIN] += 1
        return True
    site = out.sites.setdefault((path, line, callee), OracleSite())
    if row.get("unknown"):
        site.error = True
    elif not row.get("in_repo"):
        site.external += 1
    else:
        keys = _targets(row, kind, defs)
        if keys:
            site.internal.update(keys)
        else:
            site.nondef.append(f"{row.get('target')}:{row.get('target_line')} {row.get('name')}")
    return True


def _targets(row: dict[str, object], kind: object, defs: Definitions) -> set[str]:
    """The semgraph definitions an in-repository target names (none for a made member)."""
    target, name = row.get("target"), row.get("name")
    tline, cline, declaring = row.get("target_line"), row.get("class_line"), row.get("declaring")
    if not (isinstance(target, str) and isinstance(name, str) and isinstance(tline, int)):
        return set()
    found = {defs.at(target, tline, name)} if tline > 0 else set()
    if kind == "new" and isinstance(cline, int) and isinstance(declaring, str):
        found.add(defs.at(target, cline, declaring))
    return {k for k in found if k is not None}


def any_overload(sites: dict[Key, OracleSite], keys: Iterable[str]) -> dict[Key, OracleSite]:
    """The oracle's sites with every overload of each internal target added (lenient view)."""
    family: dict[str, set[str]] = {}
    for key in keys:
        family.setdefault(_OVERLOAD.sub("", key), set()).add(key)
    widened = {}
    for k, s in sites.items():
        internal = set().union(*(family.get(_OVERLOAD.sub("", t), {t}) for t in s.internal))
        widened[k] = OracleSite(internal, list(s.nondef), s.external, s.error)
    return widened


def overload_fields(read: JavacRead, lenient: Score) -> dict[str, object]:
    """The Java record's own fields: what the oracle left out, and the lenient view's
    recall and precision (an edge to any overload of the oracle's method counts as right)."""
    total = lenient.all_tiers
    return {
        "oracle_chain_sites": read.skipped[CHAIN],
        "oracle_malformed": read.skipped["malformed"],
        "oracle_files": len(read.files),
        "recall_any_overload": ratio(lenient.recall),
        "recall_ambiguous_any_overload": ratio(lenient.recall_ambiguous),
        "precision_in_repo_any_overload": ratio(total.precision_in_repo),
        "wrong_any_overload": total.counts["wrong"],
    }
