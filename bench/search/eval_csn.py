"""The CodeSearchNet-style evaluation's corpus: packages that training never saw, downloaded at
pinned versions, copied with every docstring and comment removed, and the docstring queries
that point into them.

    python -m bench.search.eval_csn build --out DIR [--record] [--per-package N]

- **Sources** (``bench/search/eval/csn_sources.json``): ``train/embedder/heldout.json``'s
  ``codesearch_evaluation`` packages (PyPI, npm, Go, Maven), each at a pinned version, with the
  sha256 of its archive and its licence. The build refuses a package that the training
  sources list (``train/embedder/sources.json``) or that the held-out list does not hold, an
  archive whose sha256 differs from the pinned one, and a licence that is not permissive.
- **Reading** is the training-data builder's (:mod:`train.embedder`): the registry's own client
  downloads the archive once (``DIR/downloads``), members are read in memory, tests, docs,
  examples, vendored, generated and minified files are skipped, and semgraph's own extractor
  finds each function's documentation (:func:`train.embedder.pairs.file_pairs`).
- **Stripping** is the outside evaluation's (:func:`bench.search.eval_corpus.strip`): every
  docstring and comment goes. Each package's stripped tree is written as a git repository
  under ``DIR/<registry>+<name>/``.
- **Queries** (``DIR/queries.jsonl``): the first sentence of a function's or method's
  documentation summary (a Go doc comment's leading name dropped), targeting that symbol's
  ``path::qualified name`` in the stripped copy (:func:`bench.search.eval_run.spans` resolves it to
  lines). CodeSearchNet's filters apply (:func:`name_reason`, :func:`query_reason` and
  ``pairs``' drop reasons): documentation under 3 words, code under 3 lines, names with
  "test", constructors and standard boilerplate methods, and duplicate code (exact and near,
  :class:`train.embedder.dedup.Deduper`). A sentence documenting several symbols of a package
  targets all of them. At most ``--per-package`` queries per package (the first by a hash
  of the id), so the evaluation's run stays short. The half is :func:`eval_corpus.half` of
  the id, as the outside evaluation's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.search.eval_corpus import first_sentence, half, strip

EVAL_DIR = Path(__file__).resolve().parent / "eval"
CSN_SOURCES = EVAL_DIR / "csn_sources.json"
ROOT = EVAL_DIR.parents[2]
TRAIN_SOURCES = ROOT / "train" / "embedder" / "sources.json"
MIN_QUERY_WORDS = 3
PER_PACKAGE = 60  # queries kept per package: about 2,000 in all, a run well under 25 minutes
# standard methods whose documentation says nothing about the code (CodeSearchNet drops
# constructors and "standard extension methods")
BOILERPLATE_NAMES = frozenset(
    {
        "constructor",
        "tostring",
        "hashcode",
        "equals",
        "clone",
        "finalize",
        "compareto",
        "valueof",
        "string",
        "error",
        "gostring",
        "main",
        "init",
        "inspect",
        "tojson",
    }
)


@dataclass(frozen=True)
class CsnSource:
    registry: str
    name: str
    version: str
    sha256: str | None
    licence: str | None

    @property
    def slug(self) -> str:
        return f"{self.registry}+{re.sub(r'[^A-Za-z0-9._-]+', '_', self.name)}"


def load_sources(path: Path = CSN_SOURCES) -> list[CsnSource]:
    return [
        CsnSource(s["registry"], s["name"], s["version"], s.get("sha256"), s.get("licence"))
        for s in json.loads(path.read_text("utf-8"))["sources"]
    ]


def leaks_into_training(
    sources: list[CsnSource], train_sources: Path = TRAIN_SOURCES, held: Any = None
) -> list[str]:
    """Why each csn source could be trained on: it is among the training sources, or the
    held-out list (which the training builder refuses) does not hold it. Empty: none."""
    from train.embedder import heldout

    held = held or heldout.load()
    trained = {
        (s["registry"], heldout.normalise(s["registry"], s["name"]))
        for s in json.loads(train_sources.read_text("utf-8"))["sources"]
    }
    out = []
    for src in sources:
        if (src.registry, heldout.normalise(src.registry, src.name)) in trained:
            out.append(f"{src.registry}:{src.name} is a training source")
        if held.blocks(src.registry, src.name) != "codesearch_evaluation":
            out.append(f"{src.registry}:{src.name} is not in codesearch_evaluation")
    return out


def name_reason(name: str, kind: str, enclosing_class: str | None) -> str | None:
    """Why a function is not a query target by its name: a test, a constructor or a
    standard boilerplate method (None: it is kept)."""
    low = name.lower()
    if "test" in low:
        return "test_name"
    if low.startswith("__") and low.endswith("__"):
        return "constructor_or_boilerplate"
    if low in BOILERPLATE_NAMES or (enclosing_class is not None and name == enclosing_class):
        return "constructor_or_boilerplate"
    return None


def query_text(summary: str, name: str, lang: str) -> str:
    """The query: the summary's first sentence; GoDoc's leading "Name does X" loses the name."""
    text = first_sentence(summary)
    if lang == "go" and text.split(" ", 1)[0] == name:
        text = text.split(" ", 1)[-1] if " " in text else ""
    return text


def query_reason(text: str) -> str | None:
    return "short_query" if len(text.split()) < MIN_QUERY_WORDS else None


def query_id(src: CsnSource, path: str, symbol: str) -> str:
    return f"{src.registry}:{src.name}:{path}::{symbol}"


def cap(queries: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The first ``limit`` queries by a hash of their ids (stable, independent of order)."""
    key = lambda q: hashlib.sha256(("cap:" + q["id"]).encode()).hexdigest()  # noqa: E731
    return sorted(sorted(queries, key=key)[:limit], key=lambda q: q["id"])


def package_queries(
    src: CsnSource, files: list[tuple[str, bytes]], dedup: Any, dropped: Counter[str]
) -> tuple[dict[str, bytes], list[dict[str, Any]]]:
    """The stripped copy (path -> bytes) of a package's source ``files`` and its queries."""
    from semgraph.indexer.extract import ExtractOptions, extract_file
    from semgraph.indexer.languages import detect_language
    from train.embedder.pairs import file_pairs

    copy: dict[str, bytes] = {}
    by_text: dict[str, dict[str, Any]] = {}
    for path, data in files:
        language = detect_language(path, data[:256])
        try:
            stripped = strip(path, language, data)
            result = file_pairs(path, data)
        except (SyntaxError, ValueError, RecursionError):
            dropped["unparsable_file"] += 1
            continue
        copy[path] = stripped
        dropped.update(result.dropped)
        kept = {s.qualified_name for s in extract_file(path, stripped, ExtractOptions()).symbols}
        for pair in result.pairs:
            text = query_text(pair["query"], pair["name"], pair["lang"])
            reason = (
                name_reason(pair["name"], pair["kind"], pair["class"])
                or query_reason(text)
                or (None if pair["symbol"] in kept else "not_in_stripped_copy")
                or dedup.check(pair["code"])
            )
            if reason is not None:
                dropped[reason] += 1
                continue
            target = f"{path}::{pair['symbol']}"
            if text in by_text:  # one sentence documenting several symbols targets them all
                by_text[text]["targets"].append(target)
                continue
            qid = query_id(src, path, pair["symbol"])
            by_text[text] = {
                "id": qid,
                "package": src.name,
                "registry": src.registry,
                "repo": src.slug,
                "lang": pair["lang"],
                "query": text,
                "targets": [target],
                "half": half(qid),
            }
    return copy, list(by_text.values())


def write_git_tree(folder: Path, copy: dict[str, bytes], message: str) -> str:
    """``copy`` as the only commit of a fresh git repository at ``folder``; its commit id."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for path, data in copy.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    env = dict(os.environ)
    stamp = "2000-01-01T00:00:00Z"
    env.update(GIT_AUTHOR_NAME="eval", GIT_AUTHOR_EMAIL="eval@localhost")
    env.update(GIT_COMMITTER_NAME="eval", GIT_COMMITTER_EMAIL="eval@localhost")
    env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    git = ["git", "-C", str(folder)]
    subprocess.run([*git, "init", "-q"], check=True, env=env)
    subprocess.run([*git, "add", "-A"], check=True, env=env)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", message], check=True, env=env)
    return subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, env=env, capture_output=True, text=True
    ).stdout.strip()


def build(
    out: Path, per_package: int, record: bool, train_sources: Path = TRAIN_SOURCES
) -> dict[str, Any]:
    """Fetch, check, strip and query every csn source; write ``out/queries.jsonl`` and
    ``out/manifest.json``; with ``record``, write each archive's sha256 and licence into
    ``csn_sources.json``."""
    from train.embedder import fetch, package
    from train.embedder.dedup import Deduper
    from train.embedder.heldout import REGISTRIES, HeldOut

    sources = load_sources()
    leaks = leaks_into_training(sources, train_sources)
    if leaks:
        raise SystemExit("refusing to build: " + "; ".join(leaks))
    no_paths_held = HeldOut({r: frozenset() for r in REGISTRIES}, {})  # they are the packages
    dedup = Deduper()
    queries: list[dict[str, Any]] = []
    packages: list[dict[str, Any]] = []
    for src in sources:
        got = fetch.fetch(src.registry, src.name, src.version, out / "downloads")
        if src.sha256 and not record and got.sha256 != src.sha256:
            raise SystemExit(f"{src.name} {src.version}: sha256 {got.sha256} != {src.sha256}")
        lic = package.read_licence(src.registry, got.archive, got.poms)
        if src.licence and not record and lic.spdx != src.licence:
            raise SystemExit(f"{src.name} {src.version}: licence {lic.spdx} != {src.licence}")
        if not lic.allowed:
            raise SystemExit(f"{src.name} {src.version}: licence {lic.spdx} is not permissive")
        skipped: Counter[str] = Counter()
        dropped: Counter[str] = Counter()
        files = list(package.source_files(src.registry, got.archive, no_paths_held, skipped))
        copy, mine = package_queries(src, files, dedup, dropped)
        kept = cap(mine, per_package)
        commit = write_git_tree(out / src.slug, copy, f"{src.name} {src.version}, stripped")
        queries.extend(kept)
        packages.append(
            {
                "registry": src.registry,
                "name": src.name,
                "version": src.version,
                "sha256": got.sha256,
                "licence": lic.spdx,
                "repo": src.slug,
                "commit": commit,
                "files": len(copy),
                "candidates": len(mine),
                "queries": len(kept),
                "dropped": dict(sorted(dropped.items())),
                "files_skipped": dict(sorted(skipped.items())),
            }
        )
        print(f"{src.registry} {src.name} {src.version}: {len(copy)} files, {len(kept)} queries")
        sys.stdout.flush()
    (out / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), "utf-8")
    counts = Counter(f"{q['lang']}/{q['half']}" for q in queries)
    manifest = {"queries": len(queries), "by_language_half": dict(sorted(counts.items()))}
    manifest |= {"per_package": per_package, "packages": packages}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", "utf-8")
    if record:
        _record(packages)
    return manifest


def _record(packages: list[dict[str, Any]]) -> None:
    raw = json.loads(CSN_SOURCES.read_text("utf-8"))
    by_key = {(p["registry"], p["name"]): p for p in packages}
    for entry in raw["sources"]:
        got = by_key[(entry["registry"], entry["name"])]
        entry["sha256"], entry["licence"] = got["sha256"], got["licence"]
    lines = [json.dumps(e) for e in raw["sources"]]
    text = '{\n "comment": ' + json.dumps(raw["comment"]) + ',\n "sources": [\n  '
    CSN_SOURCES.write_text(text + ",\n  ".join(lines) + "\n ]\n}\n", "utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("build", help="fetch, strip and write the queries")
    cmd.add_argument("--out", type=Path, required=True, help="output folder (not the repo)")
    cmd.add_argument("--per-package", type=int, default=PER_PACKAGE)
    cmd.add_argument("--record", action="store_true", help="pin sha256 and licence")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    manifest = build(args.out.resolve(), args.per_package, args.record)
    print(f"{manifest['queries']} queries: {manifest['by_language_half']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
