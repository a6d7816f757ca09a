# shellcheck shell=bash
# Sourced by .ci/run: the serving-benchmark tier (issue 26). The real AIPerf, in its own
# venv outside the project (it is a tool looplab exports to, not a dependency), so
# tests/traces/test_mooncake_aiperf.py runs it against the simulator instead of skipping.
# About 60 s and 1.2 GB on a fresh machine; idempotent; quiet unless something fails.

_la_quiet() { if declare -F quiet >/dev/null; then quiet "$@"; else "$@" >/dev/null 2>&1; fi; }

_la_venv=/opt/looplab-aiperf
if ! "$_la_venv/bin/python" -c 'import aiperf' 2>/dev/null; then
  _la_quiet python3 -m venv "$_la_venv"
  _la_quiet "$_la_venv/bin/pip" install -q --disable-pip-version-check 'aiperf>=0.13,<0.14'
fi

export LOOPLAB_AIPERF_PYTHON="$_la_venv/bin/python"
