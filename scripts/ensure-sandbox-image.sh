#!/usr/bin/env sh
# Preflight of `make venv`: the docker tier's sandbox image (looplab/sandbox:1), when a
# Docker engine answers. As root with apt-get, installs debootstrap first (the offline build
# needs it when no base image can be pulled). Best effort and quiet: never fails the caller;
# without the image the docker test tier is skipped with that reason.
# Usage: scripts/ensure-sandbox-image.sh PYTHON (the project's venv Python)
set -u
PY="${1:-python3}"
"$PY" -c 'import docker' >/dev/null 2>&1 || exit 0
command -v docker >/dev/null 2>&1 && ! docker info >/dev/null 2>&1 && exit 0
command -v debootstrap >/dev/null 2>&1 \
  || "$(dirname "$0")/ensure-apt-packages.sh" debootstrap 2>/dev/null
if ! "$PY" - >/dev/null 2>&1 <<'PYEOF'
from looplab.sandboxes.engine import connect_engine
connect_engine(timeout_s=5).close()
PYEOF
then
  exit 0  # no engine: the docker tier is skipped with the reason
fi
echo "building the sandbox image (docker tier; cached when already built)..." >&2
# Two tries: a mirror's hiccup fails a debootstrap build now and then (its output is kept,
# and shown when the second try fails too).
out="$(mktemp)"
for try in 1 2; do
  if "$PY" -c 'from looplab.sandboxes.image import build_image; build_image()' >"$out" 2>&1; then
    rm -f "$out"
    exit 0
  fi
  [ "$try" = 1 ] && sleep 2
done
echo "note: the sandbox image did not build; the docker test tier will be skipped. Its last lines:" >&2
tail -n 15 "$out" >&2
rm -f "$out"
exit 0
