"""Reading the logs a run keeps in ``bench/results/NAME.log`` (``--from-logs``).

A log is the one ``bench.runner`` writes, or one kept by hand: one or more
``$ python -m bench.bench_NAME ARGS`` lines, each followed by that run's output, with ``#``
comment lines (``# rc N``, an ``uptime`` line for the load) and ``##``/``###`` headings that
name the runs. Only the structure of the log is read here; the figures come from the JSON lines
of ``bench.records`` in each run's output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.figures import Bench, Outcome

STDERR_MARK = "----- stderr (tail) -----"


def _last_error(stderr: str, stdout: str, rc: int | None) -> str:
    """Why a run failed: the last stderr line of a failed run; where the log records no exit
    status, the last line of a traceback in it."""
    err_lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    if rc:
        return (err_lines[-1] if err_lines else f"exit {rc}")[:300]
    if rc == 0:  # a traceback a successful run logged and survived is not its failure
        return ""
    text = stderr + "\n" + stdout
    if "Traceback (most recent call last)" in text:
        tail = text.rsplit("Traceback (most recent call last)", 1)[1].splitlines()
        last = [ln for ln in tail if ln.strip() and not ln[:1].isspace()]
        return (last[-1] if last else "a traceback in the log")[:300]
    return ""


def finish(out: Outcome, stdout: str, stderr: str, args: Sequence[str] | None) -> Outcome:
    """Parse the figures and say why a run did not measure, without ever raising; ``args``
    None: the command line is not known, so no size is expected."""
    out.error = _last_error(stderr, stdout, out.rc)
    try:
        out.figures = out.bench.parse(stdout, args)
    except Exception as exc:  # a report with the reason beats no report
        out.error = out.error or f"could not parse the output: {exc!r}"
    if not out.measured and not out.error:
        out.error = "no figures found in the output"
    return out


_RUN_ALL_META = re.compile(r"^# load ([\d.]+), rc (-?\d+), ([\d.]+) s$")
_RC = re.compile(r"^# rc (-?\d+)\s*$")
_UPTIME_LOAD = re.compile(r"load average:\s*([\d.]+)")
_ANY_LOAD = re.compile(r"\bload ([\d.]+)")
_PROGRESS = re.compile(r"^# \d+ files: start ")


@dataclass
class _Run:
    """One ``$ command`` of a kept log and what followed it."""

    command: str
    label: str
    lines: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rc: int | None = None
    seconds: float | None = None
    load: float | None = None

    def comment(self, line: str) -> None:
        if m := _RUN_ALL_META.match(line):
            self.load, self.rc, self.seconds = float(m[1]), int(m[2]), float(m[3])
        elif m := _RC.match(line):
            self.rc = int(m[1])
        else:
            if self.load is None and (m := _UPTIME_LOAD.search(line) or _ANY_LOAD.search(line)):
                self.load = float(m[1])
            if not _PROGRESS.match(line):  # bench_memory's own progress line
                self.notes.append(line[1:].strip())


def _split_runs(text: str) -> tuple[list[str], list[_Run]]:
    """The comment lines before the first command, and each ``$ command`` with its output."""
    preamble: list[str] = []
    runs: list[_Run] = []
    headings: dict[int, str] = {}
    for line in text.splitlines():
        if line.startswith("$ "):
            label = " / ".join(headings[k] for k in sorted(headings))
            runs.append(_Run(line[2:].strip(), label))
        elif re.match(r"^#{2,6} ", line):
            level = len(line) - len(line.lstrip("#"))
            headings = {k: v for k, v in headings.items() if k < level}
            headings[level] = line.lstrip("#").strip()
        elif not runs:
            if line.startswith("#"):
                preamble.append(line[1:].strip())
        elif line.startswith("# "):
            runs[-1].comment(line)
            runs[-1].lines.append(line)  # a benchmark may print comment lines itself
        else:
            runs[-1].lines.append(line)
    return preamble, runs


def _args_of(command: str, module: str) -> list[str] | None:
    """The arguments after ``-m bench.bench_x`` (or ``bench/bench_x.py``); None: other command."""
    words = command.split()
    for i, word in enumerate(words):
        if word == module or word.endswith("/" + module.replace(".", "/") + ".py"):
            return words[i + 1 :]
    return None


def outcomes_from_log(bench: Bench, logs: Path) -> list[Outcome]:
    """Every run kept in ``logs/NAME.log`` (``--from-logs``: re-render without re-running);
    a missing or unreadable log is one outcome that says so."""
    path = logs / f"{bench.name}.log"
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        why = "no log" if isinstance(exc, FileNotFoundError) else f"unreadable log ({exc})"
        out = Outcome(bench, list(bench.default), None, None, None)
        out.command = f"(not run: {why} at {path})"
        out.error = f"{why}: {path}"
        return [out]
    preamble, runs = _split_runs(text)
    if not runs:
        out = Outcome(bench, [], None, None, None, notes=preamble)
        out.command = f"(no `$ python -m {bench.module}` line in {path})"
        return [finish(out, text, "", None)]
    outcomes = []
    for i, run in enumerate(runs):
        body = "\n".join(run.lines)
        stdout, _, stderr = body.partition(f"\n{STDERR_MARK}\n")
        if body.startswith(STDERR_MARK + "\n"):
            stdout, stderr = "", body[len(STDERR_MARK) + 1 :]
        args = _args_of(run.command, bench.module)
        out = Outcome(
            bench,
            args or [],
            run.rc,
            run.seconds,
            run.load,
            command=run.command,
            label=run.label if len(runs) > 1 or run.label else "",
            notes=(preamble if i == 0 else []) + run.notes,
        )
        outcomes.append(finish(out, stdout, stderr, args))
    return outcomes
