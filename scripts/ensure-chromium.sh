#!/usr/bin/env sh
# Make sure a Chromium is available for the web tasks (Debian's package; Playwright cannot
# download its own browser on machines without internet). Best effort: installs only when
# running as root with apt-get; exits 1 (without failing the caller) when none is usable.
set -u
CHROMIUM="${LOOPLAB_CHROMIUM:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] && exit 0
"$(dirname "$0")/ensure-apt-packages.sh" chromium
[ -x "$CHROMIUM" ] && exit 0
echo "no Chromium at $CHROMIUM (apt-get install -y chromium, or set LOOPLAB_CHROMIUM)" >&2
exit 1
