"""What a chunk is part of, embedded and indexed with it: the file's module, the class that
encloses the chunk's symbol, the symbol's signature where the chunk's own lines do not show
it (a later window of a long function), and the names the chunk's lines call.

A chunk's code alone often hides what it belongs to: the second half of a method does not
say which class, nor what its arguments are. Retrieval work on code (CoRet; the chunk
headers of code-search engines) embeds that context with the chunk. Which parts go in is the
setting ``search_chunk_context`` (a comma-separated subset of :data:`PARTS`; empty: none),
part of the index fingerprint: changing it re-embeds each repository once. Each part is
also a BM25 field's words (:func:`context_words`), so keyword search sees it too.

Everything comes from the parsed file (:class:`semgraph.model.FileFacts`): no extra parse,
and a chunk's context is a function of its file alone, so a cloned staging index's unchanged
files keep their vectors.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from semgraph.model import CallSite, Chunk, FileFacts, Symbol, SymbolKind
from semgraph.search.split import split_text

PARTS = ("module", "class", "signature", "calls")
MAX_CALLS = 12  # distinct called names kept per chunk, first called first
MAX_PART_CHARS = 300  # one part's text, at most
_TYPES = {
    SymbolKind.CLASS,
    SymbolKind.INTERFACE,
    SymbolKind.STRUCT,
    SymbolKind.ENUM,
    SymbolKind.TRAIT,
    SymbolKind.TYPE,
}


@dataclass(frozen=True, slots=True)
class ChunkContext:
    """The context of one chunk; an empty string (or tuple) for a part it has not."""

    module: str = ""
    cls: str = ""  # the name of the type enclosing the chunk's symbol
    signature: str = ""  # only where the chunk does not start at its symbol's first line
    calls: tuple[str, ...] = ()

    def lines(self, parts: frozenset[str]) -> list[str]:
        """The context as the lines embedded above the code, for the enabled ``parts``."""
        out = []
        if "module" in parts and self.module:
            out.append(f"module {self.module}")
        if "class" in parts and self.cls:
            out.append(f"class {self.cls}")
        if "signature" in parts and self.signature:
            out.append(self.signature)
        if "calls" in parts and self.calls:
            out.append("calls " + ", ".join(self.calls))
        return [line[:MAX_PART_CHARS] for line in out]


def parse_parts(text: str) -> frozenset[str]:
    """The parts a ``search_chunk_context`` setting names (validated by the settings)."""
    return frozenset(p.strip() for p in text.split(",") if p.strip())


def _enclosing_type(sym: Symbol, by_name: dict[str, Symbol]) -> str:
    parent = by_name.get(sym.parent) if sym.parent else None
    while parent is not None:
        if parent.kind in _TYPES:
            return parent.name
        parent = by_name.get(parent.parent) if parent.parent else None
    return ""


def chunk_contexts(facts: FileFacts) -> list[ChunkContext]:
    """One :class:`ChunkContext` per chunk of ``facts``, in order."""
    by_name = {s.qualified_name: s for s in facts.symbols}
    calls = sorted(facts.calls, key=lambda c: c.line)
    lines = [c.line for c in calls]
    module = facts.module if facts.symbols else ""
    out = []
    for chunk in facts.chunks:
        sym = by_name.get(chunk.symbol) if chunk.symbol else None
        out.append(
            ChunkContext(
                module=module,
                cls=_enclosing_type(sym, by_name) if sym is not None else "",
                signature=_signature(sym, chunk),
                calls=_called(calls, bisect_left(lines, chunk.start_line), chunk),
            )
        )
    return out


def _signature(sym: Symbol | None, chunk: Chunk) -> str:
    if sym is None or not sym.signature or chunk.start_line <= sym.start_line:
        return ""
    return sym.signature


def _called(calls: list[CallSite], first: int, chunk: Chunk) -> tuple[str, ...]:
    """The distinct names called on the chunk's lines (``calls`` sorted by line, from
    index ``first``), in the order first called."""
    seen: dict[str, None] = {}
    for call in calls[first:]:
        if call.line > chunk.end_line or len(seen) >= MAX_CALLS:
            break
        if call.callee:
            seen.setdefault(call.callee)
    return tuple(seen)


def context_words(ctx: ChunkContext, parts: frozenset[str]) -> str:
    """The enabled parts' words for the BM25 field ``context_text`` (identifiers split)."""
    return split_text(" ".join(ctx.lines(parts)))
