# shellcheck shell=bash
# Sourced by .ci/run (as root, fresh Debian, no daemon): give the docker test tier a real
# engine, then require the tier. Idempotent; quiet unless something fails.
# Uses .ci/run's log/quiet helpers when present.

_ld_quiet() { if declare -F quiet >/dev/null; then quiet "$@"; else "$@" >/dev/null 2>&1; fi; }

_ld_missing=()
command -v dockerd >/dev/null || _ld_missing+=(docker.io)
command -v debootstrap >/dev/null || _ld_missing+=(debootstrap)
command -v bwrap >/dev/null || _ld_missing+=(bubblewrap)
if [ "${#_ld_missing[@]}" -gt 0 ]; then
  _ld_quiet apt-get update
  _ld_quiet env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${_ld_missing[@]}"
fi

if ! docker info >/dev/null 2>&1; then
  # A daemon killed without a clean shutdown (e.g. the session's processes ended before
  # CI) leaves pid files behind, and dockerd refuses to start while they exist.
  for _ld_pidfile in /var/run/docker.pid /var/run/docker/containerd/containerd.pid; do
    if [ -f "$_ld_pidfile" ] && ! kill -0 "$(cat "$_ld_pidfile" 2>/dev/null)" 2>/dev/null; then
      rm -f "$_ld_pidfile"
    fi
  done
  (dockerd >/var/log/looplab-dockerd.log 2>&1 &)
  for _ld_i in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  if ! docker info >/dev/null 2>&1; then
    echo "[ci] dockerd did not answer within 60 s; its log:" >&2
    tail -n 30 /var/log/looplab-dockerd.log >&2
    return 1
  fi
fi

# the builder runs in the project's venv (made here if .ci/run has not made it yet)
_ld_quiet make venv
.venv/bin/python -c 'import docker' 2>/dev/null || _ld_quiet .venv/bin/pip install -q 'docker>=7,<8'
# The image itself is built by `make test`, in the background while its first part runs
# (scripts/image-in-background.sh); with LOOPLAB_REQUIRE_DOCKER=1 a failed build fails the
# docker-tier tests with its reason.

export LOOPLAB_REQUIRE_DOCKER=1
unset _ld_missing _ld_i _ld_pidfile
