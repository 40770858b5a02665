"""The parse cache with parse_repository and a real pool: a second parse of the same content
parses nothing and writes the same spill; a changed file is the only one parsed; another
fingerprint, a corrupt cache or a failed parse never feed a result forward."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from semgraph.config import Settings, load_settings
from semgraph.indexer.parse import ParseStats, parse_repository
from semgraph.indexer.parsecache import CACHE_FILE, ParseCache, cache_dir
from semgraph.indexer.spill import SpillReader
from semgraph.model import FileFacts, FileSummary, SkippedFile
from semgraph.resolve import ledger
from tests.repos import commit, make_repo

FILES: dict[str, str | bytes | None] = {
    "app/util.py": "def helper(x):\n    return str(x)\n",
    "app/svc.py": "from app.util import helper\n\ndef run():\n    return helper(1)\n",
    "web/index.ts": "export function main() { return 1; }\n",
    "README.md": "# Demo\n",
    "faults/slow.py": "x = 1\n# SEMGRAPH_FAULT:segfault\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
}


def cfg(tmp_path: Path) -> Settings:
    return load_settings(
        state_dir=str(tmp_path / "state"), pool_size=2, parse_window_files=2, parse_timeout_s=2
    )


def records(spill: Path) -> list[FileFacts | SkippedFile]:
    return sorted(SpillReader(spill), key=lambda r: r.path)


def parse(
    settings: Settings, repo: Path, spill: Path, fp: str = "fp1", commit_: bool = True
) -> ParseStats:
    with ParseCache.for_repo(settings, "demo", fp) as cache:
        stats = parse_repository(settings, repo, spill, cache=cache)
        if commit_:
            cache.commit()
    return stats


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SEMGRAPH_FAULTS", "parse.file=marker")
    return make_repo(tmp_path / "repo", FILES)


def test_second_parse_reuses_everything_but_failures(tmp_path: Path, repo: Path) -> None:
    settings = cfg(tmp_path)
    first = parse(settings, repo, tmp_path / "1.spill")
    assert first.files_reused == 0
    assert first.files_by_status.get("parse_failed") == 1  # crashed twice: given up
    again = parse(settings, repo, tmp_path / "2.spill")
    # every parsed file is reused; the parse failure is parsed again (never cached)
    assert again.files_reused == first.files_indexed - 1
    assert again.files_by_status == first.files_by_status
    assert again.skipped_by_reason == first.skipped_by_reason
    assert records(tmp_path / "2.spill") == records(tmp_path / "1.spill")


def test_only_the_changed_file_is_parsed(tmp_path: Path, repo: Path) -> None:
    settings = cfg(tmp_path)
    commit(repo, {"faults/slow.py": None})
    first = parse(settings, repo, tmp_path / "1.spill")
    commit(repo, {"app/util.py": "def helper(x, y):\n    return str(x + y)\n"})
    second = parse(settings, repo, tmp_path / "2.spill")
    assert second.files_reused == first.files_indexed - 1
    changed = {r.path: r for r in records(tmp_path / "2.spill")}["app/util.py"]
    assert isinstance(changed, FileFacts) and "x + y" in changed.chunks[0].text


def test_other_fingerprint_uncommitted_or_corrupt_cache_reuses_nothing(
    tmp_path: Path, repo: Path
) -> None:
    settings = cfg(tmp_path)
    commit(repo, {"faults/slow.py": None})
    first = parse(settings, repo, tmp_path / "1.spill")
    assert parse(settings, repo, tmp_path / "2.spill", fp="fp2").files_reused == 0
    # the fp2 job replaced the cache: fp1 now misses as a whole
    assert parse(settings, repo, tmp_path / "3.spill", fp="fp1", commit_=False).files_reused == 0
    # an uncommitted job left the previous (fp2) cache in place
    assert parse(settings, repo, tmp_path / "4.spill", fp="fp2").files_reused == first.files_indexed
    path = cache_dir(settings, "demo") / CACHE_FILE
    with sqlite3.connect(path) as conn:  # a row whose payload is not zstd
        conn.execute("UPDATE files SET packed = x'00ff' WHERE path = 'app/util.py'")
    corrupt = parse(settings, repo, tmp_path / "5.spill", fp="fp2")
    assert corrupt.files_indexed == first.files_indexed
    assert records(tmp_path / "5.spill") == records(tmp_path / "1.spill")
    path.write_bytes(b"\x00garbage" * 64)
    assert parse(settings, repo, tmp_path / "6.spill", fp="fp2").files_reused == 0
    assert records(tmp_path / "6.spill") == records(tmp_path / "1.spill")


def test_cache_dirs_are_hashed_and_failed_jobs_leave_no_new_file(tmp_path: Path) -> None:
    settings = cfg(tmp_path)
    hostile = "../../etc/passwd\x00" + "x" * 5000
    directory = cache_dir(settings, hostile)
    assert directory.parent == settings.state_dir / "cache" and len(directory.name) == 32
    with pytest.raises(RuntimeError), ParseCache.for_repo(settings, hostile, "fp") as cache:
        raise RuntimeError("job failed")
    assert not cache.new_path.exists() and not cache.path.exists()


def test_reused_files_carry_the_row_digest_the_resolver_compares(
    tmp_path: Path, repo: Path
) -> None:
    """A cache hit reaches the spill with its language, status and resolution row digest
    (issue 25): equal to what the decoded record gives, so the incremental resolver may
    trust it without decoding; a fresh parse carries none (its record is decoded)."""
    settings = cfg(tmp_path)
    commit(repo, {"faults/slow.py": None})
    parse(settings, repo, tmp_path / "1.spill")
    commit(repo, {"app/util.py": "def helper(x, y):\n    return str(x + y)\n"})
    parse(settings, repo, tmp_path / "2.spill")
    got = {r.path: r for r in SpillReader(tmp_path / "2.spill").summaries()}
    summaries = [r for r in got.values() if isinstance(r, FileSummary)]
    assert {s.path for s in summaries} == {"app/svc.py", "web/index.ts", "README.md"}
    assert isinstance(got["app/util.py"], FileFacts)  # parsed this time
    for s in summaries:
        facts = s.load()
        assert s.row_digest == ledger.row_digest(facts)
        assert (s.language, s.parse_status) == (facts.language, facts.parse_status)


def test_a_cache_of_the_previous_format_is_a_miss(tmp_path: Path, repo: Path) -> None:
    settings = cfg(tmp_path)
    commit(repo, {"faults/slow.py": None})
    first = parse(settings, repo, tmp_path / "1.spill")
    with sqlite3.connect(cache_dir(settings, "demo") / CACHE_FILE) as conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'format'")
    assert parse(settings, repo, tmp_path / "2.spill").files_reused == 0
    assert records(tmp_path / "2.spill") == records(tmp_path / "1.spill")
    assert parse(settings, repo, tmp_path / "3.spill").files_reused == first.files_indexed
