"""parse_repository on real git repositories: the pool, crash isolation, cancel, cleanup."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from semgraph.config import Settings, load_settings
from semgraph.indexer.checkout import checkout
from semgraph.indexer.parse import ParseProgress, parse_repository
from semgraph.indexer.spill import SpillReader
from semgraph.model import FileFacts, SkippedFile
from tests.repos import commit, git

FILES: dict[str, bytes | str] = {
    "app/__init__.py": "",
    "app/core/service.py": (
        "from app.util import helper\n\n\nclass Service:\n    def run(self):\n"
        "        return helper(self)\n"
    ),
    "app/util.py": "def helper(x):\n    return str(x)\n",
    "app/broken.py": "def ok():\n    pass\n\ndef bad(:\n",
    "web/src/index.ts": "import { run } from './run';\nexport function main() { run(); }\n",
    "cmd/main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("x") }\n',
    "lib/src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
    "README.md": "# Demo\n\nA demo repository.\n",
    "vendor/dep/dep.go": "package dep\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00",
    "big.txt": "y" * 5000,
}


def make_repo(root: Path, extra: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "escape").symlink_to("/etc")
    commit(root, {**FILES, **(extra or {})}, "one")
    return root


def cfg(tmp_path: Path, **overrides: object) -> Settings:
    base: dict[str, object] = {
        "state_dir": str(tmp_path / "state"),
        "max_file_bytes": 4000,
        "pool_size": 2,
        "parse_window_files": 3,
        "parse_timeout_s": 20,
    }
    return load_settings(**{**base, **overrides})


def children() -> set[int]:
    """Live child processes of this process (the multiprocessing resource tracker aside)."""
    me, out = str(os.getpid()), set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z" and b"resource_tracker" not in cmd:
            out.add(int(entry))
    return out


def read_spill(path: Path) -> tuple[dict[str, FileFacts], dict[str, SkippedFile]]:
    facts: dict[str, FileFacts] = {}
    skipped: dict[str, SkippedFile] = {}
    for rec in SpillReader(path):
        if isinstance(rec, FileFacts):
            facts[rec.path] = rec
        else:
            skipped[rec.path] = rec
    return facts, skipped


EXPECTED_STATUS = {
    "app/core/service.py": "ok",
    "app/util.py": "ok",
    "app/broken.py": "partial",
    "web/src/index.ts": "ok",
    "cmd/main.go": "ok",
    "lib/src/lib.rs": "ok",
    "README.md": "text",
}
EXPECTED_SKIPS = {
    "app/__init__.py": "empty",
    "vendor/dep/dep.go": "vendored",
    "logo.png": "binary",
    "big.txt": "too_large",
    "escape": "symlink",
}


@pytest.mark.parametrize("pool_size", [2, 1])
def test_checkout_then_parse_whole_repository(tmp_path: Path, pool_size: int) -> None:
    settings = cfg(tmp_path, pool_size=pool_size)
    repo = make_repo(tmp_path / "src-repo")
    res = checkout(settings, str(repo), None, tmp_path / "ws")
    before = children()
    seen: list[ParseProgress] = []
    stats = parse_repository(
        settings, res.workspace, tmp_path / "spill" / "a.spill", progress=seen.append
    )
    assert children() == before
    facts, skipped = read_spill(tmp_path / "spill" / "a.spill")
    assert {p: f.parse_status for p, f in facts.items()} == EXPECTED_STATUS
    assert {p: s.reason for p, s in skipped.items()} == EXPECTED_SKIPS
    assert stats.files_by_status == {"ok": 5, "partial": 1, "text": 1}
    assert stats.skipped_by_reason == {
        "empty": 1,
        "vendored": 1,
        "binary": 1,
        "too_large": 1,
        "symlink": 1,
    }
    assert stats.parse_failures == [] and stats.retries == 0
    final = seen[-1]
    assert final.files_total == len(facts) + len(skipped)
    assert final.files_done + final.files_skipped == final.files_total
    service = facts["app/core/service.py"]
    assert [(s.kind, s.qualified_name) for s in service.symbols] == [
        ("class", "app.core.service.Service"),
        ("method", "app.core.service.Service.run"),
    ]
    assert [(i.module, i.names) for i in service.imports] == [("app.util", ["helper"])]
    assert [(c.enclosing, c.callee, c.receiver) for c in service.calls] == [
        ("app.core.service.Service.run", "helper", None)
    ]
    assert (
        service.blob_sha
        == subprocess.run(
            ["git", "hash-object", str(repo / "app/core/service.py")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    assert stats.bytes_parsed == sum(f.size_bytes for f in facts.values())
    assert stats.parent_peak_rss_bytes > 0
    assert seen and seen[-1].files_done == 7
    if pool_size == 1:
        assert stats.child_pids == {os.getpid()}
    else:
        assert os.getpid() not in stats.child_pids and stats.child_peak_rss_bytes > 0


def test_bad_files_cost_one_file_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEMGRAPH_FAULTS", "parse.file=marker")
    repo = make_repo(
        tmp_path / "r",
        {
            "faults/crash.py": "x = 1\n# SEMGRAPH_FAULT:segfault\n",
            "faults/abort.c": "// SEMGRAPH_FAULT:abort\nint main() { return 0; }\n",
            "faults/hang.go": "// SEMGRAPH_FAULT:hang\npackage x\n",
            "faults/oom.rs": "// SEMGRAPH_FAULT:oom\nfn f() {}\n",
        },
    )
    settings = cfg(tmp_path, parse_timeout_s=4, child_memory_mb=768, child_max_tasks=2)
    before = children()
    stats = parse_repository(settings, repo, tmp_path / "f.spill")
    assert children() == before
    facts, skipped = read_spill(tmp_path / "f.spill")
    assert {p: f.parse_status for p, f in facts.items()} == {
        **EXPECTED_STATUS,
        "faults/crash.py": "parse_failed",
        "faults/abort.c": "parse_failed",
        "faults/hang.go": "parse_failed",
        "faults/oom.rs": "parse_failed",
    }
    reasons = {f.path: f.reason for f in stats.parse_failures}
    assert reasons == {
        "faults/crash.py": "child crashed (SIGSEGV)",
        "faults/abort.c": "child crashed (SIGABRT)",
        "faults/hang.go": "timed out after 4s (child killed)",
        "faults/oom.rs": "memory cap exceeded (child_memory_mb=768)",
    }
    assert stats.retries == 4
    for path, reason in reasons.items():
        assert facts[path].parse_error == reason
        assert facts[path].symbols == []
        assert facts[path].chunks and "SEMGRAPH_FAULT" in facts[path].chunks[0].text
    # the rest of the repository is extracted as usual
    assert [s.name for s in facts["lib/src/lib.rs"].symbols] == ["add"]
    assert {p: s.reason for p, s in skipped.items()} == EXPECTED_SKIPS


def test_marker_is_inert_without_the_test_switch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SEMGRAPH_FAULTS", raising=False)
    repo = make_repo(tmp_path / "r", {"x.py": "def f():\n    pass  # SEMGRAPH_FAULT:segfault\n"})
    stats = parse_repository(cfg(tmp_path), repo, tmp_path / "s.spill")
    assert stats.parse_failures == []
    facts, _ = read_spill(tmp_path / "s.spill")
    assert facts["x.py"].parse_status == "ok"


class Cancelled(Exception):
    pass


def test_cancel_at_checkpoint_stops_pool_and_removes_spill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEMGRAPH_FAULTS", "parse.file=marker")
    extra = {f"many/m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(12)}
    extra["many/zz_hang.py"] = "# SEMGRAPH_FAULT:hang\n"  # in flight when the job is cancelled
    repo = make_repo(tmp_path / "r", extra)
    calls: list[str] = []

    def checkpoint(phase: str) -> None:
        calls.append(phase)
        if len(calls) == 2:
            raise Cancelled("job cancelled")

    before = children()
    with pytest.raises(Cancelled):
        parse_repository(
            cfg(tmp_path, parse_timeout_s=300), repo, tmp_path / "c.spill", checkpoint=checkpoint
        )
    assert calls == ["parse", "parse"]
    assert children() == before
    assert not (tmp_path / "c.spill").exists()


def test_failure_inside_the_job_stops_the_pool(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")

    def progress(p: ParseProgress) -> None:
        raise RuntimeError("downstream failed")

    before = children()
    with pytest.raises(RuntimeError, match="downstream failed"):
        parse_repository(cfg(tmp_path), repo, tmp_path / "x.spill", progress=progress)
    assert children() == before
    assert not (tmp_path / "x.spill").exists()


def test_spare_children_still_starting_stop_quietly(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # One file and sixteen children: the first child up parses it while the others are still
    # starting when the pool closes. pebble unlinks its lock before stopping them, which used
    # to print a FileNotFoundError traceback from each one onto the user's terminal.
    repo = tmp_path / "one"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"a.py": "def a():\n    return 1\n"}, "one")
    before = children()
    for round_ in range(3):
        stats = parse_repository(
            cfg(tmp_path, pool_size=16), repo, tmp_path / f"one-{round_}.spill"
        )
        assert stats.files_indexed == 1
    assert children() == before
    err = capfd.readouterr().err  # a child's start-up traceback, not other tests' log noise
    assert "spawn_main" not in err and "FileNotFoundError" not in err, err
