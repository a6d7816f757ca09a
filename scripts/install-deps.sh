#!/usr/bin/env sh
# Install the project, editable, with the given extras into a virtual environment:
#   scripts/install-deps.sh VENV_PYTHON EXTRAS        (e.g. .venv/bin/python all,dev)
# By uv when it can be had (pip-installed into the venv first when absent): on this 2-core
# machine a fresh venv's install takes ~4 s with uv against ~28 s with pip, and `make`
# builds a venv before every first `make test` or `make demo`. pip is the fallback when uv
# cannot be installed or fails, and the only installer with LOOPLAB_INSTALLER=pip. The same
# version ranges (pyproject.toml) either way; no lock file is written.
set -u
PY="$1"
EXTRAS="$2"
case "$PY" in
  /*) ;;
  *) PY="$(pwd)/$PY" ;; # absolute: the import check below runs from /
esac
SPEC=".[$EXTRAS]"

with_pip() {
  "$PY" -m pip install -q --upgrade pip >/dev/null || return 1
  "$PY" -m pip install -q -e "$SPEC"
}

if [ "${LOOPLAB_INSTALLER:-uv}" = "pip" ]; then
  with_pip
  exit $?
fi
UV="$(dirname "$PY")/uv"
if [ -x "$UV" ] || "$PY" -m pip install -q 'uv>=0.5,<1' >/dev/null 2>&1; then
  # uv reads the dependencies from pyproject.toml without building, so it misses the one
  # hatchling's editable wheel adds (`editables`, its import hook): named here. The install
  # counts only if `looplab` then imports from outside the checkout.
  if "$UV" pip install -q --python "$PY" -e "$SPEC" 'editables~=0.3' \
    && (cd / && "$PY" -c 'import looplab') >/dev/null 2>&1; then
    exit 0
  fi
  echo "uv could not install $SPEC; trying pip (LOOPLAB_INSTALLER=pip skips uv)" >&2
fi
with_pip
