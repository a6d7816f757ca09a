#!/bin/sh
# `make test`: the whole suite as two groups at once, on the venv at BIN_DIR.
# Usage: scripts/run-tests.sh BIN_DIR WORKERS
#
# - The timing group (`-m "timing and not docker"`: wall-clock pacing and latency asserts)
#   runs in one process at normal priority; its output goes to .venv/timing-tests.log and is printed
#   after the first part's.
# - The first part (`-m "not timing"`) runs beside it across WORKERS pytest-xdist workers
#   at `nice 19`, so the timing group's processes take the CPU whenever they want it; once
#   the timing group is done the first part goes back to normal priority (`renice`), and
#   so does the image build (`nice 10` until then).
#   Where lowering a niceness is not permitted (not root; CI runs as root) the timing
#   group runs first, alone, and the first part after it. Run after the first part, the
#   timing group added ~150 s while using under half a core; beside the niced first part it
#   passed in 202-209 s of overlap, and a fresh host's `make test` went 832 s -> 758 s.
# - The sandbox image builds in the background meanwhile (scripts/image-in-background.sh);
#   the docker tier's timing tests (they need the image) run last, alone.
# The exit status is non-zero when either group failed; both always run to the end.
# Ctrl-C stops both groups (SIGTERM to this script is passed on to them as SIGINT) and
# waits for the image build, so nothing is left running.
set -u
bin="${1:?usage: scripts/run-tests.sh BIN_DIR WORKERS}"
workers="${2:?usage: scripts/run-tests.sh BIN_DIR WORKERS}"
export PYTHONDONTWRITEBYTECODE=

image_python="$bin/python"
. scripts/image-in-background.sh

timing_log="$(pwd)/.venv/timing-tests.log"
"$bin/pytest" -q -p no:xdist -m "timing and not docker" --durations=5 >"$timing_log" 2>&1 &
timing=$!
first=""
stop_all() {  # $1: send SIGINT to both groups first (not for the terminal's Ctrl-C, which
  # reached them already: the process group gets it, and tests/conftest.py restores SIGINT
  # in the pytest processes that started ignoring it as background jobs)
  [ "$1" = forward ] && kill -INT "$timing" ${first:+"$first"} 2>/dev/null
  wait "$timing" ${first:+"$first"} 2>/dev/null
  echo "interrupted: waiting for the sandbox image build to end (nothing is left running)" >&2
  image_build_wait
  exit 130
}
trap 'stop_all wait' INT
trap 'stop_all forward' TERM

# the docker tier's timing tests, last and alone: they need the image, and waiting for its
# build inside the timing group would hold the first part at nice 19 meanwhile (beside two
# busy processes the niced build and first part both starved)
docker_timing() {
  image_build_wait
  printf '\n== the docker tier'"'"'s timing tests ==\n'
  "$bin/pytest" -q -p no:xdist -m "timing and docker" || [ $? -eq 5 ]  # 5: none selected
}

tree_of() {  # $1 and its descendants, one pid a line
  echo "$1"
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do tree_of "$child"; done
}

status=0
if ! nice -n 1 sh -c 'renice -n 0 -p $$' >/dev/null 2>&1; then
  # not permitted to put the first part back to normal priority (not root): run the groups
  # one after the other, as before, rather than leave the first part at nice 19 throughout
  wait "$timing" || status=$?
  "$bin/pytest" -q -n "$workers" --maxschedchunk 1 -m "not timing" --durations=15 || status=$?
  printf '\n== the timing group (ran first) ==\n'
  cat "$timing_log"
  docker_timing || status=$?
  exit "$status"
fi

# the first part, niced; put back to normal priority when the timing group ends
nice -n 19 "$bin/pytest" -q -n "$workers" --maxschedchunk 1 -m "not timing" --durations=15 &
first=$!
(
  while kill -0 "$timing" 2>/dev/null; do sleep 1; done
  # the first part and the image build, with every process they run now (their later
  # children inherit the priority)
  # shellcheck disable=SC2046
  renice -n 0 -p $(tree_of "$first") ${_ib_pid:+$(tree_of "$_ib_pid")} >/dev/null 2>&1 || true
) &
watcher=$!

wait "$first" || status=$?
wait "$timing" || status=$?
wait "$watcher" 2>/dev/null || true
printf '\n== the timing group (ran beside the first part) ==\n'
cat "$timing_log"
docker_timing || status=$?
exit "$status"
