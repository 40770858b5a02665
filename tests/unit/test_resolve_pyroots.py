"""Python source roots from packaging metadata and layout (resolve/pyroots.py), including
malformed, hostile and oversized metadata."""

from __future__ import annotations

from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.resolve.pyroots import (
    MAX_PACKAGING_CHARS,
    find_roots,
    packaging_text,
    roots_from_pyproject,
    roots_from_setup_cfg,
)


def test_pyproject_forms() -> None:
    assert roots_from_pyproject('[tool.setuptools.package-dir]\n"" = "src"\n') == ["src"]
    assert roots_from_pyproject('[tool.setuptools.packages.find]\nwhere = ["lib"]\n') == ["lib"]
    hatch = '[tool.hatch.build.targets.wheel]\npackages = ["src/pkg"]\n'
    assert roots_from_pyproject(hatch) == ["src"]
    poetry = '[tool.poetry]\npackages = [{ include = "pkg", from = "python" }]\n'
    assert roots_from_pyproject(poetry) == ["python"]
    assert roots_from_pyproject("[project]\nname = 'x'\n") == []


def test_setup_cfg_forms() -> None:
    assert roots_from_setup_cfg("[options]\npackage_dir =\n    =src\n") == ["src"]
    assert roots_from_setup_cfg("[options.packages.find]\nwhere = lib\n") == ["lib"]


def test_malformed_and_hostile_metadata_is_ignored() -> None:
    assert roots_from_pyproject("[tool.setuptools\nwhere = [") == []
    assert roots_from_pyproject("tool = 3\n") == []
    assert roots_from_pyproject('[tool.setuptools]\npackage-dir = "src"\n') == []
    assert roots_from_pyproject("x = " + "[" * 5000 + "]" * 5000) == []
    assert roots_from_setup_cfg("not an ini [[[") == []
    # a root outside the repository, or the repository itself, is no root
    packaging = [("pyproject.toml", '[tool.setuptools.packages.find]\nwhere = ["../..", "."]\n')]
    assert find_roots(packaging, []) == []
    assert find_roots([("sub/setup.cfg", "[options]\npackage_dir = =src\n")], []) == ["sub/src"]


def test_layout_root_is_a_src_directory_holding_a_package() -> None:
    paths = ["src/pkg/__init__.py", "src/pkg/a.py", "lib/x/__init__.py", "tests/test_a.py"]
    assert find_roots([], paths) == ["src"]
    assert find_roots([], ["src/__init__.py", "src/pkg/__init__.py"]) == []  # src is a package


def test_packaging_text_rebuilds_overlapping_chunks_and_refuses_huge_files() -> None:
    body = '[project]\nname = "x"\n' + "".join(f"# line {i}\n" for i in range(200))
    body += '[tool.setuptools.package-dir]\n"" = "src"\n'
    facts = extract_file("pyproject.toml", body.encode(), ExtractOptions(chunk_max_lines=10))
    text = packaging_text(facts)
    assert text is not None
    assert roots_from_pyproject(text) == ["src"]
    huge = "# x\n" * (MAX_PACKAGING_CHARS // 4 + 10)
    assert packaging_text(extract_file("pyproject.toml", huge.encode(), ExtractOptions())) is None
    assert packaging_text(extract_file("README.md", b"# hi\n", ExtractOptions())) is None
