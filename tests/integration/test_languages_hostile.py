"""Hostile input for each grammar added by issue 16 (tests/hostile_inputs.py) in one
repository with the languages' fixtures: the real pool parses it, resolution and the publish
to the real graph server run on, and each hostile file costs at most itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from semgraph.config import Settings
from semgraph.db import Graph
from semgraph.graph.reader import GraphReader
from semgraph.graph.writer import GraphWriter, RepoInfo
from semgraph.indexer.parse import parse_repository
from semgraph.indexer.spill import SpillReader
from semgraph.model import FileFacts
from semgraph.resolve.resolver import resolve
from tests.hostile_inputs import EXTENSIONS, ONE_LINE_BYTES, hostile_files
from tests.lang_fixtures import FIXTURES
from tests.repos import make_repo

pytestmark = pytest.mark.integration


def test_hostile_files_cost_only_themselves(
    settings: Settings, graph: Graph, tmp_path: Path
) -> None:
    files: dict[str, str | bytes] = {}
    for language in EXTENSIONS:
        files |= hostile_files(language)
        files |= {f"{language}/{path}": text for path, text in FIXTURES[language].items()}
    repo = make_repo(tmp_path / "hostile", files)
    # the 5 MB files reach the parser (the default max_file_bytes would skip them as too_large)
    run_settings = settings.model_copy(
        update={"max_file_bytes": 6_000_000, "pool_size": 2, "parse_timeout_s": 30.0}
    )
    spill_path = tmp_path / "spill" / "h.spill"
    stats = parse_repository(run_settings, repo, spill_path)
    assert stats.parse_failures == [] and stats.retries == 0  # no child killed or retried
    facts = {f.path: f for f in SpillReader(spill_path) if isinstance(f, FileFacts)}

    for language, ext in EXTENSIONS.items():
        for path in FIXTURES[language]:
            assert facts[f"{language}/{path}"].parse_status == "ok", path
        base = f"hostile/{language}"
        nested = facts[f"{base}/nested.{ext}"]
        assert (nested.parse_status, nested.parse_error) == ("ok", None)
        assert [s.name for s in nested.symbols] in (["f"], ["A", "F"], ["A", "f"])
        line = facts[f"{base}/oneline.{ext}"]
        assert (line.language, line.parse_status) == (language, "text")
        assert line.parse_error == (
            f"a line of {ONE_LINE_BYTES} bytes (over 200000): indexed as text"
        )
        assert line.chunks and sum(len(c.text) for c in line.chunks) == ONE_LINE_BYTES
        bad = facts[f"{base}/bad_utf8.{ext}"]
        assert bad.parse_status in ("ok", "partial") and "\ufffd" in bad.chunks[-1].text
        slow = facts[f"{base}/recovery.{ext}"]
        assert slow.parse_status == "partial" and slow.chunks
        assert (slow.parse_error or "").startswith(("syntax error near line", "parse stopped"))

    with resolve(lambda: iter(SpillReader(spill_path)), "hostile", tmp_path / "res") as res:
        published = GraphWriter(graph, settings).publish(
            RepoInfo("hostile", str(repo), "main", "c1"),
            res,
            run_id="h1",
            fingerprint="fp",
            now=1.0,
        )
    assert published.dropped_rows == 0
    callers = GraphReader(graph).callers("lua.lib.helper.Helper.format_total", repo="hostile")
    assert {e["qualified_name"] for e in callers.edges} == {"lua.app.job.Job.run"}
