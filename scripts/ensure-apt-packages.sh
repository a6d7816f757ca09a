#!/usr/bin/env sh
# The one installer of Debian packages for the lab's tiers, in ONE apt-get run (each
# `apt-get update` costs 5-10 s on a fresh host).
#   scripts/ensure-apt-packages.sh            what is missing of: bubblewrap (contains the
#                                             local sandbox), chromium (the web tasks) and,
#                                             when Docker is installed, debootstrap (the
#                                             offline build of the sandbox image)
#   scripts/ensure-apt-packages.sh PKG...     those packages (ensure-bwrap.sh and the others)
# Best effort and quiet: only as root with apt-get; never fails the caller. What is still
# missing afterwards is reported by the per-package scripts (ensure-bwrap.sh,
# ensure-chromium.sh, ensure-sandbox-image.sh), which stay the single source of the advice.
set -u
[ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1 || exit 0
missing="$*"
if [ "$#" = 0 ]; then
  command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
  [ -x "${LOOPLAB_CHROMIUM:-/usr/bin/chromium}" ] || missing="$missing chromium"
  if command -v docker >/dev/null 2>&1 && ! command -v debootstrap >/dev/null 2>&1; then
    missing="$missing debootstrap"
  fi
fi
missing="${missing# }"
[ -n "$missing" ] || exit 0
echo "installing Debian packages: $missing (one apt-get run)..." >&2
# shellcheck disable=SC2086  # the list is split on purpose
apt-get update -qq >/dev/null 2>&1 \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
    >/dev/null 2>&1
exit 0
