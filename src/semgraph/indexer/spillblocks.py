"""The blocks of a spill as a reader decodes them (:mod:`semgraph.indexer.spill` has the
file layout): a ``BLK1`` block is one run of ``[kind, record]`` pairs, compressed as a whole;
a ``BLK2`` block a run of ``[kind, path, frame]`` entries, each frame one zstd-compressed
record, with a parsed file's summary as a fourth element since format 3."""

from __future__ import annotations

from collections.abc import Callable, Container, Generator, Iterator
from typing import Any

import msgpack
import zstandard

from semgraph.errors import SpillCorrupt
from semgraph.model import FileFacts, FileSummary, SkippedFile

BLOCK_TAG = b"BLK1"
FRAMES_TAG = b"BLK2"
KIND_FILE = "F"
KIND_SKIP = "S"


class BlockDecoder:
    """The records of one spill's blocks (``BLK1``: one compressed run of records; ``BLK2``:
    a run of ``[kind, path, frame]`` or ``[kind, path, frame, summary]``), those of ``only``'s
    paths when given; with ``summaries``, a summarised parsed file as a :class:`FileSummary`."""

    def __init__(
        self,
        corrupt: Callable[[str], SpillCorrupt],
        build: Callable[[str, dict[str, Any]], FileFacts | SkippedFile],
        compressed: bool,
        only: Container[str] | None,
        summaries: bool = False,
    ):
        self.corrupt, self.build = corrupt, build
        self.compressed = compressed
        self.only = only
        self.summaries = summaries
        self.zd = zstandard.ZstdDecompressor()

    def block(
        self, tag: bytes, payload: bytes, index: int
    ) -> Generator[tuple[str, dict[str, Any] | FileSummary], None, int]:
        """Yield the block's records; return how many it holds (wanted or not)."""
        if tag == BLOCK_TAG and self.compressed:
            payload = self._decompress(payload, f"block {index}")
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=0)
        unpacker.feed(payload)
        seen = 0
        try:
            for kind, rec in self._pairs(unpacker, tag, index):
                if kind not in (KIND_FILE, KIND_SKIP) or not isinstance(rec, dict | FileSummary):
                    raise self.corrupt(f"record in block {index} is not a map")
                seen += 1
                if self.only is None or (isinstance(rec, dict) and rec.get("path") in self.only):
                    yield kind, rec
        except (msgpack.UnpackException, ValueError, TypeError) as exc:
            raise self.corrupt(f"undecodable record in block {index}: {exc}") from exc
        return seen

    def _pairs(self, unpacker: msgpack.Unpacker, tag: bytes, index: int) -> Iterator[Any]:
        while True:
            try:
                head = unpacker.unpack()
            except msgpack.OutOfData:
                return
            if tag == BLOCK_TAG:
                yield head, unpacker.unpack()
                continue
            if not isinstance(head, list) or len(head) not in (3, 4):
                raise self.corrupt(f"block {index}: an entry is not [kind, path, frame]")
            kind, path, frame = head[:3]
            if self.only is not None and path not in self.only:
                yield kind, {"path": path}  # counted, not decompressed, not yielded on
                continue
            if self.summaries and len(head) == 4 and kind == KIND_FILE:
                yield kind, self._summary(path, frame, head[3], index)
                continue
            yield kind, self.load(path, frame, index)

    def load(self, path: str, frame: bytes, index: int) -> dict[str, Any]:
        """The record of one ``BLK2`` frame (its path checked)."""
        packed = self._decompress(frame, f"a record of block {index}")
        rec = msgpack.unpackb(packed, raw=False, strict_map_key=False)
        if isinstance(rec, dict) and rec.get("path") != path:
            raise self.corrupt(f"block {index}: record of {path!r} names another")
        return rec  # type: ignore[no-any-return]

    def _summary(self, path: Any, frame: Any, summary: Any, index: int) -> FileSummary:
        ok = isinstance(summary, list) and len(summary) == 3
        language, status, digest = summary if ok else (None, None, None)
        if not (isinstance(path, str) and isinstance(frame, bytes) and isinstance(digest, bytes)):
            raise self.corrupt(f"block {index}: malformed summary of {path!r}")
        if not (isinstance(language, str) and isinstance(status, str)):
            raise self.corrupt(f"block {index}: malformed summary of {path!r}")

        def load() -> FileFacts:
            built = self.build(KIND_FILE, self.load(path, frame, index))
            assert isinstance(built, FileFacts)
            return built

        return FileSummary(path, language, status, digest, load)

    def _decompress(self, data: bytes, what: str) -> bytes:
        try:
            return self.zd.decompress(data)
        except zstandard.ZstdError as exc:
            raise self.corrupt(f"{what} does not decompress: {exc}") from exc
