"""Calls into a namespace imported whole (:mod:`semgraph.resolve.open_sites`): C#
``using``, Ruby ``require`` and Swift ``import`` bind no name; a call on a capitalised name
the repository does not define is external, with one site per candidate namespace. Through
the real extraction and resolver (no servers)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

from semgraph.manifests import jvm
from semgraph.model import Chunk
from semgraph.resolve.open_sites import MAX_CANDIDATES, parts
from semgraph.resolve.resolver import resolve
from semgraph.xrepo.gems import constant_path, names_of, nesting
from tests.parsed_python import language_facts, resolution_rows

Rows = list[tuple[int, str, str, str]]


def resolved(tmp_path: Path, files: Mapping[str, tuple[str, str]]) -> tuple[Rows, list[str]]:
    """(the external sites as (line, module, local, rest), the call edges as 'line qn')."""
    sites, calls = resolution_rows(
        tmp_path,
        language_facts(files),
        "SELECT line, module, local, rest FROM external_sites ORDER BY line, module",
        "SELECT e.line, d.qn FROM call_edges e JOIN symbols d ON d.key = e.dst_key ORDER BY e.line",
    )
    return sites, [f"{line} {qn}" for line, qn in calls]


CS = """using System;
using Newtonsoft.Json;
using Serilog;
namespace App {
  public class Program {
    public static void Main() {
      var s = JsonConvert.SerializeObject(1);
      var l = new LoggerConfiguration();
      Helper.Go();
      Console.WriteLine(s);
      Guid.NewGuid();
    }
  }
  class Helper { public static void Go() {} }
}
"""


def test_csharp_calls_name_every_namespace_the_file_imports_from_outside(tmp_path: Path) -> None:
    sites, edges = resolved(tmp_path, {"src/App/Program.cs": ("csharp", CS)})
    assert sites == [
        (7, "Newtonsoft.Json", "JsonConvert", "SerializeObject"),
        (7, "Serilog", "JsonConvert", "SerializeObject"),
        (8, "Newtonsoft.Json", "LoggerConfiguration", ""),  # a constructor
        (8, "Serilog", "LoggerConfiguration", ""),
    ]  # System is the platform's; Console and Guid its classes
    assert edges == ["9 App.Helper.Go"]


def test_a_name_the_repository_defines_is_never_open(tmp_path: Path) -> None:
    """``JsonConvert`` defined in the repository: its call is the repository's (here its
    member is missing: unresolved, no site); a call whose member another class of the
    repository defines is not taken by the ``unique`` tier when its receiver is open."""
    own = "namespace App { class JsonConvert { } class Other { void SerializeObject() {} } }\n"
    sites, edges = resolved(
        tmp_path, {"src/App/Program.cs": ("csharp", CS), "src/App/Own.cs": ("csharp", own)}
    )
    assert [s for s in sites if s[2] == "JsonConvert"] == []
    lone = CS.replace("JsonConvert", "Serializer")
    sites, edges = resolved(
        tmp_path / "2", {"src/App/Program.cs": ("csharp", lone), "src/App/Own.cs": ("csharp", own)}
    )
    assert (7, "Serilog", "Serializer", "SerializeObject") in sites
    assert not any("SerializeObject" in e for e in edges)  # not Other.SerializeObject


RB = """require "rack"
require "tilt"
module MyApp
  class Server
    def call(env)
      Rack::Utils.escape_html("x")
      Tilt.new("a")
      Mustermann.new("/")
      Hash.new
      URI_INSTANCE.unescape("x")
      JSON.parse("{}")
    end
  end
end
"""


def test_ruby_constants_take_the_gem_named_after_them(tmp_path: Path) -> None:
    sites, _ = resolved(
        tmp_path,
        {
            "lib/app.rb": ("ruby", RB),
            "lib/plain.rb": (
                "ruby",
                "class P\n  def f\n    Rack::Utils.escape_html(1)\n  end\nend\n",
            ),
        },
    )
    assert sites == [
        (6, "rack", "Rack", "Utils.escape_html"),
        (7, "tilt", "Tilt", "new"),
        (8, "rack", "Mustermann", "new"),  # no gem of its name required here: every one
        (8, "tilt", "Mustermann", "new"),
    ]  # Hash is Ruby's, URI_INSTANCE a value; plain.rb requires nothing: no site


def test_ruby_gems_of_the_gemspec_and_a_reopened_namespace(tmp_path: Path) -> None:
    """A file that requires nothing reaches the gem its gemspec depends on (``require`` is
    global); a gem that reopens ``module Rack`` keeps its own members, and a member it does
    not define anywhere (``Rack.release``) is the gem's."""
    spec = 'Gem::Specification.new do |s|\n  s.name = "rack-x"\n  s.add_dependency "rack"\nend\n'
    files = {
        "rack-x.gemspec": ("ruby", spec),
        "lib/rack/x.rb": ("ruby", 'require "rack"\n'),
        "lib/rack/x/jar.rb": (
            "ruby",
            "module Rack\n  module X\n    def self.v\n      Rack.release\n"
            "      Rack::Utils.escape(1)\n      Rack.own\n    end\n"
            "    def self.own; end\n  end\nend\n",
        ),
    }
    facts = language_facts(files)
    facts[0].chunks = [Chunk(1, 4, spec, "h")]  # a packaging file is read from its chunks
    with resolve(lambda: iter(facts), "r", tmp_path / "res") as res:
        db = sqlite3.connect(res.path)
        sites = db.execute("SELECT line, module, local, rest FROM external_sites").fetchall()
        db.close()
    assert sorted(sites) == [(4, "rack", "Rack", "release"), (5, "rack", "Rack", "Utils.escape")]


def test_swift_imports_other_than_the_platform_are_candidates(tmp_path: Path) -> None:
    swift = (
        "import Foundation\nimport Vapor\nfunc run() {\n  let app = Application()\n  URL(x)\n}\n"
    )
    sites, _ = resolved(tmp_path, {"Sources/App/main.swift": ("swift", swift)})
    assert sites == [(4, "Vapor", "Application", "")]


def test_candidates_are_capped(tmp_path: Path) -> None:
    usings = "".join(f"using Lib{i};\n" for i in range(MAX_CANDIDATES + 3))
    text = usings + "namespace A { class B { void M() { Thing.Go(); } } }\n"
    sites, _ = resolved(tmp_path, {"a/B.cs": ("csharp", text)})
    assert [s[1] for s in sites] == [f"Lib{i}" for i in range(MAX_CANDIDATES)]


def test_open_call_parts() -> None:
    assert parts("escape", "Rack::Utils") == ("Rack", "Utils.escape")
    assert parts("LoggerConfiguration", None) == ("LoggerConfiguration", "")
    assert parts("go", "helper") is None  # a local
    assert parts("go", "Thing.items[0]") is None  # an expression
    assert parts("run", None) is None


def test_ruby_lookup_names() -> None:
    assert constant_path("Rack", "Utils.escape_html") == (["Rack", "Utils", "escape_html"], False)
    assert constant_path("Rack", "Builder.new") == (["Rack", "Builder"], True)
    assert constant_path("Tilt", "") == (["Tilt"], False)
    assert names_of(["Rack", "File"]) == ["File", "Rack::File"]
    assert nesting("lib/rack/utils.rb", "lib.rack.utils.Rack.Utils.escape_html") == (
        "Rack.Utils.escape_html"
    )
    assert nesting("lib/rack/file.rb", "lib.rack.file.Rack::File") == "Rack.File"
    assert nesting("lib/rack/file.rb", "lib.other.Rack") is None


def test_generated_gemspec_names_and_dependencies() -> None:
    text = (
        'Gem::Specification.new do |s|\n  s.name = "sinatra".freeze\n'
        '  s.add_runtime_dependency(%q<rack>.freeze, ["~> 2.2", ">= 2.2.4"])\n'
        '  s.add_dependency(%q<rack>.freeze, ["~> 2.2", ">= 2.2.4"])\n'
        "  s.add_dependency %q{tilt}, '~> 2.0'\nend\n"
    )
    out = jvm.gemspec("sinatra.gemspec", text, ())
    assert [p.name for p in out.provides] == ["sinatra"]
    assert [(d.name, d.spec) for d in out.depends] == [
        ("rack", "~> 2.2, >= 2.2.4"),
        ("tilt", "~> 2.0"),
    ]
    legacy = jvm.gemspec("r.gemspec", "s.name = %q{rack}\n", ())
    assert [p.name for p in legacy.provides] == ["rack"]
    hostile = jvm.gemspec("h.gemspec", "s.name = %q<" + "x" * 5000 + ">\n", ())
    assert hostile.provides == []  # an oversized name is refused (clean_name)
