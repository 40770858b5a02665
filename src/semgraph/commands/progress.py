"""The live progress line ``semgraph index`` draws on a terminal: parse, then embedding, then
the vectors step of progressive publish."""

from __future__ import annotations

from typing import Any

from semgraph.commands.console import err
from semgraph.search.progress import EmbedProgress, VectorsProgress


def progress_printer(live: bool) -> Any:
    """A progress sink: a one-line live display on a terminal (done/total, rate, ETA) for the
    parse and the embedding phases and the vectors step, nothing otherwise (the pipeline and
    the vectors job log a progress line at least every 10 s, which carries the same facts)."""
    if not live:
        return None
    state = {"kind": "parse"}

    def show(p: Any) -> None:
        if isinstance(p, VectorsProgress):
            kind, line = "vectors", vectors_line(p)
        elif isinstance(p, EmbedProgress):
            kind, line = "embedding", _embed_line(p)
        else:
            kind, line = "parse", _parse_line(p)
        if kind != state["kind"]:
            state["kind"] = kind
            err.print("")  # keep the last phase's line, start this one below it
        err.print(f"\r  {line}   ", end="", markup=False, highlight=False)

    return show


def _eta(done: int, total: int | None, rate: float) -> str:
    return f", ETA {max(total - done, 0) / rate:.0f}s" if total and rate > 0 else ""


def _parse_line(p: Any) -> str:
    rate = p.files_done / p.elapsed_s if p.elapsed_s > 0 else 0.0
    seen = p.files_done + p.files_skipped
    done = f"{seen}/{p.files_total}" if p.files_total else f"{seen}"
    eta = _eta(seen, p.files_total, rate)
    return f"parse: {done} files, {p.files_failed} failed, {rate:.0f} files/s{eta}"


def _embed_line(p: EmbedProgress) -> str:
    rate = p.chunks_done / p.elapsed_s if p.elapsed_s > 0 else 0.0
    estimate = p.chunks_estimate
    of = f"/~{estimate}" if estimate is not None else ""
    files = f"{p.files_read}/{p.files_total}" if p.files_total else f"{p.files_read}"
    return (
        f"embed: {p.chunks_done}{of} chunks, {files} files read, {rate:.1f} chunks/s"
        f"{_eta(p.chunks_done, estimate, rate)}"
    )


def vectors_line(p: VectorsProgress) -> str:
    rate = p.filled / p.elapsed_s if p.elapsed_s > 0 else 0.0
    return (
        f"vectors: {p.filled:,}/{p.total:,} chunks, {rate:.1f} chunks/s"
        f"{_eta(p.filled, p.total, rate)}"
    )
