"""The parse spill: the parsed model of one job, on disk, written incrementally and read
back as a stream any number of times (docs/architecture.md, data flow: parse writes it,
resolve and embed stream it).

File layout (all integers little-endian)::

    header   b"SGSPILL\\0"  u16 format version  u8 codec (0 raw, 1 zstd)  u8 model version
    block*   b"BLK1"|b"BLK2"  u32 payload length  u32 crc32(payload)  u32 record count  payload
    trailer  b"END1"  u64 record count  u64 block count  u32 crc32 of those 16 bytes

A block's payload (zstd-compressed unless codec is raw) is a run of msgpack arrays
``[kind, record]`` with kind ``"F"`` (:class:`FileFacts`) or ``"S"`` (:class:`SkippedFile`).
Records are buffered into blocks of about ``block_bytes`` so compression works on more than
one small record; memory is bounded by one block.

A ``BLK2`` block (format 2) holds records that arrive already compressed (a parse-cache hit):
its payload, never compressed as a whole, is a run of msgpack arrays
``[kind, path, zstd frame of the record's msgpack]``, so an unchanged file costs the spill a
copy, not a decompression and a compression, and a reader that wants a few paths skips the
others without decompressing them. Blocks of both kinds alternate in record order. Format 3
may add a fourth element to a parsed file's entry, ``[language, parse status, row digest]``
(the parse cache keeps them with the row): :meth:`SpillReader.summaries` gives such a file
as a :class:`~semgraph.model.FileSummary`, so the incremental resolver decodes only the
files whose row digest changed. A reader of format 3 reads format 2.

A missing trailer (truncation), a bad checksum, a count mismatch or an undecodable record
raises :class:`SpillCorrupt`; a failed write (disk full ...) raises :class:`SpillError` and
removes the partial file.

The module is over 300 lines because the writer and the reader share one format: its
constants, both block kinds and the checks that go with them.
"""

from __future__ import annotations

import contextlib
import struct
import zlib
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgpack
import zstandard

from semgraph.errors import ConfigError, SpillCorrupt, SpillError
from semgraph.indexer.spillblocks import (
    BLOCK_TAG,
    FRAMES_TAG,
    KIND_FILE,
    KIND_SKIP,
    BlockDecoder,
)
from semgraph.model import MODEL_VERSION, FileFacts, FileSummary, SkippedFile

MAGIC = b"SGSPILL\0"
FORMAT_VERSION = 3
READABLE_VERSIONS = (2, 3)
CODEC_RAW = 0
CODEC_ZSTD = 1
_HEADER = struct.Struct("<8sHBB")
_BLOCK = struct.Struct("<4sIII")
_TRAILER = struct.Struct("<4sQQI")
_END_TAG = b"END1"
MAX_BLOCK_BYTES = 256 * 1024 * 1024  # a length above this is corruption, not data


def pack_record(obj: FileFacts | SkippedFile) -> tuple[str, bytes]:
    """``(kind, msgpack bytes)`` of one record, as :meth:`SpillWriter.append_packed` takes."""
    kind = KIND_FILE if isinstance(obj, FileFacts) else KIND_SKIP
    return kind, msgpack.packb(obj.to_record(), use_bin_type=True)


class SpillWriter:
    """Append records to a new spill file; ``close()`` (or leaving the ``with``) seals it.

    Leaving the ``with`` block by an exception removes the partial file.
    """

    def __init__(
        self, path: Path, *, compression: str = "zstd", level: int = 3, block_bytes: int = 1 << 20
    ) -> None:
        if compression not in {"zstd", "none"}:
            raise ConfigError(f"unknown spill compression {compression!r}")
        self.path = Path(path)
        self._codec = CODEC_ZSTD if compression == "zstd" else CODEC_RAW
        self._compressor = zstandard.ZstdCompressor(level=level) if self._codec else None
        self._block_bytes = block_bytes
        self._buf: list[bytes] = []
        self._buf_size = 0
        self._buf_count = 0
        self._buf_tag = BLOCK_TAG  # the kind of block being buffered
        self.records = 0
        self.blocks = 0
        self.bytes_written = 0
        self._closed = False
        self._fh: BinaryIO | None = None
        self._created = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "xb")  # noqa: SIM115 - closed in close()/abort()
            self._created = True
            self._write(_HEADER.pack(MAGIC, FORMAT_VERSION, self._codec, MODEL_VERSION))
        except OSError as exc:
            self.abort()
            raise SpillError(f"cannot create spill {self.path}: {exc}") from exc

    def __enter__(self) -> SpillWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def append(self, obj: FileFacts | SkippedFile) -> None:
        kind, packed = pack_record(obj)
        self.append_packed(kind, packed)

    def append_packed(self, kind: str, packed: bytes) -> None:
        """Append a record already packed with msgpack (as pool children return them)."""
        if self._closed:
            raise SpillError(f"spill {self.path} is closed")
        if kind not in (KIND_FILE, KIND_SKIP):
            raise SpillError(f"unknown spill record kind {kind!r}")
        self._buffer(BLOCK_TAG, msgpack.packb(kind) + packed)

    def append_compressed(
        self, kind: str, path: str, frame: bytes, summary: tuple[str, str, bytes] | None = None
    ) -> None:
        """Append a record given as one zstd frame of its msgpack bytes (a parse-cache row,
        already checked to decompress), copied as it is into a ``BLK2`` block, with a parsed
        file's ``(language, parse status, row digest)`` when known."""
        if self._closed:
            raise SpillError(f"spill {self.path} is closed")
        if kind not in (KIND_FILE, KIND_SKIP):
            raise SpillError(f"unknown spill record kind {kind!r}")
        entry: list[Any] = [kind, path, frame]
        if summary is not None and kind == KIND_FILE:
            entry.append(list(summary))
        self._buffer(FRAMES_TAG, msgpack.packb(entry, use_bin_type=True))

    def _buffer(self, tag: bytes, frame: bytes) -> None:
        if tag != self._buf_tag:
            self._flush_block()  # records stay in the order they were appended
            self._buf_tag = tag
        self._buf.append(frame)
        self._buf_size += len(frame)
        self._buf_count += 1
        self.records += 1
        if self._buf_size >= self._block_bytes:
            self._flush_block()

    def close(self) -> None:
        if self._closed:
            return
        try:
            self._flush_block()
            body = struct.pack("<QQ", self.records, self.blocks)
            self._write(_TRAILER.pack(_END_TAG, self.records, self.blocks, zlib.crc32(body)))
            assert self._fh is not None
            self._fh.close()
        except OSError as exc:
            self.abort()
            raise SpillError(f"cannot write spill {self.path}: {exc}") from exc
        except BaseException:
            self.abort()
            raise
        self._closed = True

    def abort(self) -> None:
        """Close and delete the partial file (never raises)."""
        self._closed = True
        self._buf.clear()
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
        if not self._created:
            return  # never delete a file this writer did not create
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)

    def _flush_block(self) -> None:
        if not self._buf_count:
            return
        payload = b"".join(self._buf)
        if self._compressor is not None and self._buf_tag == BLOCK_TAG:
            payload = self._compressor.compress(payload)
        header = _BLOCK.pack(self._buf_tag, len(payload), zlib.crc32(payload), self._buf_count)
        try:
            self._write(header + payload)
        except OSError as exc:
            self.abort()
            raise SpillError(f"cannot write spill {self.path}: {exc}") from exc
        self.blocks += 1
        self._buf.clear()
        self._buf_size = 0
        self._buf_count = 0

    def _write(self, data: bytes) -> None:
        assert self._fh is not None
        self._fh.write(data)
        self.bytes_written += len(data)


class SpillReader:
    """Stream the records of a sealed spill; iterate it as many times as needed."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def __iter__(self) -> Iterator[FileFacts | SkippedFile]:
        for kind, rec in self.iter_records():
            yield self._build(kind, rec)

    def summaries(self) -> Iterator[FileFacts | SkippedFile | FileSummary]:
        """The records in order, as iterating gives them, except that a parsed file whose
        entry carries its summary comes as a :class:`FileSummary` (not decompressed; its
        ``load`` decodes it)."""
        for kind, rec in self._records(None, summaries=True):
            yield rec if isinstance(rec, FileSummary) else self._build(kind, rec)

    def _build(self, kind: str, rec: dict[str, Any]) -> FileFacts | SkippedFile:
        try:
            if kind == KIND_FILE:
                return FileFacts.from_record(rec)
            return SkippedFile.from_record(rec)
        except (KeyError, TypeError, ValueError) as exc:
            raise SpillCorrupt(f"spill {self.path}: malformed {kind} record: {exc}") from exc

    def file_facts(self, only: Container[str] | None = None) -> Iterator[FileFacts]:
        """The parsed files, in order (only those whose path is in ``only`` when given: the
        others are skipped as raw records, never built into dataclasses)."""
        for kind, rec in self.iter_records(only):
            if kind != KIND_FILE:
                continue
            try:
                yield FileFacts.from_record(rec)
            except (KeyError, TypeError, ValueError) as exc:
                raise SpillCorrupt(f"spill {self.path}: malformed {kind} record: {exc}") from exc

    def iter_records(
        self, only: Container[str] | None = None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(kind, record dict)`` pairs, without building dataclasses (with ``only``, the
        records of those paths; a precompressed record of another path is not decompressed)."""
        for kind, rec in self._records(only, summaries=False):
            assert isinstance(rec, dict)
            yield kind, rec

    def _records(
        self, only: Container[str] | None, *, summaries: bool
    ) -> Iterator[tuple[str, dict[str, Any] | FileSummary]]:
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed in the finally below
        except OSError as exc:
            raise SpillCorrupt(f"cannot open spill {self.path}: {exc}") from exc
        try:
            yield from self._read(fh, only, summaries)
        except OSError as exc:
            raise SpillCorrupt(f"cannot read spill {self.path}: {exc}") from exc
        finally:
            fh.close()

    def _corrupt(self, what: str) -> SpillCorrupt:
        return SpillCorrupt(f"spill {self.path} is corrupt: {what}")

    def _read(
        self, fh: BinaryIO, only: Container[str] | None, summaries: bool
    ) -> Iterator[tuple[str, dict[str, Any] | FileSummary]]:
        decoder = BlockDecoder(
            self._corrupt, self._build, self._read_header(fh) == CODEC_ZSTD, only, summaries
        )
        records = blocks = 0
        while True:
            tag = fh.read(4)
            if tag == _END_TAG:
                self._read_trailer(fh, records, blocks)
                return
            if tag not in (BLOCK_TAG, FRAMES_TAG):
                raise self._corrupt(
                    "truncated (no trailer)" if len(tag) < 4 else f"bad block tag at block {blocks}"
                )
            payload, count = self._read_payload(fh, tag, blocks)
            seen = yield from decoder.block(tag, payload, blocks)
            if seen != count:
                raise self._corrupt(f"block {blocks} holds {seen} records, header says {count}")
            records += seen
            blocks += 1

    def _read_header(self, fh: BinaryIO) -> int:
        head = fh.read(_HEADER.size)
        if len(head) < _HEADER.size:
            raise self._corrupt("truncated header")
        magic, version, codec, model_version = _HEADER.unpack(head)
        if magic != MAGIC:
            raise self._corrupt("not a spill file (bad magic)")
        if version not in READABLE_VERSIONS or model_version != MODEL_VERSION:
            raise self._corrupt(
                f"format {version}/model {model_version}, expected {FORMAT_VERSION}/{MODEL_VERSION}"
            )
        if codec not in (CODEC_RAW, CODEC_ZSTD):
            raise self._corrupt(f"unknown codec {codec}")
        return int(codec)

    def _read_trailer(self, fh: BinaryIO, records: int, blocks: int) -> None:
        rest = fh.read(_TRAILER.size - 4)
        if len(rest) < _TRAILER.size - 4:
            raise self._corrupt("truncated trailer")
        _, n_rec, n_blocks, crc = _TRAILER.unpack(_END_TAG + rest)
        if zlib.crc32(struct.pack("<QQ", n_rec, n_blocks)) != crc:
            raise self._corrupt("trailer checksum mismatch")
        if (n_rec, n_blocks) != (records, blocks):
            raise self._corrupt(
                f"trailer says {n_rec} records in {n_blocks} blocks, read {records} in {blocks}"
            )
        if fh.read(1):
            raise self._corrupt("data after the trailer")

    def _read_payload(self, fh: BinaryIO, tag: bytes, index: int) -> tuple[bytes, int]:
        rest = fh.read(_BLOCK.size - 4)
        if len(rest) < _BLOCK.size - 4:
            raise self._corrupt(f"truncated block header {index}")
        _, length, crc, count = _BLOCK.unpack(tag + rest)
        if length > MAX_BLOCK_BYTES:
            raise self._corrupt(f"block {index} claims {length} bytes")
        payload = fh.read(length)
        if len(payload) < length:
            raise self._corrupt(f"truncated block {index}")
        if zlib.crc32(payload) != crc:
            raise self._corrupt(f"checksum mismatch in block {index}")
        return payload, count
