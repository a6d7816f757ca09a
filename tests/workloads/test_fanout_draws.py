"""Workload fan-out and first-prompt cache share: drawn on their own streams, off by default."""

from __future__ import annotations

from pathlib import Path

from looplab.agents.workload.runner import run_workload_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.tasks import default_tasks_dir
from looplab.workloads.model import (
    FanoutParameters,
    Parameter,
    Provenance,
    dump_workload,
    load_workload,
)
from looplab.workloads.resolve import WorkloadSettings
from looplab.workloads.sample import draw_shape

MODERN = default_tasks_dir() / "workload" / "coding-agent-2026" / "workload.yaml"
CLASSIC = default_tasks_dir() / "workload" / "mini-swe-agent-deepseek" / "workload.yaml"


def _fixed(value: float) -> Parameter:
    return Parameter.model_validate(
        {"distribution": value, "provenance": {"status": "estimated", "how": ["test"]}}
    )


def test_fanout_and_first_share_leave_the_task_own_draws_unchanged() -> None:
    """Adding fan-out and a first-prompt share to a shipped workload changes only the
    sub-agents and step 0's cache hit; without them the shape (and its key) is as before."""
    base = load_workload(CLASSIC)
    parameters = base.parameters.model_copy(
        update={
            "initial_cached_share": _fixed(0.5),
            "fanout": FanoutParameters(
                probability=1.0,
                count=_fixed(2),
                steps=_fixed(3),
                provenance=Provenance(status="estimated", how=["test"]),
            ),
        }
    )
    fanned = base.model_copy(update={"parameters": parameters})
    for seed in range(5):
        plain, drawn = draw_shape(base, seed), draw_shape(fanned, seed)
        assert plain.steps[0].cached_tokens == 0
        first = drawn.steps[0]
        assert first.cached_tokens == int(0.5 * (first.prompt_tokens or 0))
        strip = {"subagents": [], "cached_tokens": None}
        assert [s.model_copy(update=strip) for s in drawn.steps] == [
            s.model_copy(update=strip) for s in plain.steps
        ]
        assert all(len(s.subagents) == 2 for s in drawn.steps[:-1])
        assert all(len(sub) == 3 for s in drawn.steps[:-1] for sub in s.subagents)
        assert not drawn.steps[-1].subagents
        assert drawn.key != plain.key
    assert "fanout" not in dump_workload(base) and "initial_cached_share" not in dump_workload(base)


def test_the_2026_workload_draws_its_published_shape(tmp_path: Path) -> None:
    """coding-agent-2026 loads, round-trips, and its draws show the calibration: step 0
    82.55% cached, later steps 97.55% (at most the previous prompt), sub-agents of 2-4
    steps on about a tenth of steps."""
    model = load_workload(MODERN)
    again = tmp_path / "again.yaml"
    again.write_text(dump_workload(model))
    assert load_workload(again) == model
    shapes = [draw_shape(model, seed) for seed in range(200)]
    steps = [s for shape in shapes for s in shape.steps]
    first = shapes[0].steps[0]
    assert first.cached_tokens == int(0.8255 * (first.prompt_tokens or 0))
    for before, later in zip(shapes[0].steps, shapes[0].steps[1:], strict=False):
        assert later.prompt_tokens is not None and before.prompt_tokens is not None
        wanted = min(int(0.9755 * later.prompt_tokens), before.prompt_tokens)
        assert later.cached_tokens == wanted
    spawning = [s for s in steps if s.subagents]
    assert 0.06 < len(spawning) / len(steps) < 0.14
    assert all(2 <= len(sub) <= 4 for s in spawning for sub in s.subagents)
    assert all(not shape.steps[-1].subagents for shape in shapes)


async def test_drawn_subagents_are_played_live_and_concurrently() -> None:
    """A drawn shape with sub-agents plays through the workload agent: each spawning step
    delegates to sub-agents that play their own drawn steps (tools slept for real) on the
    same sandbox, concurrently; the run plays every parent step."""
    model = load_workload(MODERN)
    seed = next(
        s for s in range(200) if sum(len(t.subagents) for t in draw_shape(model, s).steps) >= 2
    )
    shape = draw_shape(model, seed).scaled(tool_scale=0.002, other_scale=0.0)
    profile = resolve_profile("fast-750", ["ttft_s=0", "decode_tps=20000", "prefill_tps=null"])
    async with SimulatorServer(profile) as server:
        server.simulator.policies["looplab-workload"].load(shape)  # type: ignore[attr-defined]
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-workload")
        async with InstrumentedClient(endpoint) as client:
            run = await run_workload_task(shape, client, settings=WorkloadSettings())
    assert run.check.passed, run.check.output
    wanted = [(k, len(sub)) for k, step in enumerate(shape.steps) for sub in step.subagents]
    played = sorted((s.step, len(s.result.steps)) for s in run.result.subruns)
    assert played == sorted(wanted)
    assert all(s.result.end_reason in ("finish", "answer") for s in run.result.subruns)
    assert run.result.knob_stats["subagents"] == len(wanted)
