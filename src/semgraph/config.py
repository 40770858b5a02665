"""One settings object for the whole process.

Every field can be set from the environment with the ``SEMGRAPH_`` prefix (for example
``SEMGRAPH_BOLT_URI``). Defaults point at the local service stack (``semgraph services up``).
Nothing here is read at import time: call :func:`load_settings` and pass the object down;
child processes rebuild an identical object from the same environment.

It is over 300 lines because every setting of the product is declared here, one field each,
with its bounds: one place to read what can be configured.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError

from semgraph.errors import ConfigError
from semgraph.netaddr import is_loopback_host as is_loopback_host  # the web and doctor

_REPO_ROOT = Path(__file__).resolve().parents[2]
#: the embedding model a fresh install uses (``semgraph.search.model_files`` resolves names)
DEFAULT_EMBEDDING_MODEL = "semgraph-code-minilm"
_CHUNK_CONTEXT = r"^((module|class|signature|calls)(,(module|class|signature|calls))*)?$"


def _default_state_dir() -> Path:
    # /var/tmp is world-traversable, so the unprivileged Elasticsearch user can reach its
    # files even when the invoking user is root (whose home is not traversable).
    return Path("/var/tmp") / f"semgraph-{os.getuid()}"


class Settings(BaseSettings):
    """semgraph configuration (env prefix ``SEMGRAPH_``)."""

    model_config = SettingsConfigDict(env_prefix="SEMGRAPH_", extra="ignore")

    # -- graph server (Bolt) -------------------------------------------------------------
    bolt_uri: str = "bolt://127.0.0.1:7687"
    bolt_user: str = ""
    bolt_password: str = ""
    bolt_database: str | None = None
    bolt_connect_timeout_s: float = Field(default=5.0, gt=0, le=300)

    # -- Elasticsearch ----------------------------------------------------------------------
    es_url: str = "http://127.0.0.1:9200"
    es_request_timeout_s: float = Field(default=30.0, gt=0, le=3600)

    # -- local service stack ----------------------------------------------------------------
    state_dir: Path = Field(default_factory=_default_state_dir)
    ops_dir: Path = _REPO_ROOT / "ops"
    es_version: str = "8.19.21"
    es_heap_mb: int = Field(default=512, ge=128, le=1024)
    es_user: str = "semgraph"
    # a publish is one transaction, on the heap until COMMIT (20,000 files, 2.03 million rows:
    # 4.2 GB). 0 (the default): sized from the machine's memory (services.heap.auto_heap_mb)
    neo4j_heap_mb: int = Field(default=0, ge=0, le=262_144)
    # parallel: throughput collector for a publish's long-lived state (services.bolt.GC_FLAGS)
    neo4j_gc: str = Field(default="parallel", pattern="^(parallel|g1)$")
    java_home: Path | None = None
    services_start_timeout_s: float = Field(default=180.0, gt=0, le=3600)

    # -- publish / repair -------------------------------------------------------------------
    staging_gc_min_age_s: float = Field(default=600.0, ge=0, le=7 * 86400)  # younger: kept

    # -- alerts -----------------------------------------------------------------------------
    alert_webhook_url: str | None = None
    alert_webhook_style: str = Field(default="generic", pattern="^(generic|slack)$")
    alert_webhook_attempts: int = Field(default=3, ge=1, le=10)
    alert_webhook_timeout_s: float = Field(default=5.0, gt=0, le=60)

    # -- indexer: checkout, walk, parse pool, spill -----------------------------------------
    mirrors_dir: Path | None = None  # bare mirrors; default <state_dir>/mirrors
    git_timeout_s: float = Field(default=600.0, gt=0, le=86400)
    max_file_bytes: int = Field(default=1_000_000, ge=1, le=1_000_000_000)
    parse_window_files: int = Field(default=256, ge=1, le=100_000)
    pool_size: int = Field(default=0, ge=0, le=256)  # 0: one child per CPU; 1: inline
    parse_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    child_memory_mb: int = Field(default=2048, ge=256, le=1_048_576)
    child_max_tasks: int = Field(default=1000, ge=1, le=1_000_000)
    spill_compression: str = Field(default="zstd", pattern="^(zstd|none)$")
    spill_zstd_level: int = Field(default=3, ge=1, le=19)
    chunk_max_lines: int = Field(default=60, ge=5, le=10_000)
    chunk_max_chars: int = Field(default=2400, ge=200, le=1_000_000)

    # -- web: webhooks + HTTP API -----------------------------------------------------------
    web_host: str = "127.0.0.1"
    web_port: int = Field(default=8080, ge=1, le=65535)
    # default secret for repositories without their own entry in webhook_secrets
    webhook_secret: str | None = None
    # JSON object: repository full name ("org/repo") or clone URL -> its own secret
    webhook_secrets: dict[str, str] = Field(default_factory=dict)
    # repository full names / clone URLs (JSON list or comma-separated); empty: any with a secret
    webhook_allowlist: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # branch names or fnmatch patterns (JSON list or comma-separated); empty: the default branch
    webhook_branches: Annotated[list[str], NoDecode] = Field(default_factory=list)
    webhook_tag_pushes: bool = False
    webhook_remove_on_delete: bool = False  # a host's repository-deleted event queues removal
    webhook_allow_local_sources: bool = False  # local paths and file:// (tests, one host)
    webhook_max_body_bytes: int = Field(default=5_000_000, ge=1024, le=100_000_000)
    # group commit: webhook enqueues that arrive within this window (or while the previous
    # batch commits) share one graph transaction, at most this many per transaction
    webhook_batch_window_s: float = Field(default=0.002, ge=0, le=1)
    webhook_batch_max_requests: int = Field(default=100, ge=1, le=1000)
    # after SIGTERM, `semgraph serve` waits this long for in-flight requests, then exits
    web_shutdown_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    # `semgraph serve`: how often Python hands the GIL between threads (default 0.005); shorter
    # lets the enqueue committer get back to the graph sooner while the event loop is busy
    web_gil_switch_interval_s: float = Field(default=0.001, ge=0.0001, le=0.1)
    # one bearer token with every scope (read, enqueue, admin), "api_token" in the audit log
    api_token: str | None = None
    # reads (search, graph, jobs, runs, MCP) without a token; false: with a token configured
    # they need one, without one only on loopback; true logs a WARNING at start
    api_read_open: bool = False
    # TOML file of scoped tokens, reloaded on SIGHUP and on change (docs/runbook.md)
    api_tokens_file: Path | None = None
    # a second, webhook-only listener (/webhooks/*, /healthz, /readyz); host: web_host
    webhook_port: int | None = Field(default=None, ge=1, le=65535)
    webhook_host: str | None = None
    # per-client token bucket on /webhooks/* before the signature check (0: off) -> 429;
    # deliveries in flight at once beyond webhook_max_in_flight -> 503
    webhook_rate_per_s: float = Field(default=50.0, ge=0, le=100_000)
    webhook_rate_burst: int = Field(default=500, ge=1, le=1_000_000)
    webhook_max_in_flight: int = Field(default=512, ge=1, le=100_000)

    # -- search: embeddings, staging index + alias, hybrid query ----------------------------
    # a shipped model's name (semgraph/embedders/<name>), "all-minilm-l6-v2" (the English
    # sentence model, for comparison), or a sentence-transformers model directory; part of
    # the model id, so changing it re-embeds each repository once (docs/search.md)
    embedding_model: str = Field(
        default=DEFAULT_EMBEDDING_MODEL, min_length=1, max_length=4096, pattern=r"^[^\x00-\x1f]+$"
    )
    embedding_batch_size: int = Field(default=64, ge=1, le=4096)
    embedding_device: str = Field(default="auto", pattern=r"^(auto|cpu|mps|cuda(:[0-9]{1,2})?)$")
    embedding_max_chars: int = Field(default=8000, ge=64, le=1_000_000)  # text given to the model
    # the model runtime: auto = torch on CUDA when a GPU is visible, else OpenVINO;
    # the quantisation applies to OpenVINO (torch runs fp32); both are part of the model id
    embedding_backend: str = Field(default="auto", pattern=r"^(auto|openvino|torch)$")
    embedding_quantization: str = Field(default="int8", pattern=r"^(int8|bf16|fp32)$")
    embedding_threads: int = Field(default=0, ge=0, le=1024)  # OpenVINO threads; 0: all CPUs
    embedding_calibration_texts: int = Field(default=200, ge=16, le=10_000)  # int8 export
    # tokens of a text the model sees (never above the model's max_seq_length; 0: the model's
    # own). 128 embeds this repository's chunks 1.7x faster than MiniLM's 256 at the same
    # recall on the outside evaluation (bench/NOTES.md). Part of the model id.
    embedding_max_tokens: int = Field(default=128, ge=0, le=100_000)
    # the exported models (minutes of CPU to build, verified on every load, written atomically
    # under a lock, so several state directories may share one); default <state_dir>/models
    models_dir: Path | None = None
    # OpenVINO pads each text's token count up to this (a vector never depends on its batch)
    embedding_pad_multiple: int = Field(default=16, ge=1, le=512)
    search_index_prefix: str = Field(default="code", pattern=r"^[a-z][a-z0-9_]{0,31}$")
    search_index_replicas: int = Field(default=0, ge=0, le=10)
    search_index_shards: int = Field(default=1, ge=1, le=64)
    search_embed_window_chunks: int = Field(default=2048, ge=1, le=10_000)  # lookup + embed
    search_bulk_batch_docs: int = Field(default=500, ge=1, le=10_000)
    search_bulk_max_bytes: int = Field(default=8_000_000, ge=10_000, le=90_000_000)
    search_max_code_chars: int = Field(default=20_000, ge=100, le=1_000_000)  # per document
    # a chunk's context, embedded and as BM25 words (semgraph.search.context; fingerprinted):
    # comma-separated parts. Off by default: no part measured better (bench/NOTES.md)
    search_chunk_context: str = Field(default="", pattern=_CHUNK_CONTEXT)
    search_knn_num_candidates: int = Field(default=100, ge=1, le=10_000)
    search_rank_window: int = Field(default=50, ge=1, le=1000)  # hits per retriever before fusion
    # the documented bound of a query: a longer one is cut there, with a notice,
    # never refused; a POST /search body over search_max_body_bytes is answered 413
    search_max_query_chars: int = Field(default=32_768, ge=10, le=1_000_000)
    search_max_body_bytes: int = Field(default=4 * 1024 * 1024, ge=1024, le=64 * 1024 * 1024)

    # -- memory bounds of the embed + bulk phase ---------------------------------------------
    # padded tokens per model batch (texts x longest text): bounds activation memory; a batch
    # of long texts holds fewer of them (never more than embedding_batch_size)
    embedding_batch_tokens: int = Field(default=4096, ge=16, le=1_000_000)
    # a window of pending chunks is flushed at this many bytes of text (or its chunk count)
    search_embed_window_bytes: int = Field(default=32_000_000, ge=100_000, le=1_000_000_000)
    # progressive publish (semgraph.search.vectors): a reindex embeds at most this many texts
    # and publishes its other chunks without vectors, which a vectors job adds (-1: no limit)
    embed_inline_max_chunks: int = Field(default=64, ge=-1, le=100_000_000)
    vectors_window_chunks: int = Field(default=256, ge=1, le=10_000)  # per update + refresh
    vectors_stuck_after_s: float = Field(default=3600.0, gt=0)  # still pending: an alert
    # all: every job kind; push: reindex + remove, never loads the model (vectors wait for a
    # vectors job); embed: vectors jobs only (docs/runbook.md, "Worker roles")
    worker_role: str = Field(default="all", pattern=r"^(all|push|embed)$")
    # glibc mmap threshold pinned when the model loads (0 leaves glibc's sliding threshold,
    # under which freed activation buffers fragment the heap and RSS grows per new shape)
    malloc_mmap_threshold_bytes: int = Field(default=131_072, ge=0, le=33_554_432)

    # -- incremental reindex: parse cache + cloned live index --------------------------------
    # reuse the parse result of a file whose path and blob are unchanged since the last job
    parse_cache: bool = True
    # keep one work tree per repository and move it to each job's commit (git writes only the
    # files that differ) instead of checking every file out again
    checkout_reuse_worktree: bool = True
    # with the parse cache, take each file's blob id from git's index (no read, no hash of an
    # unchanged file) when the checkout converts nothing (no attributes, no autocrlf); off:
    # every file is read and hashed (the slow path, kept for parity checks)
    parse_git_blob_ids: bool = True
    # the staging index of a cloned run decodes only the changed files' spill records
    # (filtered on the raw record); off: every record is decoded, then filtered
    staging_filter_raw: bool = True
    # a parse-cache hit goes into the spill as the cache's compressed frame (a copy); off: it
    # is decompressed and compressed again with the spill's block
    spill_cached_frames: bool = True
    # the parse cache is updated in place (the changed files' rows, one transaction) instead
    # of being written again whole for every job
    parse_cache_in_place: bool = True
    # a reindex that changes at most this share of the files clones the live search index
    # and rewrites only those files' documents; above it (or 0) it loads a fresh index
    search_incremental_max_changed_ratio: float = Field(default=0.5, ge=0, le=1)
    # resolve only what a push can affect, from the last resolution kept on this host under
    # <state_dir>/resolve-cache/ (a cache: equal to a full resolve; the model test
    # and bench_incremental's --check on sympy prove it); above this share of the code files
    # to resolve again, a full resolve (bench/NOTES.md)
    resolve_cache: bool = True
    # measured on sympy (bench/results/incremental.log): 0.48 s + 0.0118 s per re-resolved
    # file against 12.7 s for a full resolve, break-even at 0.68 of the files; 0.5 keeps a margin
    resolve_incremental_max_fraction: float = Field(default=0.5, ge=0, le=1)
    # each worker's maintenance deletes this host's caches (parse cache, resolution, work
    # tree, mirror) of repositories the graph no longer knows, once untouched this long
    # (semgraph.maintenance.hostcaches; a removal on another host cannot reach this disk)
    host_cache_gc_min_age_s: float = Field(default=600.0, ge=0, le=30 * 86400)

    # -- commit history as evidence (semgraph.indexer.githistory, semgraph.search.history) ---
    # each file's newest commit messages (up to the indexed commit) as documents of the
    # search index; a walk reads at most history_max_commits commits, skips merges and
    # commits touching over history_max_files_per_commit files; 0 commits per file: off
    history_commits_per_file: int = Field(default=20, ge=0, le=1000)
    history_body_chars: int = Field(default=2000, ge=0, le=100_000)  # per message body
    history_max_commits: int = Field(default=20_000, ge=1, le=10_000_000)
    history_max_files_per_commit: int = Field(default=200, ge=1, le=100_000)
    # the hybrid search's lift of chunks whose file's history matches the query (0: off);
    # 0.5 had the best file Acc@1/@5 on the evaluation's tuning half (bench/NOTES.md)
    search_history_weight: float = Field(default=0.5, ge=0, le=10)

    # -- the shared vector store: vectors reused across repositories -------------------------
    # an index <search_index_prefix>_vectors of (model id, text hash) -> vector that forks,
    # vendored code and monorepo copies share; a failing store degrades to embedding
    search_vector_store: bool = True
    # the bound: GC deletes the least recently used vectors down to 90 % of this
    # (about 2.2 KB of index per 384-float vector: 1,000,000 is about 2.2 GB)
    search_vector_store_max_vectors: int = Field(default=1_000_000, ge=1, le=1_000_000_000)
    search_vector_store_max_age_days: float = Field(default=90.0, ge=0, le=36_500)  # 0: off
    search_vector_store_gc_interval_s: float = Field(default=3600.0, ge=0, le=30 * 86400)
    # a hit rewrites the vector's last_used only when it is older than this (not per hit)
    search_vector_store_touch_s: float = Field(default=86400.0, ge=0, le=365 * 86400)

    # -- queue + worker -----------------------------------------------------------------------
    job_max_attempts: int = Field(default=5, ge=1, le=1000)  # claims before a job is failed
    job_max_crashes: int = Field(default=3, ge=1, le=1000)  # worker deaths before quarantine
    job_timeout_s: float = Field(default=3600.0, gt=0, le=7 * 86400)
    job_cancel_grace_s: float = Field(default=30.0, ge=0, le=3600)  # then the worker exits
    job_error_history: int = Field(default=10, ge=1, le=1000)  # error entries kept per job
    job_retention_s: float = Field(default=7 * 86400.0, gt=0)  # ended jobs and runs pruned after
    job_modules: str = ""  # comma-separated modules that register extra job kinds
    lease_s: float = Field(default=60.0, gt=0, le=86400)  # job + worker lease per heartbeat
    heartbeat_s: float = Field(default=10.0, gt=0, le=3600)
    backoff_base_s: float = Field(default=10.0, ge=0, le=86400)
    backoff_cap_s: float = Field(default=3600.0, ge=0, le=7 * 86400)
    poll_interval_s: float = Field(default=1.0, gt=0, le=3600)
    sweep_interval_s: float = Field(default=60.0, gt=0, le=86400)
    # a queue write that loses a conflict (Memgraph aborts the later writer): retried this long
    graph_conflict_retry_s: float = Field(default=20.0, ge=0, le=3600)
    claim_conflict_retries: int = Field(default=1000, ge=1, le=100_000)  # cap on the tries
    worker_name: str = Field(default="", max_length=200)  # default: the host name
    worker_metrics_port: int = Field(default=0, ge=0, le=65535)  # 0: no /metrics server
    worker_metrics_host: str = Field(default="127.0.0.1", max_length=255)  # its listener
    # lanes (semgraph.queue.lanes): a worker of the small lane claims only the
    # jobs of small repositories; large takes only large ones; any takes both. A repository
    # is small when its record holds both figures and neither is over its bound (a first
    # index, or a repository without a record, is large)
    worker_lane: str = "any"
    lane_small_max_files: int = Field(default=5000, ge=0)  # files the last job found
    lane_small_max_job_s: float = Field(default=120.0, ge=0)  # the last job's duration
    # soft affinity: a pending job is left, this long after it became due, to an idle live
    # worker of the host (worker name) that last completed its repository; 0: off
    claim_affinity_s: float = Field(default=30.0, ge=0, le=3600)

    # -- code graph: resolution, publish, queries ---------------------------------------------
    graph_batch_rows: int = Field(default=5000, ge=1, le=100_000)  # rows per UNWIND batch
    graph_ambiguous_cap: int = Field(default=10, ge=0, le=1000)  # edges per ambiguous call
    graph_max_depth: int = Field(default=5, ge=1, le=10)  # bound for callers/callees --depth
    graph_max_limit: int = Field(default=1000, ge=1, le=100_000)  # bound for --limit

    # -- logging ------------------------------------------------------------------------------
    log_level: str = "INFO"
    log_json: bool = False

    # -- reads: per-token limits and audit (semgraph.web.read_guard) ---------------------------
    # search, localize and MCP requests per second (and burst) per token, or per address
    # without one (0: no rate limit); over it -> 429 with Retry-After
    read_rate_per_s: float = Field(default=50.0, ge=0, le=100_000)
    read_rate_burst: int = Field(default=200, ge=1, le=1_000_000)
    read_max_concurrent: int = Field(default=16, ge=1, le=10_000)  # at once per token -> 429
    audit_query_text: bool = False  # the read audit logs query texts too (off: never)

    @field_validator("bolt_uri")
    @classmethod
    def _check_bolt_uri(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in {"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"}:
            raise ValueError(f"bolt_uri must be a bolt:// or neo4j:// URI, got {value[:200]!r}")
        if not parts.hostname:
            raise ValueError(f"bolt_uri has no host: {value[:200]!r}")
        if len(parts.hostname) > 253:
            raise ValueError("bolt_uri host name is longer than 253 characters")
        return value

    @field_validator("es_url")
    @classmethod
    def _check_es_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError(f"es_url must be an http(s) URL with a host, got {value[:200]!r}")
        if len(parts.hostname) > 253:
            raise ValueError("es_url host name is longer than 253 characters")
        return value.rstrip("/")

    @field_validator("webhook_allowlist", "webhook_branches", mode="before")
    @classmethod
    def _split_list(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                try:
                    return json.loads(text)
                except ValueError as exc:
                    raise ValueError(f"not a JSON list: {exc}") from exc
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

    @field_validator("neo4j_heap_mb")
    @classmethod
    def _check_neo4j_heap(cls, value: int) -> int:
        if 0 < value < 128:
            raise ValueError("must be 0 (sized from the machine's memory) or at least 128")
        return value

    @field_validator("worker_lane")
    @classmethod
    def _check_lane(cls, value: str) -> str:
        lane = value.strip().lower()
        if lane not in {"small", "large", "any"}:
            raise ValueError(f"unknown lane {value[:50]!r}: one of small, large, any")
        return lane

    @field_validator("log_level")
    @classmethod
    def _check_level(cls, value: str) -> str:
        level = value.upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError(f"log_level must be a logging level name, got {value!r}")
        return level

    @property
    def mirrors_path(self) -> Path:
        return self.mirrors_dir if self.mirrors_dir is not None else self.state_dir / "mirrors"

    @property
    def models_path(self) -> Path:
        return self.models_dir if self.models_dir is not None else self.state_dir / "models"

    @property
    def bolt_port(self) -> int:
        return urlsplit(self.bolt_uri).port or 7687

    @property
    def bolt_host(self) -> str:
        return urlsplit(self.bolt_uri).hostname or "127.0.0.1"

    @property
    def es_port(self) -> int:
        return urlsplit(self.es_url).port or 9200

    @property
    def es_host(self) -> str:
        return urlsplit(self.es_url).hostname or "127.0.0.1"


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment (plus explicit overrides), with a clear error."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"SEMGRAPH_{'_'.join(str(p) for p in err['loc']).upper()}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(f"invalid configuration: {problems}") from exc
    except SettingsError as exc:  # a mapping/list variable that is not valid JSON
        field = re.search(r'field "(\w+)"', str(exc))
        name = f"SEMGRAPH_{field.group(1).upper()}" if field else "a SEMGRAPH_ variable"
        raise ConfigError(f"invalid configuration: {name}: not valid JSON") from exc
