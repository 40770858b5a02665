"""Reading the logs a run keeps in ``bench/results/NAME.log`` (``--from-logs``).

A log is the one ``bench.harness.runner`` writes, or one kept by hand: one or more
``$ python -m bench.GROUP.bench_NAME ARGS`` lines, each followed by that run's output, with ``#``
comment lines (``# rc N``, an ``uptime`` line for the load) and ``##``/``###`` headings that
name the runs. A command may start with environment assignments (``$ PYTHONPATH=... python -m
bench...``) and end with a ``# label`` comment that names its run (``# before, round 1``); a
bare ``python -m bench.GROUP.NAME ...`` line without the ``$`` is a command too. Comment lines after
a blank line that lead up to a command belong to that command's run. A command of another
program (``$ python -m semgraph check ...``) is read like the others, and where its output holds
no figures it is kept as a section without being counted as a failed run. A benchmark may
keep its runs in more than one file (``Bench.logs``: ``replay-*.log`` besides ``replay.log``);
each run of such a file is labelled with the file's name. Only the structure of the log is
read here; the figures come from the JSON lines of ``bench.harness.records`` (or the plain JSON
lines the benchmark prints) in each run's output.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness.figures import Bench, Outcome

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
_PROGRESS = re.compile(r"^# (\d+ files: start |round \d+/\d+ done$)")  # progress lines
_BARE_COMMAND = re.compile(
    r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*python3? -m bench(?:\.\w+)+(?:\s|$)"
)
_EXIT = re.compile(r"^exit=(-?\d+)\s*$")
_TRAILING = re.compile(r"\s#\s*")


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


def _command(line: str) -> str | None:
    """The command of a ``$ command`` line (or of a bare ``python -m bench.x`` line)."""
    if line.startswith("$ "):
        return line[2:].strip()
    return line.strip() if _BARE_COMMAND.match(line) else None


def _label_of(command: str) -> tuple[str, str]:
    """``cmd ARGS   # before, round 1`` -> (``cmd ARGS``, ``before, round 1``): the first ``#``
    after a space that is outside quotes starts the command's label."""
    for m in _TRAILING.finditer(command):
        head = command[: m.start()]
        try:
            shlex.split(head)
        except ValueError:  # inside a quoted argument
            continue
        return head.rstrip(), command[m.end() :].strip()
    return command, ""


class _Splitter:
    """Reads a log line by line into its preamble and its runs (``_split_runs``)."""

    def __init__(self) -> None:
        self.preamble: list[str] = []
        self.runs: list[_Run] = []
        self.headings: dict[int, str] = {}
        self.pending: list[str] = []  # comments after a blank line: the next command's, if any
        self.blank = False

    def flush(self) -> None:
        """Held comment lines belong to the run before them after all."""
        for held in self.pending:
            self.runs[-1].comment(held)
            self.runs[-1].lines.append(held)
        self.pending.clear()

    def command(self, command: str) -> None:
        command, trailing = _label_of(command)
        names = [*(self.headings[k] for k in sorted(self.headings)), trailing]
        self.runs.append(_Run(command, " / ".join(filter(None, names))))
        for held in self.pending:
            self.runs[-1].comment(held)
        self.pending.clear()

    def heading(self, line: str) -> None:
        if self.runs:
            self.flush()
        level = len(line) - len(line.lstrip("#"))
        self.headings = {k: v for k, v in self.headings.items() if k < level}
        self.headings[level] = line.lstrip("#").strip()

    def output(self, line: str) -> None:
        if line.startswith("# ") and (self.blank or self.pending) and not _RC.match(line):
            self.pending.append(line)
        elif line.startswith("# "):
            self.runs[-1].comment(line)
            self.runs[-1].lines.append(line)  # a benchmark may print comment lines itself
        else:
            if line.strip():
                self.flush()
                if m := _EXIT.match(line):
                    self.runs[-1].rc = int(m[1])
            self.runs[-1].lines.append(line)

    def line(self, line: str) -> None:
        if (command := _command(line)) is not None:
            self.command(command)
        elif re.match(r"^#{2,6} ", line):
            self.heading(line)
        elif not self.runs:
            if line.startswith("#"):
                self.preamble.append(line[1:].strip())
        else:
            self.output(line)
        self.blank = not line.strip()


def _split_runs(text: str) -> tuple[list[str], list[_Run]]:
    """The comment lines before the first command, and each ``$ command`` with its output."""
    splitter = _Splitter()
    for line in text.splitlines():
        splitter.line(line)
    if splitter.runs:
        splitter.flush()
    return splitter.preamble, splitter.runs


def _args_of(command: str, module: str) -> list[str] | None:
    """The arguments after ``-m bench.push.bench_x`` (or ``bench/push/bench_x.py``); None: other
    command. The flat name of older kept logs (``bench.bench_x``) is read as the same benchmark."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    flat = "bench." + module.rsplit(".", 1)[-1]
    for i, word in enumerate(words):
        for name in (module, flat):
            if word == name or word.endswith("/" + name.replace(".", "/") + ".py"):
                return words[i + 1 :]
    return None


def outcomes_from_log(bench: Bench, logs: Path) -> list[Outcome]:
    """Every run kept in ``logs/NAME.log`` and in the files ``bench.logs`` names
    (``--from-logs``: re-render without re-running); a missing or unreadable log is one outcome
    that says so."""
    outcomes = _outcomes_of_file(bench, logs / f"{bench.name}.log", "")
    extra = sorted({p for pattern in bench.logs for p in logs.glob(pattern)})
    for path in extra:
        if path.name != f"{bench.name}.log":
            outcomes += _outcomes_of_file(bench, path, path.name)
    return outcomes


def _outcomes_of_file(bench: Bench, path: Path, name: str) -> list[Outcome]:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        why = "no log" if isinstance(exc, FileNotFoundError) else f"unreadable log ({exc})"
        out = Outcome(bench, list(bench.default), None, None, None, label=name)
        out.command = f"(not run: {why} at {path})"
        out.error = f"{why}: {path}"
        return [out]
    preamble, runs = _split_runs(text)
    if not runs:
        out = Outcome(bench, [], None, None, None, label=name, notes=preamble)
        out.command = f"(no `$ python -m {bench.module}` line in {path})"
        return [finish(out, text, "", None)]
    outcomes = []
    for i, run in enumerate(runs):
        body = "\n".join(run.lines)
        stdout, _, stderr = body.partition(f"\n{STDERR_MARK}\n")
        if body.startswith(STDERR_MARK + "\n"):
            stdout, stderr = "", body[len(STDERR_MARK) + 1 :]
        args = _args_of(run.command, bench.module)
        label = run.label if len(runs) > 1 or run.label else ""
        out = Outcome(
            bench,
            args or [],
            run.rc,
            run.seconds,
            run.load,
            command=run.command,
            label=" / ".join(filter(None, [name, label])),
            notes=(preamble if i == 0 else []) + run.notes,
        )
        out = finish(out, stdout, stderr, args)
        if args is None and not out.figures and out.error == "no figures found in the output":
            out.error = ""  # another program's command kept in the log: a section, not a failure
            out.notes.append(f"not a run of `python -m {bench.module}`: no figures read from it")
        outcomes.append(out)
    return outcomes
