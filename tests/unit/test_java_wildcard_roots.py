"""A Java wildcard import of a package that lives in two source roots (`src/main/java/com/x/nodes`
and `src/test/java/com/x/nodes`, one package `com.x.nodes`) binds both directories: before, the
two matches made the import external and every class of the package unknown (bench/accuracy:
jsoup's tests, `import org.jsoup.nodes.*;`)."""

from __future__ import annotations

from pathlib import Path

from semgraph.indexer.extract import ExtractOptions, extract_file
from semgraph.model import FileFacts
from semgraph.resolve.resolver import resolve

DOC = "package com.x.nodes;\n\npublic class Doc {\n  public Doc body() { return this; }\n}\n"
DOC_TEST = "package com.x.nodes;\n\nclass DocTest {\n  void t() {}\n}\n"
USE = """\
package com.x.app;

import com.x.nodes.*;
import java.util.*;

class UseTest {
  void g() {
    Doc d = new Doc();
    d.body();
  }
}
"""


def _facts(path: str, text: str) -> FileFacts:
    facts = extract_file(path, text.encode(), ExtractOptions())
    assert isinstance(facts, FileFacts)
    return facts


def test_a_wildcard_import_sees_the_package_in_every_root(tmp_path: Path) -> None:
    files = [
        _facts("src/main/java/com/x/nodes/Doc.java", DOC),
        _facts("src/test/java/com/x/nodes/DocTest.java", DOC_TEST),
        _facts("src/test/java/com/x/app/UseTest.java", USE),
    ]
    with resolve(lambda: iter(files), "r", tmp_path / "work") as res:
        edges = {(e.line, e.dst_key.split("|")[2], e.tier) for e in res.iter_calls()}
    doc = "src.main.java.com.x.nodes.Doc.Doc"
    assert (8, doc, "import") in edges  # new Doc(): through the wildcard, not `unique`
    assert (9, f"{doc}.body", "receiver") in edges  # d.body(): Doc is a known type
