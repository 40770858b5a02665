"""Checkpoints of a training run: the model, the optimizer, the scheduler, the data position
and every random generator's state, so that rerunning the same command continues where the
run stopped and draws the same numbers it would have drawn.

A checkpoint is written to a temporary directory and renamed into place, then ``latest``
names it; a run killed while saving leaves the previous checkpoint intact. Only the newest
:data:`KEEP` checkpoints are kept.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

KEEP = 2
STATE = "trainer_state.pt"


def rng_state() -> dict[str, Any]:
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save(
    out: Path,
    step: int,
    model: Any,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    extra: dict[str, Any],
) -> Path:
    """Write checkpoint ``step`` under ``out`` (a sentence-transformers model directory plus
    :data:`STATE`) and point ``out/latest`` at it."""
    final = out / f"checkpoint-{step:07d}"
    tmp = out / f".tmp-checkpoint-{step:07d}"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save(str(tmp))
    torch.save(
        {
            "step": step,
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "rng": rng_state(),
            "extra": extra,
        },
        tmp / STATE,
    )
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    pointer = out / "latest.tmp"
    pointer.write_text(json.dumps({"checkpoint": final.name, "step": step}) + "\n")
    pointer.replace(out / "latest")
    for old in sorted(out.glob("checkpoint-*"))[:-KEEP]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def latest(out: Path) -> Path | None:
    """The newest complete checkpoint under ``out``, or None."""
    pointer = out / "latest"
    if not pointer.is_file():
        return None
    path = out / json.loads(pointer.read_text())["checkpoint"]
    return path if (path / STATE).is_file() else None


def load_state(path: Path) -> dict[str, Any]:
    """A checkpoint's trainer state (optimizer, scheduler, RNG, step, extra)."""
    state: dict[str, Any] = torch.load(path / STATE, map_location="cpu", weights_only=False)
    return state
