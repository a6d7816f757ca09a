#!/usr/bin/env sh
# Make sure a Chromium is available for the web tasks (Debian's package; Playwright cannot
# download its own browser on machines without internet). Best effort: installs only when
# running as root with apt-get; exits 1 (without failing the caller) when none is usable.
set -u
CHROMIUM="${LOOPLAB_CHROMIUM:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium from Debian's packages (for the web tasks)..." >&2
  if apt-get update -qq >/dev/null 2>&1 \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; then
    exit 0
  fi
fi
echo "no Chromium at $CHROMIUM (apt-get install -y chromium, or set LOOPLAB_CHROMIUM)" >&2
exit 1
