#!/usr/bin/env bash
# Idempotent setup: a virtual environment with the pinned dependencies (installed once per
# machine: the torch wheel is large), this checkout installed editable into it, and the
# Bolt server's Maven project built. Prints the venv's bin directory on its last line.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${SEMGRAPH_VENV:-$HOME/.cache/semgraph/venv}"
py="${PYTHON:-python3}"

stamp_of() { cat "$root/constraints.txt" "$root/pyproject.toml" | sha256sum | cut -d' ' -f1; }

if [ ! -x "$venv/bin/python" ]; then
  echo "install: creating virtual environment $venv" >&2
  mkdir -p "$(dirname "$venv")"
  "$py" -m venv "$venv"
fi
stamp="$(stamp_of)"
if [ "$(cat "$venv/.semgraph-stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "install: installing pinned dependencies (first run on this machine takes minutes)" >&2
  # uv (from PyPI) downloads and installs the pinned wheels in parallel, pip one at a time;
  # SEMGRAPH_INSTALLER=pip, or any uv failure, installs with pip. --system-certs: uv trusts
  # the system's certificate store, as pip does (a proxy's own CA is often only there)
  if [ "${SEMGRAPH_INSTALLER:-uv}" = uv ] \
    && "$venv/bin/pip" install -q --disable-pip-version-check "uv==0.13.9" >&2 \
    && "$venv/bin/uv" pip install -q --system-certs --python "$venv/bin/python" \
      -c "$root/constraints.txt" -e "$root[dev]" >&2; then
    :
  else
    [ "${SEMGRAPH_INSTALLER:-uv}" = uv ] && echo "install: uv failed; installing with pip" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check -c "$root/constraints.txt" \
      -e "$root[dev]" >&2
  fi
  echo "$stamp" > "$venv/.semgraph-stamp"
else
  # dependencies unchanged: only point the editable install at this checkout
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation -e "$root" >&2
fi

# What only the tests need (the cross-repository corpus, the browser tests' chromium and
# axe-core) is skipped with SEMGRAPH_INSTALL_TEST_DEPS=0: ./dev quickstart sets it, so a
# newcomer's first command does not wait for test corpora; ./dev test and lint install them.
test_deps="${SEMGRAPH_INSTALL_TEST_DEPS:-1}"
# the public packages the cross-repository tests index (issue 30); offline, the tests that
# need them fetch them again (and fail, loudly, where no registry answers)
if [ "$test_deps" = 1 ]; then
  SEMGRAPH_VENV="$venv" bash "$root/ops/xrepo-corpus.sh" >/dev/null \
    || echo "install: could not fetch the cross-repository test corpus" >&2
fi
# The console's browser tests (issue 29): Debian's chromium, driven by Playwright for Python
# (a dev dependency above; its own browser download is never used:
# PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1), and axe-core from npm at a pinned version in a cache
# folder the tests inject from (SEMGRAPH_AXE_JS). SEMGRAPH_SKIP_BROWSER=1 skips both.
AXE_VERSION=4.14.1
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
if [ "$test_deps" = 1 ] && [ "${SEMGRAPH_SKIP_BROWSER:-0}" != 1 ]; then
  if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    echo "install: installing chromium (apt)" >&2
    sudo_=""; [ "$(id -u)" = 0 ] || sudo_="sudo"
    $sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >&2 \
      || { $sudo_ apt-get update -q >&2 \
        && $sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >&2; } \
      || echo "install: chromium could not be installed; the browser tests will fail" >&2
  fi
  axe_dir="${SEMGRAPH_AXE_DIR:-$HOME/.cache/semgraph/axe-core-$AXE_VERSION}"
  if [ ! -f "$axe_dir/node_modules/axe-core/axe.min.js" ] && command -v npm >/dev/null 2>&1; then
    echo "install: fetching axe-core $AXE_VERSION (npm) into $axe_dir" >&2
    mkdir -p "$axe_dir"
    npm install -q --prefix "$axe_dir" --no-save --no-audit --no-fund --ignore-scripts \
      "axe-core@$AXE_VERSION" >&2 || echo "install: axe-core could not be fetched" >&2
  fi
fi

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
echo "$venv/bin"
