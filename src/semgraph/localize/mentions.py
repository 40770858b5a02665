"""What an issue text names: traceback frames (``path:line``, with the function when the
frame says it), dotted names and identifiers, and which file roles it asks for. Pure: the
text in, bounded lists out; :mod:`semgraph.localize.locate` looks each up exactly in the
graph.

Frames are read in the forms tracebacks and compilers print them:

- Python: ``File "/app/src/shop/config.py", line 4, in read_config_file``;
- ``path:line`` and ``path:line:col`` (Go panics, Rust, compilers, linters), also in
  parentheses (JavaScript stacks: ``at f (src/a.js:10:3)``);
- Java/Kotlin stack lines: ``at com.x.Foo.bar(Foo.java:42)`` (the dotted method name is
  kept as a name, the file as a frame).

An identifier counts when it looks like code: ``snake_case``, ``camelCase``/``CamelCase``,
a dotted name, or a word written in backquotes; plain English words do not. Every list is
capped (:data:`MAX_FRAMES`, :data:`MAX_NAMES`), in the order the text first names them,
so a 32 kB text costs a bounded number of lookups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_FRAMES = 24
MAX_NAMES = 48
MAX_NAME_CHARS = 200
MAX_PATH_CHARS = 400
MIN_NAME_CHARS = 3

_PY_FRAME = re.compile(r'File "([^"\n]{1,400})", line (\d{1,7})(?:, in ([A-Za-z_<][\w.<>]*))?')
_PATH_LINE = re.compile(
    r"(?<![\w/.-])((?:/+|\./)?(?:[\w.@+-]+/)*[\w.@+-]+\.[A-Za-z][A-Za-z0-9]{0,5})"
    r":(\d{1,7})(?::\d{1,5})?\b"
)
_JAVA_FRAME = re.compile(r"\bat ([A-Za-z_$][\w$]*(?:\.[A-Za-z_$<][\w$<>]*)+)\(([\w.-]+):(\d+)\)")
_BACKQUOTED = re.compile(r"`([^`\n]{1,200})`")
_DOTTED = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)+\b")
_WORD = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
# file names a traceback prints that are never a file (an installed package's path is kept:
# its tail is often the repository's own file, ``.../site-packages/click/core.py``)
_NOT_REPO = ("<frozen", "<string>", "<stdin>", "<ipython")
# extensions a dotted word ends with when it is a file name, not a symbol
_FILE_SUFFIXES = frozenset(
    {
        *("py", "go", "rs", "js", "ts", "tsx", "jsx", "java", "kt", "rb", "c", "h", "cc"),
        *("cpp", "hpp", "cs", "php", "md", "rst", "txt", "toml", "json", "yaml", "yml"),
        *("cfg", "ini", "html", "css", "sh"),
    }
)

# words in the text that ask for files of a role, so that role is demoted less
# (``demote_asked``). Only phrases whose subject is the tests or the docs count: a bug report
# says "test" and "pytest" in passing ("I tested it", a traceback through a test) and a
# docstring or a typo lives in the source, and on the outside evaluation those passing
# mentions let tests outrank the source they test (bench/NOTES.md, "Tests and docs").
_TEST_VERBS = (
    r"add|adds|added|adding|write|writes|wrote|missing|failing|fails|flaky|broken|fix|"
    r"fixes|fixed|update|updates|extend|extends|improve|skip|skips|skipped|rename|cover"
)
_TEST_WORDS = r"(?:the\s+|a\s+|an\s+|more\s+|some\s+|new\s+|unit\s+|regression\s+)*"
ASKS = {
    "test": re.compile(
        rf"\b(?:{_TEST_VERBS})\s+{_TEST_WORDS}tests?\b"
        r"|\btest\s+(?:suite|coverage|files?|helpers?)\b|\bunit\s?tests?\b"
        r"|\btests?\s+(?:is|are|were|was|keeps?)\s+(?:failing|flaky|broken|missing|skipped)\b"
        r"|\b(?:in|under|to)\s+(?:the\s+)?tests?/",
        re.I,
    ),
    "docs": re.compile(
        r"\b(?:docs|documentation|readme|tutorial|user guide|the doc page|man page)\b", re.I
    ),
    "changelog": re.compile(r"\b(changelog|changes file|release notes|news entry)\b", re.I),
    # not "for example" or "sample code": every other bug report says them
    "example": re.compile(
        r"\b(?:examples? (?:directory|folder|scripts?|apps?|projects?)|the demos?)\b"
        r"|\bexamples?/",
        re.I,
    ),
    "i18n": re.compile(r"\b(translations?|locales?|i18n|l10n|\.po)\b", re.I),
}


@dataclass(frozen=True)
class Frame:
    path: str  # as the text printed it (``/`` separated)
    line: int
    function: str | None = None

    def text(self) -> str:
        where = f"{self.path}:{self.line}"
        return f"{where} in {self.function}" if self.function else where


@dataclass
class Mentions:
    frames: list[Frame] = field(default_factory=list)
    dotted: list[str] = field(default_factory=list)  # "Order.total", "shop.config.read"
    names: list[str] = field(default_factory=list)  # code-looking identifiers, last segments
    asks: frozenset[str] = frozenset()  # roles the text asks about

    def to_dict(self) -> dict[str, object]:
        return {
            "frames": [f.text() for f in self.frames],
            "dotted": list(self.dotted),
            "names": list(self.names),
            "asks": sorted(self.asks),
        }


def _code_like(word: str) -> bool:
    return "_" in word.strip("_") or bool(_CAMEL.search(word)) or word.startswith("__")


def _repo_path(path: str) -> bool:
    return not any(marker in path for marker in _NOT_REPO) and len(path) <= MAX_PATH_CHARS


def _frames(text: str) -> list[Frame]:
    out: list[Frame] = []
    for m in _PY_FRAME.finditer(text):
        out.append(Frame(m.group(1).replace("\\", "/"), int(m.group(2)), m.group(3)))
    for m in _JAVA_FRAME.finditer(text):
        out.append(Frame(m.group(2), int(m.group(3)), m.group(1).rsplit(".", 1)[-1]))
    for m in _PATH_LINE.finditer(text):
        out.append(Frame(m.group(1), int(m.group(2))))
    seen: set[tuple[str, int]] = set()
    kept: list[Frame] = []
    for frame in out:
        key = (frame.path, frame.line)
        if key in seen or not _repo_path(frame.path):
            continue
        seen.add(key)
        kept.append(frame)
    return kept[:MAX_FRAMES]


def _add(bucket: list[str], seen: set[str], name: str, cap: int) -> None:
    if name not in seen and MIN_NAME_CHARS <= len(name) <= MAX_NAME_CHARS and len(bucket) < cap:
        seen.add(name)
        bucket.append(name)


def extract(text: str) -> Mentions:
    """The frames, names and asked-for roles of ``text`` (bounded; see the module doc)."""
    frames = _frames(text)
    dotted: list[str] = []
    names: list[str] = []
    seen_dotted: set[str] = set()
    seen_names: set[str] = set()
    for frame in frames:
        if frame.function and not frame.function.startswith("<"):
            _add(names, seen_names, frame.function.rsplit(".", 1)[-1], MAX_NAMES)
    quoted = " ".join(m.group(1) for m in _BACKQUOTED.finditer(text))
    for m in _DOTTED.finditer(text):
        name = m.group(0).replace("::", ".")
        parts = name.split(".")
        if parts[-1].lower() in _FILE_SUFFIXES or parts[0] in ("www", "http", "https"):
            continue
        _add(dotted, seen_dotted, name, MAX_NAMES)
        _add(names, seen_names, parts[-1], MAX_NAMES)
    for m in _WORD.finditer(quoted):
        _add(names, seen_names, m.group(0), MAX_NAMES)
    for m in _WORD.finditer(text):
        word = m.group(0)
        if _code_like(word):
            _add(names, seen_names, word, MAX_NAMES)
    asks = frozenset(role for role, pattern in ASKS.items() if pattern.search(text))
    return Mentions(frames=frames, dotted=dotted, names=names, asks=asks)


def path_suffixes(path: str, most: int = 6) -> list[str]:
    """The repository-relative paths a printed path may be: itself without a leading ``/``
    or ``./``, then shorter and shorter tails (``/app/src/a/b.py`` -> ``app/src/a/b.py``,
    ``src/a/b.py``, ``a/b.py``, ``b.py``), at most ``most``, longest first."""
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    tails = ["/".join(parts[i:]) for i in range(len(parts))]
    return tails[-most:] if len(tails) > most else tails


def file_stem(path: str) -> str:
    """A printed path's file name without its extension (``a/b/app.py`` -> ``app``)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


def match_tail(tails: list[str], paths: list[str]) -> str | None:
    """The path of ``paths`` that ends with the longest of ``tails`` (a whole tail: after a
    ``/`` or the whole path); None when none does, or when only a bare file name matches
    more than one path."""
    for tail in tails:
        hits = [p for p in paths if p == tail or p.endswith("/" + tail)]
        if len(hits) == 1 or (hits and "/" in tail):
            return sorted(hits, key=len)[0]
    return None
