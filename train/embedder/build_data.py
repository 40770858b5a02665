"""Build the code-search embedder's training pairs from pinned registry packages.

    python -m train.embedder.build_data --out /var/tmp/semgraph-embed-data [--limit N]

Reads ``sources.json``, refuses held-out packages (``heldout.json``, bench/search/eval's sources)
and non-permissive licences, downloads each package once with its registry's client
(``fetch``), reads its source files in memory (``archive``, ``sourcefiles``), turns each
documented function into a pair with semgraph's own parser (``pairs``), drops duplicates
across everything kept so far (``dedup``) and writes ``pairs.jsonl.zst`` and
``manifest.json`` (every source: version, sha256, licence, pairs kept and dropped by
reason). Sources are taken round-robin across registries, so ``--limit`` keeps every
language. A package's split (``train`` or ``valid``) is a hash of its name: about 2% of
packages are ``valid``, whole.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import multiprocessing
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

from train.embedder import archive, fetch, heldout, package
from train.embedder.dedup import Deduper
from train.embedder.pairs import work_item

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "sources.json"
VALID_PER_MILLE = 20
PROGRESS_S = 10.0
log = logging.getLogger("build_data")


@dataclass(frozen=True)
class Source:
    registry: str
    name: str
    version: str


def load_sources(path: Path = SOURCES) -> list[Source]:
    """The pinned sources, in file order (ValueError on an unpinned or unknown entry)."""
    out = []
    for entry in json.loads(path.read_text())["sources"]:
        src = Source(entry["registry"], entry["name"], entry["version"])
        if src.registry not in heldout.REGISTRIES:
            raise ValueError(f"unknown registry in {entry}")
        if not src.version or any(c in src.version for c in "<>=*^~ "):
            raise ValueError(f"not pinned: {entry}")
        out.append(src)
    return out


def round_robin(sources: list[Source]) -> list[Source]:
    """Sources interleaved across registries (each registry's in file order)."""
    queues = {r: [s for s in sources if s.registry == r] for r in heldout.REGISTRIES}
    out: list[Source] = []
    while any(queues.values()):
        for registry in heldout.REGISTRIES:
            if queues[registry]:
                out.append(queues[registry].pop(0))
    return out


def split_of(registry: str, name: str) -> str:
    """``valid`` for about 2% of packages, by a hash of the package's identity."""
    key = f"{registry}:{heldout.normalise(registry, name)}".encode()
    value = int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % 1000
    return "valid" if value < VALID_PER_MILLE else "train"


@dataclass
class Progress:
    total: int
    done: int = 0
    current: str = ""
    kept: int = 0
    dropped: int = 0
    files: int = 0
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        rate = self.kept / elapsed if elapsed else 0.0
        eta = (self.total - self.done) * elapsed / self.done if self.done else float("nan")
        return (
            f"packages {self.done}/{self.total} (now {self.current}) files {self.files} "
            f"pairs kept {self.kept} dropped {self.dropped} | {rate:.1f} pairs/s "
            f"| {elapsed:.0f} s elapsed, ETA {eta:.0f} s"
        )


def _heartbeat(progress: Progress, stop: threading.Event) -> None:
    while not stop.wait(PROGRESS_S):
        log.info(progress.line())


class Builder:
    def __init__(self, out: Path, workers: int) -> None:
        self.out = out
        self.downloads = out / "downloads"
        self.held = heldout.load()
        self.dedup = Deduper()
        self.workers = workers
        self._pool: Any = None  # started on the first package that is read
        self.langs: Counter[str] = Counter()

    @property
    def pool(self) -> Any:
        if self._pool is None:
            self._pool = multiprocessing.get_context("forkserver").Pool(self.workers)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()

    def package(self, src: Source, writer: Any, progress: Progress) -> dict[str, Any]:
        rec: dict[str, Any] = {"registry": src.registry, "name": src.name}
        rec |= {"version": src.version, "split": split_of(src.registry, src.name)}
        why = self.held.blocks(src.registry, src.name)
        if why is not None:
            return rec | {"status": "held_out", "detail": why}
        try:
            got = fetch.fetch(src.registry, src.name, src.version, self.downloads)
        except fetch.FetchError as exc:
            return rec | {"status": "fetch_failed", "detail": str(exc)}
        rec |= {"archive": got.archive.name, "sha256": got.sha256}
        try:
            lic = package.read_licence(src.registry, got.archive, got.poms)
            rec |= {"licence": lic.spdx, "licence_from": lic.source}
            if not lic.allowed:
                return rec | {"status": "refused_licence"}
            return rec | self._pairs(
                src, got.archive, str(lic.spdx), rec["split"], writer, progress
            )
        except archive.ArchiveRefused as exc:
            return rec | {"status": "archive_refused", "detail": str(exc)}

    def _pairs(
        self, src: Source, path: Path, spdx: str, split: str, writer: Any, progress: Progress
    ) -> dict[str, Any]:
        skipped: Counter[str] = Counter()
        dropped: Counter[str] = Counter()
        stats = Counter[str]()
        langs: Counter[str] = Counter()
        files = package.source_files(src.registry, path, self.held, skipped)
        for file_path, result in self.pool.imap(work_item, files, chunksize=4):
            progress.files += 1
            stats["files_read"] += 1
            stats["functions"] += result.functions
            stats["documented"] += result.documented
            dropped.update(result.dropped)
            for pair in result.pairs:
                reason = self.dedup.check(pair["code"])
                if reason is not None:
                    dropped[reason] += 1
                    continue
                pair |= {"registry": src.registry, "package": src.name, "version": src.version}
                pair |= {"licence": spdx, "split": split}
                key = f"{src.registry}:{src.name}@{src.version}:{file_path}:{pair['start_line']}"
                pair["id"] = hashlib.sha1(key.encode(), usedforsecurity=False).hexdigest()[:16]
                writer.write((json.dumps(pair, ensure_ascii=False) + "\n").encode())
                langs[pair["lang"]] += 1
                progress.kept += 1
            progress.dropped += sum(result.dropped.values())
        self.langs.update(langs)
        kept = sum(langs.values())
        return {
            "status": "ok",
            "pairs_kept": kept,
            "pairs_by_language": dict(sorted(langs.items())),
            "pairs_dropped": dict(sorted(dropped.items())),
            "files_skipped": dict(sorted(skipped.items())),
            **stats,
        }


def build(out: Path, limit: int | None, workers: int, sources_path: Path) -> dict[str, Any]:
    sources = round_robin(load_sources(sources_path))[:limit]
    out.mkdir(parents=True, exist_ok=True)
    builder = Builder(out, workers)
    progress = Progress(total=len(sources))
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(progress, stop), daemon=True)
    beat.start()
    records: list[dict[str, Any]] = []
    tmp = out / "pairs.jsonl.zst.tmp"
    try:
        with tmp.open("wb") as raw, zstandard.ZstdCompressor(level=10).stream_writer(raw) as w:
            for src in sources:
                progress.current = f"{src.registry}:{src.name}"
                t0 = time.monotonic()
                rec = builder.package(src, w, progress)
                rec["seconds"] = round(time.monotonic() - t0, 1)
                records.append(rec)
                progress.done += 1
                log.info("%s %s %s: %s", src.registry, src.name, src.version, _brief(rec))
                _write_manifest(out, records, builder, progress, sources_path, done=False)
        os.replace(tmp, out / "pairs.jsonl.zst")
    finally:
        stop.set()
        builder.close()
    return _write_manifest(out, records, builder, progress, sources_path, done=True)


def _brief(rec: dict[str, Any]) -> str:
    if rec["status"] != "ok":
        return f"{rec['status']} {rec.get('licence') or ''} {rec.get('detail', '')}"[:300]
    return f"{rec['pairs_kept']} pairs ({rec['licence']}), dropped {rec['pairs_dropped']}"


def _write_manifest(
    out: Path,
    records: list[dict[str, Any]],
    builder: Builder,
    progress: Progress,
    sources_path: Path,
    *,
    done: bool,
) -> dict[str, Any]:
    dropped: Counter[str] = Counter()
    status: Counter[str] = Counter()
    for rec in records:
        dropped.update(rec.get("pairs_dropped", {}))
        status[rec["status"]] += 1
    manifest = {
        "complete": done,
        "sources_file": str(sources_path.name),
        "pairs_file": "pairs.jsonl.zst",
        "pairs_kept": progress.kept,
        "pairs_by_language": dict(sorted(builder.langs.items())),
        "pairs_by_split": _by_split(records),
        "pairs_dropped": dict(sorted(dropped.items())),
        "sources_by_status": dict(sorted(status.items())),
        "wall_seconds": round(time.monotonic() - progress.started, 1),
        "sources": records,
    }
    tmp = out / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    os.replace(tmp, out / "manifest.json")
    return manifest


def _by_split(records: list[dict[str, Any]]) -> dict[str, int]:
    out: Counter[str] = Counter()
    for rec in records:
        out[rec["split"]] += rec.get("pairs_kept", 0)
    return dict(sorted(out.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="output folder (not the repo)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N sources")
    parser.add_argument("--workers", type=int, default=2, help="parse processes")
    parser.add_argument("--sources", type=Path, default=SOURCES)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    manifest = build(args.out.resolve(), args.limit, args.workers, args.sources)
    log.info(
        "done: %d pairs %s, dropped %s, sources %s, %.0f s",
        manifest["pairs_kept"],
        manifest["pairs_by_language"],
        manifest["pairs_dropped"],
        manifest["sources_by_status"],
        manifest["wall_seconds"],
    )
    return 0


def iter_pairs(path: Path) -> Iterator[dict[str, Any]]:
    """The pairs of a ``pairs.jsonl.zst`` file, one dict each (for training and checks)."""
    with path.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as reader:
        buffer = b""
        for block in iter(lambda: reader.read(1 << 20), b""):
            buffer += block
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.strip():
                    yield json.loads(line)
        if buffer.strip():
            yield json.loads(buffer)


if __name__ == "__main__":
    sys.exit(main())
