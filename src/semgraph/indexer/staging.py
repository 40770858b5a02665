"""What a reindex hands the search side (:mod:`semgraph.search.staging`, which builds the
run's staging index): the run's files as callables over the spill, the resolution and the
graph, so that the search side reads none of them itself.

The spill is decoded once here (the files the index needs); which files changed is decided
from the resolution's file table, which the resolve phase already built from the spill.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from semgraph.config import Settings
from semgraph.graph.reader import GraphReader
from semgraph.indexer.spill import SpillReader
from semgraph.model import FileFacts
from semgraph.resolve.resolution import Resolution
from semgraph.search.history import HistorySource
from semgraph.search.staging import RunFiles


def spill_facts(
    spill: Path, only: set[str] | None = None, *, filter_raw: bool = True
) -> Iterator[FileFacts]:
    """The parsed files of ``spill`` (those in ``only`` when given), decoded as read; with
    ``filter_raw`` the other files' records are skipped before they are built into
    dataclasses (a cloned run needs a handful of the repository's files). Both ways yield
    the same files in the same order."""
    if filter_raw:
        yield from SpillReader(spill).file_facts(only)
        return
    for rec in SpillReader(spill):
        if isinstance(rec, FileFacts) and (only is None or rec.path in only):
            yield rec


def graph_named(files: Iterator[FileFacts], renamed: dict[str, str]) -> Iterator[FileFacts]:
    """The files with their chunks' symbols named as the graph names them: in a src layout
    resolution drops the source root from the modules (``src.pkg.mod.f`` is ``pkg.mod.f``),
    and a search hit must name the symbol a graph query takes."""
    for facts in files:
        prefix = renamed.get(facts.path)
        if prefix:
            facts.chunks = [
                replace(c, symbol=c.symbol[len(prefix) :])
                if c.symbol and c.symbol.startswith(prefix)
                else c
                for c in facts.chunks
            ]
        yield facts


def run_files(
    settings: Settings,
    reader: GraphReader,
    repo_key: str,
    *,
    spill: Path,
    resolution: Resolution,
    history: HistorySource | None = None,
) -> RunFiles:
    """The run's files for :func:`semgraph.search.staging.stage`: blobs from the resolution's
    file table, facts decoded from the spill and named as the graph names them (the changed
    files' records filtered before decoding, as ``staging_filter_raw`` says), and the
    graph's run id and blobs for the repository, and the files' commit messages."""

    def facts(only: set[str] | None) -> Iterator[FileFacts]:
        raw = only is None or settings.staging_filter_raw
        return graph_named(spill_facts(spill, only, filter_raw=raw), resolution.renamed_modules())

    def graph_run_id() -> str | None:
        published = reader.repository(repo_key)
        return None if published is None else _str_or_none(published.get("run_id"))

    return RunFiles(
        blobs=resolution.file_blobs,
        facts=facts,
        graph_run_id=graph_run_id,
        graph_blobs=lambda: reader.file_blobs(repo_key),
        history=history,
    )


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
