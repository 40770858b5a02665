"""Hostile files for each grammar added by issue 16: deeply nested code, a 5 MB single-line
file, invalid UTF-8, and input that sends the grammar's error recovery down its slow path."""

from __future__ import annotations

EXTENSIONS = {
    "csharp": "cs",
    "kotlin": "kt",
    "ruby": "rb",
    "php": "php",
    "swift": "swift",
    "scala": "scala",
    "bash": "sh",
    "lua": "lua",
}
DEPTH = 3000
ONE_LINE_BYTES = 5_000_000

# (prefix, one nesting level opened, one closed, suffix)
_NESTING = {
    "csharp": ("class A { void F() {\n", "if (x) {\n", "}\n", "} }\n"),
    "kotlin": ("fun f() {\n", "if (x) {\n", "}\n", "}\n"),
    "ruby": ("def f\n", "if x\n", "end\n", "end\n"),
    "php": ("<?php function f() {\n", "if ($x) {\n", "}\n", "}\n"),
    "swift": ("func f() {\n", "if x {\n", "}\n", "}\n"),
    "scala": ("object A { def f() = {\n", "if (x) {\n", "}\n", "} }\n"),
    "bash": ("f() {\n", "if true; then\n", "fi\n", "}\n"),
    "lua": ("function f()\n", "if x then\n", "end\n", "end\n"),
}
_CALL = {"bash": "f 1; "}  # one statement of the one-line file (default "f(1); ")
# unclosed openers, one group a line: each line sends the parser into error recovery
_RECOVERY = {
    "csharp": ("class A { void F() {\n", "( [ { x = \n"),
    "kotlin": ("fun f() {\n", "( [ { x = \n"),
    "ruby": ("def f\n", "( [ { x = \n"),
    "php": ("<?php function f() {\n", "( [ { $x = \n"),
    "swift": ("func f() {\n", "( [ { x = \n"),
    "scala": ("object A { def f() = {\n", "( [ { x = \n"),
    "bash": ("f() {\n", "$( ( [[ { x=\n"),
    "lua": ("function f()\n", "( { [ x = \n"),
}


def nested(language: str, depth: int = DEPTH) -> bytes:
    head, opened, closed, tail = _NESTING[language]
    return (head + opened * depth + closed * depth + tail).encode()


def one_line(language: str) -> bytes:
    head = "<?php " if language == "php" else ""
    call = _CALL.get(language, "f(1); ")
    body = head + call * (ONE_LINE_BYTES // len(call) + 1)
    return body.encode()[:ONE_LINE_BYTES]


def invalid_utf8(language: str) -> bytes:
    head, opened, closed, tail = _NESTING[language]
    return (head + opened + closed + tail).encode() + b"\xff\xfe \xc3\x28 \x80\x81\n"


def slow_recovery(language: str, lines: int = 20_000) -> bytes:
    head, line = _RECOVERY[language]
    return (head + line * lines).encode()


def hostile_files(language: str) -> dict[str, bytes]:
    ext = EXTENSIONS[language]
    return {
        f"hostile/{language}/nested.{ext}": nested(language),
        f"hostile/{language}/oneline.{ext}": one_line(language),
        f"hostile/{language}/bad_utf8.{ext}": invalid_utf8(language),
        f"hostile/{language}/recovery.{ext}": slow_recovery(language),
    }
