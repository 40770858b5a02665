"""Spill: round trip, streaming twice, truncation/corruption detection, disk full."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from semgraph.errors import JobError, SpillCorrupt, SpillError
from semgraph.indexer.spill import SpillReader, SpillWriter
from semgraph.model import CallSite, Chunk, FileFacts, Import, SkippedFile, Symbol


def _facts(i: int) -> FileFacts:
    return FileFacts(
        path=f"src/m{i}.py",
        language="python",
        blob_sha=f"{i:040x}",
        size_bytes=100 + i,
        line_count=10,
        parse_status="ok",
        symbols=[Symbol("function", f"f{i}", f"src.m{i}.f{i}", 1, 3, "def f()", "doc", None)],
        imports=[Import("os.path", ["join"], "j", 1, 1)],
        calls=[CallSite(f"src.m{i}.f{i}", "join", "os.path", 2)],
        chunks=[Chunk(1, 3, "def f():\n  ü ☃ \U0001f600", "h" * 64, f"src.m{i}.f{i}", "function")],
    )


def _records(n: int) -> list[FileFacts | SkippedFile]:
    out: list[FileFacts | SkippedFile] = []
    for i in range(n):
        out.append(_facts(i) if i % 5 else SkippedFile(f"bin{i}.dat", "binary", "NUL"))
    return out


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_round_trip_many_blocks_read_twice(tmp_path: Path, compression: str) -> None:
    path = tmp_path / "job.spill"
    records = _records(2000)
    with SpillWriter(path, compression=compression, block_bytes=16 * 1024) as w:
        for r in records:
            w.append(r)
    assert w.blocks > 5
    reader = SpillReader(path)
    assert list(reader) == records
    assert list(reader) == records  # a second pass streams again


def test_empty_spill(tmp_path: Path) -> None:
    with SpillWriter(tmp_path / "e.spill"):
        pass
    assert list(SpillReader(tmp_path / "e.spill")) == []


def _write(path: Path, n: int = 300) -> bytes:
    with SpillWriter(path, block_bytes=4096) as w:
        for r in _records(n):
            w.append(r)
    return path.read_bytes()


def test_every_truncation_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "t.spill"
    data = _write(path)
    cuts = sorted({0, 5, len(data) // 3, len(data) // 2, len(data) - 30, len(data) - 1}) + list(
        range(0, len(data), max(1, len(data) // 40))
    )
    for cut in cuts:
        path.write_bytes(data[:cut])
        with pytest.raises(SpillCorrupt):
            list(SpillReader(path))


def test_corruption_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "c.spill"
    data = _write(path)
    for pos in range(0, len(data), max(1, len(data) // 60)):
        broken = bytearray(data)
        broken[pos] ^= 0x41
        path.write_bytes(bytes(broken))
        with pytest.raises(SpillCorrupt):
            list(SpillReader(path))
    path.write_bytes(data + b"junk")
    with pytest.raises(SpillCorrupt):
        list(SpillReader(path))


def test_not_a_spill_and_missing(tmp_path: Path) -> None:
    (tmp_path / "x").write_bytes(b"hello world, not a spill at all")
    with pytest.raises(SpillCorrupt, match="bad magic"):
        list(SpillReader(tmp_path / "x"))
    with pytest.raises(SpillCorrupt, match="cannot open"):
        list(SpillReader(tmp_path / "missing"))
    assert issubclass(SpillCorrupt, JobError)


def test_exception_inside_writer_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "x.spill"
    with pytest.raises(RuntimeError), SpillWriter(path) as w:
        w.append(_facts(1))
        raise RuntimeError("boom")
    assert not path.exists()


def test_existing_file_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "x.spill").write_bytes(b"keep")
    with pytest.raises(SpillError, match="cannot create"):
        SpillWriter(tmp_path / "x.spill")
    assert (tmp_path / "x.spill").read_bytes() == b"keep"


def test_disk_full_is_a_clear_error_and_leaves_nothing(tmp_path: Path) -> None:
    # A real short write: RLIMIT_FSIZE makes write(2) fail with EFBIG, like a full disk.
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from pathlib import Path
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
        from semgraph.errors import SpillError
        from semgraph.model import SkippedFile
        from semgraph.indexer.spill import SpillWriter
        path = Path({str(tmp_path / "full.spill")!r})
        try:
            with SpillWriter(path, compression="none", block_bytes=8192) as w:
                for i in range(100000):
                    w.append(SkippedFile(f"file-{{i}}-" + "x" * 100, "binary"))
        except SpillError as exc:
            print("SpillError", exc, "exists", path.exists())
            sys.exit(0)
        sys.exit(1)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("SpillError cannot write spill")
    assert proc.stdout.strip().endswith("exists False")
