"""Objects made by decorators (resolve/decorators.py): the text helpers, and the resolver on
parsed Python (the real tree-sitter extraction, no servers) linking what a decorator made and
nothing that a decorator could have made otherwise."""

from __future__ import annotations

from pathlib import Path

from semgraph.indexer.extract import extract_all
from semgraph.model import DECORATOR
from semgraph.resolve.decorators import parameters, split_call
from semgraph.resolve.typeexpr import alternatives, split_top
from tests.parsed_python import edges_from


def test_split_call_reads_arguments_outside_strings() -> None:
    assert split_call('cli.command("x", help="a, b (c")') == (
        "cli.command",
        ['"x"', 'help="a, b (c"'],
    )
    assert split_call("click.group()") == ("click.group", [])
    assert split_call("pkg.deco") is None
    assert split_call("make()(x)") == ("make()", ["x"])


def test_union_alternatives() -> None:
    assert alternatives("Group | t.Callable[[F], Group | G]") == [
        "Group",
        "t.Callable[[F], Group | G]",
    ]
    assert alternatives("t.Optional[Union[A, 'B']]") == ["A", "B"]
    assert alternatives('"Cmd | None"') == ["Cmd"]
    assert split_top("a[1, 2], b", ",") == ["a[1, 2]", "b"]


def test_parameters_of_a_signature() -> None:
    sig = "def group(name: str | None = None, cls: type[G] | None = None, **attrs: t.Any) -> G"
    assert parameters(sig, method=False) == [
        "name: str | None = None",
        "cls: type[G] | None = None",
        "**attrs: t.Any",
    ]
    assert parameters("def command(self, *args, **kw)", method=True) == ["*args", "**kw"]
    assert parameters("def broken(self, x", method=True) is None


def test_the_outermost_decorator_is_recorded() -> None:
    src = b"@a.b(1)\n@c\ndef f():\n    pass\n\n@d\nclass K:\n    pass\n"
    binds = extract_all("m.py", "python", src)[3]
    assert [(b.scope, b.kind, b.text) for b in binds if b.name == DECORATOR] == [
        ("m.f", "value", "a.b(1)")
    ]


LIB = """import typing as t

GrpType = t.TypeVar("GrpType", bound="Group")
F = t.TypeVar("F")


class Command:
    def invoke(self, ctx):
        return 1


class Group(Command):
    def command(self, *args: t.Any, **kw: t.Any) -> t.Callable[[t.Callable], Command] | Command:
        return Command()


class Wrapper:
    def __call__(self, f) -> Command:
        return Command()


def group(
    name: str | t.Callable | None = None, cls: type[GrpType] | None = None, **attrs: t.Any
) -> Group | t.Callable[[t.Callable], Group | GrpType]:
    return Group()


def keep(f: F) -> F:
    return f


def build(f):
    return Group()
"""

APP = """from lib import Group, Wrapper, build, group, keep


@group()
def cli():
    pass


@cli.command("sub", help="a, b (c")
def sub():
    pass


@group
def bare():
    pass


@group(cls=Group)
def chosen():
    pass


@group(None, Group)
def positional():
    pass


@keep
def kept():
    pass


@Wrapper()
def wrapped():
    pass


@build
def built():
    pass


@Group
def instance():
    pass


def main():
    cli.command()
    sub.invoke(1)
    bare.command()
    chosen.command()
    positional.command()
    kept.command()
    wrapped.invoke(2)
    built.command()
    instance.invoke(3)
"""


def test_decorated_functions_are_what_their_decorators_make(tmp_path: Path) -> None:
    edges = edges_from(tmp_path, {"lib.py": LIB, "app.py": APP}, "app.main")
    assert edges == {
        (1, "lib.Group.command"),  # @group(): the factory's callable returns a Group
        (2, "lib.Command.invoke"),  # @cli.command(...): Group.command's callable gives Command
        (3, "lib.Group.command"),  # @group: applied directly, the non-callable alternative
        # 4, 5: cls= / a second positional can bind GrpType: the caller's choice, unknown
        # 6: keep(f: F) -> F is no class: kept stays a function, kept.command() unresolved
        (7, "lib.Command.invoke"),  # @Wrapper(): what Wrapper.__call__ returns
        (8, "lib.Group.command"),  # @build: inferred from `return Group()`
        (9, "lib.Command.invoke"),  # @Group: an instance of the class
    }
