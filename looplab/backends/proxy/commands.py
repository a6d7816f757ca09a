"""`looplab proxy`, `looplab wrap` and `looplab bench proxy`; `looplab.cli.app` registers them."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from looplab.console import (
    DrainOpt,
    HostOpt,
    OutputOpt,
    PortOpt,
    ProfileOpt,
    ProfileSetOpt,
    ensure_parent,
    err_console,
    prepare_output_dir,
)
from looplab.errors import ConfigError
from looplab.traces.scrub import remember_secret
from looplab.urls import public_url, url_problem

if TYPE_CHECKING:
    from looplab.backends.proxy.store import Recording
    from looplab.backends.proxy.verdict import WrapVerdict
    from looplab.backends.proxy.wrap import WrapResult

__all__ = ["proxy_command", "wrap_command"]

UpstreamOpt = Annotated[
    str | None,
    typer.Option(
        "--upstream",
        help="API root of any OpenAI-compatible upstream, e.g. https://api.openai.com/v1.",
        show_default=False,
    ),
]
RecordOpt = Annotated[
    Path | None,
    typer.Option("--record", help="Record every exchange into this directory.", show_default=False),
]
ReplayOpt = Annotated[
    Path | None,
    typer.Option(
        "--replay",
        help="Serve recorded exchanges from this directory (no upstream needed).",
        show_default=False,
    ),
]
ReplayPolicyOpt = Annotated[
    str,
    typer.Option(
        "--replay-policy",
        help="How --replay pairs requests with the recording: strict (exact request hash; "
        "anything else is a 400 replay_miss) or tolerant (follow the recording session by "
        "session, step by step, serve the step's reply even when the request differs, and "
        "report each divergence).",
    ),
]
ApiKeyEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        help="Send the upstream the key in this environment variable instead of the "
        "client's (never logged or written).",
        show_default=False,
    ),
]
PortFileOpt = Annotated[
    Path | None,
    typer.Option(help="Write the bound port to this file once serving.", show_default=False),
]
UpstreamTimeoutOpt = Annotated[
    float,
    typer.Option(
        min=0.001,
        help="Seconds to wait for any one read from the upstream; then the client gets "
        "504 upstream_timeout.",
    ),
]
UpstreamDeadlineOpt = Annotated[
    float,
    typer.Option(
        min=0.001,
        help="Seconds a request may take upstream in all, its reply's last byte "
        "included (an upstream trickling a byte per read is cut here); then 504 "
        "upstream_timeout.",
    ),
]
MaxReplyMbOpt = Annotated[
    float,
    typer.Option(
        min=0.001,
        help="Largest upstream reply taken, in MiB; a larger one is cut and answered "
        "502 upstream_reply_too_large.",
    ),
]


def _check(
    upstream: str | None,
    record: Path | None,
    replay: Path | None,
    *,
    policy: str = "strict",
    builtin: bool = False,
) -> None:
    """Refuse option combinations that cannot work (`builtin`: no upstream means the
    built-in simulator, as for `wrap`)."""
    from looplab.backends.proxy.follow import REPLAY_POLICIES

    if policy not in REPLAY_POLICIES:
        raise ConfigError(
            f"unknown replay policy {policy!r}",
            field="--replay-policy",
            allowed=tuple(REPLAY_POLICIES),
            given=policy,
        )
    if policy != "strict" and replay is None:
        raise ConfigError(f"--replay-policy {policy} needs --replay DIR", field="--replay-policy")
    if upstream is None and replay is None and not builtin:
        raise ConfigError("give --upstream URL, --replay DIR, or both", field="--upstream")
    problem = url_problem(upstream) if upstream is not None else None
    if problem:
        raise ConfigError(problem, field="--upstream")
    if record is not None and upstream is None:
        raise ConfigError("--record needs an --upstream to record from", field="--record")


def _api_key(name: str | None) -> str | None:
    if name is None:
        return None
    value = os.environ.get(name)
    if not value:
        raise ConfigError(f"environment variable {name} is empty or not set", field="--api-key-env")
    remember_secret(value)
    return value


def proxy_command(
    upstream: UpstreamOpt = None,
    profile: ProfileOpt = "fast-750",
    profile_set: ProfileSetOpt = None,
    record: RecordOpt = None,
    replay: ReplayOpt = None,
    replay_policy: ReplayPolicyOpt = "strict",
    api_key_env: ApiKeyEnvOpt = None,
    host: HostOpt = "127.0.0.1",
    port: PortOpt = 8751,
    port_file: PortFileOpt = None,
    upstream_timeout: UpstreamTimeoutOpt = 600.0,
    upstream_deadline: UpstreamDeadlineOpt = 1800.0,
    max_reply_mb: MaxReplyMbOpt = 64.0,
    drain_s: DrainOpt = 5.0,
) -> None:
    """Serve an OpenAI-compatible endpoint that paces any upstream to a latency profile.

    Tokens go out no earlier than the profile's schedule (TTFT, then its decode rate) and
    never before the upstream sent them; where the upstream is slower, the reply says so
    (header x-looplab-upstream-slower). POST /v1/chat/completions and /v1/responses.
    """
    _check(upstream, record, replay, policy=replay_policy)
    api_key = _api_key(api_key_env)  # remembered as a secret before anything is read
    recording = None
    if replay is not None:  # a bad recording is refused before the server's modules load
        from looplab.backends.proxy.store import Recording

        recording = Recording(replay, replay_policy)
    from looplab.backends.proxy.app import create_proxy_app
    from looplab.backends.proxy.core import Proxy
    from looplab.latency.presets import resolve_profile
    from looplab.serving.appserver import AppServer

    resolved = resolve_profile(profile, profile_set or [])
    proxy = Proxy(
        resolved,
        upstream=upstream,
        record=record,
        replay=recording,
        replay_policy=replay_policy,
        api_key=api_key,
        upstream_timeout_s=upstream_timeout,
        upstream_deadline_s=upstream_deadline,
        max_reply_bytes=int(max_reply_mb * (1 << 20)),
    )
    server = AppServer(
        create_proxy_app(proxy),
        host=host,
        port=port,
        name="looplab-proxy",
        lifespan="on",
        drain_s=drain_s,
    ).bind()  # from here connections wait in the backlog until the server runs
    source = public_url(upstream) if upstream else "no upstream"
    if replay is not None:
        source = f"replay {replay} ({replay_policy})" + (
            f", else {public_url(upstream)}" if upstream else ""
        )
    err_console().print(
        f"[bold]looplab proxy[/] profile [cyan]{resolved.name}[/] ({resolved.decode_tps:g} tok/s)"
        f" in front of {source}"
        + (f", recording into {record}" if record else "")
        + f" on {server.base_url}"
    )
    if port_file is not None:
        port_file.write_text(str(server.port))
    gc.freeze()  # what start-up allocated is never scanned again: shorter GC pauses
    try:
        server.serve_forever()
    finally:
        _print_divergences(proxy.recording)


def _replay_summary(policy: object, count: int, directory: Path | None) -> str:
    """The replay's one-line summary: how many requests departed from the recording."""
    if count == 0:
        return f"replay ({policy}): every request followed the recording {directory}"
    return f"replay ({policy}): {count} divergence(s) from the recording {directory}"


def _print_divergences(recording: Recording | None) -> None:
    """The replay's summary at exit, and each divergence."""
    if recording is None:
        return
    console = err_console()
    found = recording.divergences
    summary = _replay_summary(recording.policy_name, len(found), recording.directory)
    console.print(f"[bold]looplab proxy[/] {summary}")
    for divergence in found:
        console.print(f"[yellow]replay divergence[/] {divergence.describe()}")


def _verdict_words(verdict: WrapVerdict | None) -> str:
    """`solved (check command)` / `failed (exit code)`: the run's verdict for the summary."""
    if verdict is None:
        return "verdict unknown"
    return f"{'solved' if verdict.success else 'failed'} ({verdict.by})"


def wrap_command(
    command: Annotated[list[str], typer.Argument(help="The agent command, after --.")],
    profile: ProfileOpt = "fast-750",
    profile_set: ProfileSetOpt = None,
    upstream: UpstreamOpt = None,
    record: RecordOpt = None,
    replay: ReplayOpt = None,
    replay_policy: ReplayPolicyOpt = "strict",
    api_key_env: ApiKeyEnvOpt = None,
    output: OutputOpt = Path("runs/wrap"),
    agent: Annotated[
        str | None, typer.Option(help="The agent's name in the trace (default: the program).")
    ] = None,
    task: Annotated[
        str | None,
        typer.Option(
            help="A task label for the trace. Its part before the first '/' is the task "
            "set (app/login -> app; lookup -> lookup): runs are compared only within one "
            "agent, task set and clock."
        ),
    ] = None,
    check: Annotated[
        str | None,
        typer.Option(
            "--check",
            help="A shell command run after the agent exits that judges the task: exit 0 = "
            "solved (recorded in the trace with its output). Without it the agent's exit "
            "code decides (0 = solved).",
        ),
    ] = None,
) -> None:
    """Run any agent command against the pacing proxy and write a looplab trace of it.

    The command gets OPENAI_BASE_URL, OPENAI_API_BASE (LiteLLM) and LOOPLAB_PROXY_URL
    pointing at the proxy. Without --upstream or --replay the upstream is looplab's
    built-in simulator, answering any model name (its lorem policy): the agent's steps and
    timing are then not its own (printed, and noted in the trace). To measure your agent,
    record it against its model (--upstream URL --record DIR), then replay that recording
    at each profile (--replay DIR -p slow-80, then -p fast-750).
    Model calls are measured at the proxy; the gaps between them are the agent's time
    (its tools + harness after a reply with tool calls, its harness alone otherwise;
    estimated). The verdict: --check CMD's exit status (0 = solved; an agent exiting
    non-zero failed whatever the check says), else the agent's exit code (0 = solved).
    Exits with the command's exit code.
    Example: looplab wrap -p slow-80 -o runs/wrap -- python agent.py
    """
    from looplab.backends.proxy.wrap import run_wrapped
    from looplab.experiments.guards.containment import WRAP_WARNING
    from looplab.latency.presets import resolve_profile

    _check(upstream, record, replay, policy=replay_policy, builtin=True)
    err_console().print(WRAP_WARNING, style="bold yellow", markup=False, highlight=False)
    resolved = resolve_profile(profile, profile_set or [])
    destination = output or Path("runs/wrap")
    if destination.suffix == ".jsonl":
        ensure_parent(destination, "--output")
    else:
        prepare_output_dir(destination)
    result = run_wrapped(
        command,
        resolved,
        output=destination,
        upstream=upstream,
        record=record,
        replay=replay,
        replay_policy=replay_policy,
        api_key=_api_key(api_key_env),
        agent=agent,
        task=task,
        check=check,
    )
    _print_wrapped(result, resolved.name, replay)
    raise typer.Exit(result.exit_code)


def _print_wrapped(result: WrapResult, profile: str, replay: Path | None) -> None:
    """The wrapped run's summary: calls, exit code, verdict, trace, and replay divergences."""
    console = err_console()
    summary = result.summary
    console.print(
        f"[bold]looplab wrap[/] {result.calls} model call(s) at {profile}, exit code "
        f"{result.exit_code}, {_verdict_words(result.verdict)}; upstream slower on "
        f"{summary.get('upstream_slower', 0)} call(s); "
        f"trace: {result.trace}"
    )
    if result.simulated_replies:
        from looplab.backends.proxy.wrap import SIMULATED_REPLIES_NOTE

        console.print(f"[yellow]looplab wrap: {SIMULATED_REPLIES_NOTE}[/]", highlight=False)
    if "replay_policy" in summary:
        found = summary.get("divergences") or []
        assert isinstance(found, list)
        line = _replay_summary(summary["replay_policy"], len(found), replay)
        console.print(f"[bold]looplab wrap[/] {line}")
    for line in summary.get("divergences") or []:  # type: ignore[attr-defined]  # list of str
        console.print(f"[yellow]replay divergence[/] {line}")
