"""The report rows of bench_reuse and bench_firstindex, read from their JSON records."""

from __future__ import annotations

from bench.harness.figures import MET, MISSED
from bench.harness.figures.reuse import figures_firstindex, figures_reuse
from bench.harness.records import line

REUSE = "\n".join(
    [
        "origin: 201 chunks ...",
        line("reuse.run", repo="origin", chunks=201, embedded=201, embed_index_s=16.0, load_1m=5.0),
        line("reuse.run", repo="fork", chunks=203, embedded=9, embed_index_s=2.0, load_1m=5.2),
        line(
            "reuse.summary",
            fork_chunks=203,
            fork_store_reused=194,
            fork_embedded=9,
            fork_changed_chunks=11,
            store_share_pct=95.6,
            embed_ratio=0.125,
        ),
    ]
)


def test_reuse_rows_name_the_share_and_the_ratio() -> None:
    share, ratio = figures_reuse(REUSE, [])
    assert share.value == "194 of 203 (95.6 %)" and share.verdict == MET
    assert ratio.ratio == "0.125x" and ratio.verdict == MET and ratio.load == "5.00"


def test_reuse_embedding_more_than_the_changed_files_is_missed() -> None:
    share, _ = figures_reuse(REUSE.replace('"fork_changed_chunks": 11', '"fork_changed_chunks": 8'))
    assert share.verdict == MISSED
    unknown, _ = figures_reuse(REUSE.replace('"fork_changed_chunks": 11, ', ""))
    assert unknown.verdict == MISSED and "(not recorded)" in unknown.baseline


def test_reuse_without_a_summary_or_a_run_has_no_rows() -> None:
    assert figures_reuse("", []) == []
    assert figures_reuse(REUSE.replace('"repo": "fork"', '"repo": "x"'), []) == []


def run(tool: str, wall: float, rc: int = 0, **extra: object) -> str:
    return line("firstindex.run", tool=tool, round=0, wall_s=wall, rc=rc, load_1m=2.0, **extra)


def test_firstindex_ratios_use_each_tools_best_successful_run() -> None:
    out = "\n".join(
        [
            run("torch", 300.0, chunks=10, embedded=10, phase_peak_rss_bytes={"parse": 2**20}),
            run("default", 120.0),
            run("default", 90.0),
            run("default", 10.0, rc=1),  # failed: not a figure
            run("cgc", 100.0, nodes=5, edges=7),
        ]
    )
    figs = {f.name: f for f in figures_firstindex(out, [])}
    speed = figs["whole first index, torch path / default path (same run)"]
    assert (speed.ratio, speed.verdict) == ("3.33x", MET)
    peer = figs["whole first index, semgraph default / CodeGraphContext (same run)"]
    assert (peer.ratio, peer.verdict) == ("0.90x", MET)
    torch = figs["first index, torch: wall time and peak RSS (MiB) per phase"]
    assert torch.ratio == "parse 1" and "10 chunks" in torch.baseline


def test_firstindex_slower_than_the_peer_is_missed() -> None:
    out = "\n".join([run("default", 130.0), run("cgc", 100.0), run("torch", 200.0)])
    verdicts = [f.verdict for f in figures_firstindex(out, []) if f.verdict]
    assert verdicts == [MISSED, MISSED]
