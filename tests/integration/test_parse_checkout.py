"""Checkout (bare mirror + per-job workspace) and the file walk, on real git repositories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from semgraph.config import Settings, load_settings
from semgraph.errors import CheckoutError, JobError
from semgraph.indexer.checkout import checkout
from semgraph.indexer.sources import normalize_source, repo_key_for
from semgraph.indexer.walk import WalkEntry, walk
from semgraph.model import SkippedFile
from tests.repos import git, make_repo


@pytest.fixture
def cfg(tmp_path: Path) -> Settings:
    return load_settings(state_dir=str(tmp_path / "state"), git_timeout_s=60)


def test_checkout_local_path_and_file_url(tmp_path: Path, cfg: Settings) -> None:
    repo = make_repo(tmp_path / "My.Repo", {"a.py": "x = 1\n"})
    first = git(repo, "rev-parse", "HEAD")
    res = checkout(cfg, str(repo), None, tmp_path / "ws1")
    assert res.commit == first
    assert res.default_branch == "main"
    assert res.url == f"file://{repo}"
    assert res.repo_key == repo_key_for(f"file://{repo}/") == repo_key_for(str(repo) + "/.git")
    assert res.repo_key.startswith("my-repo-")
    assert (tmp_path / "ws1" / "a.py").read_text() == "x = 1\n"
    assert (cfg.mirrors_path / f"{res.repo_key}.git" / "HEAD").exists()

    (repo / "b.py").write_text("y = 2\n")
    git(repo, "add", "b.py")
    git(repo, "commit", "-qm", "two")
    git(repo, "tag", "v1", first)
    second = git(repo, "rev-parse", "HEAD")
    res2 = checkout(cfg, f"file://{repo}", "main", tmp_path / "ws2")  # fetched, not re-cloned
    assert res2.commit == second and (tmp_path / "ws2" / "b.py").exists()
    res3 = checkout(cfg, str(repo), "v1", tmp_path / "ws3")
    assert res3.commit == first and not (tmp_path / "ws3" / "b.py").exists()
    res4 = checkout(cfg, str(repo), second[:12], tmp_path / "ws4")
    assert res4.commit == second


def test_checkout_errors_are_clear(tmp_path: Path, cfg: Settings) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    with pytest.raises(CheckoutError, match="unknown ref 'nope'"):
        checkout(cfg, str(repo), "nope", tmp_path / "ws")
    assert not (tmp_path / "ws").exists()
    with pytest.raises(CheckoutError, match="does not exist"):
        checkout(cfg, str(tmp_path / "missing"), None, tmp_path / "ws")
    with pytest.raises(CheckoutError, match="invalid ref"):
        checkout(cfg, str(repo), "--upload-pack=evil", tmp_path / "ws")
    with pytest.raises(CheckoutError, match="invalid repository source"):
        checkout(cfg, "--upload-pack=touch /tmp/x", None, tmp_path / "ws")
    with pytest.raises(CheckoutError, match="unsupported repository URL"):
        checkout(cfg, "ext::sh -c touch% /tmp/pwned", None, tmp_path / "ws")
    with pytest.raises(CheckoutError, match="unsupported repository URL"):
        checkout(cfg, "gopher://h/x", None, tmp_path / "ws")
    with pytest.raises(CheckoutError, match="cannot clone"):
        checkout(cfg, str(tmp_path), None, tmp_path / "ws")  # a directory, not a repository
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("mine")
    with pytest.raises(CheckoutError, match="not an empty directory"):
        checkout(cfg, str(repo), None, tmp_path / "busy")
    assert (tmp_path / "busy" / "keep.txt").read_text() == "mine"
    assert issubclass(CheckoutError, JobError)


def test_corrupt_mirror_is_a_checkout_error(tmp_path: Path, cfg: Settings) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    res = checkout(cfg, str(repo), None, tmp_path / "ws")
    mirror = cfg.mirrors_path / f"{res.repo_key}.git"
    (mirror / "config").write_text("[core\nbroken")
    with pytest.raises(CheckoutError, match="cannot fetch"):
        checkout(cfg, str(repo), None, tmp_path / "ws2")


def test_repo_key_is_stable_and_safe() -> None:
    assert repo_key_for("https://GitHub.com/Org/Some.Repo.git") == repo_key_for(
        "https://github.com/Org/Some.Repo/"
    )
    assert repo_key_for("git@github.com:org/repo.git") == repo_key_for(
        "ssh://git@github.com/org/repo"
    )
    assert repo_key_for("https://a/x/repo") != repo_key_for("https://b/x/repo")
    for src in ["https://h/_weird name!!", "https://h/..", "/tmp/ÜBER", "https://h/" + "a" * 300]:
        key = repo_key_for(src)
        assert key[0].isalnum() and len(key) <= 60
        assert all(c in "abcdefghijklmnopqrstuvwxyz0123456789-_" for c in key)
    assert normalize_source("https://h/o/r.git") == "https://h/o/r"
    for bad in ["", "   ", "a\nb", "x" * 5000]:
        with pytest.raises(CheckoutError):
            repo_key_for(bad)


def _walk(
    root: Path, max_file_bytes: int = 3000
) -> tuple[dict[str, int], dict[str, tuple[str, str]]]:
    entries: dict[str, int] = {}
    skipped: dict[str, tuple[str, str]] = {}
    for item in walk(root, max_file_bytes=max_file_bytes):
        if isinstance(item, WalkEntry):
            entries[item.path] = item.size_bytes
        else:
            assert isinstance(item, SkippedFile)
            skipped[item.path] = (item.reason, item.detail)
    return entries, skipped


WALK_FILES: dict[str, bytes | str] = {
    ".gitignore": "*.log\n",
    ".semgraphignore": "docs/private/\n",
    "src/app.py": "x = 1\n",
    "src/pkg/__init__.py": "\n",
    "src/empty.py": "",
    "docs/index.md": "# hi\n",
    "docs/private/secret.md": "# no\n",
    "vendor/lib/x.go": "package x\n",
    "web/node_modules/a/index.js": "x\n",
    "dist/bundle.js": "x\n",
    "web/app.min.js": "x\n",
    "web/big.js": "var a=1;" * 300,
    "yarn.lock": "x\n",
    "img.png": b"\x89PNG\r\n\x1a\n\x00\x00",
    "huge.py": "x = 1\n" * 600,
}


def test_walk_tracked_files_with_reasons(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", WALK_FILES)
    (repo / "untracked.log").write_text("ignored by git\n")
    (repo / "src" / "escape.py").symlink_to("/etc/hostname")
    (repo / "src" / "inner.py").symlink_to("app.py")
    git(repo, "add", "src/escape.py", "src/inner.py")
    git(repo, "commit", "-qm", "links")
    entries, skipped = _walk(repo)
    assert entries == {
        ".gitignore": 6,
        ".semgraphignore": 14,
        "src/app.py": 6,
        "src/pkg/__init__.py": 1,
        "docs/index.md": 5,
    }
    assert {p: r for p, (r, _) in skipped.items()} == {
        "src/empty.py": "empty",
        "docs/private/secret.md": "ignored",
        "vendor/lib/x.go": "vendored",
        "web/node_modules/a/index.js": "vendored",
        "dist/bundle.js": "generated",
        "web/app.min.js": "generated",
        "web/big.js": "generated",
        "yarn.lock": "generated",
        "img.png": "binary",
        "huge.py": "too_large",
        "src/escape.py": "symlink",
        "src/inner.py": "symlink",
    }
    assert skipped["src/escape.py"][1] == "symlink leaving the repository -> /etc/hostname"
    assert skipped["src/inner.py"][1] == "symlink inside the repository -> app.py"
    assert skipped["huge.py"][1] == "3600 bytes > max_file_bytes 3000"
    assert skipped["web/big.js"][1] == "minified"


def test_walk_plain_directory_honours_gitignore(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    for rel, content in {
        **WALK_FILES,
        "sub/.gitignore": "local.txt\n",
        "sub/local.txt": "x\n",
        "sub/keep.txt": "y\n",
        "build.log": "z\n",
        "logs/x.txt": "q\n",
    }.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode() if isinstance(content, str) else content)
    (root / ".gitignore").write_text("*.log\nlogs/\n")
    (root / "outside").symlink_to(tmp_path)
    entries, skipped = _walk(root)
    assert set(entries) == {
        ".gitignore",
        ".semgraphignore",
        "src/app.py",
        "src/pkg/__init__.py",
        "docs/index.md",
        "sub/.gitignore",
        "sub/keep.txt",
    }
    assert skipped["build.log"][0] == "ignored"
    assert skipped["sub/local.txt"][0] == "ignored"
    assert skipped["logs/"] == ("ignored", "directory")
    assert skipped["outside"][0] == "symlink"
    assert skipped["vendor/lib/x.go"][0] == "vendored"


def test_walk_non_utf8_name(tmp_path: Path) -> None:
    root = tmp_path / "n"
    root.mkdir()
    (root / "ok.py").write_text("x = 1\n")
    with open(os.path.join(os.fsencode(root), b"bad\xff.py"), "wb") as fh:
        fh.write(b"y = 2\n")
    entries, skipped = _walk(root)
    assert list(entries) == ["ok.py"]
    assert skipped == {"bad\ufffd.py": ("unreadable", "name is not UTF-8")}


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_a_reused_work_tree_is_moved_to_each_commit_exactly(tmp_path: Path, cfg: Settings) -> None:
    from semgraph.indexer.checkout import worktree_path
    from tests.repos import commit

    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n", "gone.py": "g\n", "d/keep.txt": "k\n"})
    ws = worktree_path(cfg, repo_key_for(str(repo)))
    first = checkout(cfg, str(repo), None, ws, reuse=True)
    assert _tree(ws) == {"a.py": b"x = 1\n", "gone.py": b"g\n", "d/keep.txt": b"k\n"}
    keep_inode = (ws / "d" / "keep.txt").stat().st_ino
    second_sha = commit(repo, {"a.py": "x = 2\n", "gone.py": None, "new.py": "n\n"})
    # a job that died half-way left junk, an edit and an ignored build output behind
    (ws / "junk.tmp").write_text("junk")
    (ws / "d" / "keep.txt").write_text("edited")
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_bytes(b"\0")
    second = checkout(cfg, str(repo), None, ws, reuse=True)
    assert second.commit == second_sha and second.workspace == ws
    assert _tree(ws) == {"a.py": b"x = 2\n", "new.py": b"n\n", "d/keep.txt": b"k\n"}
    back = checkout(cfg, str(repo), first.commit, ws, reuse=True)
    assert back.commit == first.commit
    assert _tree(ws) == {"a.py": b"x = 1\n", "gone.py": b"g\n", "d/keep.txt": b"k\n"}
    assert (ws / "d" / "keep.txt").stat().st_ino == keep_inode  # moved, not checked out anew


@pytest.mark.parametrize("found", ["plain files", "another repository's work tree", "a file"])
def test_a_reused_work_tree_that_is_not_one_is_replaced(
    tmp_path: Path, cfg: Settings, found: str
) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    ws = tmp_path / "ws"
    if found == "plain files":
        ws.mkdir()
        (ws / "stray.py").write_text("stray")
    elif found == "a file":
        ws.write_text("not a directory")
    else:
        other = make_repo(tmp_path / "other", {"o.py": "o\n"})
        checkout(cfg, str(other), None, ws, reuse=True)
    res = checkout(cfg, str(repo), None, ws, reuse=True)
    assert _tree(ws) == {"a.py": b"x = 1\n"} and res.workspace == ws
    with pytest.raises(CheckoutError, match="not an empty directory"):
        checkout(cfg, str(repo), None, ws)  # without reuse an occupied workspace is refused
