"""`looplab run`, `replay`, `sweep`, `bench replay`, `bench clock`.

Commands of the experiments package; `looplab.cli.app` registers them.
"""

from __future__ import annotations

import asyncio
import json
import statistics
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from looplab.cli.options import (
    OutputOpt,
    ProfileOpt,
    ProfileSetOpt,
    SetOpt,
    err_console,
    out_console,
    parse_numbers,
    write_output,
)
from looplab.errors import ConfigError

__all__ = [
    "bench_clock_command",
    "bench_replay_command",
    "replay_command",
    "run_command",
    "sweep_command",
]


def run_command(
    config: Annotated[Path, typer.Argument(help="Experiment YAML (experiments/configs/*.yaml).")],
    set_: SetOpt = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Discard earlier results in the output directory.")
    ] = False,
) -> None:
    """Run an experiment: every backend x agent x task x repetition, traced and indexed.

    Re-running the same command resumes: complete cells are kept, cut-off ones rerun.
    Everything (config, tasks, profiles) is validated before anything is written.
    """
    from looplab.config import load_model
    from looplab.experiments.config import ExperimentConfig
    from looplab.extras import require

    experiment = load_model(ExperimentConfig, config, set_ or [])
    require("agents", "looplab run")
    require("store", "looplab run")
    if experiment.sandbox.kind == "docker":
        require("docker", "a docker sandbox")

    from looplab.experiments.progress import RunProgress
    from looplab.experiments.runner import ExperimentRunner

    errors = err_console()
    progress = RunProgress(errors)
    runner = ExperimentRunner(experiment, progress=progress, status=progress.status)
    cells = runner.validate()
    runner.prepare_directory(fresh=fresh)
    errors.print(
        f"[bold]{experiment.name}[/]: {len(cells)} cells -> {runner.directory} "
        f"(clock {experiment.clock}, sandbox {experiment.sandbox.kind}, "
        f"concurrency {experiment.concurrency})"
    )
    try:
        with progress:
            result = asyncio.run(runner.run())
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (Terminated, exit code 143)
        _print_interrupted(runner.traces, len(cells), config)
        raise typer.Exit(getattr(stop, "exit_code", 130)) from None
    _finish_run(result)


def _print_interrupted(traces: Path, total: int, config: Path) -> None:
    kept = sum(1 for p in traces.glob("*.jsonl") if p.is_file())
    err_console().print(
        f"[yellow]interrupted[/]: {kept} of {total} cell traces kept in {traces} "
        "(a cut-off run is set aside, never counted). Resume with the same command: "
        f"looplab run {config}",
        highlight=False,
    )


def _finish_run(result: Any) -> None:
    from looplab.experiments.verdict import reference_verdict
    from looplab.report.build import assign_groups
    from looplab.report.model import load_runs
    from looplab.report.views import headline

    records = load_runs([result.directory])
    assign_groups(records)  # one group per backend, and per variant when there are axes
    _print_summary(headline(records))
    _print_knobs(records)
    console = out_console()
    console.print(f"results: {result.directory} (traces/, results.duckdb)")
    verdict = reference_verdict(result.directory / "traces")
    if not verdict.ok:
        err_console().print(f"[bold red]{verdict.message}[/]", highlight=False)
    failed = [o for o in result.outcomes if o.status == "failed"]
    if failed:
        err_console().print(
            f"[red]{len(failed)} cell(s) failed[/]: "
            + "; ".join(f"{o.cell.id}: {o.error}" for o in failed[:5]),
            highlight=False,
        )
    if failed or not verdict.ok:
        raise typer.Exit(1)


def _print_knobs(records: list[Any]) -> None:
    """The knob table (`looplab.report.knobs`), when the runs have axes."""
    from looplab.experiments.knob_table import knob_table
    from looplab.report.knobs import knob_rows

    rows = knob_rows(records)
    if rows:
        out_console().print(knob_table(rows))


def _print_summary(groups: list[Any]) -> None:
    from looplab.report.views import headline_sentence

    table = Table(title="per backend (median over runs; split = share of summed task time)")
    for column in (
        "backend", "tok/s", "runs", "solved", "task s p50", "p90", "steps",
        "model", "tools", "other", "speedup (95% CI)",
    ):  # fmt: skip
        table.add_column(column, justify="right")
    for group in groups:
        ci = f" ({group.ci[0]:.2f}-{group.ci[1]:.2f})" if group.ci else ""
        table.add_row(
            group.label,
            f"{group.decode_tps:g}" if group.decode_tps else "-",
            str(group.runs),
            f"{group.solved}/{group.checked}",
            f"{group.median_task_s:.2f}",
            f"{group.p90_task_s:.2f}",
            f"{group.median_steps:g}",
            f"{group.model_share:.0%}",
            f"{group.tool_share:.0%}",
            f"{group.overhead_share:.0%}",
            f"{group.speedup:.2f}x{ci}" if group.speedup == group.speedup else "-",
        )
    out_console().print(table)
    sentence = headline_sentence(groups)
    if sentence:
        out_console().print(sentence, highlight=False)


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
) -> None:
    """Replay recorded runs at another latency profile, virtually or live."""
    from looplab.backends.presets import resolve_profile
    from looplab.experiments.replay import default_output, replay_live, replay_virtual
    from looplab.traces.inputs import load_traces
    from looplab.traces.io import write_trace

    if mode not in ("virtual", "live"):
        raise ConfigError(f"unknown mode {mode!r}", field="--mode", allowed=["virtual", "live"])
    if mode == "live":
        from looplab.extras import require

        require("agents", "replay --mode live")
    resolved = resolve_profile(profile, profile_set or [])
    traces = load_traces(inputs)
    destination = output or default_output(inputs)
    table = Table(title=f"{mode} replay at {resolved.name} ({resolved.decode_tps:g} tok/s)")
    for column in ("run", "steps", "recorded s", "replayed s", "speedup", "divergences"):
        table.add_column(column, justify="right")
    for trace in traces:
        divergences: list[str] = []
        if mode == "virtual":
            new = replay_virtual(trace, resolved)
        else:
            live = asyncio.run(replay_live(trace, resolved))
            new = live.trace
            divergences = [
                f"step {d.step} {d.tool}: {d.recorded} -> {d.replayed}" for d in live.divergences
            ]
        write_trace(destination / f"{new.header.run_id}.jsonl", new.header, new.events)
        before = trace.end.end if trace.end else 0.0
        after = new.end.end if new.end else 0.0
        table.add_row(
            trace.header.run_id,
            str(len(trace.model_calls())),
            f"{before:.2f}",
            f"{after:.2f}",
            f"{before / after:.2f}x" if after else "-",
            "; ".join(divergences) or "none",
        )
    console = out_console()
    console.print(table)
    console.print(f"replayed traces: {destination}")


def _sweep_table(summaries: list[Any], title: str) -> Table:
    table = Table(title=title)
    for column in (
        "tok/s", "TTFT s", "task s", "speedup", "decode", "reasoning", "TTFT+prefill", "tools",
        "other", "Amdahl ceiling",
    ):  # fmt: skip
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
        )
    return table


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
    from looplab.backends.presets import resolve_profile
    from looplab.experiments.sweep import run_sweep
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
    if output is not None and write_output(output, text):
        console.print(f"table: {output}")


def bench_replay_command(
    traces: Annotated[int, typer.Option(min=1, help="Synthetic traces to re-time.")] = 50,
    steps: Annotated[int, typer.Option(min=1, help="Steps per synthetic trace.")] = 200,
) -> None:
    """Re-timing throughput (sweep and full replay) and harness overhead per step."""
    from looplab.experiments.bench import run_replay_bench

    result = run_replay_bench(traces, steps)
    table = Table(title="looplab bench replay")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("target", justify="right")
    table.add_row(
        "sweep re-timing (totals)", f"{result.sweep_steps_per_s:,.0f} steps/s", ">= 100,000"
    )
    table.add_row(
        "replay --mode virtual (full events)", f"{result.warp_steps_per_s:,.0f} steps/s", ""
    )
    table.add_row(
        f"harness overhead per step, p50 ({result.overhead_steps} steps)",
        f"{result.overhead_ms_p50:.2f} ms",
        "<= 3 ms",
    )
    table.add_row("harness overhead per step, p95", f"{result.overhead_ms_p95:.2f} ms", "")
    out_console().print(table)


def bench_clock_command(
    config: Annotated[
        Path, typer.Argument(help="Experiment to run twice (wall, then virtual clock).")
    ] = Path("experiments/configs/quickstart.yaml"),
    set_: SetOpt = None,
) -> None:
    """Virtual-clock task times against wall-clock ones, cell by cell (target: within 3%)."""
    _print_clock_bench(config, set_ or [])


def bench_knobs_command(set_: SetOpt = None) -> None:
    """The latency knobs on both clocks: a small subset of knobs.yaml (fix-pager, slow-80
    and fast-750, all knobs off and all on), virtual vs wall task times (target: 3%)."""
    from looplab.bundled import bundled_configs_dir

    _print_clock_bench(bundled_configs_dir() / "knobs-bench.yaml", set_ or [])


def _print_clock_bench(config: Path, set_: list[str]) -> None:
    from looplab.experiments.bench import run_clock_bench

    pairs = run_clock_bench(config, set_)
    if not pairs:
        raise ConfigError("no cell finished on both clocks", field="CONFIG")
    table = Table(title=f"wall vs virtual clock: {config}")
    for column in (
        "cell", "wall s", "virtual s", "difference", "tools' own change", "difference less it",
        "re-timed s", "difference",
    ):  # fmt: skip
        table.add_column(column, justify="right")
    for pair in pairs:
        retimed = pair.retimed_difference_pct
        retimed_s = "-" if pair.retimed_s is None else f"{pair.retimed_s:.2f}"
        table.add_row(
            pair.cell, f"{pair.wall_s:.2f}", f"{pair.virtual_s:.2f}",
            f"{pair.difference_pct:+.2f}%", f"{pair.tool_change_s:+.2f} s",
            f"{pair.tool_corrected_pct:+.2f}%", retimed_s,
            "-" if retimed is None else f"{retimed:+.2f}%",
        )  # fmt: skip
    console = out_console()
    console.print(table)
    median = statistics.median(abs(p.difference_pct) for p in pairs)
    worst = max(abs(p.difference_pct) for p in pairs)
    console.print(
        f"virtual clock: median |difference| {median:.2f}% (target <= 3%), worst {worst:.2f}%"
    )
    corrected = statistics.median(abs(p.tool_corrected_pct) for p in pairs)
    console.print(
        f"less the tools' own run-to-run change (machine load): median |difference| "
        f"{corrected:.2f}%"
    )
    retimed_pcts = [abs(d) for p in pairs if (d := p.retimed_difference_pct) is not None]
    if retimed_pcts:
        console.print(
            "virtual re-timing of the wall-clock runs: median |difference| "
            f"{statistics.median(retimed_pcts):.2f}% (target <= 3%), worst {max(retimed_pcts):.2f}%"
        )
