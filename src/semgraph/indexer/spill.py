"""The parse spill: the parsed model of one job, on disk, written incrementally and read
back as a stream any number of times (DESIGN.md: phase 1 and phase 2 both stream it).

File layout (all integers little-endian)::

    header   b"SGSPILL\\0"  u16 format version  u8 codec (0 raw, 1 zstd)  u8 model version
    block*   b"BLK1"  u32 payload length  u32 crc32(payload)  u32 record count  payload
    trailer  b"END1"  u64 record count  u64 block count  u32 crc32 of those 16 bytes

A block's payload (zstd-compressed unless codec is raw) is a run of msgpack arrays
``[kind, record]`` with kind ``"F"`` (:class:`FileFacts`) or ``"S"`` (:class:`SkippedFile`).
Records are buffered into blocks of about ``block_bytes`` so compression works on more than
one small record; memory is bounded by one block. A missing trailer (truncation), a bad
checksum, a count mismatch or an undecodable record raises :class:`SpillCorrupt`; a failed
write (disk full ...) raises :class:`SpillError` and removes the partial file.
"""

from __future__ import annotations

import contextlib
import struct
import zlib
from collections.abc import Generator, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

import msgpack
import zstandard

from semgraph.errors import ConfigError, SpillCorrupt, SpillError
from semgraph.model import MODEL_VERSION, FileFacts, SkippedFile

MAGIC = b"SGSPILL\0"
FORMAT_VERSION = 1
CODEC_RAW = 0
CODEC_ZSTD = 1
_HEADER = struct.Struct("<8sHBB")
_BLOCK = struct.Struct("<4sIII")
_TRAILER = struct.Struct("<4sQQI")
_BLOCK_TAG = b"BLK1"
_END_TAG = b"END1"
MAX_BLOCK_BYTES = 256 * 1024 * 1024  # a length above this is corruption, not data

KIND_FILE = "F"
KIND_SKIP = "S"


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

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
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
        frame = msgpack.packb(kind) + packed
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
        if self._compressor is not None:
            payload = self._compressor.compress(payload)
        header = _BLOCK.pack(_BLOCK_TAG, len(payload), zlib.crc32(payload), self._buf_count)
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
            try:
                if kind == KIND_FILE:
                    yield FileFacts.from_record(rec)
                else:
                    yield SkippedFile.from_record(rec)
            except (KeyError, TypeError, ValueError) as exc:
                raise SpillCorrupt(f"spill {self.path}: malformed {kind} record: {exc}") from exc

    def iter_records(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(kind, record dict)`` pairs, without building dataclasses."""
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed in the finally below
        except OSError as exc:
            raise SpillCorrupt(f"cannot open spill {self.path}: {exc}") from exc
        try:
            yield from self._read(fh)
        except OSError as exc:
            raise SpillCorrupt(f"cannot read spill {self.path}: {exc}") from exc
        finally:
            fh.close()

    def _corrupt(self, what: str) -> SpillCorrupt:
        return SpillCorrupt(f"spill {self.path} is corrupt: {what}")

    def _read(self, fh: BinaryIO) -> Iterator[tuple[str, dict[str, Any]]]:
        head = fh.read(_HEADER.size)
        if len(head) < _HEADER.size:
            raise self._corrupt("truncated header")
        magic, version, codec, model_version = _HEADER.unpack(head)
        if magic != MAGIC:
            raise self._corrupt("not a spill file (bad magic)")
        if version != FORMAT_VERSION or model_version != MODEL_VERSION:
            raise self._corrupt(
                f"format {version}/model {model_version}, expected {FORMAT_VERSION}/{MODEL_VERSION}"
            )
        if codec not in (CODEC_RAW, CODEC_ZSTD):
            raise self._corrupt(f"unknown codec {codec}")
        decompressor = zstandard.ZstdDecompressor() if codec == CODEC_ZSTD else None
        records = blocks = 0
        while True:
            tag = fh.read(4)
            if tag == _END_TAG:
                rest = fh.read(_TRAILER.size - 4)
                if len(rest) < _TRAILER.size - 4:
                    raise self._corrupt("truncated trailer")
                _, n_rec, n_blocks, crc = _TRAILER.unpack(tag + rest)
                if zlib.crc32(struct.pack("<QQ", n_rec, n_blocks)) != crc:
                    raise self._corrupt("trailer checksum mismatch")
                if (n_rec, n_blocks) != (records, blocks):
                    raise self._corrupt(
                        f"trailer says {n_rec} records in {n_blocks} blocks, "
                        f"read {records} in {blocks}"
                    )
                if fh.read(1):
                    raise self._corrupt("data after the trailer")
                return
            if tag != _BLOCK_TAG:
                raise self._corrupt(
                    "truncated (no trailer)" if len(tag) < 4 else f"bad block tag at block {blocks}"
                )
            records += yield from self._read_block(fh, decompressor, blocks)
            blocks += 1

    def _read_block(
        self, fh: BinaryIO, decompressor: zstandard.ZstdDecompressor | None, index: int
    ) -> Generator[tuple[str, dict[str, Any]], None, int]:
        rest = fh.read(_BLOCK.size - 4)
        if len(rest) < _BLOCK.size - 4:
            raise self._corrupt(f"truncated block header {index}")
        _, length, crc, count = _BLOCK.unpack(_BLOCK_TAG + rest)
        if length > MAX_BLOCK_BYTES:
            raise self._corrupt(f"block {index} claims {length} bytes")
        payload = fh.read(length)
        if len(payload) < length:
            raise self._corrupt(f"truncated block {index}")
        if zlib.crc32(payload) != crc:
            raise self._corrupt(f"checksum mismatch in block {index}")
        if decompressor is not None:
            try:
                payload = decompressor.decompress(payload)
            except zstandard.ZstdError as exc:
                raise self._corrupt(f"block {index} does not decompress: {exc}") from exc
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=0)
        unpacker.feed(payload)
        seen = 0
        try:
            while True:
                try:
                    kind = unpacker.unpack()
                except msgpack.OutOfData:
                    break
                rec = unpacker.unpack()
                if kind not in (KIND_FILE, KIND_SKIP) or not isinstance(rec, dict):
                    raise self._corrupt(f"record in block {index} is not a map")
                seen += 1
                yield kind, rec
        except (msgpack.UnpackException, ValueError, TypeError) as exc:
            raise self._corrupt(f"undecodable record in block {index}: {exc}") from exc
        if seen != count:
            raise self._corrupt(f"block {index} holds {seen} records, header says {count}")
        return seen
