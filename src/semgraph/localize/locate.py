"""Localisation: from an issue text to the files, and the symbols within them, to change.

One repository at a time. The text is bounded like a search query (never refused for its
length, :func:`semgraph.search.query.validate`), then six parts feed one scoreboard
(:class:`semgraph.localize.rank.Board`, whose docstring gives the arithmetic); each
has a weight in :class:`LocalizeOptions`, so the evaluation can measure it on its own:

1. ``chunks``: one hybrid (or BM25/kNN) search for the text, its best :data:`SEARCH_CHUNKS`
   chunks aggregated per file and per symbol;
2. ``frames``: ``path:line`` frames of a traceback, looked up exactly as files of the graph
   (the printed path's tails, longest first) and as the symbols spanning the line;
3. ``names``: identifiers and dotted names of the text, looked up exactly as symbol names;
4. ``callees``/``callers``: one hop over the call graph from the best symbols (what they
   call) and from the symbols the text names (who calls them); off by default (they lost
   on the evaluation's tuning half), on with a weight;
5. ``rerank``: the best files' code cut into windows of a few lines, embedded with the
   bi-encoder and compared with the question (:mod:`semgraph.localize.rerank`);
6. ``history``: the text matched against the files' commit messages (BM25, the text's
   words bounded like the chunks' search), asked in the chunks' ``_msearch``, so of the
   same run; each matching file gets one evidence line per commit
   (``commit 1a2b3c4: fix timezone parsing``).

Tests, documentation, changelogs, examples, translation catalogues and generated files are
demoted (``demote``), less (``demote_asked``) when the text asks for that role. Every list
in the answer is bounded: files (``k``, at most :data:`MAX_FILES`), symbols and evidence per file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import elasticsearch

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.errors import SearchQueryError
from semgraph.graph import queries as gq
from semgraph.localize import queries as lq
from semgraph.localize.mentions import Mentions, extract, file_stem, match_tail, path_suffixes
from semgraph.localize.rank import Board, LocalizeOptions
from semgraph.localize.rerank import rerank
from semgraph.resolve.symtab import file_key
from semgraph.search.embed import Embedder
from semgraph.search.history_query import commit_evidence
from semgraph.search.query import MAX_K, search_answer, validate

__all__ = ["MAX_FILES", "LocalizeAnswer", "LocalizeOptions", "localize"]

MAX_FILES = 50
SEARCH_CHUNKS = MAX_K  # chunks the search part ranks
NAMES_PER_MENTION = 8  # symbols kept per name (the count of all of them is kept too)
MAX_GRAPH_ROWS = 400  # rows one frame or hop statement returns


@dataclass
class LocalizeAnswer:
    repo: str
    run_id: str | None
    files: list[dict[str, Any]]
    mentions: Mentions
    query_chars: int
    searched_chars: int
    truncated: bool
    notice: str | None
    options: LocalizeOptions
    chunks_ranked: int = 0  # chunks the search part returned (at most SEARCH_CHUNKS)
    timings_ms: dict[str, float] = field(default_factory=dict)
    # the repository's vectors: complete, or pending (the kNN part answers with what is there)
    semantic: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "repo": self.repo,
            "run_id": self.run_id,
            "files": self.files,
            "mentions": self.mentions.to_dict(),
            "query_chars": self.query_chars,
            "searched_chars": self.searched_chars,
            "truncated": self.truncated,
            "options": self.options.to_dict(),
            "chunks_ranked": self.chunks_ranked,
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
            "semantic": self.semantic,
        }
        if self.notice is not None:
            out["notice"] = self.notice
        return out


def localize(
    es: elasticsearch.Elasticsearch,
    graph: Graph,
    settings: Settings,
    embedder: Embedder | None,
    text: str,
    *,
    repo: str,
    k: int = 10,
    mode: str = "hybrid",
    options: LocalizeOptions | None = None,
) -> LocalizeAnswer:
    """The ``k`` files of ``repo`` most likely to change for the issue ``text``, each with
    its best symbols and the evidence for both."""
    opts = options or LocalizeOptions()
    if not 1 <= k <= MAX_FILES:
        raise SearchQueryError(f"k must be between 1 and {MAX_FILES}, got {k}")
    bounded = validate(text, k=SEARCH_CHUNKS, mode=mode, settings=settings)
    if (mode != "bm25" or opts.rerank > 0) and embedder is None:
        raise SearchQueryError(f"mode {mode} (or the re-rank) needs an embedder")
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = (now - clock) * 1000
        clock = now

    mentions = extract(bounded.text)
    board = Board(opts, {})
    answer = search_answer(
        es,
        settings,
        embedder,
        bounded.text,
        repo=repo,
        k=SEARCH_CHUNKS,
        mode=mode,
        snippets=False,
        history_weight=0.0,  # the history is its own part here, not a lift of the chunks
        history_files=opts.history > 0,
    )
    run_id = answer.hits[0].run_id if answer.hits else None
    if opts.chunks > 0:
        for hit in answer.hits:
            lines = f"{hit.start_line}-{hit.end_line}"
            board.chunk(hit.path, hit.role, hit.symbol, lines, hit.score)
    for found in answer.history:
        for sha, subject, share in found.commits:
            detail = commit_evidence(sha, subject)
            board.file_evidence(found.path, "history", detail, opts.history * share)
    lap("search")
    if opts.frames > 0 and mentions.frames:
        _frames(graph, board, repo, mentions)
    lap("frames")
    if opts.names > 0 and (mentions.names or mentions.dotted):
        _names(graph, board, repo, mentions)
    lap("names")
    board.demote(mentions.asks)
    if opts.callees > 0 or opts.callers > 0:
        _expand(graph, board, repo)
    lap("graph_hops")
    if opts.rerank > 0 and embedder is not None:
        rerank(es, settings, embedder, board, repo, bounded.text)
    lap("rerank")
    return LocalizeAnswer(
        repo=repo,
        run_id=run_id,
        files=board.ranked(k),
        mentions=mentions,
        query_chars=bounded.chars,
        searched_chars=len(bounded.text),
        truncated=bounded.truncated,
        notice=bounded.notice(settings.search_max_query_chars),
        options=opts,
        chunks_ranked=len(answer.hits),
        timings_ms=timings,
        semantic=answer.semantic[repo].to_dict() if repo in answer.semantic else None,
    )


def _frames(graph: Graph, board: Board, repo: str, mentions: Mentions) -> None:
    """Each frame's file (its longest tail that is a file of ``repo``) and the symbols
    spanning its line."""
    tails = {frame: path_suffixes(frame.path) for frame in mentions.frames}
    keys = sorted({file_key(repo, t) for ts in tails.values() for t in ts})
    rows = graph.query("localize files", lq.LOCALIZE_FILES, keys=keys)
    known = {str(r["path"]) for r in rows}
    stems = sorted({file_stem(frame.path) for frame in mentions.frames} - {""})
    modules = graph.query(
        "localize modules", lq.LOCALIZE_MODULES, names=stems, repo=repo, limit=MAX_GRAPH_ROWS
    )
    module_paths = [str(r["path"]) for r in modules]
    located: list[dict[str, Any]] = []
    for frame, candidates in tails.items():
        path = next((t for t in candidates if t in known), None)
        if path is None:
            path = match_tail(candidates, module_paths)
        if path is None:
            continue
        board.file_evidence(path, "frames", f"frame {frame.text()}", board.options.frames)
        located.append({"key": file_key(repo, path), "line": frame.line, "text": frame.text()})
    if not located:
        return
    spans = graph.query(
        "localize frame symbols",
        lq.LOCALIZE_FRAME_SYMBOLS,
        frames=[{"key": f["key"], "line": f["line"]} for f in located],
        limit=MAX_GRAPH_ROWS,
    )
    texts = {(f["key"], f["line"]): f["text"] for f in located}
    innermost: dict[tuple[str, int], dict[str, Any]] = {}
    for row in spans:  # ordered by start line, latest first: the innermost symbol
        innermost.setdefault((row["file"], row["line"]), row)
    for where, row in innermost.items():
        detail = f"frame {texts[where]} is in {row['qualified_name']}"
        board.symbol_evidence(str(row["path"]), row, "frames", detail, board.options.frames)


def _names(graph: Graph, board: Board, repo: str, mentions: Mentions) -> None:
    """The symbols each name of the text names; a dotted name that ends a symbol's
    qualified name counts in full, a bare name ``1/n`` for ``n`` symbols of that name."""
    wanted = list(dict.fromkeys(mentions.names + [d.rsplit(".", 1)[-1] for d in mentions.dotted]))
    rows = graph.query(
        "localize names", lq.LOCALIZE_NAMED, names=wanted, repo=repo, per_name=NAMES_PER_MENTION
    )
    dotted = list(mentions.dotted)
    for row in rows:
        total = max(1, int(row["total"]))
        for sym in row["found"]:
            qualified = str(sym["qualified_name"] or "")
            exact = next((d for d in dotted if qualified == d or qualified.endswith("." + d)), None)
            weight = board.options.names * (1.0 if exact else 1.0 / total)
            said = exact or str(row["mention"])
            detail = f"name {said!r} names {qualified} ({total} symbol(s) of that name)"
            board.symbol_evidence(str(sym["path"]), sym, "names", detail, weight)


def _expand(graph: Graph, board: Board, repo: str) -> None:
    """One hop: what the best symbols call, and who calls the symbols the text named."""
    opts = board.options
    best = board.best_symbols(opts.expand_from)
    if not best:
        return
    top = max(score for _, _, score in best) or 1.0
    if opts.callees > 0:
        keys = {f"{repo}|{path}|{s.qualified_name}": (s, score) for path, s, score in best}
        _hop(graph, board, gq.CALLEES_STEP, "callees", keys, opts.callees / top)
    if opts.callers > 0:
        named = [
            (path, s, score)
            for path, s, score in board.best_symbols(4 * opts.expand_from)
            if any(e.part in ("names", "frames") for e in s.evidence)
        ][: opts.expand_from]
        keys = {f"{repo}|{path}|{s.qualified_name}": (s, score) for path, s, score in named}
        _hop(graph, board, gq.CALLERS_STEP, "callers", keys, opts.callers / top)


def _hop(
    graph: Graph, board: Board, step: str, part: str, keys: dict[str, Any], scale: float
) -> None:
    if not keys:
        return
    rows = graph.query(f"localize {part}", step, keys=sorted(keys), limit=MAX_GRAPH_ROWS)
    for row in rows:
        origin, score = keys[row["target"]]
        verb = "calls" if part == "callees" else "is called by"
        detail = f"{part}: {origin.qualified_name} {verb} {row['qualified_name']}"
        if part == "callers":
            detail = f"callers: {row['qualified_name']} calls {origin.qualified_name}"
        board.symbol_evidence(str(row["path"]), row, part, detail, score * scale)
