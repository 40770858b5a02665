"""One file's tree-sitter parse within a time budget.

tree-sitter's error recovery is worst-case slow on some inputs (36 s for 220 KB of unclosed
Lua brackets on this machine). The parse reads its input through a callback; once the budget
is spent the callback answers end-of-input, the parser finishes on what it has read, and the
file keeps the symbols of that prefix (``partial``, with the byte it stopped at) instead of
running into the pool's timeout, which kills the child and costs the file twice as long.

A code file with one very long line (generated, minified: a 5 MB line is a million call
sites) is not parsed at all: :func:`longest_line` tells extract.py to index it as text.
"""

from __future__ import annotations

import time

from tree_sitter import Node, Parser, Point, Tree

from semgraph.indexer import languages

PARSE_BUDGET_S = 10.0  # under the pool's parse_timeout_s (30 s by default)
READ_CHUNK_BYTES = 1 << 16
# smaller files are parsed from their bytes, without the callback (and its second parse):
# the worst measured, unclosed Lua brackets, takes 1.1 s at 33 KB (it grows about as the
# square of the size: 3.7 s at 66 KB, 36 s at 220 KB)
BUDGET_FROM_BYTES = 32_768


def parse_within(language: str, data: bytes, budget_s: float) -> tuple[Tree, int | None]:
    """The tree of ``data`` and, when the budget ran out, the byte offset the parse stopped
    at (None when it read everything)."""
    parser = Parser(languages.grammar(language))
    if len(data) <= BUDGET_FROM_BYTES:
        return parser.parse(data), None
    deadline = time.monotonic() + budget_s
    stopped: list[int] = []
    parsing = [True]

    def read(offset: int, _point: Point) -> bytes:
        if parsing[0] and (stopped or time.monotonic() > deadline):
            if not stopped:
                stopped.append(offset)
            return b""
        return data[offset : offset + READ_CHUNK_BYTES]

    tree = parser.parse(read)
    parsing[0] = False  # from now on the callback serves the text of the tree's nodes
    if stopped:
        return tree, stopped[0]
    # a tree parsed from a callback reads each node's text through it (slow: one call per
    # node); the same text again with the tree as the old one reuses every node, and the new
    # tree holds the bytes
    return parser.parse(data, old_tree=tree), None


def longest_line(data: bytes) -> int:
    """The length in bytes of the longest line of ``data``."""
    longest, start = 0, 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        longest, start = max(longest, end - start), end + 1
    return longest


def first_error_line(root: Node) -> int:
    """The line of the first error or missing node of a tree with errors."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return node.start_point[0] + 1
        if node.has_error:
            stack.extend(reversed(node.children))
    return root.start_point[0] + 1
