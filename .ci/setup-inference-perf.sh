# shellcheck shell=bash
# Sourced by .ci/run: the serving-benchmark tier. The real kubernetes-sigs inference-perf,
# in its own venv outside the project (a tool looplab exports to, not a dependency), so
# tests/traces/test_inference_perf_replay.py runs it against the simulator instead of
# skipping. inference-perf needs Python >= 3.12 (the project runs on 3.11): the first of
# python3.13, python3.12 on PATH or a pyenv 3.12/3.13 builds its venv; without one the
# tier is skipped. About 40 s and 0.8 GB (no torch) on a fresh machine; idempotent.

_lip_quiet() { if declare -F quiet >/dev/null; then quiet "$@"; else "$@" >/dev/null 2>&1; fi; }

_lip_venv=/opt/looplab-inference-perf
_lip_base=""
for _lip_candidate in python3.13 python3.12 \
  "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python \
  "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python; do
  if command -v "$_lip_candidate" >/dev/null 2>&1 \
    && "$_lip_candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    _lip_base=$_lip_candidate
    break
  fi
done

_lip_install() {
  "$_lip_venv/bin/python" -c 'import inference_perf' 2>/dev/null && return 0
  _lip_quiet "$_lip_base" -m venv "$_lip_venv" \
    && _lip_quiet "$_lip_venv/bin/pip" install -q --disable-pip-version-check \
      'inference-perf>=0.7,<0.8'
}

if [ -z "$_lip_base" ]; then
  printf '[ci] setup-inference-perf: no Python >= 3.12, inference-perf tier skipped\n'
elif _lip_install; then  # a failed install skips the tier (named), never fails the run
  export LOOPLAB_INFERENCE_PERF_PYTHON="$_lip_venv/bin/python"
else
  printf '[ci] setup-inference-perf: installing inference-perf failed, tier skipped\n'
fi
