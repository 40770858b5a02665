"""Blob ids from git's index (issue 25): equal to the hash of each file's bytes when the
checkout converts nothing; refused when attributes or autocrlf may convert. And the walk's
one-regex test of generated file names against fnmatch over every pattern."""

from __future__ import annotations

import os
import subprocess
from fnmatch import fnmatch
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semgraph.indexer.extract import blob_sha
from semgraph.indexer.gitblobs import index_blobs, parse_ls_files
from semgraph.indexer.walk import _ANY_GENERATED_NAME, GENERATED_NAMES
from tests.repos import make_repo

FILES: dict[str, str | bytes | None] = {
    "a/one.py": "def f():\n    return 1\n",
    "a/two.go": "package a\n\nfunc G() int { return 2 }\n",
    "b/data.bin": b"\x00\x01\x02",
    "ünï/cödé.py": "x = 'ü'\n",
}


@pytest.fixture(autouse=True)
def _no_global_attributes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def test_parse_ls_files_keeps_regular_stage0_files() -> None:
    out = (
        b"100644 " + b"a" * 40 + b" 0\tsrc/x.py\0"
        b"100755 " + b"b" * 40 + b" 0\tbin/run\0"
        b"120000 " + b"c" * 40 + b" 0\tlink\0"
        b"160000 " + b"d" * 40 + b" 0\tsubmodule\0"
        b"100644 " + b"e" * 40 + b" 1\tconflict.py\0"
        b"100644 " + b"f" * 40 + b" 0\tbad\xff.py\0"
    )
    blobs, attributes = parse_ls_files(out)
    assert blobs == {"src/x.py": "a" * 40, "bin/run": "b" * 40}
    assert not attributes
    assert parse_ls_files(b"100644 " + b"a" * 40 + b" 0\tdocs/.gitattributes\0")[1]


def test_index_ids_are_the_hashes_of_the_bytes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    blobs, why = index_blobs(repo)
    assert why == "" and blobs is not None
    assert set(blobs) == set(FILES)
    for path, blob in blobs.items():
        assert blob == blob_sha((repo / path).read_bytes()), path


def test_tracked_attributes_refuse(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, ".gitattributes": "*.py text eol=crlf\n"})
    assert index_blobs(repo) == (None, "a .gitattributes file is tracked")


def test_info_attributes_and_global_attributes_refuse(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    info = repo / ".git" / "info" / "attributes"
    info.parent.mkdir(parents=True, exist_ok=True)
    info.write_text("*.py ident\n")
    assert index_blobs(repo)[0] is None
    info.unlink()
    glob = tmp_path / "xdg" / "git" / "attributes"
    glob.parent.mkdir(parents=True)
    glob.write_text("*.go text\n")
    assert index_blobs(repo)[0] is None


@pytest.mark.parametrize("key", ["core.autocrlf", "core.sparseCheckout"])
def test_converting_config_refuses(tmp_path: Path, key: str) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    subprocess.run(["git", "-C", str(repo), "config", key, "true"], check=True)
    blobs, why = index_blobs(repo)
    assert blobs is None and key in why
    subprocess.run(["git", "-C", str(repo), "config", key, "false"], check=True)
    assert index_blobs(repo)[0] is not None


def test_not_a_work_tree(tmp_path: Path) -> None:
    os.makedirs(tmp_path / "plain")
    assert index_blobs(tmp_path / "plain") == (None, "not a git work tree")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcgmijnoprstuxyz._-lkp2", min_size=1, max_size=24))
def test_one_regex_matches_what_the_patterns_match(name: str) -> None:
    """The walk tests every name against one regex made of GENERATED_NAMES (issue 25's walk
    cost); it must accept exactly the names one of the patterns accepts."""
    expected = any(fnmatch(name, pattern) for pattern in GENERATED_NAMES)
    assert (_ANY_GENERATED_NAME.match(name) is not None) == expected
    for pattern in GENERATED_NAMES:  # and each pattern's own example
        example = pattern.replace("*", name.strip("*") or "x")
        assert _ANY_GENERATED_NAME.match(example) is not None, example
