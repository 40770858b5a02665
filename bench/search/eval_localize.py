"""From a commit message to the code it changed (the localisation's accuracy): BM25, kNN,
hybrid and ``localize`` on real history, each repository indexed at each chosen commit's parent.

    python -m bench.search.eval_localize [--repos pallets/click:python,...] [--per-repo 45]
        [--resume LOG] > bench/results/localize-eval.log
    python -m bench.search.eval_localize --summary bench/results/localize-eval.log

For each repository (a mirror fetched into ``/work/.mirror/<owner>+<name>/repo``) the last
``--per-repo`` commits that count (:mod:`bench.search.eval_localize_score`) are taken oldest first,
and the product is pushed forward one chosen parent at a time through its own reindex job
(incremental when the change allows: seconds a push). Before each chosen commit is applied,
its message is asked, as sent and truncated to the old 2,000-character bound, of every
method; one ``localize_eval`` record per (commit, text, method) says the rank of the first
answer file and of the first answer function. Methods: ``bm25``, ``knn``, ``hybrid``
(chunks' files and symbols in rank order), ``localize`` (the defaults) and its ablations
``loc-<part>`` (one part switched off, on the text as sent); with ``--history-weights``,
``hybrid+h<w>`` (the hybrid with the commit-history lift at weight ``w``) and ``loc+h<w>``
(the ``history`` part at ``w``). Each push records ``asked_in_history``: the history
documents of the commit about to be asked (0, or its message leaks: the index holds the
history up to the parent only). The tuning and test halves
are split by :func:`bench.search.eval_corpus.half` of the commit id, like the docstring
evaluation. CI never runs this (no mirrors there); its scoring has a unit test.
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.harness.records import emit, json_lines
from bench.search import eval_localize_score as score
from bench.search.eval_corpus import half

MIRRORS = Path("/work/.mirror")
REPOS = (  # Python and Go taking turns, so that a run cut short holds both
    "pallets/click:python",
    "spf13/cobra:go",
    "pallets/flask:python",
    "expr-lang/expr:go",
    "psf/requests:python",
    "junegunn/fzf:go",
    "Textualize/rich:python",
)
SEARCH_MODES = ("bm25", "knn", "hybrid")
TRUNCATED = (*SEARCH_MODES, "localize")  # the methods asked the truncated text too
HEARTBEAT_S = 10.0
# ablations asked of one commit in n only (the re-rank embeds ~100 windows: 4-7 s on 2 cores)
SAMPLED = {"loc+rerank": 4}
ABLATIONS = {
    "loc-chunks": "chunks=0",
    "loc-names": "names=0",
    "loc-frames": "frames=0",
    "loc-hops": "callees=0,callers=0",
    "loc-demote": "demote=1",
    "loc-demote01": "demote=0.1",  # tests and docs pushed further down
    "loc-history": "history=0",
    # a role the text asks for: not demoted at all (the old rule), or as much as any other
    "loc-asked1": "demote_asked=1",
    "loc-asked03": "demote_asked=0.3",
    "loc+sym10": "symbols=10",  # more symbols per file: the function level's candidates
    "loc+rerank": "rerank=0.5,rerank_files=3",
}


def git_dir(repo: str) -> Path:
    return MIRRORS / repo.replace("/", "+") / "repo"


def git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir(repo)}", *args], check=True, capture_output=True, text=True
    ).stdout


def candidates(repo: str, language: str, most: int) -> list[score.Commit]:
    """The last ``most`` commits that count, oldest first."""
    log = git(
        repo,
        "log",
        "--no-merges",
        "--format=%x1e%H %P%x1f%B%x1f",
        "--name-status",
        "-n",
        "3000",
    )
    out: list[score.Commit] = []
    for record in log.split("\x1e")[1:]:
        head, message, names = record.split("\x1f")
        shas = head.split()
        if len(shas) != 2 or not score.describes(message):
            continue
        changes = []
        for line in names.strip().splitlines():
            parts = line.split("\t")
            if len(parts) >= 2:
                changes.append((parts[0][:1], parts[-1]))
        files = score.answer_files(changes, language)
        if files is not None:
            out.append(score.Commit(shas[0], shas[1], message.strip(), files))
        if len(out) >= most:
            break
    return out[::-1]


def function_targets(graph: Any, repo: str, key: str, commit: score.Commit) -> list[str]:
    """The innermost symbols of the parent whose lines the commit changed."""
    from semgraph.localize import queries as lq
    from semgraph.resolve.symtab import file_key

    frames = []
    for path in commit.files:
        diff = git(repo, "diff", "--unified=0", commit.parent, commit.sha, "--", path)
        frames += [{"key": file_key(key, path), "line": n} for n in score.changed_old_lines(diff)]
    if not frames:
        return []
    rows = graph.query(
        "eval targets", lq.LOCALIZE_FRAME_SYMBOLS, frames=frames, limit=len(frames) * 8
    )
    innermost: dict[tuple[str, int], str] = {}
    for row in rows:
        innermost.setdefault((row["file"], row["line"]), str(row["qualified_name"]))
    return sorted(set(innermost.values()))


def search_ranks(
    ctx: Any, key: str, text: str, mode: str, history: float | None = None
) -> tuple[list[str], list[str]]:
    from semgraph.search.query import search_answer

    answer = search_answer(
        ctx.es, ctx.settings, ctx.embedder, text, repo=key, k=200, mode=mode, history_weight=history
    )
    return [h.path for h in answer.hits], [h.symbol for h in answer.hits if h.symbol]


def localize_ranks(ctx: Any, key: str, text: str, spec: str | None) -> tuple[list[str], list[str]]:
    from semgraph.localize.locate import LocalizeOptions, localize

    got = localize(
        ctx.es,
        ctx.graph,
        ctx.settings,
        ctx.embedder,
        text,
        repo=key,
        k=20,
        options=LocalizeOptions.parse(spec),
    )
    symbols = sorted(
        ((s["score"], s["symbol"]) for f in got.files for s in f["symbols"]), key=lambda r: -r[0]
    )
    return [f["path"] for f in got.files], [name for _, name in symbols]


class Ctx:
    def __init__(self) -> None:
        from semgraph.config import load_settings
        from semgraph.db import connect_graph
        from semgraph.jobs import JobKinds

        self.settings = load_settings()
        self.kinds = JobKinds()
        self.es = self.kinds.search(self.settings)
        self.embedder = self.kinds.embedder(self.settings)
        self.graph = connect_graph(self.settings)

    def push(self, repo: str, commit: str) -> tuple[str, float, str]:
        from semgraph.indexer.pipeline import Reindex
        from semgraph.indexer.request import ReindexRequest

        started = time.perf_counter()
        request = ReindexRequest(source=str(git_dir(repo)), ref=commit, commit=commit)
        result = Reindex(self.settings, self.graph, self.es, request, embedder=self.embedder).run()
        if result.commit != commit:
            raise SystemExit(f"pushed {commit} but the job indexed {result.commit}")
        return result.repo_key, time.perf_counter() - started, str(result.status)


def asked_in_history(ctx: Ctx, key: str, sha: str) -> int:
    """History documents of ``sha`` behind ``key``'s alias (the commit about to be asked)."""
    from semgraph.search.index import SearchIndex

    alias = SearchIndex(ctx.es, ctx.settings).alias_name(key)
    return int(ctx.es.count(index=alias, query={"term": {"history_sha": sha}})["count"])


def evaluate(ctx: Ctx, repo: str, commit: score.Commit, key: str, opts: argparse.Namespace) -> None:
    cid = f"{repo}@{commit.sha[:10]}"
    targets = function_targets(ctx.graph, repo, key, commit)
    texts = {"sent": commit.message, "truncated": score.truncated(commit.message)}
    methods: list[tuple[str, str, str | None]] = [(m, "search", m) for m in SEARCH_MODES]
    methods.append(("localize", "localize", None))
    for text_name, text in texts.items():
        if text_name == "truncated" and text == commit.message:
            continue  # the same text: its records are the sent text's (same_as_sent)
        runs = list(methods)
        if text_name == "sent" and opts.ablations:
            runs += [
                (name, "localize", spec)
                for name, spec in ABLATIONS.items()
                if name not in SAMPLED or int(commit.sha, 16) % SAMPLED[name] == 0
            ]
        if text_name == "sent":
            for w in opts.history_weights:
                runs += [(f"hybrid+h{w:g}", "history", f"{w:g}")]
                runs += [(f"loc+h{w:g}", "localize", f"history={w:g}")]
        for method, kind, arg in runs:
            started = time.perf_counter()
            if kind == "history":
                files, symbols = search_ranks(ctx, key, text, "hybrid", float(str(arg)))
            elif kind == "search":
                files, symbols = search_ranks(ctx, key, text, str(arg))
            else:
                files, symbols = localize_ranks(ctx, key, text, arg)
            fields: dict[str, Any] = {
                "id": cid,
                "repo": repo,
                "half": half(cid),
                "text": text_name,
                "text_chars": len(text),
                "method": method,
                "file_rank": score.first_rank(files, commit.files),
                "file_rank_source": score.source_rank(files, commit.files),
                "func_rank": score.first_rank(symbols, targets) if targets else None,
                "func_targets": len(targets),
                "ms": round((time.perf_counter() - started) * 1000, 1),
            }
            emit("localize.eval", **fields)
            if text_name == "sent" and texts["truncated"] == text and method in TRUNCATED:
                emit("localize.eval", **{**fields, "text": "truncated", "same_as_sent": True})


def run(repos: list[str], per_repo: int, done: set[str], opts: argparse.Namespace) -> None:
    ctx = Ctx()
    for spec in repos:
        repo, _, language = spec.partition(":")
        chosen = candidates(repo, language, per_repo)
        emit("localize.repo", repo=repo, language=language, commits=len(chosen))
        for i, commit in enumerate(chosen, start=1):
            cid = f"{repo}@{commit.sha[:10]}"
            if cid in done:
                continue
            with heartbeat(f"{repo} {i}/{len(chosen)}: pushing {commit.parent[:10]}"):
                key, push_s, status = ctx.push(repo, commit.parent)
            print(
                f"# {repo} {i}/{len(chosen)} pushed {commit.parent[:10]} in {push_s:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            leaked = asked_in_history(ctx, key, commit.sha)
            emit(
                "localize.push",
                repo=repo,
                commit=commit.parent,
                status=status,
                seconds=round(push_s, 2),
                asked_in_history=leaked,
            )
            if leaked:
                raise SystemExit(f"{repo}: the history behind {commit.parent} holds {commit.sha}")
            evaluate(ctx, repo, commit, key, opts)


@contextlib.contextmanager
def heartbeat(what: str) -> Iterator[None]:
    """A line on stderr every :data:`HEARTBEAT_S` seconds while the block runs."""
    stop = threading.Event()
    started = time.perf_counter()

    def beat() -> None:
        while not stop.wait(HEARTBEAT_S):
            took = time.perf_counter() - started
            print(f"# {what} ({took:.0f} s)", file=sys.stderr, flush=True)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def summary(path: Path) -> list[dict[str, Any]]:
    text = path.read_text("utf-8", "replace")
    rows = [r for r in json_lines(text) if r.get("record") == "localize.eval"]
    return score.summarize(score.complete(rows, TRUNCATED))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", default=",".join(REPOS))
    parser.add_argument("--per-repo", type=int, default=36)
    parser.add_argument("--resume", type=Path, help="a log whose commits are not asked again")
    parser.add_argument("--summary", type=Path, help="print the figures of a log and exit")
    parser.add_argument(
        "--history-weights",
        type=lambda v: [float(w) for w in v.split(",") if w],
        default=[],
        help="comma-separated weights of the history part to ask (hybrid+h<w>, loc+h<w>)",
    )
    parser.add_argument(
        "--no-ablations", dest="ablations", action="store_false", help="skip the loc-<part> runs"
    )
    args = parser.parse_args(argv)
    if args.summary:
        for row in summary(args.summary):
            emit("localize.summary", **row)
        return
    done: set[str] = set()
    if args.resume and args.resume.exists():
        done = {
            r["id"]
            for r in json_lines(args.resume.read_text())
            if r.get("record") == "localize.eval"
        }
    run([r for r in args.repos.split(",") if r], args.per_repo, done, args)


if __name__ == "__main__":
    main()
