#!/usr/bin/env bash
# `make test`: every test, in two groups, both always run; exits non-zero if either failed.
#
# 1. Everything but the `timing` mark across pytest-xdist workers (WORKERS: one per core
#    plus one, since about a fifth of that part waits on paced replies, servers, browsers).
# 2. The `timing` tests (wall-clock pacing and latency asserts), one at a time. Where this
#    user may raise a process's priority (root, or CAP_SYS_NICE), they run beside group 1
#    at `nice -n -10`: the scheduler then gives them the CPU they ask for first (a nice -10
#    process weighs about nine times a nice 0 one), so they see a machine as quiet as when
#    they ran after group 1, and the ~140 s they mostly spend waiting overlaps group 1's
#    work. They do so only on a machine that is quiet when the run starts (85% of the CPU idle
#    over one second): beside other busy processes, whose share no niceness within this
#    session can take back (Linux's autogroups weigh sessions, not processes), they run
#    after group 1, serially, as they do where priority cannot be raised.
#    TIMING_ORDER=after (or beside) chooses instead of that check (auto, the default).
#
# Usage: scripts/run-tests.sh PYTEST WORKERS
set -u
pytest=$1
workers=$2
status=0

quiet() {  # every core idle over one second (/proc/stat); false where it cannot be read
  [ -r /proc/stat ] || return 1
  local a b
  a=$(awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
  sleep 1
  b=$(awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
  echo "$a $b" | awk '{ exit !(($4 - $2) > 0 && ($3 - $1) / ($4 - $2) >= 0.85) }'
}

beside() {  # whether the timing group runs beside group 1 (see above)
  case "${TIMING_ORDER:-auto}" in
    after) return 1 ;;
    beside) nice -n -10 true 2>/dev/null ;;
    auto) nice -n -10 true 2>/dev/null && quiet ;;
    *) echo "TIMING_ORDER must be auto, beside or after, not '$TIMING_ORDER'" >&2; exit 2 ;;
  esac
}

if beside; then
  log=$(mktemp "${TMPDIR:-/tmp}/looplab-timing.XXXXXX")
  nice -n -10 "$pytest" -q -p no:xdist -p no:cacheprovider -m timing --durations=5 >"$log" 2>&1 &
  timing=$!
  # a Ctrl-C or a kill of make stops the timing group too: nothing outlives the command
  trap 'kill "$timing" 2>/dev/null; wait "$timing" 2>/dev/null; rm -f "$log"; exit 130' INT TERM
  echo "timing tests: beside the rest, at nice -10 (their output follows the rest's)"
  "$pytest" -q -n "$workers" -m "not timing" --durations=15 || status=$?
  wait "$timing" || status=$?
  trap - INT TERM
  echo "--- timing tests (nice -10, beside the rest) ---"
  cat "$log"
  rm -f "$log"
else
  "$pytest" -q -n "$workers" -m "not timing" --durations=15 || status=$?
  "$pytest" -q -p no:xdist -m timing --durations=5 || status=$?
fi
exit "$status"
