"""Call and import resolution on a realistic multi-language repository (no servers)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from semgraph.model import FileFacts, Import, SkippedFile
from semgraph.resolve.resolution import DEFAULT_AMBIGUOUS_CAP, Resolution
from semgraph.resolve.resolver import resolve
from semgraph.resolve.symtab import symbol_rows
from tests.graph_repos import call, facts, shop_repo, sym

JAVA = "src.main.java.com.acme"


def _qn(key: str) -> str:
    """The qualified name inside a symbol key ``repo|path|qn``."""
    return key.split("|")[2]


def _resolve(
    tmp_path: Path,
    files: Sequence[FileFacts | SkippedFile],
    *,
    ambiguous_cap: int = DEFAULT_AMBIGUOUS_CAP,
) -> Resolution:
    return resolve(lambda: iter(files), "shop", tmp_path / "work", ambiguous_cap=ambiguous_cap)


@pytest.fixture
def shop(tmp_path: Path) -> Iterable[Resolution]:
    with _resolve(tmp_path, shop_repo()) as res:
        yield res


def test_every_call_edge_and_tier(shop: Resolution) -> None:
    edges = {(_qn(e.src_key), _qn(e.dst_key), e.tier, e.candidates) for e in shop.iter_calls()}
    m = "shop.models"
    assert edges == {
        (f"{m}.Base.save", f"{m}.Base.validate", "receiver", 1),
        (f"{m}.Base.save", "shop.util.log", "import", 1),
        (f"{m}.Order.total", f"{m}.Order.total.helper", "scope", 1),
        (f"{m}.Order.total", f"{m}.Base.save", "receiver", 1),  # self. through INHERITS
        (f"{m}.Order.total", "shop.util.slugify", "import", 1),
        (f"{m}.Order.validate", f"{m}.Base.validate", "receiver", 1),  # super.
        ("shop.service.checkout", f"{m}.Order", "import", 1),  # constructor
        ("shop.service.checkout", "shop.util.slugify", "import", 1),  # u.slugify
        ("shop.service.checkout", "shop.web.render.render", "ambiguous", 2),
        ("shop.service.checkout", "shop.cli.render.render", "ambiguous", 2),
        ("shop.service.checkout", "shop.service.process", "module", 1),
        # order.total(): a receiver of unknown type, the only `total`: a candidate, no more
        ("shop.service.checkout", f"{m}.Order.total", "ambiguous", 1),
        ("shop.service", "shop.service.checkout", "module", 1),
        ("web.api.Client.get", "web.api.Client.request", "receiver", 1),
        ("web.api.Client.request", "web.http.fetchJson", "import", 1),
        ("cmd.main.main", "pkg.store.store.Open", "import", 1),
        ("cmd.main.main", "cmd.run.run", "module", 1),
        ("cmd.main.main", "pkg.store.store.Store.Get", "ambiguous", 1),
        (f"{JAVA}.App.App.main", f"{JAVA}.Util.Util.join", "import", 1),
        (f"{JAVA}.App.App.main", f"{JAVA}.App.App.helper", "scope", 1),
        (f"{JAVA}.App.App.main", f"{JAVA}.App.App", "module", 1),
    }


def test_counts_per_language_and_class(shop: Resolution) -> None:
    assert shop.call_counts == {
        "python": {"resolved": 10, "ambiguous": 2, "external": 3, "unresolved": 3},
        "typescript": {"resolved": 2, "external": 2},
        "go": {"resolved": 2, "ambiguous": 1, "external": 1},
        "java": {"resolved": 3, "external": 1},
    }
    assert shop.total_calls == 30
    assert shop.resolved_calls == 17
    assert shop.rate == pytest.approx(17 / 30)
    assert shop.tier_counts == {"receiver": 4, "import": 7, "scope": 2, "module": 4}
    # the two name-only candidates say so beside the render() site's two candidates
    assert shop.ambiguous_counts == {"name_only": 2, "several": 1}
    counts = shop.counts
    assert counts["calls_ambiguous_by_reason"] == shop.ambiguous_counts
    assert counts["calls"] == {
        "total": 30,
        "resolved": 17,
        "ambiguous": 3,
        "external": 7,
        "unresolved": 3,
    }
    assert counts["skipped_by_reason"] == {"binary": 1, "vendored": 1}
    assert counts["files_by_language"]["python"] == 6
    assert counts["symbols"] == 13 + 27  # one module per code file + the parsed symbols
    assert shop.inherits_counts == {"resolved": 1}


def test_imports_resolved_to_files_or_external_modules(shop: Resolution) -> None:
    edges = {(e.src_key.split("|", 1)[1], e.dst_label, e.dst_key) for e in shop.iter_imports()}
    f = "shop|"
    x = "shop|ext|"
    assert edges == {
        ("shop/models.py", "ExternalModule", f"{x}os"),
        ("shop/models.py", "File", f"{f}shop/util.py"),
        ("shop/service.py", "File", f"{f}shop/models.py"),
        ("shop/service.py", "File", f"{f}shop/util.py"),
        ("shop/service.py", "ExternalModule", f"{x}requests"),
        ("web/api.ts", "File", f"{f}web/http.ts"),
        ("web/api.ts", "ExternalModule", f"{x}axios"),
        ("cmd/main.go", "File", f"{f}pkg/store/store.go"),
        ("cmd/main.go", "ExternalModule", f"{x}fmt"),
        ("src/main/java/com/acme/App.java", "File", f"{f}src/main/java/com/acme/Util.java"),
        ("src/main/java/com/acme/App.java", "ExternalModule", f"{x}java.util.List"),
    }
    assert shop.import_counts["python"] == {"external": 2, "internal": 3, "unresolved": 1}
    assert dict(shop.iter_file_stats()) == {"shop|shop/service.py": 1}  # from .missing import
    assert {name for _, name in shop.iter_externals()} == {
        "os",
        "requests",
        "axios",
        "fmt",
        "java.util.List",
    }
    assert [(_qn(c), _qn(p)) for c, p in shop.iter_inherits()] == [
        ("shop.models.Order", "shop.models.Base")
    ]


def test_symbol_stats_count_what_did_not_resolve(shop: Resolution) -> None:
    stats = {_qn(s.key): s for s in shop.iter_symbol_stats()}
    checkout = stats["shop.service.checkout"]
    # render(): two candidates; order.total(): one that only its name suggests
    assert (checkout.calls_unresolved, checkout.calls_external, checkout.calls_ambiguous) == (
        1,
        1,
        2,
    )
    total = stats["shop.models.Order.total"]
    assert (total.calls_unresolved, total.calls_external) == (1, 2)
    assert "shop.models.Base.save" not in stats  # everything it calls resolved


def test_ambiguous_over_the_cap_links_nothing_and_counts_possible_callers(
    tmp_path: Path,
) -> None:
    files: list[FileFacts | SkippedFile] = [
        facts(f"p{i}/run.py", "python", 3, [sym("function", f"p{i}.run.run", 1, 3)])
        for i in range(4)
    ]
    files.append(
        facts(
            "main.py",
            "python",
            5,
            [sym("function", "main.go", 1, 5)],
            calls=[call("main.go", "run", 2), call("main.go", "run", 3)],
        )
    )
    with _resolve(tmp_path, files, ambiguous_cap=3) as res:
        assert list(res.iter_calls()) == []
        assert res.call_counts == {"python": {"ambiguous": 2}}
        possible = {_qn(s.key): s.possible_callers for s in res.iter_symbol_stats()}
        assert possible == {"main.go": 0, **{f"p{i}.run.run": 2 for i in range(4)}}
        assert res.rate == 0.0


def test_never_guesses_between_same_named_classes_in_inheritance(tmp_path: Path) -> None:
    files: list[FileFacts | SkippedFile] = [
        facts("a/base.py", "python", 3, [sym("class", "a.base.Base", 1, 3)]),
        facts("b/base.py", "python", 3, [sym("class", "b.base.Base", 1, 3)]),
        facts("c.py", "python", 3, [sym("class", "c.Child", 1, 3, bases=("Base",))]),
    ]
    with _resolve(tmp_path, files) as res:
        assert list(res.iter_inherits()) == []
        assert res.inherits_counts == {"ambiguous": 1}


def test_hostile_and_malformed_facts_are_counted_not_fatal(tmp_path: Path) -> None:
    weird = "dir with spaces/ünï|cödé.py"
    files = [
        facts(
            weird,
            "python",
            10,
            [
                sym("function", "dir with spaces.ünï|cödé.f", 1, 3),
                sym("function", "dir with spaces.ünï|cödé.f", 4, 6),  # redefinition
            ],
            [
                Import("", [], None, 1, 1),
                Import("......too.far", ["x"], None, 2, 2),
                Import("./", ["*"], None, 3, 3),
            ],
            [
                call("no.such.scope", "f", 7),  # unknown enclosing: attributed to the module
                call("dir with spaces.ünï|cödé.f", "", 5, ""),
                call("dir with spaces.ünï|cödé.f", "x" * 10_000, 5, "y" * 10_000),
            ],
        ),
        facts("bad.go", "go", 1, status="parse_failed"),
        facts("notes.txt", "text", 1, status="text"),
    ]
    with _resolve(tmp_path, files) as res:
        assert res.total_calls == 3
        assert res.call_counts["python"]["ambiguous"] == 1  # f is defined twice
        assert res.call_counts["python"]["unresolved"] == 2
        assert res.import_counts["python"] == {"unresolved": 3}
        keys = [row.key for row in symbol_rows("shop", files[0])]
        assert len(keys) == len(set(keys)) == 3
        assert keys[2].endswith("|2")


def test_factory_is_called_once_and_streamed(tmp_path: Path) -> None:
    calls = 0

    def files() -> Iterable[FileFacts | SkippedFile]:
        nonlocal calls
        calls += 1
        yield from shop_repo()

    with resolve(files, "shop", tmp_path / "w") as res:
        assert res.total_calls == 30
    assert calls == 1
    assert (tmp_path / "w" / "symtab.sqlite").exists()
