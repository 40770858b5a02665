"""Cross-repository links for Maven packages (issue 30) against the Java compiler.

    python -m bench.accuracy.bench_crossrepo_jvm

commons-text 1.10.0 and commons-lang3 3.12.0 (their sources jars and poms from Maven
Central, ``ops/xrepo-corpus.sh``), each indexed as a repository and linked as the reindex
job does. The oracle is javac itself (``bench/accuracy/JavacCalls.java``, the JDK's compiler API):
it attributes every file of commons-text with commons-lang3's sources on its source path,
and names for every method call and ``new`` the method it resolved to and the class that
declares it. An oracle edge is (site path, line, the declaring class's file, method name)
with the class in commons-lang3; ours are the ``XCALLS`` with the same four fields.
Precision = ours the oracle has / ours; recall = the oracle's we have / its.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SOURCES = "src/main/java"


def accuracy(graph: Any, settings: Any, tmp: Path) -> dict[str, Any]:
    from bench.accuracy.bench_crossrepo import index_corpus, scored

    roots, index_s = index_corpus(graph, settings, tmp, ("commons-text", "commons-lang3"))
    ours = {
        (r["sp"], r["line"], r["tp"], r["name"])
        for r in graph.query(
            "xcalls",
            "MATCH (a:Symbol {repo: 'commons-text'})-[e:XCALLS]->(b:Symbol) RETURN a.path AS sp, "
            "e.line AS line, b.path AS tp, b.name AS name",
        )
    }
    out = tmp / "javac.jsonl"
    began = time.monotonic()
    text, lang = roots["commons-text"] / SOURCES, roots["commons-lang3"] / SOURCES
    javac_calls = ROOT / "bench" / "accuracy" / "JavacCalls.java"
    subprocess.run(
        ["java", str(javac_calls), str(text), str(lang), str(out)], check=True, capture_output=True
    )
    oracle_s = time.monotonic() - began
    oracle, answered = set(), 0
    for line in out.read_text().splitlines():
        row = json.loads(line)
        if "class" not in row:  # a file's header, or a call javac could not attribute
            continue
        answered += 1
        if row["class"].startswith("org.apache.commons.lang3."):
            target = f"{SOURCES}/{row['class'].replace('.', '/')}.java"
            oracle.add((f"{SOURCES}/{row['path']}", row["line"], target, row["name"]))
    result = {
        "pairs": "commons-text 1.10.0 -> commons-lang3 3.12.0",
        **scored(ours, oracle),
        "oracle_calls": answered,
        "index_s": round(index_s, 1),
        "oracle_s": round(oracle_s, 1),
        "missed": sorted(map(list, oracle - ours))[:40],
    }
    return result


if __name__ == "__main__":
    from bench.accuracy.bench_crossrepo import run_accuracy

    run_accuracy("semgraph-bench-xrepo-jvm-", "crossrepo.jvm_accuracy", accuracy, "maven")
