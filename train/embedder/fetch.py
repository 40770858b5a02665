"""Download one pinned source with its registry's own client, once.

Each archive is cached under ``<out>/downloads/<registry>/`` by name and version, with its
sha256 in a ``.sha256`` file beside it; a second run reuses it. The clients:

* PyPI: ``pip download --no-deps --only-binary :all:`` for a fixed platform (a wheel carries
  the package's Python source and never runs code to be fetched; ``--no-binary`` would build
  each sdist's metadata, minutes for numpy), else the sdist when there is no wheel;
* npm: ``npm pack NAME@VER --ignore-scripts``;
* Go: ``go mod download -json MOD@VER`` in a private, temporary module cache (the zip);
* Maven: ``mvn dependency:copy`` of the ``sources`` jar and of the POM (and its parents',
  for the licence) into a Maven repository under the downloads folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from semgraph.search.model_files import sha256_file as sha256_of

TIMEOUT_S = 600
PY_TAGS = [
    "--platform",
    "manylinux_2_28_x86_64",
    "--platform",
    "manylinux_2_17_x86_64",
    "--platform",
    "manylinux2014_x86_64",
    "--python-version",
    "3.12",
    "--implementation",
    "cp",
    "--abi",
    "cp312",
    "--abi",
    "abi3",
    "--abi",
    "none",
]


class FetchError(Exception):
    """The registry's client could not fetch the source."""


@dataclass(frozen=True)
class Fetched:
    archive: Path
    sha256: str
    poms: tuple[Path, ...] = ()  # Maven: the artifact's POM, then its parents'


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def _run(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None, *, check: bool = True
) -> str:
    try:
        done = subprocess.run(
            cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise FetchError(f"{cmd[0]} timed out after {TIMEOUT_S} s") from exc
    if done.returncode != 0 and check:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise FetchError(f"{' '.join(cmd[:3])} failed: {' | '.join(tail)[:500]}")
    return done.stdout


def _one_file(folder: Path) -> Path:
    files = [p for p in folder.iterdir() if p.is_file()]
    if len(files) != 1:
        raise FetchError(f"expected one downloaded file, found {len(files)}")
    return files[0]


def _pypi(name: str, version: str, tmp: Path) -> Path:
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp)]
    try:
        _run([*pip, "--only-binary", ":all:", *PY_TAGS, f"{name}=={version}"], tmp)
    except FetchError:
        _run([*pip, "--no-binary", ":all:", f"{name}=={version}"], tmp)
    return _one_file(tmp)


def _npm(name: str, version: str, tmp: Path) -> Path:
    out = _run(
        [
            "npm",
            "pack",
            f"{name}@{version}",
            "--ignore-scripts",
            "--json",
            "--pack-destination",
            str(tmp),
        ],
        tmp,
    )
    del out
    return _one_file(tmp)


def _go(module: str, version: str, tmp: Path) -> Path:
    env = dict(os.environ)
    env.update(
        GOPATH=str(tmp / "gopath"),
        GOMODCACHE=str(tmp / "gopath" / "mod"),
        GOFLAGS="-mod=mod -modcacherw",
        GOTOOLCHAIN="local",
    )
    out = _run(["go", "mod", "download", "-json", f"{module}@{version}"], tmp, env, check=False)
    try:
        info = json.loads(out)
    except ValueError as exc:
        raise FetchError(f"go mod download: {out.strip()[:300]}") from exc
    zipped = Path(info.get("Zip") or tmp / "missing")
    # a module that asks for a newer Go than this one is still downloaded whole: its source
    # is read, never built, so only a missing zip is an error
    if not zipped.is_file():
        raise FetchError(str(info.get("Error") or "no zip")[:500])
    target = tmp / "module.zip"
    shutil.copyfile(zipped, target)
    shutil.rmtree(tmp / "gopath", ignore_errors=True)
    return target


def _mvn_copy(artifact: str, dest: Path, repo: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    _run(
        [
            "mvn",
            "-q",
            "-B",
            "dependency:copy",
            f"-Dartifact={artifact}",
            f"-DoutputDirectory={dest}",
            f"-Dmaven.repo.local={repo}",
        ],
        dest,
    )
    return _one_file(dest)


def _parent(pom: str) -> str | None:
    found = re.search(r"<parent>(.*?)</parent>", pom, re.S)
    if not found:
        return None
    parts = [
        re.search(rf"<{t}>\s*(.*?)\s*</{t}>", found.group(1))
        for t in ("groupId", "artifactId", "version")
    ]
    return ":".join(p.group(1) for p in parts if p) if all(parts) else None


def _maven(coord: str, version: str, tmp: Path, repo: Path) -> tuple[Path, list[Path]]:
    jar = _mvn_copy(f"{coord}:{version}:jar:sources", tmp / "jar", repo)
    poms = []
    artifact: str | None = f"{coord}:{version}"
    for depth in range(4):  # the artifact's POM, then up to three parents
        if artifact is None:
            break
        pom = _mvn_copy(f"{artifact}:pom", tmp / f"pom{depth}", repo)
        poms.append(pom)
        artifact = _parent(pom.read_text(errors="replace"))
    return jar, poms


def fetch(registry: str, name: str, version: str, downloads: Path) -> Fetched:
    """The archive of ``name==version``, downloaded once (FetchError when it cannot be)."""
    folder = downloads / registry
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{_safe(name)}-{_safe(version)}"
    done = folder / f"{stem}.json"
    if done.is_file():
        rec = json.loads(done.read_text())
        archive = folder / rec["archive"]
        if archive.is_file() and sha256_of(archive) == rec["sha256"]:
            return Fetched(archive, rec["sha256"], tuple(folder / p for p in rec["poms"]))
    with tempfile.TemporaryDirectory(dir=folder, prefix=".tmp-") as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "jar").mkdir()
        poms: list[Path] = []
        if registry == "pypi":
            got = _pypi(name, version, tmp / "jar")
        elif registry == "npm":
            got = _npm(name, version, tmp / "jar")
        elif registry == "go":
            got = _go(name, version, tmp)
        elif registry == "maven":
            got, poms = _maven(name, version, tmp, downloads / "m2")
        else:
            raise FetchError(f"unknown registry {registry!r}")
        archive = folder / f"{stem}--{_safe(got.name)}"
        os.replace(got, archive)
        kept = []
        for i, pom in enumerate(poms):
            kept.append(folder / f"{stem}--pom{i}.pom")
            os.replace(pom, kept[-1])
    sha = sha256_of(archive)
    rec = {"archive": archive.name, "sha256": sha, "poms": [p.name for p in kept]}
    done.write_text(json.dumps(rec))
    return Fetched(archive, sha, tuple(kept))
