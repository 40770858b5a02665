"""Receiver and type expressions as text, for :mod:`semgraph.resolve.typed`: a receiver split
into its segments (``a.b(x).c`` is ``a``, ``b()``, ``c``), the class a type expression
names (``Optional[Client]`` is ``Client``), the members of a union, and splitting at a
separator outside brackets and string literals."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_SEP = re.compile(r"\?\.|\.|::|->")
_NONE_TYPES = frozenset({"None", "null", "undefined", "nil", "NoneType"})
_OPTIONAL = re.compile(r"^(?:typing\.|t\.)?(?:Optional|Annotated|Final|ClassVar)\[(.*)\]$")
_SEGMENT = re.compile(r"^([A-Za-z_$][\w$]*)(.*)$")
_UNION = re.compile(r"^(?:typing\.|t\.)?(?:Union|Optional)\[(.*)\]$", re.S)
BRACKETS_OPEN, BRACKETS_CLOSE = "([{", ")]}"


@dataclass(slots=True)
class Segment:
    name: str
    called: bool  # `name(...)`


def split_receiver(text: str) -> list[Segment] | None:
    """``a.b(x).c`` as segments; None for anything else (subscripts, literals, lambdas).
    ``new A.B(x).c`` (JS/TS, Java) is the call ``A.B(x).c``: constructing calls the class.
    The same text is split once per resolution's worth of calls (a cache of pure results;
    each call gets its own segments, which callers may change)."""
    found = _split_cached(text)
    return [Segment(n, c) for n, c in found] if found is not None else None


@functools.lru_cache(maxsize=65_536)
def _split_cached(text: str) -> tuple[tuple[str, bool], ...] | None:
    segs = _split(text)
    return tuple((s.name, s.called) for s in segs) if segs is not None else None


def _split(text: str) -> list[Segment] | None:
    text = text[4:].lstrip() if text.startswith("new ") else text
    parts: list[str] = []
    depth, start, i = 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "([{<" and not (ch == "<" and depth == 0):
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            sep = _SEP.match(text, i)
            if sep is not None:
                parts.append(text[start:i])
                i = start = sep.end()
                continue
        i += 1
    parts.append(text[start:])
    out: list[Segment] = []
    for raw in parts:
        m = _SEGMENT.match(raw.strip().rstrip("!?"))
        if m is None:
            return None
        rest = m.group(2).strip()
        rest = re.sub(r"^::<.*>|^<.*>", "", rest).strip()  # Rust turbofish, TS type args
        if rest and not (rest.startswith("(") and rest.endswith(")")):
            return None
        out.append(Segment(m.group(1), bool(rest)))
    return out or None


MAX_TYPE_TEXT = 400  # binding texts are cut at 200 characters by the parser
_WRAPPER = re.compile(
    r"^(?:(?:\w+::)+|(?:java\.util\.))?"
    r"(?:Option|Result|Box|Rc|Arc|RefCell|Mutex|Promise|Optional|Awaitable"
    r"|Type|type)\s*[<\[](.*)[>\]]$"
)


def _first_argument(args: str) -> str:
    depth = 0
    for i, ch in enumerate(args):
        if ch in "<[(":
            depth += 1
        elif ch in ">])":
            depth -= 1
        elif ch == "," and depth == 0:
            return args[:i]
    return args


def clean_type(text: str) -> str | None:
    """The class a type expression names, as a dotted name (language rules: Python
    ``Optional``/``X | None``/string annotations, generics' arguments, references and
    pointers, arrays); None when it names no single class."""
    if len(text) > MAX_TYPE_TEXT:
        return None
    t = text.strip().strip("'\"").strip()
    t = re.sub(r"^(?:&\s*)?(?:mut\s+|const\s+|readonly\s+)?", "", t).lstrip("*&").strip()
    while True:
        m = _OPTIONAL.match(t)
        if m is None:
            break
        t = m.group(1).split(",")[0].strip() if "Annotated" in t[:20] else m.group(1).strip()
    if "|" in t:
        alts = [a.strip() for a in t.split("|") if a.strip() not in _NONE_TYPES]
        if len(alts) != 1:
            return None
        t = alts[0]
    union = re.match(r"^(?:typing\.|t\.)?Union\[(.*)\]$", t)
    if union is not None:
        alts = [a.strip() for a in union.group(1).split(",") if a.strip() not in _NONE_TYPES]
        if len(alts) != 1:
            return None
        t = alts[0]
    t = t.strip("'\"").rstrip("?")
    wrapper = _WRAPPER.match(t)
    if wrapper is not None:  # Option<T>, Result<T, E>, Box<T>, Promise<T>, Optional<T>
        return clean_type(_first_argument(wrapper.group(1)))
    t = re.split(r"[\[<(]", t, maxsplit=1)[0].strip()
    t = t.replace("::", ".")
    if not re.fullmatch(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*", t):
        return None
    return t


def alternatives(text: str) -> list[str]:
    """The members of a union type as written (``A | B``, ``Union[A, B]``, ``Optional[A]``),
    without ``None``; a string annotation is read as its content."""
    if len(text) > MAX_TYPE_TEXT:
        return []
    t = text.strip().strip("'\"").strip()
    parts = split_top(t, "|")
    if len(parts) == 1:
        m = _UNION.match(t)
        if m is None:
            return [t] if t not in _NONE_TYPES else []
        parts = split_top(m[1], ",")
    return [a for p in parts for a in alternatives(p)]


def outside_quotes(text: str) -> list[tuple[int, str]]:
    """(index, character) of ``text`` outside string literals."""
    out, quote, i = [], "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        else:
            out.append((i, ch))
        i += 1
    return out


def split_top(
    text: str, sep: str, opens: str = BRACKETS_OPEN, closes: str = BRACKETS_CLOSE
) -> list[str]:
    """``text`` split at ``sep`` outside brackets (``opens``/``closes``) and string literals."""
    out, depth, start = [], 0, 0
    for i, ch in outside_quotes(text):
        if ch in opens:
            depth += 1
        elif ch in closes:
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return out
