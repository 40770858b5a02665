"""The name a Go import binds without an alias (:func:`semgraph.resolve.import_handlers.
go_package_name`): the Go tools' assumption when the package clause is not read. Before it,
``import "github.com/mattn/go-runewidth"`` bound ``go-runewidth``, which no call can spell, so
``runewidth.StringWidth(s)`` was no call site at all (issue 30: tablewriter -> go-runewidth)."""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.resolve.import_handlers import go_package_name
from tests.parsed_python import language_facts, resolution_rows


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("github.com/mattn/go-runewidth", "runewidth"),
        ("gopkg.in/yaml.v3", "yaml"),
        ("github.com/go-chi/chi/v5", "chi"),
        ("example.com/m/v2/pkg", "pkg"),
        ("github.com/pmezard/go-difflib/difflib", "difflib"),
        ("github.com/foo/bar-go", "bar"),
        ("fmt", "fmt"),
        ("v2", "v2"),  # a lone major version has no parent to name it
        ("", ""),
    ],
)
def test_the_name_a_go_import_path_binds(path: str, name: str) -> None:
    assert go_package_name(path) == name


GO = """package tablewriter

import (
\t"github.com/mattn/go-runewidth"
\tyml "gopkg.in/yaml.v3"
)

func DisplayWidth(s string) int {
\tyml.Unmarshal(nil, nil)
\treturn runewidth.StringWidth(s)
}
"""


def test_calls_through_both_bindings_are_sites_into_their_modules(tmp_path: Path) -> None:
    (sites,) = resolution_rows(
        tmp_path,
        language_facts({"util.go": ("go", GO)}),
        "SELECT line, module, local, rest FROM external_sites ORDER BY line",
    )
    assert sites == [
        (9, "gopkg.in/yaml.v3", "yml", "Unmarshal"),
        (10, "github.com/mattn/go-runewidth", "runewidth", "StringWidth"),
    ]
