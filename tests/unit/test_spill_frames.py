"""Spill BLK2 blocks (issue 25): records that arrive as compressed frames (parse-cache hits)
are copied in, read back equal and in order among ordinary records, skipped undecompressed
by a reader that wants other paths, and a damaged frame is caught."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest
import zstandard

from semgraph.errors import SpillCorrupt
from semgraph.indexer.spill import SpillReader, SpillWriter, pack_record
from semgraph.model import FileFacts, SkippedFile
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
