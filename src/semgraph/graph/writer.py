"""Publish one repository's code graph in ONE explicit transaction, writing only what changed.

The transaction takes the ``:Repository`` node first (so two publishes of one repository
serialize) and reads the version of the published state the graph carries
(:mod:`semgraph.graph.pubstate`: what the last publish wrote, kept in the graph itself). Then
one of three forms:

* **first publish** (the repository has no node yet): every node and edge is CREATEd;
* **delta publish** (the graph's published state is this code's version for this key): the
  changed files are found by their bundle digests, and their node rows and edge groups
  (:mod:`semgraph.graph.rows`) compared by digest with what the last publish wrote. New
  nodes are CREATEd, changed ones overwritten by key, changed edge groups unlinked and
  re-created; rows and groups the new model no longer has are deleted last. The
  transaction holds the change, not the repository. Resolution is global, so a group whose
  file did not change still changes when a new definition elsewhere resolves one of its
  calls: the bundle digest covers what the resolution produced for the file.
  A delta whose state does not decode or match its checksum, or whose rows do not find the
  nodes the state promised (the graph was changed behind the state's back), is rolled
  back and done again as a full publish, with a log line;
* **full publish in place** (no usable state): the repository's edges are deleted in bounded
  slices, every node upserted by key, every edge re-created, and the nodes the new model no
  longer has swept at the end.

Run id, fingerprint, commit and ``indexed_at`` are written on ``:Repository`` in the same
transaction. Any failure rolls the whole transaction back: readers keep seeing the previous
graph, and other repositories are never touched (every statement is keyed by this
repository). Every form writes the published state of what it wrote in the same transaction,
so the state never runs ahead of or behind the graph, and any worker on any host can publish
the next change as a delta; nothing on the host's disk is needed.

The rows are batched and pipelined (:mod:`semgraph.graph.batches`); each form sends them its
own way (:mod:`semgraph.graph.row_writer`).

A graph too large for one transaction on the server's memory settings fails with
:class:`~semgraph.errors.GraphTooLarge` naming the server's limit; it is never split.

The module is a little over 300 lines (the cross-repository link is one function here, its
work in semgraph.xrepo): the one transaction (choosing its form, falling back from
a delta to a full publish, translating a refusal) is kept whole, in one place.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from semgraph.config import Settings
from semgraph.db import Graph, Tx
from semgraph.errors import GraphError, GraphInputError, GraphTooLarge, JobError
from semgraph.faults import PROCESS, Faults
from semgraph.graph import publish_queries as q
from semgraph.graph.batches import Batcher
from semgraph.graph.publish_stats import PublishMode, PublishStats
from semgraph.graph.pubstate import Entries, PublishedState, StateInvalid, version
from semgraph.graph.row_writer import RowWriter
from semgraph.logs import event
from semgraph.manifests import Identity
from semgraph.resolve.resolution import Resolution
from semgraph.resolve.symtab import file_key
from semgraph.xrepo import relink
from semgraph.xrepo.link import link
from semgraph.xrepo.packages import publish_packages

log = logging.getLogger(__name__)
DELETE_SLICE = 10_000  # nodes per sweep statement
DELETE_EDGE_SLICE = 50_000  # edges per delete statement


@dataclass(frozen=True)
class RepoInfo:
    key: str
    url: str
    default_branch: str | None  # None: the remote has no HEAD (an empty or odd repository)
    commit: str
    identity: Identity | None = None  # its manifests' packages; None: package edges untouched


class _DeltaMismatch(Exception):
    """The graph does not hold what the published state says: redo as a full publish."""


class GraphWriter:
    """Publishes one repository's subgraph in one transaction."""

    def __init__(self, graph: Graph, settings: Settings, *, faults: Faults = PROCESS) -> None:
        self.graph = graph
        self.settings = settings
        self.faults = faults  # points publish.batch (n: batches sent) and publish.before_commit

    def publish(
        self,
        repo: RepoInfo,
        resolution: Resolution,
        *,
        run_id: str,
        fingerprint: str,
        now: float,
        batch_size: int | None = None,
        delta: bool = True,
    ) -> PublishStats:
        """Publish the model ``resolution`` holds; ``delta=False`` never compares against the
        published state (a full publish, as a parity reference)."""
        size = batch_size or self.settings.graph_batch_rows
        if size < 1:
            raise GraphInputError("batch_size must be at least 1")
        resolution.prepare_lookups()
        args = (repo, resolution, run_id, fingerprint, now, size)
        try:
            return self._publish_once(*args, delta)
        except _DeltaMismatch as exc:
            event(
                log,
                logging.WARNING,
                "graph_delta_fallback",
                f"delta publish abandoned, publishing in full: {exc}",
                repo=repo.key,
                run_id=run_id,
            )
            stats = self._publish_once(*args, False)
            stats.delta_fallback = str(exc)
            return stats

    def _publish_once(
        self,
        repo: RepoInfo,
        resolution: Resolution,
        run_id: str,
        fingerprint: str,
        now: float,
        size: int,
        delta: bool,
    ) -> PublishStats:
        stats = PublishStats()
        started = time.monotonic()
        what = f"publish graph of {repo.key}"
        try:
            with self.graph.transaction(what) as tx:
                mode = self._begin(tx, repo, resolution, run_id, fingerprint, now, delta, stats)
                stats.mode = mode.value
                batch = Batcher(tx, repo.key, size, stats, self.faults)
                rows = RowWriter(batch, mode, PublishedState(repo.key), resolution)
                self._write(tx, repo.key, resolution, mode, rows)
                _link(tx, repo, mode, rows)
                if stats.dropped_rows and mode is PublishMode.DELTA:
                    raise _DeltaMismatch(
                        f"{stats.dropped_rows} rows did not find the nodes the published "
                        "state promised (the graph was changed outside a publish)"
                    )
                if stats.dropped_rows:
                    raise JobError(
                        f"{stats.dropped_rows} graph rows of {repo.key} referred to nodes "
                        "that were not written (the parsed model and the resolution "
                        "disagree); nothing was published"
                    )
                self.faults.point("publish.before_commit", repo=repo.key, run_id=run_id)
        except StateInvalid as exc:
            raise _DeltaMismatch(str(exc)) from exc
        except GraphError as exc:
            if self.graph.dialect.is_out_of_memory(str(exc)):
                limit = self.graph.dialect.memory_limit_setting(str(exc))
                raise GraphTooLarge(
                    f"the graph of {repo.key} ({resolution.model_rows()} rows; "
                    f"{stats.rows_written} written before the server refused) exceeds the "
                    f"server's transaction memory limit ({limit}); raise that limit: a "
                    "publish is never split"
                ) from exc
            raise
        stats.tx_duration_s = time.monotonic() - started
        event(
            log,
            logging.INFO,
            "graph_publish",
            f"published ({stats.mode}) {stats.total_nodes} nodes and {stats.total_edges} edges, "
            f"deleted {stats.deleted_nodes} nodes and {stats.deleted_edges} edges",
            repo=repo.key,
            run_id=run_id,
            mode=stats.mode,
            rows_written=stats.rows_written,
            files_changed=stats.files_changed,
            state_bytes=stats.state_bytes,
            state_read_s=round(stats.state_read_s, 3),
            duration_s=round(stats.tx_duration_s, 3),
            rows_per_s=round(stats.throughput),
        )
        return stats

    def _begin(
        self,
        tx: Tx,
        repo: RepoInfo,
        res: Resolution,
        run_id: str,
        fingerprint: str,
        now: float,
        delta: bool,
        stats: PublishStats,
    ) -> PublishMode:
        """Lock and stamp the repository node; choose the publish's form."""
        counts = res.counts["calls"]
        props = {
            "calls_total": counts["total"],
            "calls_resolved": counts["resolved"],
            "calls_ambiguous": counts["ambiguous"],
            "calls_external": counts["external"],
            "calls_unresolved": counts["unresolved"],
            "resolution_rate": round(res.rate, 4),
        }
        record = tx.run(
            q.PUBLISH_REPOSITORY,
            key=repo.key,
            url=repo.url,
            default_branch=repo.default_branch,
            commit=repo.commit,
            run_id=run_id,
            fingerprint=fingerprint,
            now=now,
            props=props,
            delta_version=version(repo.key),
        ).single()
        had = record["previous_version"] if record is not None else None
        present = tx.run(q.PUBLISH_HAS_NODES, repo=repo.key).single()
        if not (present is not None and present["present"]):
            return PublishMode.FIRST
        if not delta:
            return PublishMode.FULL
        if had == version(repo.key):
            return PublishMode.DELTA
        why = (
            "the graph holds no published state of this repository"
            if had is None
            else f"the graph's published state is version {had!r}, not this code's "
            "(written by another semgraph version, or under another repository key)"
        )
        event(
            log,
            logging.WARNING,
            "graph_delta_fallback",
            f"no delta possible, publishing in full: {why}",
            repo=repo.key,
            run_id=run_id,
        )
        stats.delta_fallback = why
        return PublishMode.FULL

    def _write(
        self, tx: Tx, repo_key: str, res: Resolution, mode: PublishMode, rows: RowWriter
    ) -> None:
        stats = rows.stats
        if mode is PublishMode.FULL:
            stats.deleted_edges = _delete_all(
                tx,
                repo_key,
                DELETE_EDGE_SLICE,
                (
                    q.PUBLISH_DELETE_REPOSITORY_EDGES,
                    q.PUBLISH_DELETE_FILE_EDGES,
                    q.PUBLISH_DELETE_SYMBOL_EDGES,
                ),
            )
        if mode is PublishMode.DELTA:
            began = time.monotonic()
            changed, removed = rows.state.plan(tx, res)
            stats.state_read_s = time.monotonic() - began
            rows.held = relink.before(tx, [file_key(repo_key, p) for p in changed + removed])
            bundles = dict(_bundles_of(res, changed))
        else:
            bundles, removed = dict(res.file_bundles()), []
        stats.files_changed, stats.files_removed = len(bundles), len(removed)
        entries: dict[str, Entries] = {}
        for path in bundles:  # pass 1: every node first, so pass 2's edges find their ends
            entries[path] = rows.nodes(path)
        rows.externals()
        rows.batch.flush("node")
        for path, bundle in bundles.items():
            rows.edges(path, bundle, entries.pop(path))
        for path in removed:
            rows.removed(path)
        rows.externals_gone()
        rows.batch.finish()
        if mode is PublishMode.FULL:
            stats.deleted_nodes = _delete_all(
                tx,
                repo_key,
                DELETE_SLICE,
                (q.PUBLISH_SWEEP_FILES, q.PUBLISH_SWEEP_SYMBOLS, q.PUBLISH_SWEEP_EXTERNALS),
            )


def _link(tx: Tx, repo: RepoInfo, mode: PublishMode, rows: RowWriter) -> None:
    """Package edges, then the links of the sites this publish wrote."""
    began = time.monotonic()
    changed = repo.identity is not None and publish_packages(tx, repo.key, repo.identity)
    delta = mode is PublishMode.DELTA and not changed
    sources = sorted(rows.external_sources) if delta else None
    if sources != []:  # [] : a push that changed no external site and no manifest
        rows.stats.xrepo = link(tx, repo.key, sources, recount=not delta).to_dict()
    # what its dependents' re-link reads (a library's change: the names it touched)
    names = relink.changed_names(tx, rows) if delta else set()
    lost = relink.lost_links(rows) if delta else []
    relink.record(tx, repo.key, not delta, names, lost)
    rows.stats.xrepo_s = time.monotonic() - began


def _bundles_of(res: Resolution, paths: list[str]) -> Iterator[tuple[str, bytes]]:
    wanted = set(paths)
    for path, bundle in res.file_bundles():
        if path in wanted:
            yield path, bundle


def _delete_all(tx: Tx, repo_key: str, limit: int, statements: Iterable[str]) -> int:
    """Run each slice-deleting statement until it deletes fewer than ``limit``."""
    total = 0
    for cypher in statements:
        while True:
            record = tx.run(cypher, repo=repo_key, limit=limit).single()
            deleted = int(record["deleted"]) if record is not None else 0
            total += deleted
            if deleted < limit:
                break
    return total
