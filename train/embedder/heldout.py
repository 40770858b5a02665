"""Packages that never enter training: the outside evaluation's, bench/search/eval's
repositories and those reserved for a CodeSearchNet-style test (``heldout.json`` says why
for each list).

A name is compared by its registry's own identity rule, so a spelling of the same package is
caught and a different package that merely shares a prefix is not: on PyPI ``Flask``,
``FLASK`` and ``flask`` are one project (PEP 503), ``flask_x`` or ``flask-login`` another; a Go
module is the same across major versions (``github.com/urfave/cli/v2``) and letter case. Files
inside a package are checked too: a directory named like a held-out package
(``pip/_vendor/requests/``, ``_pytest/``) is a vendored or bundled copy and is skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HELDOUT_FILE = HERE / "heldout.json"
BENCH_SOURCES = ROOT / "bench" / "search" / "eval" / "sources.json"
REGISTRIES = ("pypi", "npm", "go", "maven")


def normalise(registry: str, name: str) -> str:
    """The identity of ``name`` on ``registry``: two names that normalise alike are one
    package."""
    name = name.strip()
    if registry == "pypi":
        return re.sub(r"[-_.]+", "-", name).lower()
    if registry == "go":
        return re.sub(r"/v\d+$", "", name.lower().rstrip("/"))
    return name.lower()


@dataclass(frozen=True)
class HeldOut:
    names: dict[str, frozenset[str]]  # registry -> normalised names
    reasons: dict[str, str]  # "registry:normalised name" -> the list that holds it

    def blocks(self, registry: str, name: str) -> str | None:
        """Why ``name`` on ``registry`` is held out, or None when it may be trained on."""
        key = normalise(registry, name)
        if key in self.names.get(registry, frozenset()):
            return self.reasons[f"{registry}:{key}"]
        return None

    def blocks_path(self, path: str) -> str | None:
        """Why a file at ``path`` (inside some package) is held out: one of its directories
        is named like a held-out PyPI or npm package, or it lies under a held-out Go module's
        path (a vendored copy)."""
        parts = PurePosixPath(path.lower()).parts[:-1]
        for part in parts:
            key = normalise("pypi", part.lstrip("_"))
            for registry in ("pypi", "npm"):
                if key in self.names[registry]:
                    return f"vendored copy of held-out {key} ({self.reasons[f'{registry}:{key}']})"
        joined = "/".join(parts) + "/"
        for module in self.names["go"]:
            if f"{module}/" in joined:
                return f"vendored copy of held-out {module}"
        return None


def _bench_repos(path: Path) -> list[str]:
    # a missing file is an error, never an empty list: it would let the evaluation's
    # repositories into training without a word
    return [str(entry["repo"]) for entry in json.loads(path.read_text())]


def load(heldout_file: Path = HELDOUT_FILE, bench_sources: Path = BENCH_SOURCES) -> HeldOut:
    """Every held-out name: ``heldout.json``'s lists and each repository that
    ``bench/search/eval/sources.json`` names (as its Go module path and as a PyPI and npm name)."""
    names: dict[str, set[str]] = {r: set() for r in REGISTRIES}
    reasons: dict[str, str] = {}

    def add(registry: str, name: str, why: str) -> None:
        key = normalise(registry, name)
        names[registry].add(key)
        reasons.setdefault(f"{registry}:{key}", why)

    for list_name, spec in json.loads(heldout_file.read_text()).items():
        for registry in REGISTRIES:
            for name in spec.get(registry, []):
                add(registry, name, list_name)
    for repo in _bench_repos(bench_sources):
        add("go", f"github.com/{repo}", "bench_eval")
        add("pypi", repo.rsplit("/", 1)[-1], "bench_eval")
        add("npm", repo.rsplit("/", 1)[-1], "bench_eval")
    return HeldOut({r: frozenset(v) for r, v in names.items()}, reasons)
