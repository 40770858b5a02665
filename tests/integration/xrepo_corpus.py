"""Public packages that depend on one another (issue 30), fetched from the registries by
``ops/xrepo-corpus.sh`` (idempotent; ``ops/install.sh`` runs it too) and turned into git
repositories: flask 3.0.3 with click 8.1.7 and itsdangerous 2.2.0 (PyPI sdists),
go-multierror 1.1.1 with errwrap 1.0.0 and tablewriter 0.0.5 with go-runewidth 0.0.9 (Go
module proxy), and find-up 6.3.0 -> locate-path
7.2.0 -> p-locate 6.0.0 -> p-limit 4.0.0 -> yocto-queue 1.0.0 (npm tarballs), and
commons-text 1.10.0 with commons-lang3 3.12.0, okhttp 4.12.0 with okio 3.6.0 and cats-core
2.10.0 with cats-kernel 2.10.0, Scala 2.13 (Maven Central: sources jar and pom; okio's JVM
sources in their multiplatform layout), and
serde_json 1.0.108 with itoa 1.0.9 and ryu 1.0.15 (crates.io), and sinatra 3.0.5 with rack
2.2.22 (the gems as Debian packages them: their lib/ trees and gemspecs)."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

from tests.repos import git

ROOT = Path(__file__).resolve().parents[2]
PYPI = {"flask": "flask-3.0.3", "click": "click-8.1.7", "itsdangerous": "itsdangerous-2.2.0"}
GOMOD = {
    "errwrap": "github.com/hashicorp/errwrap@v1.0.0",
    "go-multierror": "github.com/hashicorp/go-multierror@v1.1.1",
    "tablewriter": "github.com/olekukonko/tablewriter@v0.0.5",
    "go-runewidth": "github.com/mattn/go-runewidth@v0.0.9",
}

NPM = {
    "find-up": "find-up-6.3.0",
    "locate-path": "locate-path-7.2.0",
    "p-locate": "p-locate-6.0.0",
    "p-limit": "p-limit-4.0.0",
    "yocto-queue": "yocto-queue-1.0.0",
}

MAVEN = {  # name -> (pom, sources jar)
    "commons-lang3": ("commons-lang3-3.12.0.pom", "commons-lang3-3.12.0-sources.jar"),
    "commons-text": ("commons-text-1.10.0.pom", "commons-text-1.10.0-sources.jar"),
    "okio": ("okio-3.6.0.pom", "okio-jvm-3.6.0-sources.jar"),
    "okhttp": ("okhttp-4.12.0.pom", "okhttp-4.12.0-sources.jar"),
    "cats-kernel": ("cats-kernel_2.13-2.10.0.pom", "cats-kernel_2.13-2.10.0-sources.jar"),
    "cats-core": ("cats-core_2.13-2.10.0.pom", "cats-core_2.13-2.10.0-sources.jar"),
}
CRATES = {"itoa": "itoa-1.0.9", "ryu": "ryu-1.0.15", "serde_json": "serde_json-1.0.108"}
DEBIAN = {  # gems as Debian ships them
    "rack": "ruby-rack",
    "sinatra": "ruby-sinatra",
    "rack-protection": "ruby-rack-protection",
    "rack-test": "ruby-rack-test",
}


def corpus() -> Path:
    """The cache directory, every package in it (fetched when missing)."""
    done = subprocess.run(
        ["bash", str(ROOT / "ops" / "xrepo-corpus.sh")],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return Path(done.stdout.strip().splitlines()[-1])


def _git_init(root: Path) -> str:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "import")
    return git(root, "rev-parse", "HEAD")


def checkout(cache: Path, name: str, dest: Path) -> tuple[Path, str]:
    """``name`` (a key of :data:`PYPI`, :data:`GOMOD`, :data:`NPM`, :data:`MAVEN`,
    :data:`CRATES` or :data:`DEBIAN`) as a fresh git repository under ``dest``; returns (work
    tree, commit)."""
    root = dest / name
    if name in DEBIAN:  # the gem's tree (lib/...) with its gemspec at the root
        (dest / "unpack" / name).mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "dpkg-deb",
                "-x",
                str(cache / "debian" / f"{DEBIAN[name]}.deb"),
                str(dest / "unpack" / name),
            ],
            check=True,
            timeout=120,
        )
        share = dest / "unpack" / name / "usr" / "share" / "rubygems-integration" / "all"
        (gem,) = (share / "gems").iterdir()
        shutil.move(str(gem), root)
        (spec,) = (share / "specifications").iterdir()
        shutil.copy(spec, root / f"{name}.gemspec")
    elif name in CRATES:
        with tarfile.open(cache / "crates" / f"{CRATES[name]}.crate") as tar:
            tar.extractall(dest / "unpack", filter="data")
        shutil.move(str(dest / "unpack" / CRATES[name]), root)
    elif name in MAVEN:  # the sources under src/main/java, the pom at the root
        pom, sources = MAVEN[name]
        with zipfile.ZipFile(cache / "maven" / sources) as jar:
            for entry in jar.namelist():
                if not entry.endswith((".java", ".kt", ".scala")):
                    continue
                first, _, rest = entry.partition("/")  # multiplatform: commonMain/okio/...
                if first.endswith("Main"):
                    dest_path = root / "src" / first / "kotlin" / rest
                elif first == "src":  # a jar that keeps its source tree (cats: src/main/scala)
                    dest_path = root / entry
                else:
                    dest_path = root / "src" / "main" / "java" / entry
                dest_path.parent.mkdir(parents=True, exist_ok=True)
                dest_path.write_bytes(jar.read(entry))
        shutil.copy(cache / "maven" / pom, root / "pom.xml")
    elif name in NPM:
        with tarfile.open(cache / "npm" / f"{NPM[name]}.tgz") as tar:
            tar.extractall(dest / "unpack" / name, filter="data")
        shutil.move(str(dest / "unpack" / name / "package"), root)
    elif name in PYPI:
        with tarfile.open(cache / "pypi" / f"{PYPI[name]}.tar.gz") as tar:
            tar.extractall(dest / "unpack", filter="data")
        shutil.move(str(dest / "unpack" / PYPI[name]), root)
    else:
        shutil.copytree(cache / "gomod" / GOMOD[name], root)
    return root, _git_init(root)
