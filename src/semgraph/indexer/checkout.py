"""Checkout: a bare mirror per repository under the state directory (fetched, never
re-cloned) and the exact commit materialised into a per-job workspace.

Sources are git URLs (https, ssh, ``git@host:path``, ``file://``) or local paths. Git runs
with no terminal prompt, no ``ext::`` transport and a time limit; every git failure becomes a
:class:`CheckoutError` whose message says what failed. The mirror is locked (``flock``)
while it is fetched, so two workers on one host never fetch the same mirror at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from semgraph.config import Settings
from semgraph.errors import CheckoutError
from semgraph.indexer.sources import normalize_source, repo_key_for
from semgraph.logs import event

log = logging.getLogger(__name__)

_REF_OK = re.compile(r"^[A-Za-z0-9._/@^~{}+-]+$")
_GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "true",
    "SSH_ASKPASS": "true",
    "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
    "GIT_CONFIG_NOSYSTEM": "1",
    "LC_ALL": "C",
}
_GIT_SAFE = ["-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null"]


@dataclass(frozen=True, slots=True)
class CheckoutResult:
    commit: str
    workspace: Path
    repo_key: str
    url: str
    default_branch: str | None


def _fetch_url(url: str) -> str:
    return url[len("file://") :] if url.startswith("file://") else url


def git(
    args: list[str], *, cwd: Path | None = None, timeout_s: float, what: str
) -> subprocess.CompletedProcess[str]:
    """Run git with safe options; any failure raises :class:`CheckoutError`."""
    env = {**os.environ, **_GIT_ENV}
    try:
        proc = subprocess.run(
            ["git", *_GIT_SAFE, *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise CheckoutError(f"{what}: git timed out after {timeout_s:g}s") from exc
    except OSError as exc:
        raise CheckoutError(f"{what}: cannot run git: {exc}") from exc
    if proc.returncode != 0:
        detail = " ".join(proc.stderr.strip().split())[-800:] or f"exit {proc.returncode}"
        raise CheckoutError(f"{what}: {detail}")
    return proc


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def mirror_path(settings: Settings, repo_key: str) -> Path:
    """The bare mirror of ``repo_key`` (its full history: what the commit messages are read
    from, :mod:`semgraph.indexer.githistory`)."""
    return settings.mirrors_path / f"{repo_key}.git"


def sync_mirror(settings: Settings, url: str, repo_key: str) -> Path:
    """Create or fetch the bare mirror of ``url``; returns its path."""
    mirrors = settings.mirrors_path
    mirror = mirror_path(settings, repo_key)
    timeout = settings.git_timeout_s
    with _locked(mirrors / f"{repo_key}.lock"):
        if not (mirror / "HEAD").exists():
            if mirror.exists():
                shutil.rmtree(mirror)  # a clone that died half-way
            tmp = mirrors / f"{repo_key}.git.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            try:
                git(
                    ["clone", "--mirror", "--quiet", "--", _fetch_url(url), str(tmp)],
                    timeout_s=timeout,
                    what=f"cannot clone {url}",
                )
            except CheckoutError:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            tmp.rename(mirror)
        else:
            git(
                ["--git-dir", str(mirror), "fetch", "--prune", "--quiet", "--force", "origin"],
                timeout_s=timeout,
                what=f"cannot fetch {url}",
            )
            # keep HEAD (the default branch) following the remote's
            head = git(
                ["--git-dir", str(mirror), "ls-remote", "--symref", "origin", "HEAD"],
                timeout_s=timeout,
                what=f"cannot read the default branch of {url}",
            )
            for line in head.stdout.splitlines():
                if line.startswith("ref: ") and line.endswith("\tHEAD"):
                    ref = line[len("ref: ") : -len("\tHEAD")]
                    git(
                        ["--git-dir", str(mirror), "symbolic-ref", "HEAD", ref],
                        timeout_s=timeout,
                        what="cannot update the mirror's HEAD",
                    )
    return mirror


def _default_branch(mirror: Path, timeout_s: float) -> str | None:
    try:
        proc = git(
            ["--git-dir", str(mirror), "symbolic-ref", "--short", "HEAD"],
            timeout_s=timeout_s,
            what="default branch",
        )
    except CheckoutError:
        return None
    return proc.stdout.strip() or None


def resolve_ref(mirror: Path, ref: str | None, timeout_s: float, url: str) -> str:
    """The commit sha ``ref`` names in ``mirror`` (the default branch when None)."""
    if ref is not None and (
        not ref or ref.startswith("-") or not _REF_OK.match(ref) or len(ref) > 255
    ):
        raise CheckoutError(f"invalid ref {ref[:200]!r}")
    candidates = ["HEAD"] if ref is None else [ref, f"refs/heads/{ref}", f"refs/tags/{ref}"]
    for cand in candidates:
        try:
            proc = git(
                [
                    "--git-dir",
                    str(mirror),
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    "--end-of-options",
                    f"{cand}^{{commit}}",
                ],
                timeout_s=timeout_s,
                what="resolve ref",
            )
        except CheckoutError:
            continue
        sha = proc.stdout.strip()
        if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha):
            return sha
    raise CheckoutError(f"unknown ref {ref or 'HEAD'!r} in {url}")


def materialise(mirror: Path, commit: str, workspace: Path, timeout_s: float) -> None:
    """Check ``commit`` out into the empty or absent ``workspace`` (a detached work tree
    sharing the mirror's objects)."""
    workspace.parent.mkdir(parents=True, exist_ok=True)
    git(
        ["clone", "--quiet", "--shared", "--no-checkout", "--", str(mirror), str(workspace)],
        timeout_s=timeout_s,
        what=f"cannot create workspace {workspace}",
    )
    _detach(workspace, commit, timeout_s, f"cannot check out {commit}")


def _detach(workspace: Path, commit: str, timeout_s: float, what: str, *flags: str) -> None:
    """Check ``commit`` out in ``workspace`` as a detached HEAD, quietly."""
    quiet = ["-c", "advice.detachedHead=false", "-C", str(workspace), "checkout", "--quiet"]
    git([*quiet, *flags, "--detach", commit], timeout_s=timeout_s, what=what)


def worktree_path(settings: Settings, repo_key: str) -> Path:
    """The repository's reused work tree (a hash of the key: no key can escape the root)."""
    digest = hashlib.sha256(repo_key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return settings.state_dir / "worktrees" / digest


@contextmanager
def worktree_lock(settings: Settings, repo_key: str) -> Iterator[None]:
    """Held while a job checks out and reads the reused work tree of ``repo_key``."""
    path = worktree_path(settings, repo_key)
    with _locked(path.with_name(path.name + ".lock")):
        yield


def update_worktree(mirror: Path, commit: str, workspace: Path, timeout_s: float) -> bool:
    """Move the work tree a previous checkout of ``mirror`` left at ``workspace`` to
    ``commit``: git rewrites only the files that differ, and anything else in the tree
    (untracked, ignored, edited: a job that died half-way) is removed. False (nothing
    done) when ``workspace`` is not such a work tree."""
    try:
        alternates = (workspace / ".git" / "objects" / "info" / "alternates").read_text()
    except OSError:
        return False
    if Path(alternates.strip()).resolve() != (mirror / "objects").resolve():
        return False
    _detach(workspace, commit, timeout_s, f"cannot move the work tree to {commit}", "--force")
    git(
        ["-C", str(workspace), "clean", "--quiet", "-ffdx"],
        timeout_s=timeout_s,
        what="cannot clean the work tree",
    )
    return True


def _update_or_drop(mirror: Path, commit: str, workspace: Path, timeout_s: float) -> bool:
    """Move a reused work tree to ``commit``; one that is not a work tree of ``mirror`` or
    that git cannot move is removed (False: materialise it afresh)."""
    try:
        if update_worktree(mirror, commit, workspace, timeout_s):
            return True
    except CheckoutError as exc:
        event(log, logging.WARNING, "worktree_dropped", str(exc), workspace=str(workspace))
    if workspace.is_dir() and not workspace.is_symlink():
        shutil.rmtree(workspace, ignore_errors=True)
    else:
        workspace.unlink(missing_ok=True)
    return False


def checkout(
    settings: Settings, source: str, ref: str | None, workspace: Path, *, reuse: bool = False
) -> CheckoutResult:
    """Fetch ``source`` into its mirror and materialise ``ref`` (default branch when None)
    into ``workspace``; with ``reuse``, ``workspace`` may hold an earlier checkout of the
    same repository, moved to the commit (the caller holds :func:`worktree_lock`)."""
    url = normalize_source(source)
    key = repo_key_for(source)
    if url.startswith("file://") and not Path(_fetch_url(url)).exists():
        raise CheckoutError(f"repository {url} does not exist")
    workspace = Path(workspace)
    occupied = workspace.exists() and (not workspace.is_dir() or any(workspace.iterdir()))
    if occupied and not reuse:
        raise CheckoutError(f"workspace {workspace} exists and is not an empty directory")
    mirror = sync_mirror(settings, url, key)
    commit = resolve_ref(mirror, ref, settings.git_timeout_s, url)
    try:
        if not (occupied and _update_or_drop(mirror, commit, workspace, settings.git_timeout_s)):
            materialise(mirror, commit, Path(workspace), settings.git_timeout_s)
    except CheckoutError:
        shutil.rmtree(workspace, ignore_errors=True)
        raise
    return CheckoutResult(
        commit=commit,
        workspace=Path(workspace),
        repo_key=key,
        url=url,
        default_branch=_default_branch(mirror, settings.git_timeout_s),
    )
