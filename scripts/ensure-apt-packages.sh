#!/usr/bin/env sh
# Preflight of `make venv`: the Debian packages the lab's tiers use, installed in ONE
# apt-get run (each `apt-get update` costs 5-10 s on a fresh host; three scripts used to run
# one each): bubblewrap (contains the local sandbox), chromium (the web tasks), and, when a
# Docker engine is installed, debootstrap (the offline build of the sandbox image).
# Best effort and quiet: only as root with apt-get; never fails the caller. What is still
# missing afterwards is reported by the per-package scripts (ensure-bwrap.sh,
# ensure-chromium.sh, ensure-sandbox-image.sh), which stay the single source of the advice.
set -u
[ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1 || exit 0
missing=""
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
[ -x "${LOOPLAB_CHROMIUM:-/usr/bin/chromium}" ] || missing="$missing chromium"
if command -v docker >/dev/null 2>&1 && ! command -v debootstrap >/dev/null 2>&1; then
  missing="$missing debootstrap"
fi
[ -n "$missing" ] || exit 0
echo "installing Debian packages:$missing (one apt-get run)..." >&2
# shellcheck disable=SC2086  # the list is split on purpose
apt-get update -qq >/dev/null 2>&1 \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
    >/dev/null 2>&1
exit 0
