"""`looplab wrap`: run any agent command against the pacing proxy and trace it.

`run_wrapped` starts a `ProxyServer` on a free loopback port, runs the command in its
own process group with the conventional variables pointing at the proxy, waits for it,
and writes a looplab trace (`trace.wrap_events`) with its verdict (`verdict.py`: the
exit code, or a `--check` command run after the agent). Whatever ends it (the command exits,
Ctrl-C, SIGTERM, an error), the command's whole process group is terminated (TERM, then
KILL), the proxy stopped and its port closed before `run_wrapped` returns or raises.

Variables set for the command (`proxy_env`): `OPENAI_BASE_URL` (the openai SDKs, the
Agents SDK, Codex-style clients), `OPENAI_API_BASE` (LiteLLM and older clients),
`LOOPLAB_PROXY_URL`; `OPENAI_API_KEY` only when it is not set already (a placeholder, so
that SDKs that insist on a key start; a real key in the environment passes through the
proxy to the upstream), `NO_PROXY` extended with the loopback, and
`OPENAI_AGENTS_DISABLE_TRACING=1` unless set (the Agents SDK would otherwise try to
export traces to the internet).

Without an upstream or a recording, the upstream is looplab's built-in simulator on a free
loopback port (`builtin_upstream`): the profile made fast (`FAST_UPSTREAM`: no TTFT, 10^6
tok/s) so that the proxy, not the upstream, sets the pace, answering any model name with
its `lorem` policy (`BUILTIN_POLICY`); the trace header records that and which names it
answered.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from looplab.backends.proxy.app import ProxyServer, describe
from looplab.backends.proxy.calls import CallRecord
from looplab.backends.proxy.store import Recording
from looplab.backends.proxy.trace import wrap_events
from looplab.backends.proxy.verdict import WrapVerdict, judge
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.clock import utc_now
from looplab.errors import ConfigError
from looplab.latency.profile import LatencyProfile
from looplab.traces.cell import TraceCell
from looplab.traces.identity import run_identity
from looplab.traces.io import write_trace
from looplab.traces.schema import TraceHeader
from looplab.traces.scrub import Scrubber

__all__ = [
    "BUILTIN_POLICY",
    "FAST_UPSTREAM",
    "SIMULATED_REPLIES_NOTE",
    "WrapResult",
    "builtin_upstream",
    "proxy_env",
    "run_wrapped",
]

_GRACE_S = 3.0
FAST_UPSTREAM_TPS = 1_000_000.0
"""The built-in upstream's decode rate: far above any profile, so the proxy sets the pace."""
FAST_UPSTREAM: dict[str, float | None] = {
    "decode_tps": FAST_UPSTREAM_TPS,
    "ttft_s": 0,
    "ttft_jitter_s": 0,
    "prefill_tps": None,
    "network_rtt_s": 0,
    "pipeline_stages": 1,
    "stage_latency_s": 0,
}
"""Profile overrides that turn a profile into the fast upstream the proxy paces down."""
SIMULATED_REPLIES_NOTE = (
    "replies were the simulator's filler (no --upstream or --replay): the agent's steps "
    "and the timing answer are not its own. Record it against its real model "
    "(`looplab wrap --upstream URL --record DIR -- CMD`), then replay the recording at each "
    "profile (`looplab wrap --replay DIR -p slow-80 -- CMD`, then `-p fast-750`)"
)
"""What a wrapped run without an upstream or a recording measured (printed and noted)."""
BUILTIN_POLICY = "lorem"
"""The built-in upstream's policy for any model name it does not serve."""


def builtin_upstream(profile: LatencyProfile) -> SimulatorServer:
    """The built-in simulator upstream for `profile` (module doc), not yet started."""
    spec = {**profile.model_dump(by_alias=True), **FAST_UPSTREAM, "name": f"{profile.name}+up"}
    fast = LatencyProfile.model_validate(spec)
    return SimulatorServer(fast, fallback=BUILTIN_POLICY)


@dataclass
class WrapResult:
    """What a wrapped run produced."""

    exit_code: int
    trace: Path
    calls: int
    summary: dict[str, object] = field(default_factory=dict)
    simulated_replies: bool = False
    """True when the built-in simulator answered (`SIMULATED_REPLIES_NOTE`)."""
    verdict: WrapVerdict | None = None
    """Solved or not, and who decided (`verdict.py`)."""


def proxy_env(base_url: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The command's environment: `environ` with the proxy's variables (module doc)."""
    env = dict(environ)
    env["OPENAI_BASE_URL"] = base_url
    env["OPENAI_API_BASE"] = base_url
    env["LOOPLAB_PROXY_URL"] = base_url
    env.setdefault("OPENAI_API_KEY", "looplab-no-key")
    env.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    loopback = "127.0.0.1,localhost,::1"
    for name in ("NO_PROXY", "no_proxy"):
        env[name] = f"{env[name]},{loopback}" if env.get(name) else loopback
    return env


def run_wrapped(
    command: Sequence[str],
    profile: LatencyProfile,
    *,
    output: Path,
    upstream: str | None = None,
    record: Path | None = None,
    replay: Path | None = None,
    replay_policy: str = "strict",
    api_key: str | None = None,
    agent: str | None = None,
    task: str | None = None,
    cwd: Path | None = None,
    extra_env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    stop: threading.Event | None = None,
    run_id: str | None = None,
    experiment: str | None = None,
    cell: TraceCell | None = None,
    check: str | None = None,
) -> WrapResult:
    """Run `command` against the proxy and write its trace to `output` (module doc).

    Args:
        command: the agent command and its arguments.
        profile: the latency profile the proxy paces to.
        output: the trace file to write (`.jsonl`); a directory gets `<run id>.jsonl`.
        upstream, record, replay, replay_policy, api_key: as for `Proxy`.
        agent: the agent's name in the trace (default: the command's program name).
        task: a task label for the trace.
        cwd: the command's working directory.
        extra_env: more variables for the command.
        timeout_s: kill the command after this long (None: no limit).
        stop: set it to end the command early (from another thread); the trace is still
            written.
        run_id, experiment, cell: the trace header's (an experiment cell's run).
        check: a shell command run after the agent exits that judges the task (exit 0 =
            solved; `verdict.py`); None: the agent's exit code decides.

    Raises:
        ConfigError: an empty command, or one that cannot be started.
    """
    if not command:
        raise ConfigError("give the agent command after --", field="COMMAND")
    agent = agent or Path(command[0]).name
    run_id = run_id or f"wrap-{agent}-{profile.name}-{uuid.uuid4().hex[:8]}"
    server, builtin = _start(profile, upstream, record, (replay, replay_policy), api_key)
    gc.freeze()  # what start-up allocated is never scanned again: shorter GC pauses
    process: subprocess.Popen[bytes] | None = None
    plain_env = {**os.environ, **(extra_env or {})}
    try:
        env = proxy_env(server.base_url, plain_env)
        try:
            process = subprocess.Popen(list(command), env=env, cwd=cwd, start_new_session=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot start {command[0]!r}: {exc.strerror}", field="COMMAND"
            ) from None
        code = _wait(process, timeout_s, stop)
        exited = time.perf_counter()
    finally:
        if process is not None:
            _stop_group(process)
        server.stop()
        if builtin is not None:
            builtin.stop()
    exit_code = code if code >= 0 else 128 - code
    verdict = judge(exit_code, check, cwd=cwd, env=plain_env)
    calls = list(server.proxy.history.calls)
    header = _header(
        run_id,
        profile,
        command,
        calls,
        verdict,
        exit_code,
        agent=agent,
        task=task or agent,
        upstream=upstream,
        replay=replay,
        experiment=experiment,
        cell=cell,
    )
    if builtin is not None:
        _note_builtin(header, builtin)
    if server.proxy.recording is not None:
        _note_replay(header, server.proxy.recording)
    events = wrap_events(
        run_id,
        calls,
        exited=exited,
        exit_code=exit_code,
        task=task or agent,
        profile=profile.name,
        verdict=verdict,
    )
    path = output / f"{run_id}.jsonl" if output.is_dir() or not output.suffix else output
    path.parent.mkdir(parents=True, exist_ok=True)
    write_trace(path, header, events, scrubber=Scrubber())
    return WrapResult(
        exit_code,
        path,
        len(calls),
        describe(server.proxy),
        simulated_replies=builtin is not None,
        verdict=verdict,
    )


def _start(
    profile: LatencyProfile,
    upstream: str | None,
    record: Path | None,
    replay: tuple[Path | None, str],
    api_key: str | None,
) -> tuple[ProxyServer, SimulatorServer | None]:
    """The proxy, started, and the built-in upstream it talks to when it has no other
    (`replay`: the recording, if any, and the replay policy)."""
    recording, policy = replay
    builtin = builtin_upstream(profile).start() if upstream is None and recording is None else None
    server = ProxyServer(
        profile,
        upstream=builtin.base_url if builtin else upstream,
        record=record,
        replay=recording,
        replay_policy=policy,
        api_key=api_key,
    )
    try:
        server.start()
    except BaseException:
        if builtin is not None:
            builtin.stop()
        raise
    return server, builtin


def _header(
    run_id: str,
    profile: LatencyProfile,
    command: Sequence[str],
    calls: Sequence[CallRecord],
    verdict: WrapVerdict,
    exit_code: int,
    *,
    agent: str,
    task: str,
    upstream: str | None,
    replay: Path | None,
    experiment: str | None,
    cell: TraceCell | None,
) -> TraceHeader:
    """The wrapped run's trace header: the profile, the proxy, the command and its status."""
    model = next((c.model for c in calls if c.model), None)
    solved = "solved" if verdict.success else "failed"
    return TraceHeader(
        run_id=run_id,
        created=utc_now(),
        source="wrap",
        experiment=experiment,
        cell=cell or TraceCell(backend=profile.name, agent=agent, task=task),
        task=task,
        agent=agent,
        model=model,
        profile=profile.model_dump(mode="json", by_alias=True),
        backend={
            "kind": "proxy",
            "name": profile.name,
            "upstream": upstream,
            "replay": str(replay) if replay else None,
        },
        clock="wall",
        identity=run_identity(
            agent=agent,
            task=task,
            profile=profile.name,
            decode_tps=profile.decode_tps,
            replies="recording" if replay else "upstream",
            model=model,
        ),
        notes=[
            "model calls measured at the looplab proxy (looplab wrap): sent = request "
            "received, first/last token = released to the agent",
            "tools + harness: the gaps between model calls (estimated, not separated)",
            f"command: {' '.join(command)[:300]}",
            f"exit code {exit_code}",
            f"verdict: {solved}, by {verdict.by}",
        ],
    )


def _note_builtin(header: TraceHeader, builtin: SimulatorServer) -> None:
    """Say in the header that the built-in simulator answered, and with which policies."""
    answered = builtin.simulator.answered_by
    header.backend["upstream"] = "built-in simulator"
    if header.identity is not None:
        header.identity = header.identity.model_copy(update={"replies": "simulator"})
    header.notes.append(SIMULATED_REPLIES_NOTE)
    header.backend["policies"] = dict(answered)
    named = ", ".join(f"{m} by {p}" for m, p in sorted(answered.items())) or "no call"
    header.notes.append(
        f"upstream: looplab's built-in simulator ({FAST_UPSTREAM_TPS:g} tok/s, no "
        f"TTFT; the proxy sets the pace); model names answered: {named}"
    )


def _note_replay(header: TraceHeader, recording: Recording) -> None:
    """Put the replay policy and every divergence from the recording in the header."""
    divergences = recording.divergences
    header.backend["replay_policy"] = recording.policy_name
    header.backend["divergences"] = [d.as_dict() for d in divergences]
    header.notes.append(
        f"replay ({recording.policy_name}) of {recording.directory}: {len(divergences)} "
        f"divergence(s) from the recording" + "".join(f"; {d.describe()}" for d in divergences[:20])
    )


def _wait(
    process: subprocess.Popen[bytes], timeout_s: float | None, stop: threading.Event | None
) -> int:
    """The command's exit status; it is stopped at `timeout_s` or when `stop` is set."""
    deadline = None if timeout_s is None else time.perf_counter() + timeout_s
    while True:
        try:
            return process.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            pass
        expired = deadline is not None and time.perf_counter() > deadline
        if expired or (stop is not None and stop.is_set()):
            _stop_group(process)
            return process.wait()


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """TERM the command's process group, KILL it after a grace period; verified gone."""
    try:
        group = os.getpgid(process.pid)
    except ProcessLookupError:
        group = process.pid
    for sig, wait in ((signal.SIGTERM, _GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            break
        deadline = time.perf_counter() + wait
        while time.perf_counter() < deadline:
            if process.poll() is not None and not _group_alive(group):
                return
            time.sleep(0.02)
    process.poll()


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
