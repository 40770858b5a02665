"""Pure queue logic: backoff properties (Hypothesis), claim order keys, registry, context
checkpoints, owner liveness, duration parsing, settings checks."""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from semgraph.commands.queue import parse_duration
from semgraph.config import load_settings
from semgraph.errors import CancelReason, ConfigError, JobCancelled, QueueInputError
from semgraph.queue import registry
from semgraph.queue.backoff import backoff_ceiling_s, backoff_s
from semgraph.queue.models import Job, JobStatus, RunningJob, claim_key
from semgraph.queue.registry import JobContext, JobInfo
from semgraph.queue.sweep import Identity, death_reason, process_start
from semgraph.queue.worker import check_settings

attempts = st.integers(min_value=1, max_value=10_000)
bases = st.floats(min_value=0.0, max_value=3600.0, allow_nan=False)
caps = st.floats(min_value=0.0, max_value=7 * 86400.0, allow_nan=False)


@given(attempts, bases, caps, st.integers(0, 2**32))
def test_backoff_within_half_ceiling_and_ceiling_and_cap(
    n: int, base: float, cap: float, seed: int
) -> None:
    ceiling = backoff_ceiling_s(n, base, cap)
    delay = backoff_s(n, base, cap, random.Random(seed))
    assert ceiling / 2 <= delay <= ceiling <= max(cap, 0.0)
    assert ceiling == min(cap, base * 2.0 ** min(n - 1, 64))


@given(attempts, bases, caps)
def test_backoff_ceiling_never_decreases(n: int, base: float, cap: float) -> None:
    assert backoff_ceiling_s(n + 1, base, cap) >= backoff_ceiling_s(n, base, cap)


@given(st.integers(2, 60), st.integers(0, 2**32))
def test_backoff_has_jitter(n: int, seed: int) -> None:
    rng = random.Random(seed)
    delays = {backoff_s(n, 1.0, 1e12, rng) for _ in range(20)}
    assert len(delays) > 1


def test_backoff_rejects_attempt_zero() -> None:
    with pytest.raises(QueueInputError):
        backoff_ceiling_s(0, 1.0, 10.0)


sort_fields = st.tuples(
    st.integers(-1_000_000, 1_000_000),
    st.floats(0, 1e10, allow_nan=False),
    st.floats(0, 1e10, allow_nan=False),
    st.text("0123456789abcdef", min_size=32, max_size=32),
)


@given(sort_fields, sort_fields)
def test_claim_key_sorts_like_priority_desc_run_after_created_id(
    a: tuple[int, float, float, str], b: tuple[int, float, float, str]
) -> None:
    def natural(t: tuple[int, float, float, str]) -> tuple[int, float, float, str]:
        prio, run_after, created, jid = t
        return (-prio, round(run_after, 6), round(created, 6), jid)

    if natural(a) != natural(b):
        assert (claim_key(*a) < claim_key(*b)) == (natural(a) < natural(b))


def test_registry_rejects_bad_and_conflicting_kinds() -> None:
    def fn(ctx: JobContext) -> None:
        return None

    with pytest.raises(QueueInputError):
        registry.register("Bad Kind!", fn)
    registry.register("unit_kind", fn)
    registry.register("unit_kind", fn)  # idempotent
    with pytest.raises(QueueInputError, match="already registered"):
        registry.register("unit_kind", lambda ctx: None)
    assert registry.lookup("unit_kind") is fn
    registry.unregister("unit_kind")
    assert registry.lookup("unit_kind") is None


def test_the_same_method_of_a_newer_object_replaces_the_older_ones() -> None:
    class Kinds:
        def run(self, ctx: JobContext) -> None:
            return None

    first, second = Kinds(), Kinds()
    registry.register("unit_method", first.run)
    registry.register("unit_method", first.run)  # idempotent: another bound method object
    registry.register("unit_method", second.run)  # the kinds built again where a worker starts
    assert getattr(registry.lookup("unit_method"), "__self__", None) is second
    with pytest.raises(QueueInputError, match="already registered"):
        registry.register("unit_method", lambda ctx: None)
    registry.unregister("unit_method")


def test_job_modules_setting_is_validated() -> None:
    with pytest.raises(ConfigError, match="not a module name"):
        registry.load_job_modules(load_settings(job_modules="os; rm -rf /"))
    with pytest.raises(ConfigError, match="cannot import"):
        registry.load_job_modules(load_settings(job_modules="no_such_module_xyz"))
    assert "json" in registry.load_job_modules(load_settings(job_modules=" json , "))


def _ctx() -> JobContext:
    info = JobInfo("j1", "k", "r", {}, None, None, 1, 0)
    return JobContext(job=info, settings=load_settings(), graph=None, worker_id="w")  # type: ignore[arg-type]


def test_checkpoint_raises_once_cancelled_and_first_reason_sticks() -> None:
    ctx = _ctx()
    ctx.checkpoint("a")
    ctx.cancel(CancelReason.SHUTDOWN)
    ctx.cancel(CancelReason.ABANDONED)
    with pytest.raises(JobCancelled) as info:
        ctx.checkpoint("b")
    assert info.value.reason is CancelReason.SHUTDOWN and ctx.last_checkpoint == "b"
    ctx.cancel(CancelReason.TIMEOUT, override=True)
    assert ctx.cancel_requested is CancelReason.TIMEOUT


def _running(worker: dict[str, Any] | None, lease: float | None = 100.0) -> RunningJob:
    return RunningJob(id="j", claim_token="t", repo_key="r", lease_expires_at=lease, worker=worker)


def test_death_reason_rules() -> None:
    me = Identity.current()
    alive = {"id": "w1", "status": "running", **me.to_props()}
    assert death_reason(_running(None), me, None, 0.0) == "worker record missing"
    assert death_reason(_running(alive), me, None, 1e12) is None  # alive here: never touched
    assert death_reason(_running({**alive, "status": "stopped"}), me, None, 0.0)
    assert death_reason(_running({**alive, "boot_id": "other"}), me, None, 0.0) == "host rebooted"
    gone = {**alive, "pid": 2**22 + 11}
    assert "gone" in (death_reason(_running(gone), me, None, 0.0) or "")
    reused = {**alive, "pid_start": "0"}  # same pid, different start time: a new process
    assert "gone" in (death_reason(_running(reused), me, None, 0.0) or "")
    remote = {"id": "w2", "status": "running", "host": "elsewhere", "pid": 1}
    assert death_reason(_running(remote, lease=100.0), me, None, 50.0) is None
    assert "lease" in (death_reason(_running(remote, lease=100.0), me, None, 150.0) or "")
    assert death_reason(_running({**remote, "id": "me"}, lease=1.0), me, "me", 150.0) is None


def test_process_start_of_self_and_of_missing_pid() -> None:
    assert process_start(os.getpid()) is not None
    assert process_start(2**22 + 13) is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90), ("90s", 90), ("15m", 900), ("12h", 43200), ("7d", 604800), ("2w", 1209600)],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "x", "-5m", "5y", "1e9999d", "10" * 30 + "w"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_duration(text)


def test_queue_settings_checks() -> None:
    with pytest.raises(ConfigError, match="HEARTBEAT"):
        check_settings(load_settings(heartbeat_s=60, lease_s=30))
    with pytest.raises(ConfigError, match="BACKOFF"):
        check_settings(load_settings(backoff_base_s=100, backoff_cap_s=10))
    with pytest.raises(ConfigError, match="JOB_MAX_ATTEMPTS"):
        load_settings(job_max_attempts=0)


def test_job_from_props_round_trip() -> None:
    props = {
        "id": "j",
        "kind": "reindex",
        "repo_key": "r",
        "status": "failed",
        "args": '{"a": 1}',
        "errors": '[{"at": 1.0, "attempt": 1, "kind": "error", "message": "m"}]',
    }
    job = Job.from_props(props)
    assert job.status is JobStatus.FAILED and job.args == {"a": 1}
    data = job.to_json()
    assert data["status"] == "failed" and data["errors"][0]["message"] == "m"
