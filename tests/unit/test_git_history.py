"""The commit-history reader: the ``git log`` token parser on hostile streams, and the
reader on real (small) git repositories: non-UTF-8 and huge messages, merges, renames, a
shallow mirror, an empty repository, a commit after the indexed one, a push's range."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from semgraph.config import Settings
from semgraph.errors import CheckoutError
from semgraph.indexer.githistory import history_source, is_ancestor, read_history
from semgraph.indexer.gitlog import Limits, LogWalk, split_message, tokens
from semgraph.search.history import SUBJECT_CHARS, Commit

LIMITS = Limits(per_file=3, body_chars=100, max_commits=1000, max_files_per_commit=50)


def record(sha: str, message: bytes, *entries: bytes, when: int = 1) -> bytes:
    """One commit as ``git log -z --name-status --format=%x01%H %ct%x00%B`` writes it."""
    out = b"\x01" + sha.encode() + b" " + str(when).encode() + b"\0" + message + b"\0"
    if entries:
        out += b"\n" + b"\0".join(entries) + b"\0"
    return out


def walk(
    stream: bytes,
    limits: Limits = LIMITS,
    *,
    wanted: set[str] | None = None,
    skip: frozenset[str] = frozenset(),
) -> tuple[LogWalk, list[Commit]]:
    w = LogWalk(limits, wanted=wanted, skip=skip)
    return w, list(w.commits(tokens([stream], limits.token_bytes)))


# -- the token stream ---------------------------------------------------------------------------


def test_tokens_across_chunk_boundaries() -> None:
    data = b"ab\0cd\0\0ef"
    for size in (1, 2, 3, 100):
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert list(tokens(chunks, 100)) == [b"ab", b"cd", b"", b"ef"]


def test_a_huge_token_is_cut_as_it_streams() -> None:
    def chunks() -> Iterator[bytes]:  # 10 MB of message, never held whole
        for _ in range(160):
            yield b"x" * 65_536
        yield b"\0next\0"

    got = list(tokens(chunks(), 1000))
    assert [len(t) for t in got] == [1000, 4]


# -- the parser ---------------------------------------------------------------------------------


def test_subject_body_and_paths() -> None:
    stream = record("a" * 40, b"fix timezone parsing\n\nthe body\n", b"M", b"src/t.py", when=7)
    _, got = walk(stream)
    assert len(got) == 1
    c = got[0]
    assert (c.sha, c.time, c.subject, c.body, c.paths) == (
        "a" * 40,
        7,
        "fix timezone parsing",
        "the body",
        ("src/t.py",),
    )


def test_non_utf8_message_and_path() -> None:
    stream = record("b" * 40, b"caf\xe9 \xff fix\n\nbody \xfe", b"M", b"dir/f\xe9.py")
    _, got = walk(stream)
    assert got[0].subject == "caf\ufffd \ufffd fix"
    assert got[0].body == "body \ufffd"
    assert got[0].paths == (os.fsdecode(b"dir/f\xe9.py"),)


def test_huge_message_is_bounded() -> None:
    message = b"subject " + b"s" * 5000 + b"\n\n" + b"body " * 2_000_000  # 10 MB
    stream = record("c" * 40, message, b"A", b"f.py")
    _, got = walk(stream)
    assert len(got[0].subject) == SUBJECT_CHARS
    assert len(got[0].body) == LIMITS.body_chars


def test_no_message_or_path_passes_for_a_header() -> None:
    fake = b"\x01" + b"f" * 40 + b" 9"
    stream = record("d" * 40, fake + b"\0", b"M", fake, b"M", b"real.py") + record(
        "e" * 40, b"second", b"M", b"real.py"
    )
    _, got = walk(stream)
    assert [c.sha for c in got] == ["d" * 40, "e" * 40]
    assert got[0].paths == (fake.decode(), "real.py")


def test_garbage_between_entries_is_ignored() -> None:
    stream = record("a" * 40, b"m", b"Z", b"M", b"f.py") + b"junk\0"
    _, got = walk(stream)
    assert got[0].paths == ("f.py",)


def test_per_file_bound_newest_first() -> None:
    stream = b"".join(record(f"{i:040x}", b"m", b"M", b"f.py") for i in range(10))
    w, got = walk(stream, wanted=None)
    assert [c.sha for c in got] == [f"{i:040x}" for i in range(3)]
    assert w.walked == 10  # no wanted set: the walk goes on


def test_walk_stops_once_every_wanted_file_is_full() -> None:
    def stream() -> Iterator[bytes]:
        for i in range(100_000):
            yield record(f"{i:040x}", b"m", b"M", b"f.py", b"M", b"other.py")

    w = LogWalk(LIMITS, wanted={"f.py"})
    got = list(w.commits(tokens(stream(), LIMITS.token_bytes)))
    assert len(got) == 3 and all(c.paths == ("f.py",) for c in got)
    assert w.walked <= 4


def test_commit_cap_stops_a_100k_commit_history() -> None:
    produced = 0

    def stream() -> Iterator[bytes]:
        nonlocal produced
        for i in range(100_000):
            produced += 1
            yield record(f"{i:040x}", b"m", b"M", f"f{i}.py".encode())

    limits = Limits(per_file=20, body_chars=10, max_commits=500, max_files_per_commit=5)
    w = LogWalk(limits)
    got = list(w.commits(tokens(stream(), limits.token_bytes)))
    assert len(got) == 500 and w.walked == 500
    assert produced < 510  # the rest of the stream was never read


def test_a_commit_with_10k_files_is_skipped_without_holding_them() -> None:
    entries = [e for i in range(10_000) for e in (b"M", f"f{i}.py".encode())]
    stream = record("a" * 40, b"reformat", *entries) + record("b" * 40, b"fix", b"M", b"f1.py")
    w, got = walk(stream)
    assert [c.sha for c in got] == ["b" * 40]
    assert w.skipped == 1


def test_renames_follow_the_file_to_its_current_name() -> None:
    stream = (
        record("3" * 40, b"rename b to c", b"R100", b"b.py", b"c.py")
        + record("2" * 40, b"rename a to b", b"R090", b"a.py", b"b.py")
        + record("1" * 40, b"create a", b"A", b"a.py")
        + record("0" * 40, b"copy", b"C100", b"x.py", b"c.py")
    )
    w, got = walk(stream, wanted={"c.py"})
    assert [(c.subject, c.paths) for c in got] == [
        ("rename b to c", ("c.py",)),
        ("rename a to b", ("c.py",)),
        ("create a", ("c.py",)),
    ]
    assert w.renames == {"b.py": "c.py", "a.py": "c.py"}


def test_shallow_boundary_commit_is_skipped() -> None:
    stream = record("a" * 40, b"fix", b"M", b"f.py") + record("b" * 40, b"graft", b"A", b"f.py")
    _, got = walk(stream, skip=frozenset({"b" * 40}))
    assert [c.sha for c in got] == ["a" * 40]


def test_empty_stream() -> None:
    assert walk(b"")[1] == []


def test_split_message_handles_crlf() -> None:
    assert split_message(b"  subj \r\n\r\nbody\r\n", 10) == ("subj", "body")


# -- the reader on real repositories --------------------------------------------------------------


def _git(repo: Path, *args: str, data: bytes | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], input=data, capture_output=True, env=env, check=True
    )
    return proc.stdout.decode().strip()


def _commit(repo: Path, message: bytes, **files: str) -> str:
    for name, text in files.items():
        path = repo / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-F", "-", data=message)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    return path


def _read(
    git_dir: Path, rev: str, wanted: set[str] | None = None, limits: Limits = LIMITS
) -> list[Commit]:
    return list(read_history(git_dir, rev, limits, wanted=wanted, timeout_s=60))


def test_reads_up_to_the_commit_never_after(repo: Path) -> None:
    first = _commit(repo, b"add parser\n\ndetails", **{"a.py": "1"})
    second = _commit(repo, b"fix timezone in parser", **{"a.py": "2", "b.py": "1"})
    _commit(repo, b"a later commit", **{"a.py": "3"})
    got = _read(repo / ".git", second)
    assert [(c.sha, c.subject, c.paths) for c in got] == [
        (second, "fix timezone in parser", ("a.py", "b.py")),
        (first, "add parser", ("a.py",)),
    ]


def test_merges_are_skipped_and_branch_commits_kept(repo: Path) -> None:
    _commit(repo, b"base", **{"a.py": "1"})
    _git(repo, "checkout", "-q", "-b", "topic")
    topic = _commit(repo, b"topic change", **{"b.py": "1"})
    _git(repo, "checkout", "-q", "main")
    _commit(repo, b"main change", **{"a.py": "2"})
    _git(repo, "merge", "-q", "--no-ff", "-m", "Merge branch topic", "topic")
    got = _read(repo / ".git", "HEAD")
    assert "Merge branch topic" not in [c.subject for c in got]
    assert topic in [c.sha for c in got]


def test_non_utf8_and_10mb_messages_from_git(repo: Path) -> None:
    _commit(repo, b"caf\xe9 latin-1 subject\n\nbody", **{"a.py": "1"})
    _commit(repo, b"big\n\n" + b"word " * 2_100_000, **{"a.py": "2"})
    got = _read(repo / ".git", "HEAD")
    assert got[0].subject == "big" and len(got[0].body) == LIMITS.body_chars
    assert got[1].subject.startswith("caf") and "latin-1 subject" in got[1].subject


def test_rename_followed_by_git(repo: Path) -> None:
    _commit(repo, b"create util", **{"util.py": "x = 1\n" * 20})
    _git(repo, "mv", "util.py", "helpers.py")
    _commit(repo, b"rename util")
    got = _read(repo / ".git", "HEAD", wanted={"helpers.py"})
    assert [(c.subject, c.paths) for c in got] == [
        ("rename util", ("helpers.py",)),
        ("create util", ("helpers.py",)),
    ]


def test_empty_repository_fails_cleanly(repo: Path) -> None:
    with pytest.raises(CheckoutError, match="git log"):
        _read(repo / ".git", "HEAD")


def test_shallow_mirror(repo: Path, tmp_path: Path) -> None:
    for i in range(4):
        _commit(repo, f"change {i}".encode(), **{"a.py": str(i), f"f{i}.py": "x"})
    mirror = tmp_path / "shallow.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", "--depth", "2", f"file://{repo}", str(mirror)], check=True
    )
    got = _read(mirror, "HEAD")
    # the boundary commit (change 2) is grafted: its diff against nothing is not its change
    assert [c.subject for c in got] == ["change 3"]


def test_a_push_reads_its_range_and_a_force_push_is_no_ancestor(repo: Path) -> None:
    old = _commit(repo, b"one", **{"a.py": "1"})
    new = _commit(repo, b"two", **{"a.py": "2"})
    git_dir = repo / ".git"
    source = history_source(_settings(), git_dir, new)
    assert source is not None
    appended = source.since(old, {"a.py"})
    assert appended is not None
    assert [c.subject for c in appended.commits] == ["two"]
    _git(repo, "checkout", "-q", "--orphan", "other")
    rewritten = _commit(repo, b"rewritten", **{"a.py": "3"})
    assert is_ancestor(git_dir, old, new, 30)
    assert not is_ancestor(git_dir, old, rewritten, 30)
    assert not is_ancestor(git_dir, "0" * 40, new, 30)
    forced = history_source(_settings(), git_dir, rewritten)
    assert forced is not None and forced.since(old, {"a.py"}) is None
    for hostile in ("--output=/tmp/x", "HEAD~1", old[:12], "", "x" * 10_000):
        assert forced.since(hostile, {"a.py"}) is None


def _settings() -> Settings:
    return Settings(history_commits_per_file=5)
