"""Synthetic repositories: ``generate(root, n_files, seed)`` writes N source files across
the supported languages (plus some Markdown/YAML), with realistic sizes (tens to a few
hundred lines: imports, classes, methods, functions that call each other) and commits them
as one git commit. Deterministic for a given seed.

``generate(..., small=True)`` writes small files instead: one or two short functions (or a
few lines of Markdown/YAML) per file, about one or two chunks each, so a whole job at 20k
files (embedding included) fits in a benchmark run. The default output is unchanged.

:mod:`bench.synth.langs` writes all sixteen parsed languages; :mod:`bench.synth.vectors`
loads a search index of synthetic files with stand-in document vectors.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

LANGS = ["python", "javascript", "typescript", "go", "java", "rust", "c", "cpp", "markdown", "yaml"]
WEIGHTS = [22, 12, 14, 12, 12, 8, 6, 6, 5, 3]
EXT = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "go": "go",
    "java": "java",
    "rust": "rs",
    "c": "c",
    "cpp": "cpp",
    "markdown": "md",
    "yaml": "yaml",
}
WORDS = [
    "load",
    "save",
    "parse",
    "index",
    "fetch",
    "build",
    "merge",
    "render",
    "check",
    "apply",
    "scan",
    "emit",
    "route",
    "store",
    "query",
    "embed",
    "chunk",
    "spill",
    "walk",
    "split",
    "join",
    "track",
]


def _name(rng: random.Random, cap: bool = False) -> str:
    a, b = rng.choice(WORDS), rng.choice(WORDS)
    return (a.capitalize() + b.capitalize()) if cap else f"{a}_{b}"


def _body(rng: random.Random, lang: str, fns: list[str], indent: str) -> list[str]:
    out = []
    for _ in range(rng.randint(3, 14)):
        callee = rng.choice(fns)
        if lang == "python":
            out.append(f"{indent}value = {callee}(value, {rng.randint(0, 99)})  # step")
        elif lang in {"go"}:
            out.append(f"{indent}value = {callee}(value, {rng.randint(0, 99)})")
        else:
            out.append(f"{indent}value = {callee}(value, {rng.randint(0, 99)});")
    return out


def _python(rng: random.Random, fns: list[str]) -> list[str]:
    lines = ["import os", "from collections import defaultdict", ""]
    for _ in range(rng.randint(1, 3)):
        cls = _name(rng, True)
        lines += ["", f"class {cls}:", f'    """{cls} keeps state."""', ""]
        for _ in range(rng.randint(2, 6)):
            lines += [f"    def {_name(rng)}(self, value):", '        """Do a step."""']
            lines += [*_body(rng, "python", fns, "        "), "        return value", ""]
    for fn in fns:
        lines += ["", f"def {fn}(value, n):", *_body(rng, "python", fns, "    ")]
        lines += ["    return value + n", ""]
    return lines


def _cstyle(rng: random.Random, lang: str, fns: list[str]) -> list[str]:
    head = {
        "javascript": ["import fs from 'fs';", "const path = require('path');"],
        "typescript": ["import { readFile } from 'fs';", "import * as path from 'path';"],
        "java": ["package demo;", "", "import java.util.List;"],
        "c": ["#include <stdio.h>", '#include "util.h"'],
        "cpp": ["#include <vector>", '#include "util.hpp"'],
        "go": ["package demo", "", 'import "fmt"'],
        "rust": ["use std::collections::HashMap;"],
    }[lang]
    lines = [*head, ""]
    sig = {
        "javascript": "function {f}(value, n) {{",
        "typescript": "export function {f}(value: number, n: number): number {{",
        "java": "    static int {f}(int value, int n) {{",
        "c": "int {f}(int value, int n) {{",
        "cpp": "int {f}(int value, int n) {{",
        "go": "func {f}(value int, n int) int {{",
        "rust": "pub fn {f}(value: i32, n: i32) -> i32 {{",
    }[lang]
    var = {"go": "", "rust": "let mut ", "javascript": "let ", "typescript": "let "}.get(
        lang, "int "
    )
    if lang == "java":
        lines.append(f"public class {_name(rng, True)} {{")
    if lang == "cpp":
        cls = _name(rng, True)
        lines += [
            f"class {cls} {{",
            "public:",
            "    int size() const { return n_; }",
            "    int n_ = 0;",
            "};",
            "",
        ]
    for fn in fns:
        lines += [
            "    /** Compute a step. */" if lang == "java" else "// Compute a step.",
            sig.format(f=fn),
            f"    {var}value2 = value;" if var else "    value2 := value",
        ]
        lines += [
            ln.replace("value =", "value2 =").replace("(value,", "(value2,")
            for ln in _body(rng, lang, fns, "        " if lang == "java" else "    ")
        ]
        ret = "value2 + n"
        lines += [
            f"    return {ret};" if lang not in {"go", "rust"} else f"    return {ret}",
            "    }" if lang == "java" else "}",
            "",
        ]
    if lang == "java":
        lines.append("}")
    return lines


def _text(rng: random.Random, lang: str) -> list[str]:
    if lang == "yaml":
        return [
            f"{_name(rng)}:\n  enabled: true\n  size: {rng.randint(1, 500)}"
            for _ in range(rng.randint(5, 40))
        ]
    out = [f"# {_name(rng, True)}", ""]
    for _ in range(rng.randint(3, 20)):
        out += [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))), ""]
    return out


def file_text(rng: random.Random, lang: str) -> str:
    fns = [_name(rng) + f"_{i}" for i in range(rng.randint(2, 12))]
    if lang == "python":
        lines = _python(rng, fns)
    elif lang in {"markdown", "yaml"}:
        lines = _text(rng, lang)
    else:
        lines = _cstyle(rng, lang, fns)
    return "\n".join(lines) + "\n"


def small_file_text(rng: random.Random, lang: str) -> str:
    """A short file: one or two functions of two to four lines (or a few lines of text)."""
    if lang == "markdown":
        lines = [f"# {_name(rng, True)}", "", " ".join(rng.choice(WORDS) for _ in range(12))]
    elif lang == "yaml":
        lines = [f"{_name(rng)}:\n  enabled: true\n  size: {rng.randint(1, 500)}"]
    else:
        fns = [_name(rng) + f"_{i}" for i in range(rng.randint(1, 2))]
        lines = []
        for fn in fns:
            body = [f"value = {rng.choice(fns)}(value, {rng.randint(0, 99)})"]
            body += [f"value = {rng.choice(fns)}(value, n)"] * rng.randint(0, 1)
            lines += _small_function(lang, fn, body)
        if lang == "java":
            lines = [f"public class {_name(rng, True)} {{", *lines, "}"]
    return "\n".join(lines) + "\n"


def _small_function(lang: str, fn: str, body: list[str]) -> list[str]:
    if lang == "python":
        return [f"def {fn}(value, n):", *(f"    {b}" for b in body), "    return value + n", ""]
    if lang == "go":
        return [
            f"func {fn}(value int, n int) int {{",
            *(f"    {b}" for b in body),
            "    return value",
            "}",
            "",
        ]
    if lang == "rust":
        head = f"pub fn {fn}(mut value: i32, n: i32) -> i32 {{"
        return [head, *(f"    {b};" for b in body), "    value", "}", ""]
    head = {
        "javascript": f"function {fn}(value, n) {{",
        "typescript": f"export function {fn}(value: number, n: number): number {{",
        "java": f"static int {fn}(int value, int n) {{",
        "c": f"int {fn}(int value, int n) {{",
        "cpp": f"int {fn}(int value, int n) {{",
    }[lang]
    return [head, *(f"    {b};" for b in body), "    return value;", "}", ""]


def generate(root: Path, n_files: int, seed: int = 0, *, small: bool = False) -> Path:
    """Create a git repository at ``root`` with ``n_files`` files in one commit (short ones
    with ``small``)."""
    rng = random.Random(seed)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=False)
    for i in range(n_files):
        lang = rng.choices(LANGS, WEIGHTS)[0]
        pkg = f"pkg{i % 97}/sub{(i // 97) % 13}"
        path = root / pkg / f"mod_{i}.{EXT[lang]}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(small_file_text(rng, lang) if small else file_text(rng, lang))
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "synth",
        "GIT_AUTHOR_EMAIL": "synth@example.invalid",
        "GIT_COMMITTER_NAME": "synth",
        "GIT_COMMITTER_EMAIL": "synth@example.invalid",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "synthetic"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root
