#!/bin/sh
# `make test`: the whole suite as two groups at once, on the venv at BIN_DIR.
# Usage: scripts/run-tests.sh BIN_DIR WORKERS
#
# - The timing group (`-m timing`: wall-clock pacing and latency asserts) runs in one
#   process at normal priority; its output goes to .venv/timing-tests.log and is printed
#   after the first part's.
# - The first part (`-m "not timing"`) runs beside it across WORKERS pytest-xdist workers
#   at `nice 19`, so the timing group's processes take the CPU whenever they want it; once
#   the timing group is done the first part goes back to normal priority (`renice`, where
#   permitted: root, as in CI). Serially the timing group added ~150 s to the run while
#   using under half a core; beside the niced first part it passed in 209 s of overlap.
# - The sandbox image builds in the background meanwhile (scripts/image-in-background.sh).
# The exit status is non-zero when either group failed; both always run to the end.
# Ctrl-C stops both (the timing group ignores SIGINT as a background job of this shell,
# so it is sent one) and nothing is left running.
set -u
bin="${1:?usage: scripts/run-tests.sh BIN_DIR WORKERS}"
workers="${2:?usage: scripts/run-tests.sh BIN_DIR WORKERS}"
export PYTHONDONTWRITEBYTECODE=

image_python="$bin/python"
. scripts/image-in-background.sh

timing_log="$(pwd)/.venv/timing-tests.log"
"$bin/pytest" -q -p no:xdist -m timing --durations=5 >"$timing_log" 2>&1 &
timing=$!
first=""
stop_all() {
  kill -INT "$timing" ${first:+"$first"} 2>/dev/null
  wait
  exit 130
}
trap stop_all INT TERM

# the first part, niced; put back to normal priority when the timing group ends
nice -n 19 "$bin/pytest" -q -n "$workers" --maxschedchunk 1 -m "not timing" --durations=15 &
first=$!
(
  while kill -0 "$timing" 2>/dev/null; do sleep 1; done
  # the xdist controller and its workers; their later children inherit the priority
  pids="$first $(ps -o pid= --ppid "$first" 2>/dev/null | tr '\n' ' ')"
  # shellcheck disable=SC2086
  renice -n 0 -p $pids >/dev/null 2>&1 || true
) &
watcher=$!

status=0
wait "$first" || status=$?
wait "$timing" || status=$?
wait "$watcher" 2>/dev/null || true
printf '\n== the timing group (ran beside the first part) ==\n'
cat "$timing_log"
image_build_wait
exit "$status"
