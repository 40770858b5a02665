"""What a reindex is asked to do and what it answers: the job's arguments
(:class:`ReindexArgs`, the one place they are built and parsed), the request the pipeline
runs, its outcome, and the fingerprint of everything that shapes its output.
"""

from __future__ import annotations

import enum
import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from semgraph.config import Settings
from semgraph.errors import JobError
from semgraph.graph.schema import SCHEMA_VERSION
from semgraph.indexer.languages import grammar_versions, queries_digest
from semgraph.model import MODEL_VERSION

# The settings that change what a parse produces. A change to any of them makes the next
# reindex of every repository a full one (the fingerprint differs).
FINGERPRINT_SETTINGS = (
    "chunk_max_chars",
    "chunk_max_lines",
    "max_file_bytes",
    "search_chunk_context",
)


@dataclass(frozen=True)
class ReindexArgs:
    """The ``args`` of a ``reindex`` job, as stored on its ``:JobQueue`` node.

    ``source`` is a clone URL or a local path; ``commit`` (a pushed sha) wins over ``ref``
    (a branch or tag); ``force`` reindexes an unchanged commit and publishes the whole graph.
    """

    source: str
    ref: str | None = None
    commit: str | None = None
    force: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "ref": self.ref, "commit": self.commit}
        if self.force:
            out["force"] = True
        return out

    @classmethod
    def from_json(cls, job_id: str, args: dict[str, Any] | None) -> ReindexArgs:
        """Parse stored args; a job whose args cannot run is a :class:`JobError`."""
        args = args or {}
        source = args.get("source")
        if not isinstance(source, str) or not source.strip():
            raise JobError(f"reindex job {job_id} has no 'source' argument")
        ref, commit = args.get("ref"), args.get("commit")
        for name, value in (("ref", ref), ("commit", commit)):
            if value is not None and not isinstance(value, str):
                raise JobError(f"reindex job {job_id}: {name!r} is not a string")
        return cls(
            source=source, ref=ref or None, commit=commit or None, force=bool(args.get("force"))
        )


@dataclass
class ReindexRequest:
    source: str
    ref: str | None = None
    commit: str | None = None
    job_id: str | None = None
    worker_id: str | None = None
    force: bool = False

    @classmethod
    def for_job(
        cls,
        args: ReindexArgs,
        *,
        job_id: str,
        worker_id: str,
        job_ref: str | None = None,
        job_commit: str | None = None,
    ) -> ReindexRequest:
        """The request of a claimed job (its node's ``ref``/``commit`` fill in for args)."""
        ref = args.ref or job_ref
        commit = args.commit or job_commit
        return cls(
            source=args.source,
            ref=commit or ref,  # a pushed commit wins over the branch name
            commit=commit,
            job_id=job_id,
            worker_id=worker_id,
            force=args.force,
        )


class RunOutcome(enum.StrEnum):
    """How a reindex that did not fail ended (the run records' statuses, RunStatus, also
    hold ``running``, ``failed`` and ``abandoned``)."""

    NOOP = "noop"  # unchanged commit and fingerprint: nothing written
    SUCCEEDED = "succeeded"
    DIVERGED = "diverged"  # the graph committed, the alias flip failed (repair finishes it)


@dataclass
class ReindexResult:
    run_id: str
    repo_key: str
    commit: str
    status: RunOutcome
    phases_s: dict[str, float] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)


def fingerprint(settings: Settings, model_id: str) -> str:
    """What affects the output: parser/grammar versions, schema, model, options."""
    material = {
        "model_version": MODEL_VERSION,
        "schema_version": SCHEMA_VERSION,
        "grammars": grammar_versions(),
        "queries": queries_digest(),
        "embedding_model": model_id,
        "options": {name: getattr(settings, name) for name in FINGERPRINT_SETTINGS},
    }
    text = json.dumps(material, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def new_run_id() -> str:
    return time.strftime("%Y%m%d%H%M%S", time.gmtime()) + "-" + uuid.uuid4().hex[:8]


def as_json_stats(obj: Any) -> Any:
    """A JSON-ready copy of a phase's stats (dataclasses, dicts, lists; others as text)."""
    if obj is None or isinstance(obj, (int, float, str, bool)):
        return obj
    if isinstance(obj, dict):
        return {str(k): as_json_stats(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [as_json_stats(v) for v in obj]
    if hasattr(obj, "__dataclass_fields__"):
        return {k: as_json_stats(getattr(obj, k)) for k in obj.__dataclass_fields__}
    return str(obj)
