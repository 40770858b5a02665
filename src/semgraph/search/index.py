"""The search index manager: a repository's index lifecycle (create the staging index, flip
the alias to it, delete the old one), the live state behind the aliases, and the GC of
orphaned staging indexes. Names are in :mod:`semgraph.search.names`, request bodies and the
``_meta`` every index carries in :mod:`semgraph.search.bodies`, bulk loading in
:mod:`semgraph.search.loader`. The divergence check reads the run id from ``_meta``
(:meth:`SearchIndex.index_run_id`); the orphan GC only touches indexes with its marker.
Every request goes through :func:`semgraph.db.search_errors`. The module is over 300 lines
because each lifecycle step keeps its own error handling next to its request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

import elasticsearch

from semgraph.config import Settings
from semgraph.db import search_errors
from semgraph.errors import SearchError, SearchRequestError
from semgraph.faults import PROCESS, Faults
from semgraph.logs import event
from semgraph.model import FileFacts
from semgraph.search import names
from semgraph.search.bodies import (
    INDEX_META_FILTER,
    LIST_INDEXES_FILTER,
    LIVE_INDEX_FILTER,
    META_MARKER,
    RUN_IDS_FILTER,
    create_staging_body,
    flip_alias_actions,
    staging_meta,
)
from semgraph.search.embed import Embedder
from semgraph.search.loader import IndexStats, load_files
from semgraph.search.progress import EmbedProgress

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IndexInfo:
    name: str
    aliases: tuple[str, ...]
    meta: dict[str, Any]


class SearchIndex:
    """Staging indexes, alias flips and GC for one ES client; bulk loading via the loader."""

    def __init__(
        self, es: elasticsearch.Elasticsearch, settings: Settings, *, faults: Faults = PROCESS
    ) -> None:
        self.es = es
        self.settings = settings
        self.faults = faults
        self.prefix = settings.search_index_prefix

    # -- names ---------------------------------------------------------------------------------

    def alias_name(self, repo_key: str) -> str:
        return names.alias_name(self.prefix, repo_key)

    def staging_name(self, repo_key: str, run_id: str) -> str:
        return names.staging_name(self.prefix, repo_key, run_id)

    def _check_ours(self, name: str) -> None:
        names.check_ours(self.prefix, name)

    # -- lifecycle -----------------------------------------------------------------------------

    def create_staging(
        self,
        repo_key: str,
        run_id: str,
        dims: int,
        *,
        model_id: str = "",
        now: float | None = None,
        docs_fingerprint: str = "",
    ) -> str:
        """Create the empty staging index for a run and return its name."""
        if not 1 <= dims <= 4096:
            raise SearchRequestError(f"vector size {dims} is outside 1..4096")
        name = self.staging_name(repo_key, run_id)
        meta = staging_meta(repo_key, run_id, dims, model_id, now, docs_fingerprint)
        body = create_staging_body(
            dims=dims,
            meta=meta,
            shards=self.settings.search_index_shards,
            replicas=self.settings.search_index_replicas,
        )
        with search_errors(f"create staging index {name}"):
            self.es.indices.create(index=name, settings=body["settings"], mappings=body["mappings"])
        event(log, logging.INFO, "search_staging_created", index=name, repo=repo_key, run_id=run_id)
        return name

    def refresh(self, index: str) -> None:
        with search_errors(f"refresh {index}"):
            self.es.indices.refresh(index=index)

    def count(self, index: str) -> int:
        with search_errors(f"count {index}"):
            return int(self.es.count(index=index)["count"])

    def delete_index(self, name: str) -> bool:
        """Delete one index; False when it did not exist."""
        self._check_ours(name)
        with search_errors(f"delete index {name}"):
            resp = self.es.options(ignore_status=404).indices.delete(index=name)
        existed = resp.meta.status != 404
        if existed:
            event(log, logging.INFO, "search_index_deleted", index=name)
        return existed

    # -- removing a repository (semgraph.repos.removal) ------------------------------------------

    def remove_alias(self, repo_key: str) -> bool:
        """Take the repository's alias off whatever index carries it (searches stop finding
        the repository); False when it had none."""
        alias = self.alias_name(repo_key)
        with search_errors(f"remove alias {alias}"):
            resp = self.es.options(ignore_status=404).indices.delete_alias(
                index=f"{self.prefix}-*", name=alias
            )
        existed = resp.meta.status != 404
        if existed:
            event(log, logging.INFO, "search_alias_removed", alias=alias, repo=repo_key)
        return existed

    def repository_indexes(self, repo_key: str) -> list[str]:
        """Every index of the repository: those named after it (``<alias>--<run>``), those
        whose ``_meta`` names it, and any its alias points at."""
        alias = self.alias_name(repo_key)
        return sorted(
            info.name
            for info in self.list_indexes()
            if info.name.startswith(f"{alias}--")
            or (META_MARKER in info.meta and info.meta.get("repo") == repo_key)
            or alias in info.aliases
        )

    # -- reading the live state ------------------------------------------------------------------

    def _alias_targets(self, alias: str) -> list[str]:
        with search_errors(f"read alias {alias}"):
            resp = self.es.options(ignore_status=404).indices.get_alias(
                name=alias, filter_path=LIVE_INDEX_FILTER
            )
        if resp.meta.status == 404:
            return []
        return sorted(name for name, body in resp.body.items() if alias in body.get("aliases", {}))

    def live_index(self, repo_key: str) -> str | None:
        """The index behind the repository's alias, or None when it has none."""
        alias = self.alias_name(repo_key)
        targets = self._alias_targets(alias)
        if len(targets) > 1:
            raise SearchError(f"alias {alias} points at {len(targets)} indexes: {targets}")
        return targets[0] if targets else None

    def live_indexes(self) -> dict[str, str]:
        """Every repository alias under our prefix -> the index behind it."""
        with search_errors("list aliases"):
            resp = self.es.options(ignore_status=404).indices.get_alias(
                name=f"{self.prefix}-*", filter_path=LIVE_INDEX_FILTER
            )
        if resp.meta.status == 404:
            return {}
        return {
            alias: index
            for index, body in sorted(resp.body.items())
            for alias in body.get("aliases", {})
        }

    def index_meta(self, index: str) -> dict[str, Any] | None:
        """The ``_meta`` of an index (or of the index behind an alias); None if missing."""
        with search_errors(f"read mapping of {index}"):
            resp = self.es.options(ignore_status=404).indices.get_mapping(
                index=index, filter_path=INDEX_META_FILTER
            )
        if resp.meta.status == 404:
            return None
        for body in resp.body.values():
            meta = body.get("mappings", {}).get("_meta")
            if isinstance(meta, dict):
                return meta
        return {}

    def run_ids(self, indexes: list[str]) -> dict[str, str] | None:
        """Index name -> the run id in its ``_meta``, in one request; None when one of the
        indexes vanished (an alias flip deleted it)."""
        if not indexes:
            return {}
        for name in indexes:
            self._check_ours(name)
        with search_errors("read the runs of the searched indexes"):
            resp = self.es.options(ignore_status=404).indices.get_mapping(
                index=",".join(indexes), filter_path=RUN_IDS_FILTER
            )
        if resp.meta.status == 404:
            return None
        return {
            name: str(body.get("mappings", {}).get("_meta", {}).get("run_id", ""))
            for name, body in resp.body.items()
        }

    def index_run_id(self, index: str) -> str | None:
        """The run id recorded in an index's ``_meta`` (None if missing or not ours)."""
        meta = self.index_meta(index)
        run_id = meta.get("run_id") if meta and META_MARKER in meta else None
        return str(run_id) if run_id is not None else None

    # -- publish ------------------------------------------------------------------------------

    def flip_alias(self, repo_key: str, new_index: str) -> str | None:
        """Point the repository's alias at ``new_index`` in ONE ``_aliases`` request (removing
        every old target in the same request), then delete the old index. Returns the old
        index name (None on the first publish). A failed delete is logged, not raised: the
        flip has happened, and the orphan GC removes the leftover."""
        alias = self.alias_name(repo_key)
        self._check_ours(new_index)
        meta = self.index_meta(new_index)
        if meta is None:
            raise SearchRequestError(f"flip {alias}: index {new_index} does not exist")
        if meta.get("repo") != repo_key:
            raise SearchRequestError(
                f"flip {alias}: index {new_index} belongs to {meta.get('repo')!r}, not {repo_key!r}"
            )
        old = [name for name in self._alias_targets(alias) if name != new_index]
        with search_errors(f"flip alias {alias} to {new_index}"):
            self.es.indices.update_aliases(actions=flip_alias_actions(alias, new_index, old))
        event(
            log,
            logging.INFO,
            "search_alias_flipped",
            repo=repo_key,
            alias=alias,
            index=new_index,
            old=",".join(old) or None,
        )
        for name in old:
            try:
                self.delete_index(name)
            except SearchError as exc:
                event(log, logging.WARNING, "search_old_index_delete_failed", str(exc), index=name)
        return old[0] if old else None

    # -- orphans --------------------------------------------------------------------------------

    def list_indexes(self) -> list[IndexInfo]:
        """Every index under our prefix with its aliases and ``_meta``."""
        with search_errors("list indexes"):
            resp = self.es.options(ignore_status=404).indices.get(
                index=f"{self.prefix}-*",
                expand_wildcards="open,closed",
                filter_path=LIST_INDEXES_FILTER,
            )
        if resp.meta.status == 404:
            return []
        return [
            IndexInfo(
                name=name,
                aliases=tuple(sorted(body.get("aliases", {}))),
                meta=dict(body.get("mappings", {}).get("_meta", {})),
            )
            for name, body in sorted(resp.body.items())
        ]

    def orphaned_staging(
        self,
        keep_runs: Collection[tuple[str, str]],
        *,
        now: float | None = None,
        min_age_s: float = 0.0,
    ) -> list[str]:
        """Our indexes that no alias points at and that belong to no run in ``keep_runs``.

        ``keep_runs`` holds (repo key, run id) pairs whose staging index must survive: runs
        in progress, and the run recorded on each ``:Repository`` (a diverged run's staging
        index is what repair flips to). With ``now``, indexes younger than ``min_age_s``
        (by the ``created_at`` we stored) are kept too.
        """
        keep = set(keep_runs)
        out: list[str] = []
        for info in self.list_indexes():
            meta = info.meta
            if META_MARKER not in meta or info.aliases:
                continue
            repo, run = str(meta.get("repo")), str(meta.get("run_id"))
            # a clone whose _meta was never set to its own run still names the live run
            if (repo, run) in keep and info.name == self.staging_name(repo, run):
                continue
            created = meta.get("created_at")
            if now is not None and isinstance(created, int | float) and now - created < min_age_s:
                continue
            out.append(info.name)
        return out

    def gc_orphans(
        self,
        keep_runs: Collection[tuple[str, str]],
        *,
        now: float | None = None,
        min_age_s: float = 0.0,
    ) -> list[str]:
        """Delete :meth:`orphaned_staging` indexes; returns the names deleted."""
        deleted: list[str] = []
        for name in self.orphaned_staging(keep_runs, now=now, min_age_s=min_age_s):
            if self.delete_index(name):
                deleted.append(name)
        if deleted:
            event(log, logging.INFO, "search_orphans_deleted", count=len(deleted))
        return deleted

    # -- loading ---------------------------------------------------------------------------------

    def index_files(
        self,
        staging: str,
        repo_key: str,
        run_id: str,
        files: Iterable[FileFacts],
        embedder: Embedder,
        total_files: int | None = None,
        progress: Callable[[EmbedProgress], None] | None = None,
        inline_max: int | None = None,
    ) -> IndexStats:
        """Embed (reusing vectors from the live index) and bulk-load every chunk of ``files``
        into ``staging`` (:func:`semgraph.search.loader.load_files`; ``inline_max``: the
        texts the model embeds here, the rest left pending). Does not refresh."""
        self._check_ours(staging)
        live = self.live_index(repo_key)
        return load_files(
            self.es,
            self.settings,
            staging,
            repo_key,
            run_id,
            files,
            embedder,
            live,
            self.faults,
            total_files=total_files,
            progress=progress,
            inline_max=inline_max,
        )
