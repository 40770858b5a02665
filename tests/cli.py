"""Running the real CLI as a user does, for the e2e tier."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def run_cli(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """``python -m semgraph.cli ARGS`` from the repository root, with this process's
    environment plus ``env``, output captured, never raising on a non-zero exit."""
    return subprocess.run(
        [sys.executable, "-m", "semgraph.cli", *args],
        cwd=REPO_ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
