# shellcheck shell=bash
# Sourced by .ci/run: the ray test tier. Ray comes with the venv (`make venv` installs the
# `all` extra, which includes `ray`); require it, so a CI machine without it fails instead
# of skipping tests/experiments/test_ray.py. Idempotent; quiet unless something fails.

_lr_quiet() { if declare -F quiet >/dev/null; then quiet "$@"; else "$@" >/dev/null 2>&1; fi; }

_lr_quiet make venv
.venv/bin/python -c 'import ray' 2>/dev/null || _lr_quiet .venv/bin/pip install -q 'ray[client]>=2.40,<3'

export LOOPLAB_REQUIRE_RAY=1
