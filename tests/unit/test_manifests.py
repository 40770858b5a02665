"""Package identity from manifests (issue 30): every format, and malformed, hostile and
oversized manifests, which are recorded as errors and never raise."""

from __future__ import annotations

import json

import pytest

from semgraph.manifests import identity, is_manifest
from semgraph.manifests.base import MAX_MANIFEST_BYTES, Dependency, Provided


def one(
    files: dict[str, str], dirs: tuple[str, ...] = ()
) -> tuple[list[tuple[str, str, tuple[str, ...]]], list[tuple[str, str, str]], list[str]]:
    ident = identity({k: v.encode() for k, v in files.items()}, dirs)
    return (
        [(p.ecosystem, p.name, p.modules) for p in ident.provides],
        [(d.ecosystem, d.name, d.spec) for d in ident.depends],
        ident.errors,
    )


def test_pyproject_pep621_with_src_layout() -> None:
    text = """
[project]
name = "Flask"
dependencies = ["Werkzeug>=3.0.0", "Jinja2>=3.1.2", "click>=8.1.3; python_version>'3'",
                "itsdangerous[extra]>=2.1.2", "blinker>=1.6.2"]
"""
    provides, depends, errors = one(
        {"pyproject.toml": text}, ("src/flask", "tests", "src/flask/json")
    )
    assert provides == [("pypi", "flask", ("flask",))]
    assert depends == [
        ("pypi", "blinker", ">=1.6.2"),
        ("pypi", "click", ">=8.1.3"),
        ("pypi", "itsdangerous", ">=2.1.2"),
        ("pypi", "jinja2", ">=3.1.2"),
        ("pypi", "werkzeug", ">=3.0.0"),
    ]
    assert errors == []


def test_pyproject_poetry_and_setuptools_packages() -> None:
    poetry = """
[tool.poetry]
name = "my_lib"
packages = [{include = "mylib"}]
[tool.poetry.dependencies]
python = "^3.11"
Requests = {version = "^2.31"}
attrs = "*"
"""
    provides, depends, _ = one({"pyproject.toml": poetry})
    assert provides == [("pypi", "my-lib", ("mylib",))]
    assert depends == [("pypi", "attrs", "*"), ("pypi", "requests", "^2.31")]
    st = '[project]\nname = "x.y"\n[tool.setuptools]\npackages = ["xy", "xy.sub"]\n'
    assert one({"pyproject.toml": st})[0] == [("pypi", "x-y", ("xy",))]


def test_setup_cfg_and_setup_py_read_statically() -> None:
    cfg = (
        "[metadata]\nname = itsdangerous\n[options]\npackages = find:\n"
        "install_requires =\n    six>=1\n"
    )
    provides, depends, _ = one({"setup.cfg": cfg}, ("src/itsdangerous",))
    assert provides == [("pypi", "itsdangerous", ("itsdangerous",))]
    assert depends == [("pypi", "six", ">=1")]
    py = (
        "import os\nos.system('touch /tmp/pwned')\n"
        "from setuptools import setup\n"
        "setup(name='Click', packages=['click'], install_requires=['colorama; os_name==\"nt\"'])\n"
    )
    provides, depends, _ = one({"setup.py": py})
    assert provides == [("pypi", "click", ("click",))]
    assert depends == [("pypi", "colorama", "")]


def test_go_mod() -> None:
    text = """module github.com/acme/svc // the service

go 1.22

require github.com/acme/lib v1.2.3
require (
\tgolang.org/x/text v0.14.0 // indirect
\t"github.com/q/quoted" v0.1.0
)
"""
    provides, depends, _ = one({"go.mod": text})
    assert provides == [("go", "github.com/acme/svc", ("github.com/acme/svc",))]
    assert depends == [
        ("go", "github.com/acme/lib", "v1.2.3"),
        ("go", "github.com/q/quoted", "v0.1.0"),
        ("go", "golang.org/x/text", "v0.14.0"),
    ]


def test_package_json_with_exports() -> None:
    doc = {
        "name": "@acme/ui",
        "exports": {".": "./index.js", "./button": "./button.js", "default": "x"},
        "dependencies": {"react": "^18"},
        "devDependencies": {"typescript": "5"},
    }
    ident = identity({"package.json": json.dumps(doc).encode()})
    assert ident.provides == [
        Provided(
            "npm",
            "@acme/ui",
            "package.json",
            ("@acme/ui",),
            (".\t./index.js", "./button\t./button.js"),
        )
    ]
    assert [d.name for d in ident.depends] == ["react", "typescript"]


@pytest.mark.parametrize(
    ("doc", "entries"),
    [
        ({}, (".\t./index.js",)),  # Node's default
        ({"main": "lib/main.js"}, (".\t./lib/main.js",)),
        ({"main": "./lib", "module": "./esm/index.mjs"}, (".\t./esm/index.mjs",)),
        ({"exports": "./index.js"}, (".\t./index.js",)),
        ({"exports": {"types": "./d.d.ts", "default": "./index.js"}}, (".\t./index.js",)),
        (  # conditions nested, the source-nearest first; a subpath with no file
            {
                "exports": {
                    ".": {
                        "require": "./c.cjs",
                        "import": {"types": "./t.d.ts", "default": "./m.mjs"},
                    },
                    "./pkg": None,
                    "./x": ["./x.js", "./y.js"],
                }
            },
            (".\t./m.mjs", "./pkg\t", "./x\t./x.js"),
        ),
        ({"exports": {".": "../../etc/passwd"}, "main": 7}, (".\t",)),  # hostile: not ./
        (
            {
                "exports": {
                    ".": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {"i": "./z"}}}}}}}}}
                }
            },
            (".\t",),
        ),  # too deep
    ],
)
def test_package_json_entry_points(doc: dict[str, object], entries: tuple[str, ...]) -> None:
    ident = identity({"package.json": json.dumps({"name": "p", **doc}).encode()})
    assert ident.provides[0].exports == entries


def test_cargo_composer() -> None:
    cargo = (
        '[package]\nname = "serde_json"\n[dependencies]\nserde = { version = "1.0" }\nitoa = "1"\n'
    )
    provides, depends, _ = one({"Cargo.toml": cargo})
    assert provides == [("cargo", "serde-json", ("serde_json",))]
    assert depends == [("cargo", "itoa", "1"), ("cargo", "serde", "1.0")]
    comp = {
        "name": "Monolog/Monolog",
        "autoload": {"psr-4": {"Monolog\\": "src/Monolog"}},
        "require": {"php": ">=8.1", "psr/log": "^3"},
    }
    provides, depends, _ = one({"composer.json": json.dumps(comp)})
    assert provides == [("composer", "monolog/monolog", ("Monolog",))]
    assert depends == [("composer", "psr/log", "^3")]


def test_pom_gradle_csproj_gemspec() -> None:
    pom = """<project xmlns="http://maven.apache.org/POM/4.0.0">
<parent><groupId>org.acme</groupId></parent><artifactId>core</artifactId>
<dependencies><dependency><groupId>com.google.guava</groupId><artifactId>guava</artifactId>
<version>33.0</version></dependency></dependencies></project>"""
    provides, depends, _ = one({"pom.xml": pom})
    assert provides == [("maven", "org.acme:core", ("org.acme",))]
    assert depends == [("maven", "com.google.guava:guava", "33.0")]
    gradle = (
        "group = 'org.acme'\nrootProject.name = 'api'\ndependencies {\n"
        " implementation 'org.slf4j:slf4j-api:2.0.9'\n api(\"org.x:y\")\n}\n"
    )
    provides, depends, _ = one({"build.gradle": gradle})
    assert provides == [("maven", "org.acme:api", ("org.acme",))]
    assert depends == [("maven", "org.slf4j:slf4j-api", "2.0.9"), ("maven", "org.x:y", "")]
    cs = (
        '<Project Sdk="Microsoft.NET.Sdk"><PropertyGroup><RootNamespace>Acme.Core'
        "</RootNamespace></PropertyGroup><ItemGroup>"
        '<PackageReference Include="Newtonsoft.Json" Version="13.0.1" /></ItemGroup></Project>'
    )
    provides, depends, _ = one({"Acme.Core.csproj": cs})
    assert provides == [("nuget", "acme.core", ("Acme.Core",))]
    assert depends == [("nuget", "newtonsoft.json", "13.0.1")]
    gem = (
        "Gem::Specification.new do |s|\n  s.name = 'rack'\n"
        "  s.add_dependency 'ruby2_keywords', '>= 0.0.4'\n"
        "  s.add_development_dependency('minitest', '~> 5.0', '< 6')\nend\n"
    )
    provides, depends, _ = one({"rack.gemspec": gem})
    assert provides == [("gem", "rack", ("rack",))]
    assert depends == [("gem", "minitest", "~> 5.0, < 6"), ("gem", "ruby2_keywords", ">= 0.0.4")]


def test_only_root_manifests_and_self_dependency_dropped() -> None:
    assert is_manifest("go.mod") and is_manifest("X.csproj")
    assert not is_manifest("vendor/go.mod") and not is_manifest("README.md")
    text = '[project]\nname = "a"\ndependencies = ["a>=1", "b"]\n'
    provides, depends, _ = one(
        {"pyproject.toml": text, "sub/pyproject.toml": '[project]\nname="z"'}
    )
    assert provides == [("pypi", "a", ("a",))]
    assert depends == [("pypi", "b", "")]


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("pyproject.toml", "[project\nname = "),
        ("setup.cfg", "[metadata\nname"),
        ("setup.py", "setup(name='x'"),
        ("package.json", '{"name": '),
        ("package.json", "[1, 2]"),
        ("Cargo.toml", "[package]\nname = \n"),
        ("composer.json", "nope"),
        ("pom.xml", "<project><artifactId>x</project>"),
        ("A.csproj", "<Project"),
    ],
)
def test_malformed_manifests_are_errors(path: str, text: str) -> None:
    provides, depends, errors = one({path: text})
    assert provides == [] and depends == []
    assert len(errors) == 1 and errors[0].startswith(f"{path}: ")


def test_hostile_manifests() -> None:
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        + "".join(
            f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10 if i else "&lol;" * 10}">'
            for i in range(1, 10)
        )
        + "]><project><groupId>&lol9;</groupId><artifactId>a</artifactId></project>"
    )
    _, _, errors = one({"pom.xml": laughs})
    assert errors and "document type declaration" in errors[0]
    deep_py = "setup(name=" + "[" * 100_000 + "]" * 100_000 + ")"
    assert "nested deeper" in one({"setup.py": deep_py})[2][0]
    deep_json = "[" * 100_000 + "]" * 100_000
    assert one({"package.json": deep_json})[2]  # RecursionError caught
    deep_toml = "a = " + "[" * 100_000 + "]" * 100_000
    assert one({"Cargo.toml": deep_toml})[2]
    # names that are no names: shell text, control characters, huge strings
    bad = {
        "name": "$(rm -rf /)\n",
        "dependencies": {"ok": "1", "x" * 10_000: "1", "": "2", "a\x00b": "1"},
    }
    provides, depends, _ = one({"package.json": json.dumps(bad)})
    assert provides == [] and depends == [("npm", "ok", "1")]
    # not UTF-8
    ident = identity({"go.mod": b"module \xff\xfe\n"})
    assert ident.provides == [] and "not UTF-8" in ident.errors[0]


def test_oversized_manifest_and_many_entries() -> None:
    big = b"module a\n" + b"// pad\n" * (MAX_MANIFEST_BYTES // 7 + 1)
    ident = identity({"go.mod": big})
    assert ident.provides == [] and "over" in ident.errors[0]
    many = {"name": "a", "dependencies": {f"d{i}": "1" for i in range(10_000)}}
    ident = identity({"package.json": json.dumps(many).encode()})
    assert len(ident.depends) == 2_000
    assert all(isinstance(d, Dependency) for d in ident.depends)


def test_one_bad_manifest_does_not_hide_the_others() -> None:
    provides, _, errors = one({"go.mod": "module example.com/m\n", "package.json": "{"})
    assert provides == [("go", "example.com/m", ("example.com/m",))]
    assert len(errors) == 1 and errors[0].startswith("package.json")
