"""Races against the real Bolt server: concurrent claimers and enqueuers, and stale writers
forced into the window between a read and the write that depends on it (the store's fault
points, armed in a registry of its own)."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from prometheus_client import REGISTRY

from semgraph.config import Settings, load_settings
from semgraph.db import Graph, connect_graph
from semgraph.errors import GraphConstraintViolation
from semgraph.faults import Faults
from semgraph.queue.models import JobStatus
from semgraph.queue.store import JobStore
from semgraph.queue.sweep import Identity, sweep
from tests.optional import some

pytestmark = pytest.mark.integration

KINDS = ["reindex"]
OP = {"op": "enqueue"}


@pytest.fixture
def qsettings() -> Settings:
    return load_settings(job_max_crashes=2, job_max_attempts=5, backoff_base_s=0, lease_s=30)


@pytest.fixture
def store(graph: Graph, qsettings: Settings) -> JobStore:
    return JobStore(graph, qsettings)


@pytest.fixture
def graphs(graph: Graph, qsettings: Settings) -> Iterator[list[Graph]]:
    """Separate drivers, one per concurrent actor."""
    made = [connect_graph(qsettings) for _ in range(8)]
    yield made
    for g in made:
        g.close()


class At(Faults):
    """A store's own fault registry: ``fn`` runs the first time the store reaches
    ``queue.<point>``, and never again (``fired`` says whether it did)."""

    def __init__(self, point: str, fn: Callable[[], object]) -> None:
        super().__init__()
        self.fired: list[str] = []

        def once(**_: object) -> None:
            if not self.fired:
                self.fired.append(point)
                fn()

        self.arm(f"queue.{point}", once)


def at(point: str, fn: Callable[[], object]) -> At:
    return At(point, fn)


class ClaimRace:
    """A producer feeding 20 repositories, claimers that tally what they run, and a monitor
    that watches the graph for a repository with two running jobs."""

    def __init__(self, store: JobStore, graphs: list[Graph], settings: Settings, total: int):
        self.store, self.graphs, self.settings, self.total = store, graphs, settings, total
        self.tally: collections.Counter[str] = collections.Counter()
        self.created: set[str] = set()
        self.running: dict[str, str] = {}
        self.violations: list[str] = []
        self.errors: list[BaseException] = []
        self.lock = threading.Lock()
        self.producing = threading.Event()
        self.producing.set()
        self.claimers: list[threading.Thread] = []

    def produce(self) -> None:
        repos = [f"org/r{i}" for i in range(20)]
        i = 0
        try:
            while len(self.created) < self.total:
                res = self.store.enqueue(repos[i % len(repos)], now=time.time(), commit=f"c{i}")
                i += 1
                if res.outcome in {"created", "follow_up"}:
                    self.created.add(res.job_id)
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            self.producing.clear()

    def _run_one(self, mine: JobStore, n: int) -> bool:
        job = mine.claim(f"w{n}", KINDS, now=time.time())
        if job is None:
            return self.producing.is_set() or mine.stats().counts["pending"] > 0
        with self.lock:
            if job.repo_key in self.running:
                self.violations.append(f"{job.repo_key}: {self.running[job.repo_key]} + {job.id}")
            self.running[job.repo_key] = job.id
            self.tally[job.id] += 1
        time.sleep(0.001)
        with self.lock:
            self.running.pop(job.repo_key, None)
        assert mine.complete(job.id, some(job.claim_token), now=time.time())
        return True

    def claim(self, n: int) -> None:
        mine = JobStore(self.graphs[n], self.settings)
        try:
            while self._run_one(mine, n):
                pass
        except BaseException as exc:
            self.errors.append(exc)

    def monitor(self) -> None:
        cypher = (
            "MATCH (j:JobQueue {status: 'running'}) WITH j.repo_key AS r, count(*) AS n "
            "WHERE n > 1 RETURN r, n"
        )
        while self.producing.is_set() or any(t.is_alive() for t in self.claimers):
            rows = self.graphs[-1].query("monitor", cypher)
            if rows:
                self.violations.append(f"graph shows two running: {rows}")
            time.sleep(0.002)

    def run(self) -> None:
        self.claimers = [threading.Thread(target=self.claim, args=(n,)) for n in range(8)]
        others = [threading.Thread(target=self.produce), threading.Thread(target=self.monitor)]
        for t in [*self.claimers, *others]:
            t.start()
        for t in [*self.claimers, *others]:
            t.join(timeout=300)


def test_eight_concurrent_claimers_run_every_job_exactly_once(
    store: JobStore, graphs: list[Graph], qsettings: Settings
) -> None:
    race = ClaimRace(store, graphs, qsettings, total=200)
    race.run()
    assert not race.errors, race.errors
    assert not race.violations, race.violations[:5]
    assert len(race.created) == 200
    assert set(race.tally) == race.created
    assert all(n == 1 for n in race.tally.values())
    stats = store.stats()
    assert stats.counts["succeeded"] == 200 and stats.counts["pending"] == 0


def test_hundred_concurrent_enqueues_for_one_repo_leave_one_pending_job(
    store: JobStore, qsettings: Settings
) -> None:
    barrier = threading.Barrier(100)
    outcomes: list[str] = []
    ids: set[str] = set()
    errors: list[BaseException] = []

    # one driver per pusher: 100 truly independent clients (sharing a few drivers' pools
    # between 100 threads once left two threads spinning inside the driver's pool)
    drivers = [connect_graph(qsettings) for _ in range(100)]

    def push(i: int) -> None:
        mine = JobStore(drivers[i], qsettings)
        try:
            barrier.wait(timeout=60)
            res = mine.enqueue("org/hot", now=1000.0 + i, commit=f"c{i}", priority=i % 7)
            outcomes.append(res.outcome)
            ids.add(res.job_id)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=push, args=(i,)) for i in range(100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors[:3]
    assert collections.Counter(outcomes) == {"created": 1, "coalesced": 99}
    assert len(ids) == 1
    pending = store.list(status="pending")
    assert len(pending) == 1 and pending[0].coalesced_count == 99 and pending[0].priority == 6
    # during a run: exactly one follow-up, whatever the concurrency
    job = some(store.claim("w", KINDS, now=2000.0))
    outcomes.clear()
    ids.clear()
    barrier.reset()
    threads = [threading.Thread(target=push, args=(i,)) for i in range(100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    for d in drivers:
        d.close()
    assert not errors, errors[:3]
    assert collections.Counter(outcomes) == {"follow_up": 1, "coalesced": 99}
    assert len(ids) == 1 and job.id not in ids
    assert [j.id for j in store.list(status="pending")] == list(ids)


# -- first claims of a repository (its :RepoLock node) -----------------------------------------

CLAIM = {"op": "claim"}
MEMGRAPH_CLIENT_ERROR = "Memgraph.ClientError.MemgraphError.MemgraphError"
MEMGRAPH_UNIQUE_AT_COMMIT = "Unable to commit due to unique constraint violation on :RepoLock(key)"


def repo_locks(graph: Graph, repo: str) -> int:
    rows = graph.query("locks", "MATCH (l:RepoLock {key: $k}) RETURN count(l) AS n", k=repo)
    return int(rows[0]["n"])


def two_pending_jobs_without_a_lock(store: JobStore, graph: Graph, repo: str) -> list[str]:
    """A repository's pending job plus a second pending job of it (written directly: no
    enqueue makes one, which is what the lock guards against), and no :RepoLock node, as for
    jobs queued before enqueues created it."""
    first = store.enqueue(repo, now=1.0, commit="c1").job_id
    graph.query(
        "second pending job",
        "MATCH (j:JobQueue {id: $id}) CREATE (k:JobQueue) "
        "SET k = j {.*, id: $id2, pending_key: null, claim_key: j.claim_key + '~'}",
        id=first,
        id2=first + "-2",
    )
    graph.query("no lock yet", "MATCH (l:RepoLock {key: $k}) DELETE l", k=repo)
    return [first, first + "-2"]


def test_enqueue_creates_the_repository_lock_and_claims_only_write_it(
    store: JobStore, graph: Graph
) -> None:
    store.enqueue("org/a", now=1.0)
    store.enqueue("org/a", now=2.0)  # coalesced: no second lock
    assert repo_locks(graph, "org/a") == 1
    job = store.claim("w", KINDS, now=3.0)
    assert job is not None and repo_locks(graph, "org/a") == 1
    store.complete(job.id, some(job.claim_token), now=4.0)
    store.enqueue("org/a", now=5.0)
    assert repo_locks(graph, "org/a") == 1


def test_two_concurrent_first_claims_of_a_repository_run_one_job(
    store: JobStore, graph: Graph, graphs: list[Graph], qsettings: Settings
) -> None:
    """Both claimers have read their candidate before either locks the repository, whose lock
    node does not exist yet: exactly one claims, the other sees its job running."""
    ids = two_pending_jobs_without_a_lock(store, graph, "org/first")
    barrier = threading.Barrier(2)
    claimed: dict[str, object] = {}
    errors: list[BaseException] = []

    def claimer(n: int) -> None:
        def meet(**_: object) -> None:
            barrier.wait(timeout=30)

        mine_faults = Faults()
        mine_faults.arm("queue.claim:after_read", meet)
        mine = JobStore(graphs[n], qsettings, faults=mine_faults)
        try:
            claimed[ids[n]] = mine.claim(f"w{n}", KINDS, now=10.0, job_id=ids[n])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    winners = [job_id for job_id, job in claimed.items() if job is not None]
    assert len(winners) == 1, claimed
    running = store.list(status="running", repo="org/first")
    assert [j.id for j in running] == winners
    assert repo_locks(graph, "org/first") == 1


def test_a_first_claim_that_loses_the_lock_at_commit_runs_again(
    store: JobStore, graph: Graph, qsettings: Settings
) -> None:
    """Memgraph's way to lose: both claims CREATE the lock node and the later COMMIT fails the
    unique constraint (injected here with Memgraph's message, after the winner committed for
    real). The claim runs again, now finds the node and the winner's running job, and
    takes nothing."""
    first, second = two_pending_jobs_without_a_lock(store, graph, "org/late")
    winner = JobStore(graph, qsettings)
    won: list[object] = []

    def lose_at_commit() -> None:
        won.append(winner.claim("w-winner", KINDS, now=10.0, job_id=second))
        # what db.graph_errors makes of that answer (tests/unit/test_graph_errors.py)
        raise GraphConstraintViolation(
            f"claim: {MEMGRAPH_CLIENT_ERROR}: {MEMGRAPH_UNIQUE_AT_COMMIT}"
        )

    loser = JobStore(graph, qsettings, faults=at("claim:after_read", lose_at_commit))
    retries = REGISTRY.get_sample_value("semgraph_queue_conflict_retries_total", CLAIM) or 0
    assert loser.claim("w-loser", KINDS, now=10.0, job_id=first) is None
    assert REGISTRY.get_sample_value("semgraph_queue_conflict_retries_total", CLAIM) == retries + 1
    assert won and won[0] is not None
    assert [j.id for j in store.list(status="running", repo="org/late")] == [second]
    assert some(store.get(first)).status is JobStatus.PENDING
    assert repo_locks(graph, "org/late") == 1


def test_concurrent_first_claims_across_many_repositories(
    store: JobStore, graph: Graph, graphs: list[Graph], qsettings: Settings
) -> None:
    """Eight claimers, twenty repositories with two claimable jobs each and no lock nodes:
    never two running jobs of one repository, and no claim fails."""
    for i in range(20):
        two_pending_jobs_without_a_lock(store, graph, f"org/m{i}")
    barrier = threading.Barrier(8)
    claims: list[tuple[str, str]] = []
    errors: list[BaseException] = []

    def claimer(n: int) -> None:
        mine = JobStore(graphs[n], qsettings)
        try:
            barrier.wait(timeout=30)
            while (job := mine.claim(f"w{n}", KINDS, now=10.0)) is not None:
                claims.append((job.repo_key, job.id))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=claimer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors[:3]
    per_repo = collections.Counter(repo for repo, _ in claims)
    assert set(per_repo) == {f"org/m{i}" for i in range(20)}
    assert all(n == 1 for n in per_repo.values()), per_repo


# -- stale writers in the window between read and write ----------------------------------------


def test_sweep_vs_completion_completion_first(
    store: JobStore, graph: Graph, qsettings: Settings
) -> None:
    store.enqueue("org/a", now=1.0)
    job = some(store.claim("dead-worker", KINDS, now=2.0))  # no :Worker node: its owner looks dead
    owner = JobStore(graph, qsettings)
    hook = at("recover:before_lock", lambda: owner.complete(job.id, some(job.claim_token), now=3.0))
    sweeper = JobStore(graph, qsettings, faults=hook)
    changed = sweep(sweeper, now=4.0, me=Identity.current())
    assert hook.fired and changed == []
    final = some(store.get(job.id))
    assert (final.status, final.crash_count) == (JobStatus.SUCCEEDED, 0)


def test_sweep_vs_completion_sweep_first(
    store: JobStore, graph: Graph, qsettings: Settings
) -> None:
    store.enqueue("org/a", now=1.0)
    job = some(store.claim("dead-worker", KINDS, now=2.0))
    sweeper = JobStore(graph, qsettings)
    hook = at(
        "complete:before_lock",
        lambda: sweep(sweeper, now=3.0, me=Identity.current()),
    )
    stale_owner = JobStore(graph, qsettings, faults=hook)
    assert stale_owner.complete(job.id, some(job.claim_token), now=4.0) is False
    assert hook.fired
    final = some(store.get(job.id))
    assert (final.status, final.crash_count, final.attempts) == (JobStatus.PENDING, 1, 1)


def test_requeue_vs_stale_completion(store: JobStore, graph: Graph, qsettings: Settings) -> None:
    store.enqueue("org/a", now=1.0)
    first = some(store.claim("w", KINDS, now=2.0))
    store.recover(first.id, some(first.claim_token), now=3.0, reason="x")
    job = some(store.claim("w", KINDS, now=4.0))
    quarantined = some(store.recover(job.id, some(job.claim_token), now=5.0, reason="x"))
    assert quarantined.status is JobStatus.QUARANTINED
    stale = JobStore(graph, qsettings)
    results: list[bool] = []
    hook = at(
        "requeue:before_lock",
        lambda: results.append(stale.complete(job.id, some(job.claim_token), now=6.0)),
    )
    operator = JobStore(graph, qsettings, faults=hook)
    back = operator.requeue(job.id, now=7.0)
    assert results == [False]
    assert (back.status, back.attempts, back.crash_count) == (JobStatus.PENDING, 0, 0)
    # and the other order: the requeue commits, then the stale owner tries again
    assert stale.complete(job.id, some(job.claim_token), now=8.0) is False
    assert some(store.get(job.id)).status is JobStatus.PENDING


def test_requeue_waits_for_nothing_it_does_not_own(
    store: JobStore, graph: Graph, qsettings: Settings
) -> None:
    """A requeue racing a claim of the job it just requeued never resets a running job."""
    store.enqueue("org/a", now=1.0)
    job = some(store.claim("w", KINDS, now=2.0))
    store.abandon(job.id, now=3.0, reason="x")
    store.acknowledge_abandon(job.id, some(job.claim_token), now=4.0)
    store.requeue(job.id, now=5.0)
    other = JobStore(graph, qsettings)
    hook = at("requeue:before_lock", lambda: other.claim("w2", KINDS, now=6.0))
    operator = JobStore(graph, qsettings, faults=hook)
    with pytest.raises(Exception, match="running"):
        operator.requeue(job.id, now=7.0)
    assert some(store.get(job.id)).status is JobStatus.RUNNING


def test_coalescing_enqueue_vs_claim_claim_wins(
    store: JobStore, graph: Graph, qsettings: Settings
) -> None:
    first = store.enqueue("org/a", now=1.0, commit="c1")
    claimer = JobStore(graph, qsettings)
    claimed: list[str | None] = []
    hook = at(
        "enqueue:after_read",
        lambda: claimed.append(some(claimer.claim("w", KINDS, now=2.0)).commit),
    )
    pusher = JobStore(graph, qsettings, faults=hook)
    retries = REGISTRY.get_sample_value("semgraph_queue_conflict_retries_total", OP) or 0
    res = pusher.enqueue("org/a", now=3.0, commit="c2")
    assert claimed == ["c1"]
    # the enqueue saw its pending job claimed under it and ran again (counted)
    assert REGISTRY.get_sample_value("semgraph_queue_conflict_retries_total", OP) == retries + 1
    assert res.outcome == "follow_up" and res.job_id != first.job_id
    assert some(store.get(res.job_id)).commit == "c2"  # the push is not lost
    assert some(store.get(first.job_id)).commit == "c1"


def test_coalescing_enqueue_vs_claim_enqueue_wins(
    store: JobStore, graph: Graph, qsettings: Settings
) -> None:
    first = store.enqueue("org/a", now=1.0, commit="c1")
    pusher = JobStore(graph, qsettings)
    outcomes: list[str] = []
    hook = at(
        "claim:after_read",
        lambda: outcomes.append(pusher.enqueue("org/a", now=2.0, commit="c2").outcome),
    )
    claimer = JobStore(graph, qsettings, faults=hook)
    job = some(claimer.claim("w", KINDS, now=3.0))
    assert outcomes == ["coalesced"]
    assert job.id == first.job_id and job.commit == "c2"  # the claim saw the merged push
    assert store.list(status="pending") == []


def test_abandon_vs_completion(store: JobStore, graph: Graph, qsettings: Settings) -> None:
    store.enqueue("org/a", now=1.0)
    job = some(store.claim("w", KINDS, now=2.0))
    owner = JobStore(graph, qsettings)
    hook = at("abandon:before_lock", lambda: owner.complete(job.id, some(job.claim_token), now=3.0))
    operator = JobStore(graph, qsettings, faults=hook)
    with pytest.raises(Exception, match="succeeded"):
        operator.abandon(job.id, now=4.0, reason="late")
    assert some(store.get(job.id)).status is JobStatus.SUCCEEDED


# -- the sweep never touches a live owner -----------------------------------------------------


def test_sweep_leaves_jobs_of_live_owners_alone(store: JobStore) -> None:
    me = Identity.current()
    store.register_worker("alive-here", {"name": "t", **me.to_props()}, now=1.0)
    store.register_worker(
        "alive-remote",
        {"name": "t", "host": "elsewhere", "boot_id": "b", "pid": 1, "pid_start": "1"},
        now=1.0,
    )
    store.register_worker(
        "dead-here",
        {**me.to_props(), "name": "t", "pid": 2**22 + 7, "pid_start": "1"},
        now=1.0,
    )
    for repo, worker in (
        ("r/here", "alive-here"),
        ("r/remote", "alive-remote"),
        ("r/dead", "dead-here"),
    ):
        store.enqueue(repo, now=1.0)
        job = some(store.claim(worker, KINDS, now=2.0))
        assert job.worker_id == worker
    # far past every lease: the local live owner is still provably alive
    changed = sweep(store, now=10_000.0, me=me, my_worker_id="sweeper")
    assert sorted(j.repo_key for j in changed) == ["r/dead", "r/remote"]
    statuses = {j.repo_key: j.status for j in store.list()}
    assert statuses["r/here"] is JobStatus.RUNNING
    # within the lease, a remote owner is presumed alive
    store.enqueue("r/remote2", now=20_000.0)
    store.claim("alive-remote", KINDS, now=20_000.0)
    assert sweep(store, now=20_001.0, me=me, my_worker_id="sweeper") == []
