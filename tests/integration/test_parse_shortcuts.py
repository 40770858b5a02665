"""The parse phase's shortcuts (issue 25) against the slow path, with the real parser:
blob ids from git's index (unchanged files neither read nor hashed), cached results copied
into the spill as compressed frames, the previous cache read in one ordered scan. After a
push, both paths write the same spill (record for record), the same stats and the
same next cache; with a tracked ``.gitattributes`` the shortcut steps aside."""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
import zstandard

from semgraph.config import Settings, load_settings
from semgraph.indexer.parse import ParseStats, parse_repository
from semgraph.indexer.parsecache import CACHE_FILE, ParseCache, cache_dir
from semgraph.indexer.spill import SpillReader
from semgraph.model import FileFacts, SkippedFile
from tests.repos import commit, make_repo

SLOW = {"parse_git_blob_ids": False, "spill_cached_frames": False, "parse_cache_in_place": False}
FILES: dict[str, str | bytes | None] = {
    "app/util.py": "def helper(x):\n    return str(x)\n",
    "app/svc.py": "from app.util import helper\n\ndef run():\n    return helper(1)\n",
    "app/empty.py": "",
    "web/index.ts": "export function main() { return 1; }\n",
    "web/app.min.js": "var a=1;" * 400 + "\n",
    "vendor/lib.py": "def vendored():\n    pass\n",
    "secret/skip.py": "def ignored():\n    pass\n",
    ".semgraphignore": "secret/\n",
    "README.md": "# Demo\n\nSome words.\n",
    "big.py": "x = 1\n" * 400,
    "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
    "go/main.go": "package main\n\nfunc main() { run() }\n\nfunc run() {}\n",
}
PUSH: dict[str, str | bytes | None] = {
    "app/util.py": "def helper(x):\n    return repr(x)\n\n\ndef other():\n    return 2\n",
    "web/index.ts": None,
    "app/new.py": "from app.util import other\n\nVALUE = other()\n",
}


def cfg(state: Path, **extra: object) -> Settings:
    return load_settings(state_dir=str(state), pool_size=1, max_file_bytes=1000, **extra)


def parse(settings: Settings, repo: Path, spill: Path) -> ParseStats:
    with ParseCache.for_repo(settings, "demo", "fp") as cache:
        stats = parse_repository(settings, repo, spill, cache=cache)
        cache.commit()
    return stats


def cache_rows(settings: Settings) -> list[tuple[object, ...]]:
    zd = zstandard.ZstdDecompressor()
    with sqlite3.connect(cache_dir(settings, "demo") / CACHE_FILE) as conn:
        rows = conn.execute("SELECT path, blob, kind, status, size_bytes, packed FROM files")
        return sorted((*row[:5], zd.decompress(row[5])) for row in rows)


@dataclass
class Written:
    records: list[FileFacts | SkippedFile]
    stats: ParseStats
    cache: list[tuple[object, ...]]


def after_push(tmp_path: Path, files: dict[str, str | bytes | None]) -> dict[str, Written]:
    """Index ``files``, push PUSH, then parse the push by each path from a copy of the
    same cache; what each wrote."""
    repo = make_repo(tmp_path / "repo", files)
    os.symlink("app/util.py", repo / "link.py")
    commit(repo, {}, "symlink")
    first = cfg(tmp_path / "first", **SLOW)
    parse(first, repo, tmp_path / "first.spill")
    commit(repo, PUSH, "push")
    out: dict[str, Written] = {}
    for name, extra in (("slow", SLOW), ("fast", {})):
        settings = cfg(tmp_path / name, **extra)
        shutil.copytree(cache_dir(first, "demo"), cache_dir(settings, "demo"))
        stats = parse(settings, repo, tmp_path / f"{name}.spill")
        # sorted: results collected from one window arrive in no set order, either way
        records = sorted(SpillReader(tmp_path / f"{name}.spill"), key=lambda r: r.path)
        out[name] = Written(records, stats, cache_rows(settings))
    return out


def test_shortcuts_write_what_the_slow_path_writes(tmp_path: Path) -> None:
    runs = after_push(tmp_path, FILES)
    slow, fast = runs["slow"].stats, runs["fast"].stats
    fast_cache = runs["fast"].cache
    assert runs["fast"].records == runs["slow"].records
    assert [r.path for r in runs["fast"].records if isinstance(r, SkippedFile)] == [
        "app/empty.py",
        "big.py",
        "link.py",
        "logo.png",
        "secret/skip.py",
        "vendor/lib.py",
        "web/app.min.js",
    ]
    for field in ("files_by_status", "skipped_by_reason", "files_reused", "parse_failures"):
        assert getattr(fast, field) == getattr(slow, field), field
    assert fast.files_reused == 4  # app/svc.py, README.md, go/main.go, .semgraphignore
    assert fast_cache == runs["slow"].cache
    assert {row[0] for row in fast_cache} >= {"app/new.py", "app/util.py"}
    assert "web/index.ts" not in {row[0] for row in fast_cache}
    assert set(fast.timings_s) >= {"walk", "hash", "cache_read", "cache_write", "spill_reused"}


def test_tracked_attributes_take_the_slow_path_with_the_same_result(tmp_path: Path) -> None:
    runs = after_push(tmp_path, {**FILES, ".gitattributes": "*.md text\n"})
    slow, fast = runs["slow"], runs["fast"]
    assert fast.records == slow.records and fast.cache == slow.cache
    assert fast.stats.files_reused == slow.stats.files_reused > 0


@pytest.mark.parametrize("shuffle", [False, True])
def test_out_of_order_lookups_still_hit(tmp_path: Path, shuffle: bool) -> None:
    """The ordered scan serves lookups in path order; any other order falls back to the
    key, so a hit is never lost."""
    repo = make_repo(tmp_path / "repo", FILES)
    settings = cfg(tmp_path / "s")
    parse(settings, repo, tmp_path / "1.spill")
    with ParseCache.for_repo(settings, "demo", "fp") as cache:
        rows = cache_rows(settings)
        order = sorted(rows, reverse=shuffle)
        for path, blob, *_ in order:
            assert cache.lookup(str(path), str(blob)) is not None, path
        assert cache.lookup("app/util.py", "0" * 40) is None
        assert cache.hits == len(rows)


def test_a_stale_journal_never_reaches_a_new_cache(tmp_path: Path) -> None:
    """An in-place commit that died leaves parse.sqlite-journal; the next job cannot open
    the old cache read-only (a miss) and renames a new one over it: the journal goes first."""
    with ParseCache(tmp_path, "fp") as cache:
        cache.commit()
    journal = tmp_path / f"{CACHE_FILE}-journal"
    journal.write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + b"\0" * 504)  # a journal header
    with ParseCache(tmp_path, "other fingerprint") as cache:  # a miss as a whole: no in place
        cache.commit()
    assert not journal.exists()
    with sqlite3.connect(tmp_path / CACHE_FILE) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone() == (
            "other fingerprint",
        )
