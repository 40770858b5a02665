"""Server-side syntax highlighting, one line at a time: Pygments (a dependency of ``rich``)
splits the text into tokens; each token becomes an escaped ``<span class="...">`` with the
short class names of Pygments' HTML formatter, and a token that spans lines is cut at each
line break, so every line is complete HTML on its own (line numbers, anchors and call-site
links are added per line). A name that is a resolved call site on its line becomes a link."""

from __future__ import annotations

from collections.abc import Callable

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, guess_lexer_for_filename
from pygments.token import STANDARD_TYPES, Name, _TokenType
from pygments.util import ClassNotFound

from semgraph.web.console.markup import esc

MAX_LINE_CHARS = 2000
_ALIASES = {"c_sharp": "csharp", "tsx": "tsx", "typescript": "typescript"}


def lexer_for(path: str, language: str | None) -> Lexer:
    try:
        if language:
            return get_lexer_by_name(_ALIASES.get(language, language), stripnl=False)
    except ClassNotFound:
        pass
    try:
        return guess_lexer_for_filename(path, "", stripnl=False)
    except ClassNotFound:
        return get_lexer_by_name("text", stripnl=False)


def _css(kind: _TokenType) -> str:
    while kind not in STANDARD_TYPES and kind.parent is not None:
        kind = kind.parent
    return str(STANDARD_TYPES.get(kind, ""))


#: (line number, name) -> the link (already escaped) of a call site, or None
Linker = Callable[[int, str], str | None]


def lines(text: str, path: str, language: str | None, first: int, link: Linker) -> list[str]:
    """The lines of ``text`` (its first line is line ``first``) as escaped, highlighted HTML."""
    lexer = lexer_for(path, language)
    out: list[str] = []
    current: list[str] = []
    number = first
    for kind, value in lexer.get_tokens(text):
        pieces = value.split("\n")
        for i, piece in enumerate(pieces):
            if i:
                out.append("".join(current))
                current = []
                number += 1
            if not piece:
                continue
            css = _css(kind)
            inner = esc(piece[:MAX_LINE_CHARS])
            href = link(number, piece) if kind in Name else None
            if href is not None:
                inner = f'<a class="call" href="{href}">{inner}</a>'
            current.append(f'<span class="{css}">{inner}</span>' if css else inner)
    if current:
        out.append("".join(current))
    wanted = text.count("\n") + 1
    out += [""] * (wanted - len(out))
    return out[:wanted]
