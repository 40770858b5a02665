"""A chunk's context (semgraph.search.context) from a real parse and the real chunker: the
enclosing class, the signature a later window shows no more, the names called on its lines;
and how the context enters the embedded text and the BM25 words."""

from __future__ import annotations

import pytest

from semgraph.indexer.chunking import chunk_lines, split_lines
from semgraph.model import Chunk, FileFacts
from semgraph.search.context import (
    MAX_CALLS,
    PARTS,
    ChunkContext,
    chunk_contexts,
    context_words,
    parse_parts,
)
from semgraph.search.embed import embedding_text
from tests.parsed_python import python_facts

LONG_BODY = "\n".join(f"        total += helper_{i}(value)" for i in range(30))
SOURCE = f"""import os


class Session:
    def send(self, request, timeout=None):
        prepared = self.prepare(request)
{LONG_BODY}
        return os.path.join(prepared, total)


def free(x):
    return len(x)
"""


def chunked(source: str, max_lines: int = 12) -> FileFacts:
    facts = python_facts({"pkg/sessions.py": source})[0]
    facts.chunks = chunk_lines(
        split_lines(source), facts.symbols, max_lines=max_lines, max_chars=10_000
    )
    return facts


def test_a_later_window_of_a_method_carries_its_class_signature_and_calls() -> None:
    facts = chunked(SOURCE)
    contexts = dict(zip((c.start_line for c in facts.chunks), chunk_contexts(facts), strict=True))
    send = [c for c in facts.chunks if c.symbol == "pkg.sessions.Session.send"]
    assert len(send) >= 3  # the long method is cut into windows
    first, later = contexts[send[0].start_line], contexts[send[1].start_line]
    assert first.cls == later.cls == "Session"
    assert first.module == "pkg.sessions"
    assert first.signature == ""  # its own first line shows it
    assert later.signature == "def send(self, request, timeout=None)"
    assert first.calls[0] == "prepare"
    assert all(name.startswith("helper_") for name in later.calls)
    assert len(later.calls) <= MAX_CALLS
    free = next(c for c in facts.chunks if c.symbol == "pkg.sessions.free")
    assert contexts[free.start_line] == ChunkContext("pkg.sessions", "", "", ("len",))


def test_parts_choose_the_lines_and_the_words() -> None:
    ctx = ChunkContext("pkg.sessions", "Session", "def send(self, request)", ("prepare", "join"))
    assert ctx.lines(frozenset(PARTS)) == [
        "module pkg.sessions",
        "class Session",
        "def send(self, request)",
        "calls prepare, join",
    ]
    assert ctx.lines(parse_parts("calls")) == ["calls prepare, join"]
    assert ctx.lines(parse_parts("")) == []
    assert context_words(ctx, parse_parts("class,calls")) == "class session calls prepare join"


def test_the_context_sits_between_the_path_and_the_code() -> None:
    chunk = Chunk(5, 9, "x = 1", "h", "pkg.sessions.Session.send", "method")
    text = embedding_text("a/pkg/sessions.py", chunk, context=["class Session", "calls prepare"])
    assert text == "send\npkg/sessions.py\nclass Session\ncalls prepare\nx = 1"
    assert embedding_text("a/pkg/sessions.py", chunk) == "send\npkg/sessions.py\nx = 1"


def test_a_file_without_symbols_has_no_module_line_and_hostile_names_are_bounded() -> None:
    facts = chunked("print('x')\n" * 3)
    assert chunk_contexts(facts) == [ChunkContext(calls=("print",))] * len(facts.chunks)
    huge = ChunkContext(cls="C" * 5000, calls=tuple(f"f{i}" for i in range(500)))
    assert all(len(line) <= 300 for line in huge.lines(frozenset(PARTS)))


def test_the_setting_refuses_unknown_and_hostile_parts() -> None:
    from semgraph.config import load_settings
    from semgraph.errors import ConfigError

    assert load_settings().search_chunk_context == ""
    assert load_settings(search_chunk_context="calls,class").search_chunk_context == "calls,class"
    for bad in ("bogus", "module,", ",calls", "module;rm -rf /", "class\n", "x" * 10_000):
        with pytest.raises(ConfigError):
            load_settings(search_chunk_context=bad)
