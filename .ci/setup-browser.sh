# shellcheck shell=bash
# Sourced by .ci/run (as root, fresh Debian): what the browser tier needs on the host.
# - chromium + the playwright package: the browser tier (launched with
#   executable_path=/usr/bin/chromium; `playwright install` cannot download here).
# Idempotent; quiet unless something fails. Uses .ci/run's quiet helper when present.

_lb_quiet() { if declare -F quiet >/dev/null; then quiet "$@"; else "$@" >/dev/null 2>&1; fi; }

_lb_missing=()
command -v chromium >/dev/null || [ -x /usr/bin/chromium ] || _lb_missing+=(chromium)
if [ "${#_lb_missing[@]}" -gt 0 ]; then
  _lb_quiet apt-get update
  _lb_quiet env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${_lb_missing[@]}"
fi

_lb_quiet make venv
.venv/bin/python -c 'import playwright' 2>/dev/null || _lb_quiet .venv/bin/pip install -q 'playwright>=1.65,<2'

export LOOPLAB_REQUIRE_BROWSER=1
unset _lb_missing
