"""Long questions, a smoke check (issue 28, item 1; a small forerunner of its item 3, not that
evaluation): which text the kNN side embeds and which words the BM25 side keeps, measured on
bug-describing commits of real repositories.

    python -m bench.search.eval_long [--repos pallets/click,...] [--json out.json]

From each mirror (``/work/.mirror/<owner>+<name>/repo``) the non-merge commits whose message
describes a bug (fix, bug, error, crash, ...), is at least :data:`MIN_MESSAGE_CHARS` long, and
that changed 1-3 non-test Python source files (:func:`semgraph.search.roles.role_of`) still
present at the mirror's HEAD. The answer is those files. Each commit gives two queries:

- ``message``: the commit message (subject and body), as an agent would paste an issue;
- ``long``: the message plus the test code the commit added, in a fenced block, when it added
  any (issue texts carry reproducers and tracebacks; this is the closest real text we have).

Caveats (why this is a smoke check): the repository is indexed once, at HEAD, not at each
commit's parent (the fixed code is in the index, and some files moved since); a few dozen
commits, Python only; the tuning and test halves are not split. Figures: file Acc@1/5/10
(a hit's file, in rank order, deduplicated), per query side variant, with and without
``role=source``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from semgraph.search.roles import role_of

MIRRORS = Path("/work/.mirror")
REPOS = ("pallets/click", "pallets/flask", "Textualize/rich")
MIN_MESSAGE_CHARS = 120
MAX_TEST_CHARS = 6000
MAX_FILE_BYTES = 400_000
BUG = re.compile(
    r"\b(fix|fixe[sd]|bug|error|crash|exception|traceback|regression|incorrect|wrong|fail)",
    re.I,
)
AT = (1, 5, 10)
TEXT_SUFFIXES = (".py", ".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml")


@dataclass(frozen=True)
class LongQuery:
    id: str
    repo: str
    message: str
    long: str | None
    targets: frozenset[str]


def key(repo: str) -> str:
    return "long-" + repo.replace("/", "-").lower()


def git(repo: str, *args: str) -> str:
    git_dir = MIRRORS / repo.replace("/", "+") / "repo"
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True
    ).stdout


def added_test_code(repo: str, sha: str, paths: list[str]) -> str:
    if not paths:
        return ""
    diff = git(repo, "show", "--format=", "--unified=0", sha, "--", *paths)
    added = [ln[1:] for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return "\n".join(added)[:MAX_TEST_CHARS]


def commits(repo: str, present: set[str]) -> list[LongQuery]:
    log = git(repo, "log", "--no-merges", "--format=%x1e%H%x1f%B%x1f", "--name-only")
    out = []
    for record in log.split("\x1e")[1:]:
        sha, message, names = record.split("\x1f")
        message = message.strip()
        changed = [n for n in names.split("\n") if n.strip()]
        sources = {n for n in changed if n.endswith(".py") and role_of(n) == "source"}
        tests = [n for n in changed if n.endswith(".py") and role_of(n) == "test"]
        if len(message) < MIN_MESSAGE_CHARS or not BUG.search(message):
            continue
        if not 1 <= len(sources) <= 3 or not sources <= present:
            continue
        code = added_test_code(repo, sha, tests)
        long = f"{message}\n\n```python\n{code}\n```" if code else None
        out.append(LongQuery(f"{repo}@{sha[:10]}", repo, message, long, frozenset(sources)))
    return out


def repo_files(repo: str) -> list[Any]:
    """Every text file at HEAD (source, tests, docs: roles matter here), parsed."""
    from semgraph.config import load_settings
    from semgraph.indexer.extract import ExtractOptions, extract_file

    settings = load_settings()
    options = ExtractOptions(settings.chunk_max_lines, settings.chunk_max_chars)
    facts = []
    for path in git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
        if not path.endswith(TEXT_SUFFIXES):
            continue
        data = subprocess.run(
            [
                "git",
                f"--git-dir={MIRRORS / repo.replace('/', '+') / 'repo'}",
                "show",
                f"HEAD:{path}",
            ],
            check=True,
            capture_output=True,
        ).stdout
        if len(data) <= MAX_FILE_BYTES and b"\0" not in data:
            facts.append(extract_file(path, data, options))
    return facts


def file_ranks(hits: list[Any], targets: frozenset[str]) -> int | None:
    seen: list[str] = []
    for hit in hits:
        if hit.path not in seen:
            seen.append(hit.path)
            if hit.path in targets:
                return len(seen)
    return None


@contextmanager
def variant(embed: str, words: str) -> Iterator[None]:
    """Swap what the product's search embeds and which BM25 words it keeps."""
    from semgraph.search import bodies, longquery, query, split

    windows: dict[str, Callable[[str], list[str]]] = {
        "first": lambda text: [text],  # the model reads its first 128 tokens (before)
        "title": lambda text: [longquery.title_paragraph(text)],
        "window1": longquery.embedding_windows,  # the product's choice
        "pool8": lambda text: longquery.embedding_windows(text, max_windows=8),
        "pool4": lambda text: longquery.embedding_windows(text, max_windows=4),
    }
    bm25: dict[str, Callable[[str], list[str]]] = {
        "all": lambda text: split.query_words(text),  # every word, repeats kept (before)
        "capped": longquery.bm25_words,
    }
    # the names as the two modules imported them, swapped in their namespaces
    query_ns, bodies_ns = vars(query), vars(bodies)
    saved = (query_ns["embedding_windows"], bodies_ns["bm25_words"])
    query_ns["embedding_windows"] = windows[embed]
    bodies_ns["bm25_words"] = bm25[words]
    try:
        yield
    finally:
        query_ns["embedding_windows"], bodies_ns["bm25_words"] = saved


VARIANTS = [
    ("bm25", "first", "all"),
    ("bm25", "first", "capped"),
    ("knn", "first", "all"),
    ("knn", "title", "all"),
    ("knn", "window1", "all"),
    ("knn", "pool4", "all"),
    ("knn", "pool8", "all"),
    ("hybrid", "first", "all"),
    ("hybrid", "first", "capped"),
    ("hybrid", "title", "capped"),
    ("hybrid", "window1", "capped"),
    ("hybrid", "pool4", "capped"),
    ("hybrid", "pool8", "capped"),
]


def run(es: Any, settings: Any, embedder: Any, queries: list[LongQuery]) -> list[dict[str, Any]]:
    from semgraph.search.query import search

    rows = []
    for field in ("message", "long"):
        asked = [q for q in queries if getattr(q, field)]
        for role in (None, "source"):
            for mode, embed, words in VARIANTS:
                ranks = []
                with variant(embed, words):
                    for q in asked:
                        hits = search(
                            es,
                            settings,
                            embedder,
                            getattr(q, field),
                            repo=key(q.repo),
                            k=60,
                            mode=mode,
                            role=role,
                        )
                        ranks.append(file_ranks(hits, q.targets))
                acc = {
                    f"acc{a}": round(sum(1 for r in ranks if r and r <= a) / len(ranks), 3)
                    for a in AT
                }
                row = {
                    "text": field,
                    "role": role or "any",
                    "mode": mode,
                    "embed": embed,
                    "bm25": words,
                    "n": len(ranks),
                    **acc,
                }
                print(json.dumps(row))
                rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", default=",".join(REPOS))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    from bench.search.eval_run import CachedEmbedder, build_index, drop_index
    from semgraph.config import load_settings
    from semgraph.db import connect_search

    settings = load_settings()
    es = connect_search(settings)
    embedder = CachedEmbedder(settings, settings.state_dir / "bench-vectors.sqlite")
    queries: list[LongQuery] = []
    try:
        for repo in args.repos.split(","):
            files = repo_files(repo)
            mine = commits(repo, {f.path for f in files})
            chars = sorted(len(q.long or q.message) for q in mine) or [0]
            print(
                f"{repo}: {len(files)} files, {len(mine)} commits, "
                f"{sum(1 for q in mine if q.long)} with test code; "
                f"long text chars p50 {chars[len(chars) // 2]}, max {chars[-1]}"
            )
            chunks = build_index(es, settings, embedder, key(repo), files)
            print(f"  indexed {chunks} chunks")
            queries += mine
        rows = run(es, settings, embedder, queries)
        if args.json:
            args.json.write_text(json.dumps({"queries": len(queries), "rows": rows}, indent=1))
    finally:
        for repo in args.repos.split(","):
            drop_index(es, settings, key(repo))
        es.close()


if __name__ == "__main__":
    main()
