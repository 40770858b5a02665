"""Receiver and type expressions as text, for :mod:`semgraph.resolve.typed`: a receiver split
into its segments (``a.b(x).c`` is ``a``, ``b()``, ``c``) and the class a type expression
names (``Optional[Client]`` is ``Client``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SEP = re.compile(r"\?\.|\.|::|->")
_NONE_TYPES = frozenset({"None", "null", "undefined", "nil", "NoneType"})
_OPTIONAL = re.compile(r"^(?:typing\.|t\.)?(?:Optional|Annotated|Final|ClassVar)\[(.*)\]$")
_SEGMENT = re.compile(r"^([A-Za-z_$][\w$]*)(.*)$")


@dataclass(slots=True)
class Segment:
    name: str
    called: bool  # `name(...)`


def split_receiver(text: str) -> list[Segment] | None:
    """``a.b(x).c`` as segments; None for anything else (subscripts, literals, lambdas)."""
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
