"""The localisation's scoreboard: evidence comes in per file and per symbol, each piece
weighted by its part's weight (:class:`LocalizeOptions`), and the board ranks files and,
within each, symbols. Pure: no client, no I/O (:mod:`semgraph.localize.locate` feeds it).

How a file's score is made (each part can be switched off with a weight of 0):

- ``chunks``: its chunks' fused search scores, best first, summed with weights
  1, 1/2, 1/4 ... (:data:`CHUNK_DECAY`): one strong chunk beats many weak ones, and a file
  with several strong chunks beats a file with one;
- ``names`` and ``frames``: an identifier or dotted name of the text that names one of its
  symbols exactly (a name that names ``n`` symbols counts ``1/n``), a traceback frame that
  names the file (and the symbol spanning the frame's line);
- ``callees`` and ``callers``: graph hops from the best symbols: what they call, and who
  calls the functions the text names, each scaled by the score of the symbol it came from;
- ``rerank``: the best cosine of the question against the file's code in finer windows;
- ``history``: the file's commit messages that match the text (BM25; its best commits summed
  1, 1/2, 1/4, the best file scaled to 1, :mod:`semgraph.search.history_query`), one
  evidence line per commit (short sha and subject);
- ``demote``: a test, documentation, changelog, example, translation or generated file is
  multiplied by this factor; by ``demote_asked`` instead when the text asks for that role
  (:data:`semgraph.localize.mentions.ASKS`), so that an asked-for test can rank first without
  every passing mention of "test" handing the top of the answer to the tests.

A symbol's score is the same sum over its own evidence; a file's is its chunks' plus its
best symbol's non-chunk evidence plus its own frames and re-rank.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from semgraph.errors import SearchQueryError
from semgraph.search.roles import role_of

CHUNK_DECAY = 0.5
CHUNKS_PER_FILE = 4  # chunks summed per file (1 + 1/2 + 1/4 + 1/8)
MAX_EVIDENCE = 6  # evidence lines kept per file and per symbol
MAX_SYMBOLS_PER_FILE = 20  # the most ``symbols`` may ask for
MAX_EVIDENCE_CHARS = 200
MAX_OPTIONS_CHARS = 400
# the history part's weight, chosen on the commit-message evaluation's tuning half (55
# commits of click, cobra, requests and mux; bench/NOTES.md "Commit history"): file
# Acc@1/@5 67.3/89.1 off, 69.1/89.1 at 0.25, 70.9/87.3 at 0.5, 70.9/89.1 at 1.0
HISTORY_WEIGHT = 1.0
_OPTION_NAMES = (
    "chunks|names|frames|callees|callers|rerank|history|demote_asked|demote|expand_from|"
    "rerank_files|symbols"
)
_OPTION = rf"(?:{_OPTION_NAMES})=\d{{1,2}}(?:\.\d{{1,6}})?"
#: what :meth:`LocalizeOptions.parse` accepts (the HTTP schema states it)
OPTIONS_PATTERN = rf"^{_OPTION}(?:,{_OPTION})*$"


@dataclass(frozen=True)
class LocalizeOptions:
    """The parts' weights (0 switches a part off) and the candidate pool sizes."""

    chunks: float = 1.0
    names: float = 0.5
    frames: float = 1.0
    # the call-graph hops are off by default: on the evaluation's tuning half (commit
    # messages, bench/NOTES.md "Localize") 0.2 each lost file Acc@1 76.3 -> 71.1 and
    # function Acc@5 80.0 -> 67.1; ask for them with callees=0.2,callers=0.2
    callees: float = 0.0
    callers: float = 0.0
    rerank: float = 0.0
    history: float = HISTORY_WEIGHT
    demote: float = 0.3
    demote_asked: float = 0.7
    expand_from: int = 5  # best symbols whose calls (and named functions whose callers) hop
    symbols: int = 5  # symbols listed per file (at most MAX_SYMBOLS_PER_FILE)
    rerank_files: int = 10  # files the re-rank reads

    @classmethod
    def parse(cls, spec: str | None) -> LocalizeOptions:
        """``"names=0,rerank=0.5"``: the defaults with those parts changed."""
        if not spec:
            return cls()
        if len(spec) > MAX_OPTIONS_CHARS:
            raise SearchQueryError(f"options: over {MAX_OPTIONS_CHARS} characters")
        known = {f.name: f.type for f in fields(cls)}
        values: dict[str, Any] = {}
        for item in spec.split(","):
            name, eq, raw = item.strip().partition("=")
            if not eq or name not in known:
                raise SearchQueryError(
                    f"options: each item is name=value with a name of {', '.join(known)}"
                )
            try:
                value = float(raw) if known[name] == "float" else int(float(raw))
            except ValueError:
                raise SearchQueryError(f"options: {name} needs a number") from None
            if not 0 <= value <= 100:
                raise SearchQueryError(f"options: {name} must be between 0 and 100")
            values[name] = value
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Evidence:
    part: str  # chunks, names, frames, callees, callers, rerank, history
    detail: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"part": self.part, "detail": self.detail, "score": round(self.score, 4)}


@dataclass
class SymbolRank:
    qualified_name: str
    kind: str | None
    start_line: int | None
    end_line: int | None
    chunk_score: float = 0.0
    other_score: float = 0.0
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def score(self) -> float:
        return self.chunk_score + self.other_score

    def to_dict(self, factor: float) -> dict[str, Any]:
        return {
            "symbol": self.qualified_name,
            "kind": self.kind,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": round(self.score * factor, 4),
            "evidence": [e.to_dict() for e in _top(self.evidence)],
        }


@dataclass
class FileRank:
    path: str
    role: str
    chunk_scores: list[float] = field(default_factory=list)
    own_score: float = 0.0  # frames, re-rank and history on the file itself
    symbols: dict[str, SymbolRank] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    factor: float = 1.0  # the role's demotion

    def score(self, weight: float) -> float:
        best = sorted(self.chunk_scores, reverse=True)[:CHUNKS_PER_FILE]
        chunks = weight * sum(s * CHUNK_DECAY**i for i, s in enumerate(best))
        other = max((s.other_score for s in self.symbols.values()), default=0.0)
        return (chunks + other + self.own_score) * self.factor


def _top(evidence: list[Evidence]) -> list[Evidence]:
    return sorted(evidence, key=lambda e: -e.score)[:MAX_EVIDENCE]


class Board:
    """Files and symbols with their evidence; :meth:`ranked` orders them."""

    def __init__(self, options: LocalizeOptions, roles: dict[str, str]) -> None:
        self.options = options
        self.roles = roles  # path -> role, for paths the search saw
        self.files: dict[str, FileRank] = {}

    def file(self, path: str, role: str | None = None) -> FileRank:
        found = self.files.get(path)
        if found is None:
            found = FileRank(path, role or self.roles.get(path) or role_of(path))
            self.files[path] = found
        return found

    def symbol(self, path: str, row: dict[str, Any]) -> SymbolRank:
        file = self.file(path)
        name = str(row.get("qualified_name") or row.get("name") or "")
        found = file.symbols.get(name)
        if found is None:
            found = SymbolRank(name, row.get("kind"), row.get("start_line"), row.get("end_line"))
            file.symbols[name] = found
        if found.start_line is None and row.get("start_line") is not None:
            found.kind, found.start_line = row.get("kind"), row.get("start_line")
            found.end_line = row.get("end_line")
        return found

    def chunk(
        self, path: str, role: str | None, symbol: str | None, lines: str, score: float
    ) -> None:
        """A matched chunk (``score``: its fused search score)."""
        file = self.file(path, role)
        if role and file.role != role:
            file.role = role
        file.chunk_scores.append(score)
        detail = f"chunk {path}:{lines}"[:MAX_EVIDENCE_CHARS]
        file.evidence.append(Evidence("chunks", detail, score * self.options.chunks))
        if symbol:
            sym = self.symbol(path, {"qualified_name": symbol})
            weighted = score * self.options.chunks
            sym.chunk_score = max(sym.chunk_score, weighted)
            sym.evidence.append(Evidence("chunks", detail, weighted))

    def symbol_evidence(
        self, path: str, row: dict[str, Any], part: str, detail: str, w: float
    ) -> None:
        """Evidence for one graph symbol (a name, a frame, a hop), weighted ``w``."""
        if w <= 0:
            return
        sym = self.symbol(path, row)
        sym.other_score += w
        sym.evidence.append(Evidence(part, detail[:MAX_EVIDENCE_CHARS], w))

    def file_evidence(self, path: str, part: str, detail: str, w: float) -> None:
        if w <= 0:
            return
        file = self.file(path)
        file.own_score += w
        file.evidence.append(Evidence(part, detail[:MAX_EVIDENCE_CHARS], w))

    def demote(self, asks: frozenset[str]) -> None:
        for file in self.files.values():
            if file.role != "source":
                asked = file.role in asks
                file.factor = self.options.demote_asked if asked else self.options.demote

    def best_symbols(self, n: int) -> list[tuple[str, SymbolRank, float]]:
        """The ``n`` best symbols with a graph position (a line), and their scores."""
        rows = [
            (f.path, s, s.score * f.factor) for f in self.files.values() for s in f.symbols.values()
        ]
        rows.sort(key=lambda r: (-r[2], r[0], r[1].qualified_name))
        return rows[:n]

    def ranked(self, k: int) -> list[dict[str, Any]]:
        """The ``k`` best files, each with its best symbols and evidence."""
        scored = [(f.score(self.options.chunks), f) for f in self.files.values()]
        scored = [(s, f) for s, f in scored if s > 0]
        scored.sort(key=lambda r: (-r[0], r[1].path))
        per_file = max(1, min(self.options.symbols, MAX_SYMBOLS_PER_FILE))
        out = []
        for score, file in scored[:k]:
            symbols = sorted(
                (s for s in file.symbols.values() if s.score > 0),
                key=lambda s: (-s.score, s.qualified_name),
            )
            evidence = list(file.evidence)
            for sym in symbols:
                evidence += [e for e in sym.evidence if e.part != "chunks"]
            out.append(
                {
                    "path": file.path,
                    "role": file.role,
                    "score": round(score, 4),
                    "demoted": file.factor < 1.0,
                    "evidence": [e.to_dict() for e in _top(evidence)],
                    "symbols": [s.to_dict(file.factor) for s in symbols[:per_file]],
                }
            )
        return out
