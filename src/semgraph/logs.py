"""Structured logging: every record carries a stable ``action`` (and ``job_id``/``repo``
where known). ``log_json`` switches the handler to one JSON object per line."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

_CONTEXT_KEYS = ("action", "job_id", "repo", "run_id", "worker_id")
_STD_ATTRS = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message"}


def event(logger: logging.Logger, level: int, action: str, msg: str = "", **fields: Any) -> None:
    """Log ``msg`` with a stable ``action`` and structured fields."""
    logger.log(level, msg or action, extra={"action": action, **fields})


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STD_ATTRS and not k.startswith("_")}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        body: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        body.update(_fields(record))
        if record.exc_info:
            body["exc"] = self.formatException(record.exc_info)
        return json.dumps(body, default=str)


class KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        fields = _fields(record)
        ordered = [k for k in _CONTEXT_KEYS if k in fields] + sorted(
            k for k in fields if k not in _CONTEXT_KEYS
        )
        extras = " ".join(f"{k}={fields[k]}" for k in ordered)
        line = f"{stamp} {record.levelname:<8} {record.getMessage()}"
        if extras:
            line += f"  [{extras}]"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a record is emitted, not the stream that was
    current at :func:`configure`: a CLI run inside another program (a test's captured
    stderr, an embedding server) may close or swap that stream, and a thread logging later
    must not write to a closed file."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass  # always the current sys.stderr


def configure(level: str = "INFO", json_lines: bool = False) -> None:
    """Install one stderr handler on the ``semgraph`` logger (idempotent)."""
    root = logging.getLogger("semgraph")
    root.setLevel(level)
    for handler in list(root.handlers):
        if getattr(handler, "_semgraph", False):
            root.removeHandler(handler)
    handler = StderrHandler()
    handler.setFormatter(JsonFormatter() if json_lines else KeyValueFormatter())
    handler._semgraph = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.propagate = False
