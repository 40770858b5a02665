"""Progressive publish: the vectors of a published commit, added to its live index.

A reindex publishes the graph and a keyword-searchable index of its commit with one alias
flip. The chunks whose vectors it did not make itself (past ``embed_inline_max_chunks``, or
every one on a ``push`` worker, which never loads the model) are in that index without an
``embedding``: they keep their ``vector_key`` and the text to embed (``embed_text``). Readers
then see one state, "graph + keywords of commit C, vectors pending N of M": BM25, the graph
and localize answer in full, kNN and hybrid with the vectors that are there, and each answer
says so (:func:`semantic_states`, ``semantic`` in every search answer).

A ``vectors`` job (:mod:`semgraph.jobs`) fills them in: window by window it reads pending
chunks of the index behind the repository's alias, takes each vector from the shared vector
store when any run made it already, embeds the rest, writes them to the store, updates the
documents (in a thread, while the next window embeds: at most one window's writes are in
flight, and a failure waits for them); a refresh at least every :data:`REFRESH_EVERY_S`
shows kNN what is filled. The
last refresh is the second step's flip: from then on the index answers "everything of C".
Nothing of it is lost to a crash: a vector is in the store before its document is updated, so
a retry embeds only what no attempt finished.

A push to a repository whose vectors are pending is not held up: the job stops at its next
window when another job of the repository is pending (``should_yield``), and queues itself
again behind it. The push's reindex clones the index with its pending chunks, embeds its
own changed chunks, and the next vectors job continues on the newest commit's index,
reusing every vector already made (a vector is keyed by model and text, never by commit).

Pages come in key order (``vector_key``, path, line), each after the last one's sort values;
a pass that filled anything is followed by another (a document passed over at a page
boundary is found then), and a pass that filled nothing ends the job, so a document that
cannot be filled (no text) never loops. Fault point ``vectors.window``, before each window's
vectors are made.

The module is a little over 300 lines: the fill loop and its writer thread are one piece.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import elasticsearch

from semgraph.db import search_errors
from semgraph.errors import EmbeddingError, SearchBulkError
from semgraph.faults import PROCESS, Faults
from semgraph.logs import event
from semgraph.memory import malloc_trim
from semgraph.search.bodies import (
    PENDING_QUERY,
    pending_page_body,
    semantic_counts_body,
    vector_update_operations,
)
from semgraph.search.embed import Embedder
from semgraph.search.hits import Semantic, semantic_of
from semgraph.search.index import SearchIndex
from semgraph.search.progress import PROGRESS_EVERY_S, VectorsProgress
from semgraph.search.vectorstore import VectorStore

log = logging.getLogger(__name__)

# filled vectors become visible to kNN at least this often (a refresh per window of a big
# repository would rebuild its vector segments for each window)
REFRESH_EVERY_S = 5.0


def semantic_states(
    es: elasticsearch.Elasticsearch, targets: list[str], repos: list[str] | None = None
) -> dict[str, Semantic]:
    """Per repository found in ``targets`` (aliases or indexes): its chunks and pending
    vectors, in one request."""
    if not targets:
        return {}
    with search_errors("count pending vectors"):
        resp = es.search(index=targets, ignore_unavailable=True, **semantic_counts_body(repos))
    return semantic_of(dict(resp))


def pending_count(index: SearchIndex, name: str) -> int:
    """Chunks of index ``name`` whose vectors are pending."""
    with search_errors(f"count pending vectors in {name}"):
        return int(index.es.count(index=name, query=PENDING_QUERY)["count"])


@dataclass
class FillStats:
    """What one vectors job did (recorded in its log line and returned)."""

    index: str | None = None  # the index it filled last
    windows: int = 0
    filled: int = 0  # documents that got their vector
    embedded: int = 0  # texts given to the model
    store_reused: int = 0  # vectors found in the shared store
    unfillable: int = 0  # pending documents without a text (never filled)
    pending_left: int = 0
    yielded: bool = False  # stopped for a due job its worker would claim instead (a push)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class VectorsFill:
    """One vectors job's loop over the live index of ``repo_key`` (module docstring)."""

    def __init__(
        self,
        index: SearchIndex,
        embedder: Embedder,
        repo_key: str,
        *,
        checkpoint: Callable[[str], None] = lambda _name: None,
        should_yield: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.monotonic,
        faults: Faults = PROCESS,
        progress: Callable[[VectorsProgress], None] | None = None,
    ) -> None:
        self.index = index
        self.es = index.es
        self.embedder = embedder
        self.repo_key = repo_key
        self.window = index.settings.vectors_window_chunks
        self.checkpoint = checkpoint
        self.should_yield = should_yield
        self.clock = clock
        self.faults = faults
        self.progress = progress  # a live display, after each window
        self.total = 0  # filled before the index in hand, and pending in it when adopted
        self.store = VectorStore(index.es, index.settings)
        self.stats = FillStats()
        self.unrefreshed = False  # documents updated since the last refresh
        self.refreshed = clock()
        # one window's writes (store, then documents) run while the next window embeds
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vectors-write")
        self._writing: Future[None] | None = None

    def run(self) -> FillStats:
        try:
            return self._run()
        finally:  # a failure still lands the window in flight: a retry does not embed it again
            self._writer.shutdown(wait=True)

    def _run(self) -> FillStats:
        started = self.clock()
        reported = started
        after: list[Any] | None = None
        changed_in_pass = 0
        while True:
            self.checkpoint("vectors.window")
            # at least one window per job: a worker that cannot claim what it yields for
            # (another lane's, say) still makes progress each time it comes back
            if self.stats.windows and self.should_yield():
                self.stats.yielded = True
                break
            live = self.index.live_index(self.repo_key)
            if live is None:
                break
            if live != self.stats.index:
                if self.stats.index is not None:
                    self._refresh(self.stats.index)
                self._adopt(live)
                after, changed_in_pass = None, 0
            hits = self._page(live, after)
            if not hits:
                self._refresh(live)  # the pass's end: the next pass must not see them again
                if after is None or changed_in_pass == 0:
                    break  # a whole pass found nothing to fill
                after, changed_in_pass = None, 0  # another pass: keys cut at a page end
                continue
            after = hits[-1]["sort"]
            self.faults.point("vectors.window", index=live, docs=len(hits))
            changed_in_pass += self._fill(live, hits)
            self.stats.windows += 1
            if self.progress is not None:
                elapsed = self.clock() - started
                self.progress(VectorsProgress(self.stats.filled, self.total, elapsed))
            malloc_trim()
            if self.clock() - reported >= PROGRESS_EVERY_S:
                reported = self.clock()
                self._report(live, started)
        if self.stats.index is not None:
            self._refresh(self.stats.index)  # what it filled is visible when it returns
            if self.index.live_index(self.repo_key) is not None:
                self.stats.pending_left = pending_count(self.index, self.stats.index)
        self.stats.seconds = round(self.clock() - started, 3)
        event(
            log,
            logging.INFO,
            "vectors_filled",
            f"vectors of {self.repo_key}: {self.stats.filled} filled, "
            f"{self.stats.pending_left} pending" + (" (yielded)" if self.stats.yielded else ""),
            repo=self.repo_key,
            **self.stats.to_dict(),
        )
        return self.stats

    def _adopt(self, live: str) -> None:
        """Start on ``live``: its vectors must be of this worker's model, and a clone of a
        push that failed may have left it write-blocked (no job of the repository runs
        beside this one, so nothing else writes to it now)."""
        meta = self.index.index_meta(live) or {}
        if meta.get("model_id") not in (None, self.embedder.model_id):
            raise EmbeddingError(
                f"{live} holds vectors of model {meta.get('model_id')}, this worker embeds "
                f"with {self.embedder.model_id}: a reindex with this model re-embeds it"
            )
        with search_errors(f"read the write block of {live}"):
            got = self.es.indices.get_settings(index=live, name="index.blocks.write")
        index_settings = dict(got).get(live, {}).get("settings", {}).get("index", {})
        if str(index_settings.get("blocks", {}).get("write")) == "true":  # rare: a state change
            with search_errors(f"allow writes to {live}"):
                self.es.indices.put_settings(index=live, settings={"index.blocks.write": None})
        self.stats.index = live
        if self.progress is not None:
            self.total = self.stats.filled + pending_count(self.index, live)

    def _page(self, live: str, after: list[Any] | None) -> list[dict[str, Any]]:
        with search_errors(f"read pending vectors of {live}"):
            resp = self.es.search(index=live, **pending_page_body(self.window, after))
        hits: list[dict[str, Any]] = resp["hits"]["hits"]
        return hits

    def _fill(self, live: str, hits: list[dict[str, Any]]) -> int:
        texts: dict[str, str] = {}
        for hit in hits:
            src = hit.get("_source") or {}
            key, text = src.get("vector_key"), src.get("embed_text")
            if isinstance(key, str) and isinstance(text, str):
                texts.setdefault(key, text)
            else:
                self.stats.unfillable += 1
        model_id, dims = self.embedder.model_id, self.embedder.dims
        vectors = self.store.lookup(model_id, dims, list(texts))
        self.stats.store_reused += len(vectors)
        misses = [k for k in texts if k not in vectors]
        pairs: list[tuple[str, list[float]]] = []
        if misses:
            fresh = self.embedder.embed([texts[k] for k in misses])
            pairs = list(zip(misses, fresh, strict=True))
            vectors.update(pairs)
            self.stats.embedded += len(misses)
        updates = [
            (str(hit["_id"]), vectors[key])
            for hit in hits
            if (key := (hit.get("_source") or {}).get("vector_key")) in vectors
        ]
        # at most one window's writes in flight: the last one's are done before these start
        if self.unrefreshed and self.clock() - self.refreshed >= REFRESH_EVERY_S:
            self._refresh(live)  # the windows written so far
        else:
            self._drain()
        if pairs or updates:
            self._writing = self._writer.submit(self._write, live, model_id, pairs, updates)
        self.unrefreshed = self.unrefreshed or bool(updates)
        self.stats.filled += len(updates)
        return len(updates)

    def _write(
        self,
        live: str,
        model_id: str,
        pairs: list[tuple[str, list[float]]],
        updates: list[tuple[str, list[float]]],
    ) -> None:
        if pairs:
            self.store.put(model_id, pairs)  # before the documents: a retry finds them
        if updates:
            self._update(live, updates)

    def _drain(self) -> None:
        """Wait for the window in flight; its failure is this job's."""
        writing, self._writing = self._writing, None
        if writing is not None:
            writing.result()

    def _refresh(self, live: str) -> None:
        """Make the filled vectors visible (kNN answers with them from here on)."""
        self._drain()
        if self.unrefreshed:
            with search_errors(f"refresh {live}"):
                self.es.indices.refresh(index=live)
        self.unrefreshed = False
        self.refreshed = self.clock()

    def _update(self, live: str, updates: list[tuple[str, list[float]]]) -> None:
        with search_errors(f"update vectors in {live}"):
            resp = self.es.bulk(operations=vector_update_operations(live, updates))
        if not resp.get("errors"):
            return
        failed = [
            item.get("update", {}).get("error")
            for item in resp.get("items", [])
            if item.get("update", {}).get("error")
        ]
        # a document deleted under us is gone from the index: nothing to fill
        real = [e for e in failed if e.get("type") != "document_missing_exception"]
        if real:
            raise SearchBulkError(
                f"update vectors in {live}: {len(real)} of {len(updates)} rejected: "
                f"{real[0].get('type')}: {str(real[0].get('reason'))[:300]}"
            )

    def _report(self, live: str, started: float) -> None:
        left = pending_count(self.index, live)
        elapsed = max(self.clock() - started, 1e-9)
        rate = self.stats.filled / elapsed
        eta = f", ETA {left / rate:.0f}s" if rate > 0 else ""
        event(
            log,
            logging.INFO,
            "vectors_progress",
            f"vectors of {self.repo_key}: {self.stats.filled} filled, {left} pending, "
            f"{rate:.1f} chunks/s{eta}",
            repo=self.repo_key,
            filled=self.stats.filled,
            pending=left,
        )
