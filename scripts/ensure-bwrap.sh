#!/usr/bin/env sh
# Preflight of `make demo` / `make venv`: bubblewrap contains the local sandbox (no network,
# no host files, no Docker socket; docs/reliability.md). Installs Debian's package when
# run as root with apt-get; otherwise prints the exact command and exits 0: the bundled
# tasks' scripted agents still run (with a warning line), while `looplab run` refuses a real
# model or a wrapped agent in an uncontained local sandbox unless sandbox.isolation: none.
set -u
command -v bwrap >/dev/null 2>&1 && exit 0
"$(dirname "$0")/ensure-apt-packages.sh" bubblewrap
command -v bwrap >/dev/null 2>&1 && exit 0
echo "WARNING: no bubblewrap: local sandboxes will NOT be contained. Install it with:" >&2
echo "  sudo apt-get install -y bubblewrap" >&2
exit 0
