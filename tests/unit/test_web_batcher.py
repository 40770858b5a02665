"""The group-commit batcher's own logic (gathering, fan-out of results and errors, close)
with an in-memory commit function; the integration tests commit to the real graph."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from semgraph.errors import ConfigError, GraphUnavailable, ShuttingDown
from semgraph.queue.models import EnqueueRequest, EnqueueResult
from semgraph.web.batcher import EnqueueBatcher


class Recorder:
    """Commits by recording the batch; ``gate`` (when set) holds the commit until released."""

    def __init__(self, fail: Exception | None = None, gate: threading.Event | None = None):
        self.batches: list[list[str]] = []
        self.nows: list[float] = []
        self.fail = fail
        self.gate = gate
        self.entered = threading.Event()

    def __call__(self, requests: Sequence[EnqueueRequest], now: float) -> list[EnqueueResult]:
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(30)
        self.batches.append([r.repo_key for r in requests])
        self.nows.append(now)
        if self.fail is not None:
            raise self.fail
        return [EnqueueResult(f"job-{r.repo_key}", "created") for r in requests]


def req(name: str) -> EnqueueRequest:
    return EnqueueRequest(repo_key=name)


def test_requests_that_arrive_together_share_one_commit_up_to_the_bound() -> None:
    commit = Recorder()
    batcher = EnqueueBatcher(commit, window_s=60.0, max_requests=3)

    async def main() -> list[EnqueueResult]:
        subs = [batcher.submit(req(f"r{i}"), now=float(i)) for i in range(7)]
        # 3 + 3 fill their batches at once; the 7th would wait out the window: close ends it
        first = await asyncio.gather(*subs[:6])
        last = asyncio.ensure_future(subs[6])
        await asyncio.sleep(0)
        await batcher.close()
        return [*first, await last]

    results = asyncio.run(main())
    assert [r.job_id for r in results] == [f"job-r{i}" for i in range(7)]
    assert commit.batches == [["r0", "r1", "r2"], ["r3", "r4", "r5"], ["r6"]]
    assert commit.nows == [2.0, 5.0, 6.0]  # the latest receipt time of each batch
    assert batcher.batches == 3


def test_a_failed_commit_fails_every_request_of_its_batch_only() -> None:
    commit = Recorder(fail=GraphUnavailable("bolt down"))
    batcher = EnqueueBatcher(commit, window_s=60.0, max_requests=4)

    async def main() -> tuple[list[EnqueueResult | BaseException], list[EnqueueResult]]:
        failed = await asyncio.gather(
            *(batcher.submit(req(f"a{i}"), now=1.0) for i in range(4)), return_exceptions=True
        )
        commit.fail = None
        ok = await asyncio.gather(*(batcher.submit(req(f"b{i}"), now=2.0) for i in range(4)))
        await batcher.close()
        return failed, ok

    failed, ok = asyncio.run(main())
    assert all(isinstance(f, GraphUnavailable) for f in failed)
    assert [r.job_id for r in ok] == [f"job-b{i}" for i in range(4)]
    assert batcher.batches == 2


def test_a_wrong_number_of_results_is_an_error_for_the_whole_batch() -> None:
    def short(requests: Sequence[EnqueueRequest], now: float) -> list[EnqueueResult]:
        return [EnqueueResult("x", "created")]

    batcher = EnqueueBatcher(short, window_s=60.0, max_requests=2)

    async def main() -> tuple[EnqueueResult | BaseException, EnqueueResult | BaseException]:
        out = await asyncio.gather(
            batcher.submit(req("a"), now=1.0),
            batcher.submit(req("b"), now=1.0),
            return_exceptions=True,
        )
        await batcher.close()
        return out

    out = asyncio.run(main())
    assert all(isinstance(o, RuntimeError) for o in out)


def test_close_commits_what_waits_in_the_window_then_refuses_new_work() -> None:
    commit = Recorder()
    batcher = EnqueueBatcher(commit, window_s=3600.0, max_requests=100)

    async def main() -> list[EnqueueResult]:
        waiting = [asyncio.ensure_future(batcher.submit(req(f"r{i}"), now=1.0)) for i in range(5)]
        await asyncio.sleep(0)  # they are queued; the window would hold them for an hour
        await batcher.close()
        with pytest.raises(ShuttingDown):
            await batcher.submit(req("late"), now=2.0)
        return [await w for w in waiting]

    results = asyncio.run(main())
    assert [r.job_id for r in results] == [f"job-r{i}" for i in range(5)]
    assert commit.batches == [[f"r{i}" for i in range(5)]]


def test_requests_queued_during_a_commit_form_the_next_batch() -> None:
    gate = threading.Event()
    commit = Recorder(gate=gate)
    batcher = EnqueueBatcher(commit, window_s=0.0, max_requests=100)

    async def main() -> None:
        first = asyncio.ensure_future(batcher.submit(req("first"), now=1.0))
        while not commit.entered.is_set():  # the first batch is committing (held)
            await asyncio.sleep(0.001)
        later = [asyncio.ensure_future(batcher.submit(req(f"r{i}"), now=2.0)) for i in range(4)]
        await asyncio.sleep(0)
        gate.set()
        await first
        await asyncio.gather(*later)
        await batcher.close()

    asyncio.run(main())
    assert commit.batches == [["first"], ["r0", "r1", "r2", "r3"]]


def test_a_client_that_went_away_does_not_stop_its_batch() -> None:
    gate = threading.Event()
    commit = Recorder(gate=gate)
    batcher = EnqueueBatcher(commit, window_s=60.0, max_requests=2)

    async def main() -> EnqueueResult:
        gone = asyncio.ensure_future(batcher.submit(req("gone"), now=1.0))
        stays = asyncio.ensure_future(batcher.submit(req("stays"), now=1.0))
        while not commit.entered.is_set():
            await asyncio.sleep(0.001)
        gone.cancel()
        gate.set()
        result = await stays
        await batcher.close()
        return result

    assert asyncio.run(main()).job_id == "job-stays"
    assert commit.batches == [["gone", "stays"]]  # committed: the host's retry is a duplicate


@pytest.mark.parametrize(("window", "size"), [(-1.0, 1), (0.0, 0)])
def test_bad_bounds_are_refused(window: float, size: int) -> None:
    with pytest.raises(ConfigError):
        EnqueueBatcher(Recorder(), window_s=window, max_requests=size)
