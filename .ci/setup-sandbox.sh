# shellcheck shell=bash
# Sourced by .ci/run (as root, fresh Debian): bubblewrap, which contains the local sandbox
# (without it `looplab run` refuses non-scripted cells and the containment probes skip).
# Idempotent; quiet unless something fails.

_ls_quiet() { if declare -F quiet >/dev/null; then quiet "$@"; else "$@" >/dev/null 2>&1; fi; }

if ! command -v bwrap >/dev/null; then
  _ls_quiet apt-get update
  _ls_quiet env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bubblewrap
fi
command -v bwrap >/dev/null || { echo "[ci] bubblewrap did not install" >&2; return 1; }
