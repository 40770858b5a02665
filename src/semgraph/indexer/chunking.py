"""Search chunks: aligned to symbols, bounded in lines and characters.

A symbol that fits the bounds is one chunk. A larger symbol with nested symbols (a class
and its methods) is split into its own lines between the nested ones (the class header,
fields) and the nested symbols, recursively; a larger leaf symbol is split into windows.
Lines outside any symbol (module-level code, or a text file) are cut into windows that
prefer to break at blank lines. Whitespace-only windows are dropped; a single line longer
than the character bound is cut into pieces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from semgraph.model import Chunk, Symbol, SymbolKind, content_hash


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` split on ``\\n`` only (as tree-sitter counts rows), without ``\\r``."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


@dataclass(slots=True)
class _Node:
    symbol: Symbol
    children: list[_Node] = field(default_factory=list)


def _forest(symbols: Sequence[Symbol]) -> list[_Node]:
    roots: list[_Node] = []
    stack: list[_Node] = []
    for sym in sorted(symbols, key=lambda s: (s.start_line, -s.end_line)):
        node = _Node(sym)
        while stack and stack[-1].symbol.end_line < sym.start_line:
            stack.pop()
        if stack and sym.end_line <= stack[-1].symbol.end_line:
            stack[-1].children.append(node)
        else:
            roots.append(node)
        stack.append(node)
    return roots


class _Chunker:
    def __init__(self, lines: list[str], max_lines: int, max_chars: int) -> None:
        self.lines = lines
        self.max_lines = max(1, max_lines)
        self.max_chars = max(1, max_chars)
        self.out: list[Chunk] = []

    def emit(self, start: int, end: int, sym: Symbol | None) -> None:
        self.append(start, end, "\n".join(self.lines[start - 1 : end]), sym)

    def append(self, start: int, end: int, text: str, sym: Symbol | None) -> None:
        """A chunk of ``text`` (lines ``start``-``end``, under ``sym``), unless it is blank."""
        if not text.strip():
            return
        self.out.append(
            Chunk(
                start_line=start,
                end_line=end,
                text=text,
                content_hash=content_hash(text),
                symbol=sym.qualified_name if sym else None,
                kind=sym.kind if sym else None,
            )
        )

    def fits(self, start: int, end: int) -> bool:
        if end - start + 1 > self.max_lines:
            return False
        return sum(len(ln) + 1 for ln in self.lines[start - 1 : end]) <= self.max_chars

    def windows(self, start: int, end: int, sym: Symbol | None) -> None:
        line = start
        while line <= end:
            if len(self.lines[line - 1]) > self.max_chars:
                self.long_line(line, sym)
                line += 1
                continue
            stop, size, last_blank = line, 0, 0
            while stop <= end and stop - line < self.max_lines:
                width = len(self.lines[stop - 1]) + 1
                if size + width > self.max_chars:
                    break
                size += width
                if not self.lines[stop - 1].strip():
                    last_blank = stop
                stop += 1
            stop -= 1  # last line that fits
            if stop < end and last_blank > line + (stop - line) // 2:
                stop = last_blank  # prefer to break at a blank line in the second half
            self.emit(line, stop, sym)
            line = stop + 1

    def long_line(self, line: int, sym: Symbol | None) -> None:
        text = self.lines[line - 1]
        for i in range(0, len(text), self.max_chars):
            self.append(line, line, text[i : i + self.max_chars], sym)

    def region(self, start: int, end: int, nodes: list[_Node], label: Symbol | None) -> None:
        cur = start
        for node in nodes:
            s = max(node.symbol.start_line, cur)
            e = min(node.symbol.end_line, end)
            if e < s:
                continue
            if s > cur:
                self.windows(cur, s - 1, label)
            self.symbol(node, s, e)
            cur = e + 1
        if cur <= end:
            self.windows(cur, end, label)

    def symbol(self, node: _Node, start: int, end: int) -> None:
        if self.fits(start, end):
            self.emit(start, end, node.symbol)
        elif node.children:
            self.region(start, end, node.children, node.symbol)
        else:
            self.windows(start, end, node.symbol)


def chunk_lines(
    lines: list[str], symbols: Sequence[Symbol], *, max_lines: int, max_chars: int
) -> list[Chunk]:
    """Chunks covering every non-blank line of ``lines`` once, aligned to ``symbols``."""
    chunker = _Chunker(lines, max_lines, max_chars)
    if lines:
        chunker.region(1, len(lines), _forest([s for s in symbols if _own_chunk(s)]), None)
    return chunker.out


def _own_chunk(sym: Symbol) -> bool:
    """A defined type written on one line (``type byName []*Command``) is no chunk of its
    own: its text is little more than its name, and as a chunk it outranked whole functions
    on those name words in kNN (one of the docstring evaluation's test queries, bench/NOTES.md).
    Its line stays with the lines around it, as before such types were symbols; the graph
    keeps the symbol."""
    return not (sym.kind == SymbolKind.TYPE and sym.start_line == sym.end_line)
