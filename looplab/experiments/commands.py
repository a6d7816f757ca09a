"""`looplab run`, `replay` (virtual: `looplab.analysis.replay`; live: `replay_live`), `sweep`.

Commands of the experiments package; `looplab.cli.app` registers them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from looplab.console import (
    OutputOpt,
    ProfileOpt,
    ProfileSetOpt,
    SetOpt,
    err_console,
    out_console,
    parse_numbers,
    prepare_output_dir,
    write_output,
)
from looplab.errors import ConfigError
from looplab.sandbox_contract import SandboxConfig

__all__ = [
    "replay_command",
    "run_command",
    "sweep_command",
]


def run_command(
    config: Annotated[
        Path,
        typer.Argument(
            help="Experiment YAML, or the name of a bundled config (quickstart, claim, ...)."
        ),
    ],
    set_: SetOpt = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Discard earlier results in the output directory.")
    ] = False,
    executor: Annotated[
        str | None,
        typer.Option(
            help="Where cells run: inprocess or ray (= -s executor.kind=...).", show_default=False
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="Ray cluster: local, auto, ray://host:10001 (= -s executor.address=...).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run an experiment: every backend x agent x task x repetition, traced and indexed.

    Re-running the same command resumes: complete cells are kept, cut-off ones rerun
    (on any executor: `--executor ray` resumes an in-process run and back).
    Everything (config, tasks, profiles, and what the machine needs: Chromium, Docker,
    disk, ports) is checked before anything is written; it ends by writing report.html
    into the output directory.
    """
    from looplab.config import load_model
    from looplab.experiments.config import ExperimentConfig
    from looplab.experiments.guards.backend_check import check_backends
    from looplab.experiments.guards.lock import check_directory
    from looplab.experiments.guards.preflight import needs_of, preflight, require_extras
    from looplab.experiments.locate import located, resolve_config

    config = resolve_config(config)
    overrides = _flag_overrides(set_ or [], executor, ray_address)
    experiment = load_model(ExperimentConfig, config, overrides)
    require_extras(experiment)

    from looplab.experiments.runner import ExperimentRunner
    from looplab.experiments.summaries.finish import finish_run, print_interrupted, where
    from looplab.experiments.summaries.progress import RunProgress

    errors = err_console()
    progress = RunProgress(errors)
    runner = ExperimentRunner(experiment, progress=progress, status=progress.status)
    try:
        cells = runner.validate()
    except ConfigError as exc:
        raise located(exc, config) from None
    check_directory(runner.directory)  # an output_dir that cannot be one: said as such
    preflight(needs_of(experiment, [c.task for c in cells], runner.directory))
    check_backends(experiment)  # a real backend's key and endpoint, before anything is written
    with runner.hold():  # one writer per directory, from the config check to the index
        runner.prepare_directory(fresh=fresh)
        for line in runner.warnings:
            errors.print(f"[bold yellow]{line}[/]", highlight=False)
        errors.print(
            f"[bold]{experiment.name}[/]: {len(cells)} cells -> {runner.directory} "
            f"(clock {experiment.clock}, sandbox {experiment.sandbox.kind}, "
            f"{where(experiment)})"
        )
        try:
            with progress:
                result = asyncio.run(runner.run())
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (Terminated, exit code 143)
            print_interrupted(runner.traces, len(cells), config)
            raise typer.Exit(getattr(stop, "exit_code", 130)) from None
    finish_run(result, choose=experiment.choose)


def _flag_overrides(set_: list[str], executor: str | None, ray_address: str | None) -> list[str]:
    """The `-s` overrides plus those `--executor` and `--ray-address` stand for.

    Raises:
        ConfigError: an unknown executor, naming `--executor` (not an override).
    """
    from looplab.experiments.executors.base import EXECUTORS

    if executor is not None and executor not in EXECUTORS:
        raise ConfigError(
            f"unknown executor {executor!r}",
            field="--executor",
            allowed=sorted(EXECUTORS),
            given=executor,
        )
    overrides = [*set_]
    overrides += [f"executor.kind={executor}"] if executor else []
    overrides += [f"executor.address={ray_address}"] if ray_address else []
    return overrides


def replay_command(
    inputs: Annotated[
        list[Path], typer.Argument(help="Trace files, trace directories or experiment dirs.")
    ],
    profile: ProfileOpt = "fast-750",
    profile_set: ProfileSetOpt = None,
    mode: Annotated[
        str, typer.Option(help="virtual (re-time, run nothing) or live (re-run the tools).")
    ] = "virtual",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Directory for the replayed traces.", show_default=False
        ),
    ] = None,
    sandbox_isolation: Annotated[
        str,
        typer.Option(
            help="Live mode's local sandbox: auto (bubblewrap; refused without it), bwrap "
            "(require it) or none (run the recorded commands on this host, on purpose)."
        ),
    ] = "auto",
) -> None:
    """Replay recorded runs at another latency profile, virtually or live.

    Live mode re-runs a trace's recorded commands: without bubblewrap it refuses unless
    --sandbox-isolation none opts in, and it always prints what is not contained.
    """
    from looplab.analysis.replay import default_output, replay_virtual
    from looplab.experiments.replay_live import replay_live
    from looplab.latency.presets import resolve_profile
    from looplab.traces.inputs import load_traces
    from looplab.traces.io import main_steps, write_trace

    if mode not in ("virtual", "live"):
        raise ConfigError(f"unknown mode {mode!r}", field="--mode", allowed=["virtual", "live"])
    if mode == "live":
        from looplab.extras import require

        require("agents", "replay --mode live")
    sandbox = _replay_sandbox(sandbox_isolation, live=mode == "live")
    resolved = resolve_profile(profile, profile_set or [])
    traces = load_traces(inputs)
    destination = output or default_output(inputs)
    prepare_output_dir(destination)
    table = Table(title=f"{mode} replay at {resolved.name} ({resolved.decode_tps:g} tok/s)")
    columns = ("run", "main-agent steps", "model calls (all agents)", "recorded s", "replayed s")
    for column in (*columns, "speedup", "divergences"):
        table.add_column(column, justify="right")
    for trace in traces:
        divergences: list[str] = []
        if mode == "virtual":
            new = replay_virtual(trace, resolved)
        else:
            live = asyncio.run(replay_live(trace, resolved, sandbox))
            new = live.trace
            divergences = [
                f"step {d.step} {d.tool}: {d.recorded} -> {d.replayed}" for d in live.divergences
            ]
        write_trace(destination / f"{new.header.run_id}.jsonl", new.header, new.events)
        before = trace.end.end if trace.end else 0.0
        after = new.end.end if new.end else 0.0
        table.add_row(
            trace.header.run_id,
            str(main_steps(trace)),
            str(len(trace.model_calls())),
            f"{before:.2f}",
            f"{after:.2f}",
            f"{before / after:.2f}x" if after else "-",
            "; ".join(divergences) or "none",
        )
    console = out_console()
    console.print(table)
    console.print(f"replayed traces: {destination}")


def _replay_sandbox(isolation: str, *, live: bool) -> SandboxConfig:
    """The live replay's sandbox, checked by the one containment rule (warning printed)."""
    from looplab.experiments.guards.containment import require_contained

    allowed = ["auto", "bwrap", "none"]
    if isolation not in allowed:
        raise ConfigError(
            f"unknown isolation {isolation!r}", field="--sandbox-isolation", allowed=allowed
        )
    sandbox = SandboxConfig(isolation=isolation)
    if live:
        for line in require_contained(
            sandbox, "a trace's recorded commands", opt_in="--sandbox-isolation none"
        ):
            err_console().print(line, style="bold yellow", markup=False, highlight=False)
    return sandbox


def _sweep_table(summaries: list[Any], title: str) -> Table:
    table = Table(title=title)
    for column in (
        "tok/s",
        "TTFT s",
        "task s",
        "speedup",
        "decode",
        "reasoning",
        "TTFT+prefill",
        "tools",
        "other",
        "Amdahl ceiling",
        "total work s",
    ):
        table.add_column(column, justify="right")
    for entry in summaries:
        table.add_row(
            f"{entry.decode_tps:g}",
            f"{entry.ttft_s:g}",
            f"{entry.task_s:.2f}",
            f"{entry.speedup:.2f}x",
            f"{entry.decode_share:.0%}",
            f"{entry.reasoning_share:.0%}",
            f"{entry.ttft_share:.0%}",
            f"{entry.tool_share:.0%}",
            f"{entry.other_share:.0%}",
            f"{entry.amdahl_ceiling:.2f}x",
            f"{entry.work_s:.2f}",
        )
    table.caption = (
        "shares: of task time (the critical path, for runs with sub-agents: what is on it); "
        "total work: every branch's own time summed (parallel sub-agents each count)"
    )
    return table


def _sweep_costs(traces: list[Any], base: str) -> str:
    """One line: median cost per task of `traces` at the price entry of the sweep's
    profile and of the mission's pair (the tokens are the traces'; the rate changes time,
    not tokens)."""
    from looplab.analysis.cost import median_cost_per_task_at_profile
    from looplab.latency.presets import presets

    known = presets()
    parts = []
    for name in dict.fromkeys([base, "slow-80", "fast-750"]):
        profile = known.get(name)
        cost = median_cost_per_task_at_profile(traces, profile) if profile else None
        if profile is not None and profile.price:
            text = f"${cost:.4f}" if cost is not None else "n/a (no token counts)"
            parts.append(f"{text} at {name} ({profile.price})")
    return "cost per task (median): " + ("; ".join(parts) if parts else "unpriced")


def sweep_command(
    inputs: Annotated[
        list[Path], typer.Argument(help="Trace files, trace directories or experiment dirs.")
    ],
    rates: Annotated[
        str, typer.Option(help="Comma-separated decode rates, tok/s.")
    ] = "20,40,80,160,320,750,1000,2000,5000",
    ttft: Annotated[
        str | None, typer.Option(help="Comma-separated TTFT bases, s (default: the profile's).")
    ] = None,
    profile: ProfileOpt = "slow-80",
    profile_set: Annotated[
        list[str] | None,
        typer.Option(
            "--profile-set",
            help="Override a profile field (repeatable), e.g. decode_context_slowdown=0 "
            "(as if context did not slow decode) or background_streams=32 (as if 32 other "
            "agents shared the server).",
            show_default=False,
        ),
    ] = None,
    reference: Annotated[
        float | None,
        typer.Option(help="Decode rate speedups are relative to (default: the lowest)."),
    ] = None,
    output: OutputOpt = None,
) -> None:
    """Predicted task time and speedup of recorded runs over decode rates (and TTFTs).

    `--profile` gives everything but the decode rate and TTFT (prefill, stages, jitter);
    `-o FILE` writes the table as JSON (`-o -`: JSON on stdout, no table).
    """
    from looplab.analysis.sweep import run_sweep
    from looplab.latency.presets import resolve_profile
    from looplab.traces.inputs import load_traces

    base = resolve_profile(profile, profile_set or [])
    rate_list = parse_numbers(rates, "--rates", float)
    ttft_list = parse_numbers(ttft, "--ttft", float) if ttft else [base.ttft_s]
    if reference is not None and reference <= 0:
        raise ConfigError("must be a positive rate", field="--reference")
    traces = load_traces(inputs)
    rows, summaries = run_sweep(traces, rate_list, ttft_list, base, reference)
    text = json.dumps([e.as_dict() for e in summaries], indent=2) + "\n"
    if output is not None and str(output) == "-":
        write_output(output, text)
        return
    console = out_console()
    untimed = len(traces) - len({r.run_id for r in rows})
    if not summaries:
        console.print(
            f"no timed runs: none of the {len(traces)} trace(s) has a recorded task time and "
            "model calls with token counts (e.g. SWE-agent demonstrations), so there is "
            "nothing to re-time; speedup n/a",
            highlight=False,
        )
    else:
        left_out = f"; {untimed} untimed trace(s) left out" if untimed else ""
        title = (
            f"sweep of {len(traces) - untimed} timed trace(s), {len(rows)} points "
            f"(medians; speedup vs {reference or min(rate_list):g} tok/s{left_out})"
        )
        console.print(_sweep_table(summaries, title))
        console.print(_sweep_costs(traces, base.name), highlight=False)
    for line in _untimed_lines(traces):
        console.print(line, highlight=False, markup=False)
    if output is not None and write_output(output, text):
        console.print(f"table: {output}")


def _untimed_lines(traces: list[Any]) -> list[str]:
    """One line per trace the sweep left out: its file (or run id) and why."""
    from looplab.analysis.sweep import untimed_reason

    lines = []
    for trace in traces:
        reason = untimed_reason(trace)
        if reason is not None:
            name = str(trace.path) if trace.path is not None else trace.header.run_id
            lines.append(f"left out (untimed): {name}: {reason}")
    return lines
