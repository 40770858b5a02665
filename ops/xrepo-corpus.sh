#!/usr/bin/env bash
# Idempotent: the public packages the cross-repository tests index (issue 30), fetched from
# the package registries CI reaches into a cache (fast on re-run: nothing is fetched twice).
# PyPI: the sdists of flask and the libraries it imports; the Go module proxy: two modules and
# a module each imports (go-runewidth: its package is runewidth); npm: a chain of packages that import one another (ESM, default and
# named imports); Maven Central: commons-text and the commons-lang3 it imports (sources jar and
# pom; okhttp and okio, Kotlin; cats-core and cats-kernel, Scala); crates.io: serde_json and the itoa and ryu crates it calls;
# Debian's packages: the gems sinatra, rack-protection and rack-test and the rack they call (Ruby sources and gemspecs; no gem
# registry is reachable, Debian ships them whole).
# Prints the cache directory on its last line.
set -euo pipefail
dest="${SEMGRAPH_XREPO_CORPUS:-$HOME/.cache/semgraph/xrepo-corpus}"
pip="${SEMGRAPH_VENV:-$HOME/.cache/semgraph/venv}/bin/pip"
go="${GO:-/usr/local/go/bin/go}"
mkdir -p "$dest/pypi" "$dest/gomod" "$dest/npm" "$dest/maven" "$dest/crates" "$dest/debian"
for spec in flask==3.0.3 click==8.1.7 itsdangerous==2.2.0; do
  name="${spec%%==*}" version="${spec##*==}"
  if [ ! -f "$dest/pypi/$name-$version.tar.gz" ]; then
    echo "xrepo-corpus: downloading $spec (sdist) from PyPI" >&2
    "$pip" download -q --disable-pip-version-check --no-deps --no-binary :all: \
      -d "$dest/pypi" "$spec" >&2
  fi
done
for mod in github.com/hashicorp/errwrap@v1.0.0 github.com/hashicorp/go-multierror@v1.1.1 \
  github.com/olekukonko/tablewriter@v0.0.5 github.com/mattn/go-runewidth@v0.0.9; do
  if [ ! -f "$dest/gomod/$mod/go.mod" ]; then
    echo "xrepo-corpus: downloading $mod from the Go module proxy" >&2
    GOMODCACHE="$dest/gomod" GOFLAGS=-modcacherw "$go" mod download "$mod" >&2
  fi
done
for spec in find-up@6.3.0 locate-path@7.2.0 p-locate@6.0.0 p-limit@4.0.0 yocto-queue@1.0.0; do
  name="${spec%@*}" version="${spec##*@}"
  if [ ! -f "$dest/npm/$name-$version.tgz" ]; then
    echo "xrepo-corpus: downloading $spec from the npm registry" >&2
    (cd "$dest/npm" && npm pack -q --silent "$spec" >/dev/null)
  fi
done
central="${SEMGRAPH_MAVEN_CENTRAL:-https://repo1.maven.org/maven2}"
# group path, artifact, version, file (Kotlin: okhttp and the okio it calls; okio's pom is the
# multiplatform artifact okhttp names, its JVM sources the variant Gradle resolves it to)
for spec in "org/apache/commons commons-lang3 3.12.0 commons-lang3-3.12.0-sources.jar" \
            "org/apache/commons commons-lang3 3.12.0 commons-lang3-3.12.0.pom" \
            "org/apache/commons commons-text 1.10.0 commons-text-1.10.0-sources.jar" \
            "org/apache/commons commons-text 1.10.0 commons-text-1.10.0.pom" \
            "com/squareup/okio okio 3.6.0 okio-3.6.0.pom" \
            "com/squareup/okio okio-jvm 3.6.0 okio-jvm-3.6.0-sources.jar" \
            "com/squareup/okhttp3 okhttp 4.12.0 okhttp-4.12.0.pom" \
            "com/squareup/okhttp3 okhttp 4.12.0 okhttp-4.12.0-sources.jar" \
            "org/typelevel cats-kernel_2.13 2.10.0 cats-kernel_2.13-2.10.0.pom" \
            "org/typelevel cats-kernel_2.13 2.10.0 cats-kernel_2.13-2.10.0-sources.jar" \
            "org/typelevel cats-core_2.13 2.10.0 cats-core_2.13-2.10.0.pom" \
            "org/typelevel cats-core_2.13 2.10.0 cats-core_2.13-2.10.0-sources.jar"; do
  read -r group artifact version file <<<"$spec"
  if [ ! -f "$dest/maven/$file" ]; then
    echo "xrepo-corpus: downloading $file from Maven Central" >&2
    curl -fsSL --retry 3 -o "$dest/maven/$file.part" "$central/$group/$artifact/$version/$file"
    mv "$dest/maven/$file.part" "$dest/maven/$file"
  fi
done
crates="${SEMGRAPH_CRATES_DOWNLOAD:-https://static.crates.io/crates}"
for spec in itoa@1.0.9 ryu@1.0.15 serde_json@1.0.108; do
  name="${spec%@*}" version="${spec##*@}"
  if [ ! -f "$dest/crates/$name-$version.crate" ]; then
    echo "xrepo-corpus: downloading $spec from crates.io" >&2
    curl -fsSL --retry 3 -o "$dest/crates/$name-$version.crate.part" \
      "$crates/$name/$name-$version.crate"
    mv "$dest/crates/$name-$version.crate.part" "$dest/crates/$name-$version.crate"
  fi
done
# the version the tests were written against, else the one Debian serves now (a security
# update replaces a version in the archive); the tests name definitions, not versions
for spec in ruby-rack=2.2.22-0+deb12u2 ruby-sinatra=3.0.5-3+deb12u1 \
            ruby-rack-protection=3.0.5-3+deb12u1 ruby-rack-test=2.0.2-2; do
  name="${spec%%=*}"
  if [ ! -f "$dest/debian/$name.deb" ]; then
    echo "xrepo-corpus: downloading $spec from Debian" >&2
    tmp="$(mktemp -d)"
    chmod 777 "$tmp"
    (cd "$tmp" && { apt-get download -q "$spec" >&2 2>/dev/null || apt-get download -q "$name" >&2 \
      || { apt-get update -qq >&2 && apt-get download -q "$name" >&2; }; })
    mv "$tmp"/"$name"_*.deb "$dest/debian/$name.deb"
    rm -rf "$tmp"
  fi
done
echo "$dest"
