"""The benchmarks ``bench.run_all`` runs: module, default and ``--quick`` arguments, the
builder of their rows, their time limit and the note the report prints above their rows.
"""

from __future__ import annotations

from bench.harness.figures import Bench
from bench.harness.figures.accuracy import figures_accuracy
from bench.harness.figures.backlog import figures_backlog
from bench.harness.figures.console import figures_console
from bench.harness.figures.crossrepo import (
    figures_crossrepo,
    figures_crossrepo_go,
    figures_crossrepo_js,
    figures_crossrepo_jvm,
    figures_crossrepo_ruby,
    figures_relink_scale,
    figures_xrepo_push_ab,
)
from bench.harness.figures.fleet import figures_coldhost, figures_lanes
from bench.harness.figures.job import figures_embed, figures_memory, figures_parse, figures_reindex
from bench.harness.figures.localize import (
    figures_localize,
    figures_localize_latency,
    figures_search_latency,
)
from bench.harness.figures.push import figures_cli, figures_pushphases, figures_sharedelta
from bench.harness.figures.replay import figures_replay
from bench.harness.figures.resolve import figures_incremental, figures_push_resolve, figures_resolve
from bench.harness.figures.retrieval import figures_retrieval
from bench.harness.figures.reuse import figures_firstindex, figures_reuse
from bench.harness.figures.stores import figures_delta, figures_graph, figures_queue
from bench.harness.figures.webhook import figures_webhook

# sympy at e950d313 (the mirror's commit), checked out and parsed once by hand for the
# resolver's benchmarks: ``git worktree`` / ``git archive`` of the commit, then
# ``semgraph.indexer.parse.parse_repository`` into the spill
SYMPY_TREE = "/var/tmp/inc-bench/sympy"
SYMPY_SPILL = "/var/tmp/inc-bench/sympy.spill"

BENCHES = [
    Bench(
        "parse",
        "bench.firstindex.bench_parse",
        ["--sizes", "1000,5000,20000"],
        ["--sizes", "500,2000"],
        figures_parse,
        note="Parse phase only (pool + spill), each size in a fresh process; parent peak RSS is "
        "sampled at every window, child peak RSS is reported by each pool child.",
    ),
    Bench(
        "memory",
        "bench.firstindex.bench_memory",
        ["--sizes", "1000,5000,20000", "--small-files"],
        ["--sizes", "100,300", "--small-files"],
        figures_memory,
        timeout_s=3 * 3600,
        note="The whole job (checkout, parse pool + spill, resolve, embedding + staging index, "
        "one graph transaction, alias flip) in a fresh process per size, against the "
        "issue's sizes of 1k/5k/20k files; the baseline is the smallest size of the same run "
        "and the worker's peak RSS includes the embedding model. The repositories are "
        "generated with `--small-files` (one or two short functions per file, so one or two "
        "chunks per file): embedding runs on the CPU here at tens of chunks per second at best, "
        "and the default generator's ~13 chunks per file would make the 20k-file job about "
        "260k chunks, many hours; small files keep the file count (what the parse windows, "
        "spill, resolution and graph publish scale with) at 1k/5k/20k while the embedding "
        "stays feasible. The files AND chunks (and how many were embedded) of each size are "
        "read from the benchmark's output and named in each row, so the ratio is against "
        "both. `peak RSS by phase` is an RSS sampler marked at the job's checkpoints.",
    ),
    Bench(
        "reindex",
        "bench.firstindex.bench_reindex",
        ["--files", "100"],
        ["--files", "30"],
        figures_reindex,
    ),
    Bench(
        "embed",
        "bench.firstindex.bench_embed",
        ["--max-chunks", "1200", "--repeats", "1"],
        ["--max-chunks", "150", "--repeats", "1"],
        figures_embed,
        timeout_s=3600,
        note="This repository's own chunks at HEAD (the first files in path order, up to the "
        "chunk count named), embedded by torch fp32 and by OpenVINO int8 in the same run: "
        "each backend's embedding phase against its own raw call on the same texts, and the "
        "torch phase over the OpenVINO phase.",
    ),
    Bench(
        "graph",
        "bench.firstindex.bench_graph",
        ["--sizes", "1000,10000,20000", "--queries", "200"],
        ["--sizes", "200,1000", "--queries", "50"],
        figures_graph,
        timeout_s=3600,
        note="Per size, a synthetic repository is parsed, resolved and published to the Bolt "
        "server in ONE transaction (rows = nodes + edges; target >= 20,000/s), then "
        "`definitions`/`callers`/`callees` run on random names (the issue's query latency is "
        "the 10,000-file row). Baseline: the smallest size of the same run. Neo4j 5 community "
        "here; Memgraph in production.",
    ),
    Bench(
        "delta",
        "bench.push.bench_delta",
        ["--files", "20000", "--changes", "1,1%,10%", "--parity"],
        ["--files", "100", "--changes", "1,1%,10%", "--parity"],
        figures_delta,
        timeout_s=3600,
        note="A synthetic repository (default generator) is parsed, resolved and published in "
        "ONE transaction (the first publish: throughput target >= 30,000 rows/s at 20,000 "
        "files); then, as successive deltas, 1 file, 1 % and 10 % of the files are changed in "
        "the parsed model (symbols move two lines, a new function calls one of the file's "
        "names), resolved again and published. Each delta's transaction time (the job's "
        "graph_publish phase; target <= 2 s for one file in 20,000) and rows written are "
        "ratios to the first publish of the same run; parity compares the live graph with the "
        "model after the last step.",
    ),
    Bench(
        "queue",
        "bench.fleet.bench_queue",
        ["--jobs", "2000", "--measure", "500"],
        ["--jobs", "300", "--measure", "150"],
        figures_queue,
    ),
    Bench(
        "webhook",
        "bench.push.bench_webhook",
        ["--burst", "500", "--concurrency", "50,8", "--files", "5000", "--rounds", "5"],
        ["--burst", "100", "--concurrency", "8", "--files", "100", "--rounds", "2"],
        figures_webhook,
        timeout_s=2 * 3600,
        logs=("webhook-dense.log",),
        note="A real `semgraph serve` and `semgraph worker`. Ack latency: one burst of signed "
        "pushes per concurrency, each after an unmeasured warm-up; every 202 is sent after the "
        "job is committed; baseline `GET /healthz` through the same client and concurrency; "
        "the server's own split comes from its `/metrics` histograms (p99 as a bucket bound). "
        "Push-to-searchable: one new file committed and pushed per round into a synthetic "
        "repository of small files (one or two functions each; CPU embedding makes the "
        "baseline first index of the default generator's files take hours), timed until "
        "`GET /search` finds it; baseline the first full index through the same path.",
    ),
    Bench(
        "retrieval",
        "bench.search.bench_retrieval",
        [],
        [],
        figures_retrieval,
        logs=("retrieval-csn.log",),  # the csn evaluation, run on its own (--only csn)
    ),
    Bench(
        "localize-eval",
        "bench.search.eval_localize",
        [],
        ["--repos", "pallets/click:python", "--per-repo", "4"],
        figures_localize,
        timeout_s=6 * 3600,
        in_quick=False,
        note="From an issue text to the files and functions to change (issue 28, item 3): the "
        "last commits of 9 public repositories (2 of them Go) whose message describes a bug "
        "or a feature, each repository pushed at the commit's parent through the product's "
        "job, then the message asked of BM25, kNN, hybrid search, `localize` and its "
        "ablations, as sent and cut to the old 2,000-character bound; the answer is the "
        "non-test source files the commit modified and the innermost symbols its diff "
        "changed. Halves by commit hash.",
    ),
    Bench(
        "search-latency",
        "bench.search.bench_search_latency",
        ["--rounds", "3", "--repo", "repo-20k-82656c974f"],
        ["--rounds", "1"],
        figures_search_latency,
        in_quick=False,
        note="Search through HTTP (the real app under uvicorn in a thread, one request at a "
        "time after a warm-up): the 36 hand-written queries of `bench_retrieval` (short) and "
        "20 click commit messages with their test code plus a 30 kB issue text (long), by "
        "`POST /search`; with `--repo` on the 20,000-file dense repository of "
        "`bench_pushphases`, else on this repository's `src/semgraph`.",
    ),
    Bench(
        "localize-latency",
        "bench.search.bench_localize_latency",
        ["--repo", "repo-20k-82656c974f"],
        ["--repo", "repo-20k-82656c974f", "--texts", "6", "--rounds", "1"],
        figures_localize_latency,
        in_quick=False,
        note="`localize` (graph hops on), with the re-rank, and plain search, in-process on "
        "the 20,000-file dense repository of `bench_pushphases` (its key is the argument): "
        "issue-like texts built from its own chunks (a traceback naming real frames, a log), "
        "1, 5 and 30 kB.",
    ),
    Bench(
        "accuracy",
        "bench.accuracy.bench_accuracy",
        [],
        ["--repos", "click"],
        figures_accuracy,
        timeout_s=2 * 3600,
        in_quick=False,
        note="Call resolution against compiler-grade oracles (issue 14): jedi 0.20.1 `goto` "
        "(Python) and `callgraph -algo=vta -test` of golang.org/x/tools v0.52.0 (Go), both "
        "installed from the registries on first use, and javac's own attribution (Java, issue "
        "44: `bench/accuracy/JavacCalls.java`, the JDK's compiler API, `accuracy-java.log`; "
        "a call it cannot attribute is 'unknown', never external; a `new` is right on the class "
        "or its constructor; the oracle names the exact overload), and scip-typescript 0.4.0 "
        "(TypeScript and JavaScript, issue 44, `accuracy-ts.log`; a call it resolves only to a "
        "declaration, a parameter, an interface member or a `.d.ts`, counts in neither recall "
        "nor in-repo precision, reported apart); issue 44's before and after on every "
        "repository: `accuracy-44.log`; each repository pinned to a "
        "commit, "
        "indexed by semgraph's own parse phase and resolver (no graph publish, no embedding) "
        "and matched by (path, line, callee name). Precision in two views: over the call sites "
        "the oracle resolves inside the repository, and over all sites (an edge where the "
        "oracle says external, not a definition, or nothing counts as false). Where the oracle "
        "itself is wrong: `bench/accuracy/accuracy_verdicts.md`.",
        logs=("accuracy-java.log", "accuracy-ts.log", "accuracy-44.log"),
    ),
    Bench(
        "reuse",
        "bench.firstindex.bench_reuse",
        [],
        ["--subdir", "src/semgraph/search"],
        figures_reuse,
        note="A fork's first index (issue 20): this repository's `src/` at HEAD is indexed by "
        "the real job, then a copy under another path (another repository key) with three "
        "commits of changes (a function added to three files, one body edited, a file added "
        "and one deleted) gets its first index; the share of its chunks whose vector came "
        "from the shared vector store, and its embedding phase over the origin's.",
    ),
    Bench(
        "firstindex",
        "bench.firstindex.bench_firstindex",
        [],
        ["--tools", "default"],
        figures_firstindex,
        timeout_s=2 * 3600,
        in_quick=False,
        note="The whole first index of this repository at HEAD (issue 20), each tool in a fresh "
        "process on an empty graph, same run: semgraph with `SEMGRAPH_EMBEDDING_BACKEND=torch`, "
        "semgraph with its default CPU path, and CodeGraphContext (PyPI, its own venv, as "
        "`bench.firstindex.peers`). Wall time is the whole process; peak RSS per phase (MiB) "
        "from an RSS sampler marked at the job's checkpoints, as `bench_memory`.",
    ),
    Bench(
        "resolve",
        "bench.firstindex.bench_resolve",
        ["--repo", "sympy", "--rounds", "3", "--check"],
        ["--repo", "self", "--rounds", "1", "--trees", "pre-typed,after"],
        figures_resolve,
        timeout_s=3 * 3600,
        note="Full-resolve CPU seconds (`time.process_time` of `resolve()` alone) of three "
        "resolvers on one parsed model of sympy at e950d313 (1,519 Python files, 379,310 call "
        "sites), each in its own subprocess from its own tree, interleaved round by round: "
        "`pre-typed` (547efb1, before the typed receivers; its model parsed by its own "
        "parser), `today` (062ac70, typed receivers before the memo) and `after` (the tree "
        "measured). Target (issue 25 item 1): after <= 1.5x pre-typed, best of the rounds, "
        "side by side. `--check` compares every table of today's and after's resolutions.",
    ),
    Bench(
        "incremental",
        "bench.push.bench_incremental",
        [SYMPY_SPILL, SYMPY_TREE, "--check"],
        [SYMPY_SPILL, SYMPY_TREE, "--only", "body"],
        figures_incremental,
        timeout_s=2 * 3600,
        in_quick=False,
        note="Incremental resolution against a full one on sympy at e950d313 (issue 25 items "
        "2-3): the spill resolved fully once (the cache), then per scenario one file edited "
        "in memory, parsed by the product's extractor and resolved incrementally from the "
        "cache (never falling back, to measure) and, with `--check`, fully, the two compared "
        "by `resolve.compare.differences` (every table, count and bundle digest). CPU seconds "
        "of the bench process. The fit gives the break-even that sets "
        "`resolve_incremental_max_fraction`.",
    ),
    Bench(
        "push-resolve",
        "bench.push.bench_push_resolve",
        [SYMPY_TREE, "sympy/core/basic.py", "    def copy(self):"],
        [SYMPY_TREE, "sympy/core/basic.py", "    def copy(self):"],
        figures_push_resolve,
        in_quick=False,
        note="The reindex job's parse and resolve phases of a one-function push to sympy at "
        "e950d313 (issue 25): `parse_repository` through the parse cache, then "
        "`resolvecache.resolve_job` (the host's cached resolution patched, or a full resolve); "
        "the first commit is resolved fully and kept as the cache, then one statement is "
        "added to `Basic.copy`. Target: the push's resolve phase <= 1 s CPU; baseline the "
        "first, full resolve of the same run.",
    ),
    Bench(
        "pushphases",
        "bench.push.bench_pushphases",
        ["--repo", "/var/tmp/pp/repo-20k", "--files", "20000", "--steps", "2", "--rounds", "3"],
        ["--repo", "/var/tmp/pp/repo-100", "--files", "100", "--rounds", "1"],
        figures_pushphases,
        timeout_s=3 * 3600,
        note="The reindex job's phases of a one-file push (issue 25 item 4) in a repository of "
        "the default (dense) generator, kept between runs: `before` (every slow path: blob ids "
        "by reading every file, cached results decompressed and compressed again into the "
        "spill, the parse cache written whole, the spill decoded whole for the staging index) "
        "against `after` (the defaults), alternating in one process. `--steps`: the parse "
        "phase alone with every file unchanged, split into its steps, and the staging index's "
        "read of the changed file; `--rounds`: whole one-file pushes, phase by phase (medians), "
        "and the job's p50/p95 (target p95 <= 10 s at 20,000 files). The first index uses "
        "stand-in vectors.",
    ),
    Bench(
        "replay",
        "bench.push.bench_replay",
        ["--commits", "200", "--log", "/var/tmp/semgraph-replay-work/replay.log"],
        [
            "--repo",
            "/work/.mirror/pallets+click/repo",
            "--commits",
            "3",
            "--vectors",
            "synthetic",
            "--log",
            "/var/tmp/semgraph-replay-work/replay-quick.log",
        ],
        figures_replay,
        timeout_s=6 * 3600,
        in_quick=False,
        logs=("replay-*.log",),
        note="Real history (issue 25): the last N first-parent commits of a repository (sympy "
        "by default) pushed one at a time through the reindex job (checkout, parse through the "
        "cache, resolve from the host's cached resolution, staging index, one graph "
        "transaction, alias flip); after each job's resolve phase, outside its timers, the "
        "same spill is resolved in full and compared (target: every push equal), and "
        "`semgraph check --graph-parity` runs after the last push. p50/p95 per push (step 0, "
        "the first index, left out); CPU is this process and its parse children, not the "
        "servers'. Step 0 embeds with stand-in vectors, pushes with the default model. Also "
        "read: `replay-*.log` (other repositories, earlier runs), each labelled with its file.",
    ),
    Bench(
        "sharedelta",
        "bench.push.bench_sharedelta",
        ["--files", "20000", "--small", "--grow", "0"],
        ["--files", "100", "--small", "--grow", "0"],
        figures_sharedelta,
        timeout_s=2 * 3600,
        note="A delta published from a host that never published the repository (issue 26): "
        "host A publishes a synthetic repository (small files) in one transaction, then hosts "
        "B (an empty state dir: it reads the published state from the graph) and A alternately "
        "publish a one-file change. Target: the graph phase of that delta <= 2 s, as a delta "
        "(not a fallback to a full publish); baseline the first publish of the same run.",
    ),
    Bench(
        "cli",
        "bench.interfaces.bench_cli",
        ["--repeats", "10"],
        ["--repeats", "3"],
        figures_cli,
        note="Command-line start-up (issue 27): process wall time of whole `semgraph` "
        "invocations, median of the repeats, interleaved round by round with `python -c pass` "
        "(the floor) and, with `--before SRC`, the same commands on an older checkout's `src` "
        "(the baseline of the ratio). Targets: `--help` and a group's help <= 0.3 s, `graph "
        "callers` and `jobs list` <= 1 s (against the running stack).",
    ),
    Bench(
        "lanes",
        "bench.fleet.bench_lanes",
        [],
        ["--hold-s", "30", "--small", "3"],
        figures_lanes,
        timeout_s=3600,
        in_quick=False,
        note="Head-of-line (issue 26): two `semgraph worker` processes, two large jobs queued "
        "first (placeholders that hold a worker for `--hold-s` without CPU: a real 20,000-file "
        "first index would take both cores for an hour here and measure CPU contention, not "
        "scheduling), then one-file pushes to small repositories; push-to-searchable is the "
        "job's finish minus its enqueue. Both workers `any`, then `any` + `small`, same run.",
    ),
    Bench(
        "coldhost",
        "bench.fleet.bench_coldhost",
        ["--repo", "/var/tmp/coldhost/repo-20k", "--files", "20000", "--rounds", "2"],
        ["--repo", "/var/tmp/coldhost/repo-100", "--files", "100", "--rounds", "1"],
        figures_coldhost,
        timeout_s=2 * 3600,
        note="A host that never saw the repository (an empty state directory) against the "
        "host that indexed it (issue 26): the same kind of one-file push, alternating, per "
        "phase, median of the rounds; small synthetic files; what the warm host keeps.",
    ),
    Bench(
        "backlog",
        "bench.fleet.bench_backlog",
        ["--repos", "40", "--modes", "any,any+any"],
        ["--repos", "4", "--modes", "any,any+any"],
        figures_backlog,
        timeout_s=2 * 3600,
        in_quick=False,
        note="An organisation's first day (issue 26): 40 public repositories of mixed sizes "
        "and languages (pinned PyPI wheels, npm tarballs, Go modules from the proxy and the "
        "local git mirrors; `bench/fleet/backlog_sources.py`), each a local git repository of one "
        "commit, enqueued at once and first-indexed by real `semgraph worker` processes: one "
        "worker, then two (lanes `any`), each run from nothing of the one before (repositories "
        "removed, search indexes and the shared vector store deleted, an empty worker state "
        "directory; the exported model kept). Wall time is the workers' start to the last job "
        "finished; push-to-searchable is a job's finish minus its enqueue. What limits it is "
        "read from the jobs' phases (wall seconds, summed) and the CPU seconds of the workers, "
        "the servers and everything else on the machine during the run. No target in the "
        "issue: the verdict is whether 2 workers beat 1.",
    ),
    Bench(
        "crossrepo",
        "bench.accuracy.bench_crossrepo",
        ["--dependents", "50", "--queries", "200"],
        ["--dependents", "10", "--queries", "50"],
        figures_crossrepo,
        note="Issue 30: flask 3.0.3 -> click 8.1.7 / itsdangerous 2.2.0 (PyPI sdists, "
        "ops/xrepo-corpus.sh) scored against jedi with all three on its path; a synthetic "
        "library with N dependents for the re-link and the across-repos query; a one-file "
        "flask push for the link's share of the publish.",
    ),
    Bench(
        "crossrepo-js",
        "bench.accuracy.bench_crossrepo_js",
        [],
        [],
        figures_crossrepo_js,
        note="Issue 30, npm: 29 published packages that import one another (ora, boxen and "
        "find-up with what they import), their .d.ts removed, each indexed as a repository "
        "and linked; scored against TypeScript's language service (allowJs) at every call "
        "and `new` of every dependent, each package's dependencies linked under its "
        "node_modules. Recall is also given over the oracle edges whose target is a "
        "definition (a property assigned to an object is none).",
    ),
    Bench(
        "crossrepo-jvm",
        "bench.accuracy.bench_crossrepo_jvm",
        [],
        [],
        figures_crossrepo_jvm,
        note="Issue 30, Maven: commons-text 1.10.0 -> commons-lang3 3.12.0 (sources jars and "
        "poms from Maven Central), scored against javac's attribution of every call and `new` "
        "of commons-text with commons-lang3's sources on its source path "
        "(bench/accuracy/JavacCalls.java).",
    ),
    Bench(
        "crossrepo-ruby",
        "bench.accuracy.bench_crossrepo_ruby",
        [],
        [],
        figures_crossrepo_ruby,
        note="Issue 30, gems: sinatra 3.0.5, rack-protection 3.0.5 and rack-test 2.0.2 -> rack "
        "2.2.22 (Debian's packages of the gems: lib/ trees and gemspecs), scored against Ruby "
        "3.1 itself: Ripper finds every call on a constant path in the dependents, the "
        "interpreter loads rack and names where each runs (source_location; for .new the "
        "class, const_source_location). bench/ruby_calls.rb.",
    ),
    Bench(
        "crossrepo-go",
        "bench.accuracy.bench_crossrepo_go",
        [],
        [],
        figures_crossrepo_go,
        note="Issue 30, Go modules: tablewriter 0.0.5, fatih/color 1.15.0, testify 1.8.4 and "
        "go-multierror 1.1.1 with the modules they import at the versions their go.mod "
        "requires (Go module proxy), scored against the Go type checker (go/packages and "
        "go/types, bench/accuracy/go_calls) at every call of a function or method declared in an "
        "indexed library, tests included.",
    ),
    Bench(
        "xrepo-push-ab",
        "bench.push.bench_xrepo_push_ab",
        ["--baseline", "5fd8ba6", "--rounds", "5"],
        ["--baseline", "5fd8ba6", "--rounds", "1"],
        figures_xrepo_push_ab,
        note="Issue 30, session 16: a one-file push of flask (a dependent) and of click (a "
        "library) with this code and session 15's (5fd8ba6, a git worktree), in one run, "
        "taking turns, each in a fresh process on an empty graph with click, itsdangerous and "
        "flask indexed.",
    ),
    Bench(
        "relink-scale",
        "bench.push.bench_relink_scale",
        ["--sizes", "20,200,2000,20000", "--rounds", "3"],
        ["--sizes", "20,200", "--rounds", "1"],
        figures_relink_scale,
        note="Issue 30: one synthetic library and one dependent per size (calls into the "
        "library, as many into the standard library); the library renames 3 functions (one "
        "every dependent calls) and publishes, then restores them, each round; each "
        "dependent's re-link is compared with a fresh full link of it in the same graph, "
        "lowest of the rounds.",
    ),
    Bench(
        "console",
        "bench.interfaces.bench_console",
        ["--files", "20000", "--jobs", "10000", "--lines", "5000", "--callers", "500"],
        ["--files", "100", "--jobs", "1000", "--lines", "5000", "--callers", "500"],
        figures_console,
        timeout_s=3600,
        note="Each web console page fetched over loopback from the app in the benchmark's own "
        "process (client wall time: server time plus about a millisecond), p50/p95 of the "
        "repeats and the HTML's size, against the JSON API call answering the same question "
        "(or GET /healthz) timed in the same run. The search index holds synthetic document "
        "vectors (latency only); the big repository is indexed end to end. "
        "`console-4000.log` keeps a 4,000-file run.",
        logs=("console-4000.log",),
    ),
]
