# shellcheck shell=sh
# Sourced by `make test`: build the docker tier's sandbox image in the background while the
# first part of the tests runs (on a fresh host the offline debootstrap build waits on the
# network for about a minute; run first, it made every test wait). The background job holds
# an exclusive flock on $LOOPLAB_IMAGE_BUILD_LOCK until it ends; tests/conftest.py schedules
# the docker-tier tests last when that variable is set, and their first one waits for the
# lock, then skips (or fails, when required) with the reason if the image is still missing.
# Usage: image_python=VENV_PYTHON; . scripts/image-in-background.sh; ...; image_build_wait
# (a variable, not an argument: a POSIX shell's `.` passes no arguments, and dash, which
# runs make's recipes on Debian, ignores them).
# Needs flock(1) (util-linux); without it the image is built here, in the foreground.
_ib_python="${image_python:?set image_python to the venv's Python before sourcing}"
_ib_pid=""
if command -v flock >/dev/null 2>&1; then
  LOOPLAB_IMAGE_BUILD_LOCK="$(pwd)/.venv/image-build.lock"
  export LOOPLAB_IMAGE_BUILD_LOCK
  exec 9>"$LOOPLAB_IMAGE_BUILD_LOCK"
  flock -x 9  # taken before any test starts; the job below inherits it (fd 9)
  scripts/ensure-sandbox-image.sh "$_ib_python" >"$(pwd)/.venv/image-build.log" 2>&1 &
  _ib_pid=$!
  exec 9>&-  # this shell lets go; the job keeps the lock until it exits
else
  scripts/ensure-sandbox-image.sh "$_ib_python"
fi

# Wait for the background build (nothing outlives `make test`); print its notes.
image_build_wait() {
  [ -n "$_ib_pid" ] || return 0
  wait "$_ib_pid"
  grep -v '^building the sandbox image' "$(pwd)/.venv/image-build.log" >&2 || true
  return 0
}
