"""The queue charts, drawn on the server as inline SVG from the jobs the queue keeps
(:func:`semgraph.queue.browse.timeline`): queue depth by state over time (pending and
running at each bucket's end, rebuilt from each job's created, claimed and finished times),
the time from enqueue to start and the job duration (median and p95 per bucket).

Jobs the queue has purged are not counted; the page says how many jobs it drew from."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from semgraph.web.console.markup import esc, when

BUCKETS = 48
WIDTH, HEIGHT, PAD = 720, 200, 40


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def depth_series(rows: Sequence[dict[str, Any]], ends: list[float]) -> dict[str, list[float]]:
    """Pending and running jobs at each time of ``ends``: a job is pending from its creation
    until it is claimed (or finished unclaimed, an abandon), running from its claim until it
    finished. Counted with sorted event times (rows x log rows, not rows x buckets)."""
    created, claimed, finished_unclaimed, finished_claimed = [], [], [], []
    for r in rows:
        created.append(float(r.get("created_at") or 0))
        claim, done = r.get("claimed_at"), r.get("finished_at")
        if claim is None:
            if done is not None:
                finished_unclaimed.append(float(done))
        else:
            claimed.append(float(claim))
            if done is not None:
                finished_claimed.append(float(done))
    for events in (created, claimed, finished_unclaimed, finished_claimed):
        events.sort()

    def upto(events: list[float], t: float) -> int:
        return bisect_right(events, t)

    pending = [
        float(upto(created, t) - upto(claimed, t) - upto(finished_unclaimed, t)) for t in ends
    ]
    running = [float(upto(claimed, t) - upto(finished_claimed, t)) for t in ends]
    return {"pending": pending, "running": running}


def timing_series(
    rows: Sequence[dict[str, Any]], starts: list[float], step: float
) -> dict[str, dict[str, list[float]]]:
    """Median and p95 of wait (enqueue to start) and duration (start to finish), by the
    bucket the job started in."""
    waits: list[list[float]] = [[] for _ in starts]
    runs: list[list[float]] = [[] for _ in starts]
    first = starts[0] if starts else 0.0
    for r in rows:
        claimed = r.get("claimed_at")
        if claimed is None:
            continue
        i = int((float(claimed) - first) // step)
        if not 0 <= i < len(starts):
            continue
        created = r.get("created_at")
        waits[i].append(max(0.0, float(claimed) - float(claimed if created is None else created)))
        if r.get("finished_at") is not None:
            runs[i].append(max(0.0, float(r["finished_at"]) - float(claimed)))
    return {
        "wait": {
            "p50": [_quantile(w, 0.5) for w in waits],
            "p95": [_quantile(w, 0.95) for w in waits],
        },
        "duration": {
            "p50": [_quantile(d, 0.5) for d in runs],
            "p95": [_quantile(d, 0.95) for d in runs],
        },
    }


COLOURS = {"pending": "#b35900", "running": "#0b5cad", "p50": "#0b5cad", "p95": "#8a1c7c"}


def svg_lines(title: str, series: dict[str, list[float]], times: list[float], unit: str) -> str:
    """A line chart with a title, axes, a legend and a table fallback for screen readers."""
    top = max((v for s in series.values() for v in s), default=0.0) or 1.0
    n = max(1, len(times) - 1)
    width, height = WIDTH - 2 * PAD, HEIGHT - 2 * PAD

    def x(i: int) -> float:
        return PAD + width * i / n

    def y(v: float) -> float:
        return PAD + height * (1 - v / top)

    paths = []
    for name, values in series.items():
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values))
        colour = COLOURS.get(name, "#333333")
        paths.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}">'
            f"<title>{esc(name)}</title></polyline>"
        )
    legend = "".join(
        f'<text x="{PAD + 120 * i}" y="{HEIGHT - 8}" '
        f'fill="{COLOURS.get(k, "#333333")}">{esc(k)}</text>'
        for i, k in enumerate(series)
    )
    axes = (
        f'<line x1="{PAD}" y1="{PAD + height}" x2="{PAD + width}" y2="{PAD + height}" '
        'stroke="#555555"/>'
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{PAD + height}" stroke="#555555"/>'
        f'<text x="4" y="{PAD - 8}" fill="#222222">{top:.1f} {esc(unit)}</text>'
        f'<text x="{PAD}" y="{PAD + height + 16}" fill="#222222">'
        f"{esc(when(times[0]) if times else '')}</text>"
        f'<text x="{PAD + width - 130}" y="{PAD + height + 16}" fill="#222222">'
        f"{esc(when(times[-1]) if times else '')}</text>"
    )
    label = esc(title)
    return (
        f'<figure><figcaption>{label}</figcaption><svg role="img" aria-label="{label}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}">'
        f"{axes}{''.join(paths)}{legend}</svg></figure>"
    )


def render(rows: Sequence[dict[str, Any]], *, now: float, hours: int) -> str:
    step = hours * 3600 / BUCKETS
    starts = [now - hours * 3600 + i * step for i in range(BUCKETS)]
    ends = [s + step for s in starts]
    depth = depth_series(rows, ends)
    timing = timing_series(rows, starts, step)
    pick = "".join(f'<a href="/console/charts?hours={h}">{h} h</a> ' for h in (1, 6, 24, 24 * 7))
    return (
        f"<p>Drawn from {len(rows)} jobs created in the last {hours} hours that the queue still "
        f"keeps (purged jobs are not counted). Window: {pick}</p>"
        + svg_lines("Queue depth by state", depth, ends, "jobs")
        + svg_lines("Time from enqueue to start", timing["wait"], starts, "s")
        + svg_lines("Job duration", timing["duration"], starts, "s")
    )
