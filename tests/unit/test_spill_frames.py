"""Spill BLK2 blocks (issue 25): records that arrive as compressed frames (parse-cache hits)
are copied in, read back equal and in order among ordinary records, skipped undecompressed
by a reader that wants other paths, given as summaries to the incremental resolver, and a
damaged frame or summary is caught."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest
import zstandard

from semgraph.errors import SpillCorrupt
from semgraph.indexer import spill as spill_module
from semgraph.indexer.spill import SpillReader, SpillWriter, pack_record
from semgraph.model import FileFacts, FileSummary, SkippedFile
from semgraph.resolve import ledger
from tests.unit.test_indexer_spill import _records

ZC = zstandard.ZstdCompressor(level=1)


def _write(path: Path, records: list[FileFacts | SkippedFile], *, compression: str) -> None:
    """Every third record as a compressed frame, the others packed: blocks alternate."""
    with SpillWriter(path, compression=compression, block_bytes=2048) as spill:
        for i, rec in enumerate(records):
            kind, packed = pack_record(rec)
            if i % 3 == 0:
                spill.append_compressed(kind, rec.path, ZC.compress(packed))
            else:
                spill.append_packed(kind, packed)


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_mixed_blocks_read_back_in_order(tmp_path: Path, compression: str) -> None:
    records = _records(200)
    _write(tmp_path / "s.spill", records, compression=compression)
    reader = SpillReader(tmp_path / "s.spill")
    assert list(reader) == records
    assert list(reader) == records  # read twice


def test_filtered_read_equals_filtering_everything(tmp_path: Path) -> None:
    records = _records(120)
    _write(tmp_path / "s.spill", records, compression="zstd")
    only = {r.path for r in records[::7]} | {"not/there.py"}
    reader = SpillReader(tmp_path / "s.spill")
    expected = [r for r in records if isinstance(r, FileFacts) and r.path in only]
    assert expected and list(reader.file_facts(only)) == expected
    assert list(reader.file_facts()) == [r for r in records if isinstance(r, FileFacts)]


def test_filtered_read_does_not_decompress_other_frames(tmp_path: Path) -> None:
    facts = [r for r in _records(10) if isinstance(r, FileFacts)]
    with SpillWriter(tmp_path / "s.spill") as spill:
        kind, packed = pack_record(facts[0])
        spill.append_compressed(kind, facts[0].path, ZC.compress(packed))
        spill.append_compressed("F", "other/file.py", b"not a zstd frame")
    reader = SpillReader(tmp_path / "s.spill")
    assert list(reader.file_facts({facts[0].path})) == [facts[0]]  # the bad frame is skipped
    with pytest.raises(SpillCorrupt, match="does not decompress"):
        list(reader)


def test_frame_naming_another_path_is_corrupt(tmp_path: Path) -> None:
    fact = next(r for r in _records(3) if isinstance(r, FileFacts))
    with SpillWriter(tmp_path / "s.spill") as spill:
        spill.append_compressed("F", "elsewhere.py", ZC.compress(pack_record(fact)[1]))
    with pytest.raises(SpillCorrupt, match="names another"):
        list(SpillReader(tmp_path / "s.spill"))


def test_malformed_frame_entry_is_corrupt(tmp_path: Path) -> None:
    with SpillWriter(tmp_path / "s.spill") as spill:
        spill._buffer(b"BLK2", msgpack.packb(["F", "a.py"]))  # two fields, not three
    with pytest.raises(SpillCorrupt):
        list(SpillReader(tmp_path / "s.spill"))


def test_summaries_give_cached_files_undecoded_and_load_them_equal(tmp_path: Path) -> None:
    """A parse-cache hit written with its summary comes back from ``summaries`` as a
    :class:`FileSummary` (its frame not decompressed until ``load``); every other record, and
    plain iteration, is as before."""
    records = _records(60)
    with SpillWriter(tmp_path / "s.spill", block_bytes=2048) as spill:
        for i, rec in enumerate(records):
            kind, packed = pack_record(rec)
            if isinstance(rec, FileFacts) and i % 2 == 0:
                summary = (rec.language, rec.parse_status, ledger.row_digest(rec))
                spill.append_compressed(kind, rec.path, ZC.compress(packed), summary)
            else:
                spill.append_compressed(kind, rec.path, ZC.compress(packed))
    reader = SpillReader(tmp_path / "s.spill")
    assert list(reader) == records
    got = list(reader.summaries())
    assert [g.path for g in got] == [r.path for r in records]
    summaries = [g for g in got if isinstance(g, FileSummary)]
    assert len(summaries) == len(
        [r for i, r in enumerate(records) if i % 2 == 0 and isinstance(r, FileFacts)]
    )
    by_path = {r.path: r for r in records}
    for s in summaries:
        original = by_path[s.path]
        assert isinstance(original, FileFacts)
        assert s.row_digest == ledger.row_digest(original)
        assert (s.language, s.parse_status) == (original.language, original.parse_status)
        assert s.load() == original
    assert all(g == by_path[g.path] for g in got if not isinstance(g, FileSummary))


@pytest.mark.parametrize(
    "summary", [["python", "ok"], ["python", "ok", "not bytes"], [1, "ok", b"d" * 16], "junk"]
)
def test_malformed_summary_is_corrupt(tmp_path: Path, summary: object) -> None:
    fact = next(r for r in _records(3) if isinstance(r, FileFacts))
    frame = ZC.compress(pack_record(fact)[1])
    with SpillWriter(tmp_path / "s.spill") as spill:
        spill._buffer(b"BLK2", msgpack.packb(["F", fact.path, frame, summary]))
    assert list(SpillReader(tmp_path / "s.spill")) == [fact]  # a plain read ignores it
    with pytest.raises(SpillCorrupt, match="summary"):
        list(SpillReader(tmp_path / "s.spill").summaries())


def test_a_format_2_spill_still_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A spill a job of the previous version checkpointed (format 2: no summaries)."""
    records = _records(20)
    monkeypatch.setattr(spill_module, "FORMAT_VERSION", 2)
    _write(tmp_path / "s.spill", records, compression="zstd")
    monkeypatch.undo()
    assert (tmp_path / "s.spill").read_bytes()[8:10] == b"\x02\x00"
    assert list(SpillReader(tmp_path / "s.spill")) == records
    assert list(SpillReader(tmp_path / "s.spill").summaries()) == records
