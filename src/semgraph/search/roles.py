"""A file's *role* (source, test, docs, ...), from its path alone, recorded at index time in
every search document (field ``role``) and filtered on by every search surface.

Issue texts name behaviour; a test, a changelog entry or a translation catalogue often uses
the same words as the source that implements it and ranks above it. With a role per file an
agent can ask for ``role=source`` (or exclude nothing and read the role of each hit).

The rules (first match wins, ``docs/search.md`` lists them for users):

1. ``generated``: vendored or generated code and lock files: a directory ``vendor``,
   ``third_party``, ``node_modules``, ``__generated__``; names ``*_pb2.py``,
   ``*_pb2_grpc.py``, ``*.pb.go``, ``*.gen.go``, ``zz_generated*``, ``*_generated.*``,
   ``*.generated.*``, ``*.min.js``, ``*.min.css``, and the lock files in :data:`LOCK_FILES`.
2. ``i18n``: translation catalogues: ``*.po``, ``*.pot``, ``*.xlf``, ``*.xliff``,
   ``*.arb``, or any file under a directory ``locale``, ``locales``, ``i18n``, ``l10n``,
   ``translations``.
3. ``test``: a directory ``test``, ``tests``, ``testing``, ``__tests__``, ``spec``,
   ``specs``, ``testdata``, ``test_data``, ``e2e``; names ``test_*.py``, ``*_test.py``,
   ``conftest.py``, ``*_test.go``, ``*.test.*`` and ``*.spec.*`` (JavaScript, TypeScript),
   ``*Test.java``/``*Tests.java``/``*Test.kt``, ``*_spec.rb``, ``*_test.rb``, ``*Tests.cs``,
   ``*Test.cs``.
4. ``example``: a directory ``example``, ``examples``, ``_examples``, ``demo``, ``demos``,
   ``sample``, ``samples``.
5. ``changelog``: a name whose stem is ``CHANGES``, ``CHANGELOG``, ``HISTORY``, ``NEWS``,
   ``RELEASES``, ``RELEASE_NOTES`` or ``RELEASE-NOTES`` (any case) with no extension or a
   documentation one (``CHANGES.rst``, ``HISTORY.md``; ``release.py`` stays source); a
   directory ``changelog.d``, ``changes``, ``newsfragments``, ``releasenotes``.
6. ``docs``: a directory ``doc``, ``docs``, ``documentation``, ``man``; documentation
   files: ``*.md``, ``*.rst``, ``*.adoc``, ``*.txt``, ``*.rdoc``, ``*.tex`` anywhere
   (``requirements*.txt`` excepted: source).
7. ``source``: everything else.

Directory names compare case-insensitively; the rules read the path only (no content),
so a role never needs the file's text and is the same on every host.
"""

from __future__ import annotations

ROLES = ("source", "test", "docs", "changelog", "example", "i18n", "generated")

GENERATED_DIRS = frozenset({"vendor", "third_party", "node_modules", "__generated__"})
GENERATED_SUFFIXES = (
    "_pb2.py",
    "_pb2_grpc.py",
    ".pb.go",
    ".gen.go",
    ".min.js",
    ".min.css",
)
LOCK_FILES = frozenset(
    {
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "pipfile.lock",
        "uv.lock",
        "cargo.lock",
        "go.sum",
        "gemfile.lock",
        "composer.lock",
    }
)
I18N_SUFFIXES = (".po", ".pot", ".xlf", ".xliff", ".arb")
I18N_DIRS = frozenset({"locale", "locales", "i18n", "l10n", "translations"})
TEST_DIRS = frozenset(
    {"test", "tests", "testing", "__tests__", "spec", "specs", "testdata", "test_data", "e2e"}
)
TEST_SUFFIXES = (
    "_test.py",
    "_test.go",
    "_spec.rb",
    "_test.rb",
    "test.java",
    "tests.java",
    "test.kt",
    "tests.cs",
    "test.cs",
)
EXAMPLE_DIRS = frozenset({"example", "examples", "_examples", "demo", "demos", "sample", "samples"})
CHANGELOG_STEMS = frozenset(
    {"changes", "changelog", "history", "news", "releases", "release_notes", "release-notes"}
)
CHANGELOG_DIRS = frozenset({"changelog.d", "changes", "newsfragments", "releasenotes"})
DOCS_DIRS = frozenset({"doc", "docs", "documentation", "man"})
DOCS_SUFFIXES = (".md", ".rst", ".adoc", ".txt", ".rdoc", ".tex")
# a name with a test marker before the extension: foo.test.ts, bar.spec.js
_JS_TEST_MARKERS = (".test.", ".spec.")


def _generated(dirs: set[str], name: str) -> bool:
    return (
        bool(dirs & GENERATED_DIRS)
        or name in LOCK_FILES
        or name.endswith(GENERATED_SUFFIXES)
        or name.startswith("zz_generated")
        or "_generated." in name
        or ".generated." in name
    )


def _test(dirs: set[str], name: str) -> bool:
    if dirs & TEST_DIRS:
        return True
    if name == "conftest.py" or (name.startswith("test_") and name.endswith(".py")):
        return True
    return name.endswith(TEST_SUFFIXES) or any(m in name for m in _JS_TEST_MARKERS)


def _changelog(dirs: set[str], name: str) -> bool:
    stem, dot, ext = name.partition(".")
    documented = not dot or f".{ext}" in DOCS_SUFFIXES
    return bool(dirs & CHANGELOG_DIRS) or (stem in CHANGELOG_STEMS and documented)


def role_of(path: str) -> str:
    """The role of the file at ``path`` (``/``-separated, relative to the repository root):
    one of :data:`ROLES`, by the rules in the module docstring."""
    parts = [p for p in path.lower().split("/") if p]
    if not parts:
        return "source"
    name, dirs = parts[-1], set(parts[:-1])
    if _generated(dirs, name):
        return "generated"
    if name.endswith(I18N_SUFFIXES) or dirs & I18N_DIRS:
        return "i18n"
    if _test(dirs, name):
        return "test"
    if dirs & EXAMPLE_DIRS:
        return "example"
    if _changelog(dirs, name):
        return "changelog"
    if dirs & DOCS_DIRS or (name.endswith(DOCS_SUFFIXES) and not name.startswith("requirements")):
        return "docs"
    return "source"
