"""The 40 public source trees of ``bench/fleet/bench_backlog.py``: pinned versions from the package
registries (PyPI wheels, npm tarballs, Go modules through the module proxy) and the local git
mirrors, each turned into a local git repository of one commit in a cache directory.

    python -m bench.fleet.backlog_sources [--cache /var/tmp/backlog-sources]

Fetching is idempotent: a tree whose repository exists is not fetched again, and its time is
not part of any figure. PyPI gives wheels, not sdists: ``pip download --no-binary :all:``
builds every sdist's metadata in a fresh build environment (2.5 minutes for ``attrs`` on this
machine), so the packages are pure-Python ones whose wheels ship their source (and, for some,
their tests) as written. npm tarballs are what ``npm pack`` downloads (source and built files
as published). Go modules are the proxy's zip of the module at the version. Nobody here wrote
any of them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from semgraph.indexer.languages import detect_language, is_code

CACHE = Path("/var/tmp/backlog-sources")
MIRRORS = Path("/work/.mirror")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


@dataclass(frozen=True)
class Source:
    registry: str  # pypi | npm | go | mirror
    name: str
    version: str  # a mirror: its commit is read from the repository

    @property
    def slug(self) -> str:
        safe = self.name.replace("/", "_").replace("@", "").replace(".", "_")
        return f"{self.registry}-{safe}-{self.version.replace('.', '_')}"[:80]


SOURCES = [
    # PyPI: pure-Python wheels
    Source("pypi", "six", "1.16.0"),
    Source("pypi", "idna", "3.7"),
    Source("pypi", "tomli", "2.0.1"),
    Source("pypi", "iniconfig", "2.0.0"),
    Source("pypi", "pluggy", "1.5.0"),
    Source("pypi", "itsdangerous", "2.2.0"),
    Source("pypi", "packaging", "24.0"),
    Source("pypi", "toolz", "0.12.1"),
    Source("pypi", "more-itertools", "10.2.0"),
    Source("pypi", "python-dateutil", "2.9.0.post0"),
    Source("pypi", "attrs", "23.2.0"),
    Source("pypi", "certifi", "2024.2.2"),
    Source("pypi", "urllib3", "2.2.1"),
    Source("pypi", "tqdm", "4.66.4"),
    Source("pypi", "jinja2", "3.1.4"),
    Source("pypi", "httpx", "0.27.0"),
    Source("pypi", "anyio", "4.4.0"),
    Source("pypi", "h11", "0.14.0"),
    Source("pypi", "starlette", "0.37.2"),
    Source("pypi", "werkzeug", "3.0.3"),
    Source("pypi", "marshmallow", "3.21.2"),
    # npm: the published tarballs
    Source("npm", "semver", "7.6.2"),
    Source("npm", "express", "4.19.2"),
    Source("npm", "commander", "12.1.0"),
    Source("npm", "yargs", "17.7.2"),
    Source("npm", "debug", "4.3.5"),
    Source("npm", "qs", "6.12.1"),
    Source("npm", "ws", "8.17.0"),
    Source("npm", "lodash", "4.17.21"),
    # Go modules through the proxy
    Source("go", "github.com/sirupsen/logrus", "v1.9.3"),
    Source("go", "github.com/google/uuid", "v1.6.0"),
    Source("go", "github.com/pkg/errors", "v0.9.1"),
    Source("go", "gopkg.in/yaml.v3", "v3.0.1"),
    Source("go", "github.com/stretchr/testify", "v1.9.0"),
    # the local git mirrors (HEAD of each)
    Source("mirror", "pallets+click", "HEAD"),
    Source("mirror", "pallets+flask", "HEAD"),
    Source("mirror", "Textualize+rich", "HEAD"),
    Source("mirror", "junegunn+fzf", "HEAD"),
    Source("mirror", "expr-lang+expr", "HEAD"),
    Source("mirror", "gorilla+mux", "HEAD"),
]


def _run(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        cmd, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc.stdout


def _unpack(archive: Path, into: Path) -> None:
    if archive.suffix in {".whl", ".zip"}:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(into)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(into, filter="data")


def _single_root(tree: Path) -> Path:
    """The tree's one top-level directory when it has only that (``package/``, ``mod@v/``)."""
    while True:
        entries = list(tree.iterdir())
        if len(entries) != 1 or not entries[0].is_dir():
            return tree
        tree = entries[0]


def _fetch_tree(src: Source, tmp: Path) -> tuple[Path, str]:
    """The source tree of ``src`` under ``tmp`` and the version fetched."""
    if src.registry == "pypi":
        _run(
            [
                "pip",
                "download",
                "--no-deps",
                "--only-binary",
                ":all:",
                "-q",
                "-d",
                str(tmp),
                f"{src.name}=={src.version}",
            ]
        )
        (wheel,) = tmp.glob("*.whl")
        _unpack(wheel, tmp / "tree")
        wheel.unlink()
        return tmp / "tree", src.version
    if src.registry == "npm":
        out = json.loads(_run(["npm", "pack", "--json", f"{src.name}@{src.version}"], cwd=tmp))
        _unpack(tmp / out[0]["filename"], tmp / "tree")
        return _single_root(tmp / "tree"), src.version
    if src.registry == "go":
        env = {
            "GOPROXY": "https://proxy.golang.org",
            "GOFLAGS": "-mod=mod",
            "GOMODCACHE": str(CACHE / "gomodcache"),
            "GO111MODULE": "on",
        }
        info = json.loads(
            _run(["go", "mod", "download", "-json", f"{src.name}@{src.version}"], cwd=tmp, env=env)
        )
        _unpack(Path(info["Zip"]), tmp / "tree")
        return _single_root(tmp / "tree"), src.version
    bare = MIRRORS / src.name / "repo"
    commit = _run(["git", "--git-dir", str(bare), "rev-parse", src.version]).strip()
    archive = tmp / "tree.tar"
    _run(["git", "--git-dir", str(bare), "archive", "-o", str(archive), commit])
    _unpack(archive, tmp / "tree")
    return tmp / "tree", commit[:12]


def _commit(tree: Path, repo: Path) -> None:
    shutil.move(str(tree), str(repo))
    _run(["git", "init", "-q", "-b", "main"], cwd=repo)
    _run(["git", "add", "-A", "-f"], cwd=repo)
    _run(["git", "commit", "-q", "-m", "import", "--no-verify"], cwd=repo, env=GIT_ENV)


def describe(src: Source, repo: Path, version: str) -> dict[str, Any]:
    """Name, version, files and languages of a fetched tree (its committed files)."""
    paths = _run(["git", "ls-files", "-z"], cwd=repo).split("\0")
    langs: Counter[str] = Counter()
    lines = 0
    for path in filter(None, paths):
        lang = detect_language(path)
        if is_code(lang):
            langs[lang] += 1
            with contextlib.suppress(OSError):
                lines += (repo / path).read_bytes().count(b"\n")
    return {
        "name": src.name,
        "registry": src.registry,
        "version": version,
        "path": str(repo),
        "files": sum(1 for p in paths if p),
        "code_files": sum(langs.values()),
        "code_lines": lines,
        "language": langs.most_common(1)[0][0] if langs else "text",
        "languages": dict(langs.most_common()),
    }


def fetch(src: Source, cache: Path = CACHE) -> dict[str, Any]:
    """The local repository of ``src`` (fetched and committed on first use), described."""
    repo = cache / src.slug
    meta = repo.with_suffix(".json")
    if (repo / ".git").is_dir() and meta.is_file():
        return dict(json.loads(meta.read_text()))
    shutil.rmtree(repo, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".fetch-") as tmp:
        tree, version = _fetch_tree(src, Path(tmp))
        _commit(tree, repo)
    info = describe(src, repo, version)
    meta.write_text(json.dumps(info))
    return info


def fetch_all(sources: list[Source], cache: Path = CACHE) -> list[dict[str, Any]]:
    return [fetch(src, cache) for src in sources]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=CACHE)
    opts = parser.parse_args()
    for info in fetch_all(SOURCES, opts.cache):
        print(
            f"{info['registry']:<6} {info['name']:<28} {info['version']:<14} "
            f"files {info['files']:>5}  code {info['code_files']:>5} ({info['language']}) "
            f"lines {info['code_lines']:>7}",
            flush=True,
        )


if __name__ == "__main__":
    main()
