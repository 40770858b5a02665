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

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
echo "$venv/bin"
