"""Rows of ``bench/accuracy/bench_crossrepo.py`` (issue 30): accuracy of the cross-repository links
against jedi over both sides, the re-link of a library's dependents, ``callers
--across-repos`` latency, and the link's share of a one-file push."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from bench.harness import records
from bench.harness.figures import Figure, not_measured, ok, x

PRECISION_TARGET, RECALL_TARGET = 0.99, 0.85
QUERY_P95_TARGET_MS = 100.0


def figures_crossrepo(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    figs: list[Figure] = []
    for r in records.read(out, "crossrepo.accuracy"):
        name = f"cross-repository links, {r['pairs']} (jedi over both sides)"
        figs.append(
            Figure(
                f"{name}: precision ({r['agreed']} of our {r['ours']} links agreed; "
                f"{r['ours_unanswered_by_oracle']} at sites jedi did not answer)",
                f"{r['precision']:.4f}",
                "-",
                f"{r['precision'] / PRECISION_TARGET:.3f}x target",
                f">= {PRECISION_TARGET}",
                ok(r["precision"] >= PRECISION_TARGET),
            )
        )
        figs.append(
            Figure(
                f"{name}: recall ({r['agreed']} of the oracle's {r['oracle']} cross edges)",
                f"{r['recall']:.4f}",
                "-",
                f"{r['recall'] / RECALL_TARGET:.3f}x target",
                f">= {RECALL_TARGET}",
                ok(r["recall"] >= RECALL_TARGET),
            )
        )
        if "precision_decided" in r:  # the disagreements, decided by Python's own lookup
            figs.append(
                Figure(
                    f"{name}, the {len(r['decided'])} disagreements decided at run time "
                    f"({r['confirmed']} ours, {r['oracle_refuted']} of jedi's refuted): "
                    "precision / recall",
                    f"{r['precision_decided']:.4f} / {r['recall_decided']:.4f}",
                    "-",
                    f"{r['recall_decided'] / RECALL_TARGET:.3f}x recall target",
                    f">= {PRECISION_TARGET} / >= {RECALL_TARGET}",
                    ok(
                        r["precision_decided"] >= PRECISION_TARGET
                        and r["recall_decided"] >= RECALL_TARGET
                    ),
                )
            )
    for r in records.read(out, "crossrepo.relink"):
        sites = (
            f"{r['sites_per_dependent_mean']} sites re-linked, "
            f"{r['stamped_per_dependent_mean']} links stamped, "
            if "sites_per_dependent_mean" in r
            else ""
        )
        figs.append(
            Figure(
                f"re-link after a library push ({r['renamed']} of {r['library_functions']} "
                f"functions renamed), {r['dependents']} dependents, one transaction each",
                f"{r['per_dependent_ms_mean']} ms, {sites}{r['rows_per_dependent_mean']} link "
                f"rows per dependent (p95 {r['per_dependent_ms_p95']} ms; "
                f"{r['relink_total_s']} s all)",
                f"fresh full link {r['full_link_ms_mean']} ms per dependent",
                x(r["per_dependent_ms_mean"], r["full_link_ms_mean"]),
                "- (the issue sets none: time and rows per dependent)",
            )
        )
    for r in records.read(out, "crossrepo.query"):
        figs.append(
            Figure(
                f"callers --across-repos, depth 1, {r['repositories']} repositories "
                f"({r['queries']} queries)",
                f"p95 {r['across_p95_ms']} ms (p50 {r['across_p50_ms']} ms)",
                f"inside one repository p95 {r['inside_p95_ms']} ms",
                x(r["across_p95_ms"], r["inside_p95_ms"]),
                f"<= {QUERY_P95_TARGET_MS:.0f} ms",
                ok(r["across_p95_ms"] <= QUERY_P95_TARGET_MS),
            )
        )
    for r in records.read(out, "crossrepo.push"):
        figs.append(
            Figure(
                f"one-file push of flask (delta publish, {r['modes']}): the link's share",
                f"{r['link_s_median']} s of a {r['tx_s_median']} s publish",
                f"publish {r['tx_s_median']} s",
                f"{r['link_share']:.1%}",
                "- (a push costs the change)",
            )
        )
    if not figs and args is not None:
        figs.append(not_measured("cross-repository links", "see issue 30", "no result"))
    return figs


def _precision_recall(name: str, r: dict[str, object], recall_note: str = "") -> list[Figure]:
    """The precision and recall rows of one accuracy record against an outside oracle."""
    precision, recall = float(r["precision"]), float(r["recall"])  # type: ignore[arg-type]
    return [
        Figure(
            f"{name}: precision ({r['agreed']} of our {r['ours']} links agreed)",
            f"{precision:.4f}",
            "-",
            f"{precision / PRECISION_TARGET:.3f}x target",
            f">= {PRECISION_TARGET}",
            ok(precision >= PRECISION_TARGET),
        ),
        Figure(
            f"{name}: recall ({r['agreed']} of the oracle's {r['oracle']} cross edges"
            f"{recall_note})",
            f"{recall:.4f}",
            "-",
            f"{recall / RECALL_TARGET:.3f}x target",
            f">= {RECALL_TARGET}",
            ok(recall >= RECALL_TARGET),
        ),
    ]


def figures_crossrepo_js(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    """Rows of ``bench/accuracy/bench_crossrepo_js.py``: npm links against TypeScript."""
    figs: list[Figure] = []
    for r in records.read(out, "crossrepo.js_accuracy"):
        name = (
            f"npm cross-repository links, {r['packages']} published packages, "
            f"{r['dependents']} dependents (TypeScript {r['typescript'].split('@')[-1]} "
            "go-to-definition)"
        )
        note = (
            f"; {r['recall_linkable']:.4f} over the {r['oracle_linkable']} whose target is a "
            "definition"
        )
        figs += _precision_recall(name, r, note)
    return figs


def figures_crossrepo_ruby(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    """Rows of ``bench/accuracy/bench_crossrepo_ruby.py``: gem links against the Ruby
    interpreter."""
    figs: list[Figure] = []
    for r in records.read(out, "crossrepo.ruby_accuracy"):
        figs += _precision_recall(f"Gem cross-repository links, {r['pairs']} (Ruby's own)", r)
    return figs


def figures_crossrepo_go(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    """Rows of ``bench/accuracy/bench_crossrepo_go.py``: Go module links against go/types."""
    figs: list[Figure] = []
    for r in records.read(out, "crossrepo.go_accuracy"):
        figs += _precision_recall(
            f"Go cross-repository links, {len(r['per_dependent'])} modules and what they import "
            "(the Go type checker)",
            r,
        )
        figs.append(
            Figure(
                f"Go precision over our links into files of this platform's build (linux/amd64, "
                f"`go list`; {r['variants']} more links reach the same function's variant for "
                "another platform, which the type checker of one platform cannot see)",
                f"{r['precision_build']} of {r['ours_build']}",
                "-",
                "-",
                f">= {PRECISION_TARGET}",
                ok(r["precision_build"] >= PRECISION_TARGET),
            )
        )
        figs.append(
            Figure(
                "Go recall over calls of package-level functions (no method on a value)",
                f"{r['recall_functions']} of {r['oracle_functions']} oracle edges",
                "-",
                "-",
                ">= 0.85",
                ok(r["recall_functions"] >= 0.85),
            )
        )
    return figs


def figures_crossrepo_jvm(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    """Rows of ``bench/accuracy/bench_crossrepo_jvm.py``: Maven links against javac."""
    figs: list[Figure] = []
    for r in records.read(out, "crossrepo.jvm_accuracy"):
        figs += _precision_recall(
            f"Maven cross-repository links, {r['pairs']} (javac's attribution)", r
        )
    return figs


def figures_relink_scale(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    """Rows of ``bench/push/bench_relink_scale.py``: a re-link against a full link, per size."""
    figs: list[Figure] = []
    for r in records.read(out, "relink.scale"):
        for row in r["sizes"]:
            figs.append(
                Figure(
                    f"re-link of one dependent with {row['calls_into_library']} calls into the "
                    f"library ({row['external_sites']} external sites), {r['renamed']} names "
                    "changed",
                    f"{row['relink_ms']} ms ({row['relink_sites']} sites re-linked, "
                    f"{row['relink_rows']} link rows, {row['relink_stamped']} stamped)",
                    f"fresh full link {row['full_link_ms']} ms",
                    x(row["relink_ms"], row["full_link_ms"]),
                    "- (proportional to the change: flat while the dependent grows)",
                )
            )
    return figs


def figures_xrepo_push_ab(out: str, args: Sequence[str] | None = None) -> list[Figure]:
    """Rows of ``bench/push/bench_xrepo_push_ab.py``: the medians over rounds, this code against
    the baseline's measured in the same run."""
    rows = records.read(out, "xrepo.push_ab")
    figs: list[Figure] = []
    for repo, what in (("flask", "a dependent"), ("click", "a library")):
        for key, name in (
            ("publish_ms", "publish"),
            ("link_ms", "its link"),
            ("relink_ms", "re-link of its dependents after it"),
        ):
            got = {
                code: statistics.median(r[repo][key] for r in rows if r["code"] == code)
                for code in ("this", "baseline")
                if any(r["code"] == code for r in rows)
            }
            if len(got) == 2:
                figs.append(
                    Figure(
                        f"one-file push of {repo} ({what}): {name}, median of "
                        f"{sum(r['code'] == 'this' for r in rows)} rounds",
                        f"{got['this']:.1f} ms",
                        f"baseline {got['baseline']:.1f} ms",
                        x(got["this"], got["baseline"]),
                        "- (no slower than the baseline)",
                    )
                )
    return figs
