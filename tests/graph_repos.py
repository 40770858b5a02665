"""A realistic multi-language repository as parsed facts, shared by the resolution unit tests
and the code-graph integration tests.

``shop`` has Python (packages, relative and aliased imports, inheritance, ``self.`` calls, a
nested function, builtins, an ambiguous ``render``, an unresolved call), TypeScript
(``this.`` calls, named and external imports), Go (a go.mod, a package import, same-package
calls) and Java (class imports, implicit-``this`` calls, a constructor, ``java.util``).
"""

from __future__ import annotations

from collections.abc import Sequence

from semgraph.model import (
    CallSite,
    Chunk,
    FileFacts,
    Import,
    SkippedFile,
    Symbol,
    content_hash,
)


def sym(
    kind: str,
    qn: str,
    start: int,
    end: int,
    parent: str | None = None,
    bases: tuple[str, ...] = (),
    signature: str = "",
) -> Symbol:
    return Symbol(
        kind=kind,
        name=qn.rsplit(".", 1)[-1],
        qualified_name=qn,
        start_line=start,
        end_line=end,
        signature=signature or f"{kind} {qn.rsplit('.', 1)[-1]}",
        parent=parent,
        bases=list(bases),
    )


def call(enclosing: str, callee: str, line: int, receiver: str | None = None) -> CallSite:
    return CallSite(enclosing=enclosing, callee=callee, receiver=receiver, line=line)


def facts(
    path: str,
    language: str,
    lines: int,
    symbols: Sequence[Symbol] = (),
    imports: Sequence[Import] = (),
    calls: Sequence[CallSite] = (),
    text: str = "",
    status: str = "ok",
) -> FileFacts:
    body = text or f"// {path}\n"
    return FileFacts(
        path=path,
        language=language,
        blob_sha=content_hash(path + body)[:40],
        size_bytes=len(body),
        line_count=lines,
        parse_status=status,
        symbols=list(symbols),
        imports=list(imports),
        calls=list(calls),
        chunks=[Chunk(1, lines, body, content_hash(body))],
    )


def shop_repo(extra_order_method: bool = False) -> list[FileFacts | SkippedFile]:
    """The ``shop`` repository; ``extra_order_method`` adds ``Order.refund`` (a re-index)."""
    m = "shop.models"
    order_syms = [
        sym("class", f"{m}.Base", 4, 12),
        sym("method", f"{m}.Base.save", 5, 8, parent=f"{m}.Base"),
        sym("method", f"{m}.Base.validate", 9, 12, parent=f"{m}.Base"),
        sym("class", f"{m}.Order", 14, 40, bases=("Base",)),
        sym("method", f"{m}.Order.total", 15, 25, parent=f"{m}.Order"),
        sym("function", f"{m}.Order.total.helper", 16, 18, parent=f"{m}.Order.total"),
        sym("method", f"{m}.Order.validate", 26, 30, parent=f"{m}.Order"),
    ]
    order_calls = [
        call(f"{m}.Base.save", "validate", 6, "self"),  # receiver: Base.validate
        call(f"{m}.Base.save", "log", 7),  # import: shop.util.log
        call(f"{m}.Order.total", "helper", 19),  # scope: nested helper
        call(f"{m}.Order.total", "save", 20, "self"),  # receiver via INHERITS: Base.save
        call(f"{m}.Order.total", "slugify", 21),  # import: shop.util.slugify
        call(f"{m}.Order.total", "join", 22, "os.path"),  # external (import os)
        call(f"{m}.Order.total", "len", 23),  # external builtin
        call(f"{m}.Order.total", "append", 24, "self.items"),  # unresolved
        call(f"{m}.Order.validate", "validate", 27, "super"),  # receiver: Base.validate
    ]
    if extra_order_method:
        order_syms.append(sym("method", f"{m}.Order.refund", 31, 35, parent=f"{m}.Order"))
        order_calls.append(call(f"{m}.Order.refund", "total", 32, "self"))
    java = "src.main.java.com.acme"
    return [
        facts("shop/__init__.py", "python", 1),
        facts(
            "shop/util.py",
            "python",
            12,
            [sym("function", "shop.util.slugify", 1, 5), sym("function", "shop.util.log", 7, 12)],
            calls=[call("shop.util.slugify", "lower", 3, "text")],
        ),
        facts(
            "shop/models.py",
            "python",
            40,
            order_syms,
            [
                Import("os", [], None, 1, 1),
                Import(".util", ["log", "slugify"], None, 2, 2),
            ],
            order_calls,
        ),
        facts(
            "shop/service.py",
            "python",
            30,
            [
                sym("function", "shop.service.checkout", 5, 20),
                sym("function", "shop.service.process", 22, 30),
            ],
            [
                Import("shop.models", ["Order"], None, 1, 1),
                Import("shop.util", [], "u", 2, 2),
                Import("requests", [], None, 3, 3),
                Import(".missing", ["nothing"], None, 4, 4),
            ],
            [
                call("shop.service.checkout", "Order", 6),  # import: the class (constructor)
                call("shop.service.checkout", "slugify", 7, "u"),  # import via module alias
                call("shop.service.checkout", "render", 8),  # ambiguous: 2 candidates
                call("shop.service.checkout", "process", 9),  # module
                call("shop.service.checkout", "get", 10, "requests"),  # external
                call("shop.service.checkout", "mystery", 11),  # unresolved
                call("shop.service.checkout", "total", 12, "order"),  # unique method
                call("shop.service", "checkout", 31),  # top level: module encloses
            ],
        ),
        facts("shop/web/render.py", "python", 5, [sym("function", "shop.web.render.render", 1, 5)]),
        facts("shop/cli/render.py", "python", 5, [sym("function", "shop.cli.render.render", 1, 5)]),
        facts(
            "web/api.ts",
            "typescript",
            30,
            [
                sym("class", "web.api.Client", 4, 30),
                sym("method", "web.api.Client.get", 5, 10, parent="web.api.Client"),
                sym("method", "web.api.Client.request", 11, 20, parent="web.api.Client"),
            ],
            [
                Import("./http", ["fetchJson"], None, 1, 1),
                Import("axios", [], "axios", 2, 2),
            ],
            [
                call("web.api.Client.get", "request", 6, "this"),  # receiver
                call("web.api.Client.request", "fetchJson", 12),  # import
                call("web.api.Client.request", "get", 13, "axios"),  # external
                call("web.api.Client.request", "log", 14, "console"),  # external builtin
            ],
        ),
        facts("web/http.ts", "typescript", 10, [sym("function", "web.http.fetchJson", 1, 10)]),
        facts("go.mod", "text", 3, text="module example.com/shop\n\ngo 1.22\n", status="text"),
        facts(
            "cmd/main.go",
            "go",
            20,
            [sym("function", "cmd.main.main", 8, 20)],
            [
                Import("example.com/shop/pkg/store", [], None, 3, 3),
                Import("fmt", [], None, 4, 4),
            ],
            [
                call("cmd.main.main", "Open", 9, "store"),  # import (package dir)
                call("cmd.main.main", "Println", 10, "fmt"),  # external
                call("cmd.main.main", "run", 11),  # module (same package, other file)
                call("cmd.main.main", "Get", 12, "s"),  # unique method
            ],
        ),
        facts("cmd/run.go", "go", 5, [sym("function", "cmd.run.run", 1, 5)]),
        facts(
            "pkg/store/store.go",
            "go",
            30,
            [
                sym("struct", "pkg.store.store.Store", 3, 6),
                sym("function", "pkg.store.store.Open", 8, 12),
                sym("method", "pkg.store.store.Store.Get", 14, 20, parent="pkg.store.store.Store"),
            ],
        ),
        facts(
            "src/main/java/com/acme/Util.java",
            "java",
            10,
            [
                sym("class", f"{java}.Util.Util", 1, 10),
                sym("method", f"{java}.Util.Util.join", 2, 5, parent=f"{java}.Util.Util"),
            ],
        ),
        facts(
            "src/main/java/com/acme/App.java",
            "java",
            30,
            [
                sym("class", f"{java}.App.App", 5, 30),
                sym("method", f"{java}.App.App.main", 6, 15, parent=f"{java}.App.App"),
                sym("method", f"{java}.App.App.helper", 16, 20, parent=f"{java}.App.App"),
            ],
            [Import("com.acme.Util", [], None, 1, 1), Import("java.util.List", [], None, 2, 2)],
            [
                call(f"{java}.App.App.main", "join", 7, "Util"),  # import: class member
                call(f"{java}.App.App.main", "helper", 8),  # scope: implicit this
                call(f"{java}.App.App.main", "App", 9),  # module: constructor
                call(f"{java}.App.App.main", "of", 10, "List"),  # external
            ],
        ),
        facts("README.md", "markdown", 3, text="# shop\n", status="text"),
        SkippedFile("web/logo.png", "binary"),
        SkippedFile("node_modules/x/index.js", "vendored"),
    ]


def other_repo() -> list[FileFacts | SkippedFile]:
    """A second, small repository that must never be touched by publishes of ``shop``."""
    return [
        facts(
            "lib/core.py",
            "python",
            10,
            [sym("function", "lib.core.render", 1, 4), sym("function", "lib.core.main", 5, 10)],
            calls=[call("lib.core.main", "render", 6)],
        )
    ]
