"""Real git repositories built inside tests."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "PATH": "/usr/bin:/bin",
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True, text=True
    ).stdout.strip()


def write_files(root: Path, files: Mapping[str, str | bytes | None]) -> None:
    """Write (or, for ``None``, delete) files under ``root``."""
    for rel, content in files.items():
        path = root / rel
        if content is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)


def commit(root: Path, files: Mapping[str, str | bytes | None], message: str = "change") -> str:
    """Apply ``files`` and commit; returns the new commit sha."""
    write_files(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD")


def make_repo(root: Path, files: Mapping[str, str | bytes | None]) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    commit(root, files, "initial")
    return root


# A small multi-language repository with known definitions, calls and meanings.
POLYGLOT: dict[str, str] = {
    "README.md": "# Polyglot\n\nA sample repository used by semgraph's end-to-end tests.\n",
    "app/__init__.py": "",
    "app/models.py": '''"""Data models."""

import zlib


def compute_checksum(payload: bytes) -> int:
    """Compute a CRC32 checksum of the payload bytes."""
    return zlib.crc32(payload)


class Repository:
    """A source repository we keep in sync."""

    def __init__(self, name: str) -> None:
        self.name = name

    def validate(self) -> bool:
        return bool(self.name)

    def save(self) -> int:
        self.validate()
        return compute_checksum(self.name.encode())
''',
    "app/service.py": '''"""Synchronisation service."""

from app.models import Repository, compute_checksum


def sync_repositories(names: list[str]) -> list[int]:
    """Save every repository and return their checksums."""
    out = []
    for name in names:
        repo = Repository(name)
        out.append(repo.save())
    return out


def fingerprint(data: bytes) -> int:
    return compute_checksum(data)
''',
    "web/server.js": """// A tiny HTTP handler.
function parseQuery(url) {
  const params = new URLSearchParams(url.split("?")[1] || "");
  return Object.fromEntries(params);
}

function handleRequest(req) {
  const query = parseQuery(req.url);
  return { status: 200, body: JSON.stringify(query) };
}

module.exports = { handleRequest };
""",
    "cmd/main.go": """package main

import (
\t"fmt"
\t"os"
)

// LoadConfig reads the configuration file at path and returns its bytes.
func LoadConfig(path string) ([]byte, error) {
\treturn os.ReadFile(path)
}

func main() {
\tdata, err := LoadConfig("config.yaml")
\tif err != nil {
\t\tfmt.Println("error:", err)
\t}
\tfmt.Println(len(data))
}
""",
}
