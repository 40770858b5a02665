"""bench.synth: the small-files option (one or two short functions per file)."""

from __future__ import annotations

import random
import re
from pathlib import Path

from bench.synth import EXT, LANGS, WEIGHTS, file_text, generate, small_file_text

_DEF = re.compile(r"^(?:def |func |pub fn |function |export function |static int |int )", re.M)


def test_small_files_hold_one_or_two_short_functions() -> None:
    rng = random.Random(3)
    for _ in range(40):
        for lang in LANGS:
            text = small_file_text(rng, lang)
            if lang in {"markdown", "yaml"}:
                assert 1 <= text.count("\n") <= 4
                continue
            assert 1 <= len(_DEF.findall(re.sub(r"^    ", "", text, flags=re.M))) <= 2, text
            assert text.count("\n") <= 16


def test_small_repository_and_default_output_unchanged(tmp_path: Path) -> None:
    small = generate(tmp_path / "small", 30, seed=7, small=True)
    files = sorted(p for p in small.rglob("*") if p.is_file() and ".git" not in p.parts)
    assert len(files) == 30 and {p.suffix[1:] for p in files} <= set(EXT.values())
    assert sum(p.stat().st_size for p in files) < 30 * 400
    # the default generator still draws the same sequence: same seed, same first file text
    default = generate(tmp_path / "default", 3, seed=7)
    rng = random.Random(7)
    lang = rng.choices(LANGS, WEIGHTS)[0]
    first = default / "pkg0" / "sub0" / f"mod_0.{EXT[lang]}"
    assert first.read_text() == file_text(rng, lang)
