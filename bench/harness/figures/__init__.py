"""What the report is made of: a figure (one row), a benchmark, the outcome of one run of it,
and the helpers the figure builders (``bench.harness.figures.job``,
``bench.harness.figures.stores``, ``bench.harness.figures.webhook``) share.

A builder takes a benchmark's stdout and its command-line arguments (None when unknown) and
returns that run's rows, read from the JSON lines of ``bench.harness.records``. Sizes asked
for on the command line but absent from the output become "not measured" rows, so a run cut
short shows what it did not measure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

MIB = 2**20
MET = "met"
MISSED = "**missed**"
NOT_MEASURED = "**not measured**"
RSS_TARGET = 1.3


@dataclass
class Figure:
    name: str
    value: str
    baseline: str
    ratio: str
    target: str
    verdict: str = ""
    load: str = ""  # 1-minute load average when this figure's measurement started, if printed


Builder = Callable[[str, Sequence[str] | None], list[Figure]]


@dataclass
class Bench:
    name: str
    module: str
    default: list[str]
    quick: list[str]
    parse: Builder
    timeout_s: int = 1800
    note: str = ""
    in_quick: bool = True  # False: ``run_all --quick`` leaves it out unless named in --only
    logs: tuple[str, ...] = ()  # more kept logs than NAME.log (globs in the logs directory)


@dataclass
class Outcome:
    bench: Bench
    args: list[str]
    rc: int | None  # None: a kept log that does not record the exit status
    seconds: float | None
    load_1m: float | None
    figures: list[Figure] = field(default_factory=list)
    error: str = ""
    command: str = ""
    label: str = ""  # the run's heading in a log that holds several runs
    notes: list[str] = field(default_factory=list)  # comment lines kept in the log

    def __post_init__(self) -> None:
        if not self.command:
            self.command = " ".join(["python -m", self.bench.module, *self.args])

    @property
    def measured(self) -> list[Figure]:
        return [f for f in self.figures if f.verdict != NOT_MEASURED]


def ok(good: bool) -> str:
    return MET if good else MISSED


def f(x: float, nd: int = 2) -> str:
    return f"{x:,.{nd}f}"


def count(v: object) -> str:
    """A count as ``20,000``; whatever else a log holds as it is (``?`` when absent)."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return f"{v:,}"
    return "?" if v is None else str(v)


def x(a: float, b: float, nd: int = 2) -> str:
    """``a / b`` as ``1.23x``; ``-`` when the baseline is zero."""
    return f"{a / b:.{nd}f}x" if b else "-"


def load(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, int | float) else ""


def not_measured(name: str, target: str, why: str) -> Figure:
    return Figure(name, f"not measured: {why}", "-", "-", target, NOT_MEASURED)


def arg(args: Sequence[str] | None, flag: str) -> str | None:
    """The value of ``--flag VALUE`` or ``--flag=VALUE`` in a command line."""
    items = list(args or [])
    for i, item in enumerate(items):
        if item == flag and i + 1 < len(items):
            return items[i + 1]
        if item.startswith(flag + "="):
            return item.split("=", 1)[1]
    return None


def ints(text: str | None) -> list[int]:
    """``"1000,5000"`` -> ``[1000, 5000]``; an unreadable list -> ``[]``."""
    try:
        return [int(s) for s in (text or "").split(",") if s.strip()]
    except ValueError:
        return []


def num(row: dict[str, Any], *keys: str) -> bool:
    """Every one of ``keys`` is a number in ``row`` (a bool is not)."""
    return all(isinstance(row.get(k), int | float) and not isinstance(row[k], bool) for k in keys)


def missing_sizes(
    measured: Sequence[int], args: Sequence[str] | None, started: Sequence[int] = ()
) -> list[int]:
    """Sizes the command asked for (``--sizes``) or the output started, with no result."""
    wanted = set(ints(arg(args, "--sizes"))) | set(started)
    return sorted(wanted - set(measured))
