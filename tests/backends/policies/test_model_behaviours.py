"""Bundled model behaviours: small-fast and large-slow play the scripted tasks differently."""

from __future__ import annotations

from dataclasses import fields

import openai

from looplab.backends.policies import POLICIES
from looplab.backends.policies.models import BEHAVIOURS, GAVE_UP_SUMMARY, ModelBehaviour
from looplab.backends.policies.scripted import ScriptedPolicy
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.tasks import expand_solution, load_task, substitute

FAST = ["decode_tps=20000", "ttft_s=0", "prefill_tps=null", "output_tokens=200"]


def _plans(behaviour: str, task_id: str, values: dict[str, str], seeds: int) -> list[list]:  # type: ignore[type-arg]
    policy = ScriptedPolicy(behaviour=BEHAVIOURS[behaviour])
    policy._recognise("")  # loads the tasks
    assert policy._tasks is not None
    (task,) = [t for t in policy._tasks if t.task_id == task_id]
    return [policy.plan(task, values, seed) for seed in range(seeds)]


def test_every_parameter_names_its_source_or_says_assumed() -> None:
    """Each behaviour parameter (every field but its name, description and sources) has a
    source line; both behaviours are served policies."""
    parameters = {f.name for f in fields(ModelBehaviour)} - {"name", "description", "sources"}
    assert parameters >= {"detours", "reply_scale", "reasoning_tokens", "give_up"}
    for name, behaviour in BEHAVIOURS.items():
        assert set(behaviour.sources) == parameters
        assert all(text.strip() for text in behaviour.sources.values())
        assert name in POLICIES


def test_small_fast_takes_more_steps_and_sometimes_gives_up() -> None:
    """Over 8 seeds of fix-pager, small-fast's plans are longer than the reference on
    average and some end by giving up: a wrong last edit, a failing test run, then finish
    with the give-up summary; large-slow plays the reference every time."""
    task = load_task("coding/fix-pager")
    assert task.solution is not None
    values = {"docs_url": "http://127.0.0.1:1"}
    reference = expand_solution(task.solution, values)
    small = _plans("small-fast", "coding/fix-pager", values, 8)
    large = _plans("large-slow", "coding/fix-pager", values, 8)
    assert all(plan == reference for plan in large)
    assert sum(len(p) for p in small) / len(small) > len(reference)
    gave_up = [p for p in small if p[-1].calls[0].args.get("summary") == GAVE_UP_SUMMARY]
    assert 0 < len(gave_up) < len(small)
    for plan in gave_up:
        assert plan[-2].calls[0].tool == "run_tests" and plan[-2].calls[0].expect == "FAILED"
        wrong = plan[-3].calls[0]
        assert wrong.tool == "edit_file" and "first attempt" in str(wrong.args["new_text"])


async def test_replies_shorter_for_small_fast_longer_with_reasoning_for_large_slow() -> None:
    """The first step of fix-pager at a fixed 200-token draw: small-fast writes 0.6 of the
    reference's text and no hidden reasoning; large-slow 1.5 of it and 300 hidden tokens."""
    task = load_task("coding/fix-pager")
    prompt = substitute(task.spec.prompt, {"docs_url": "http://127.0.0.1:1"})
    profile = resolve_profile("fast-750", FAST)
    visible: dict[str, int] = {}
    hidden: dict[str, int] = {}
    with SimulatorServer(profile) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k")
        for model in ("scripted", "small-fast", "large-slow"):
            reply = await client.chat.completions.create(
                model=f"looplab-{model}", messages=[{"role": "user", "content": prompt}]
            )
            usage = reply.usage
            assert usage is not None and usage.completion_tokens_details is not None
            hidden[model] = usage.completion_tokens_details.reasoning_tokens or 0
            visible[model] = usage.completion_tokens - hidden[model]
            assert reply.choices[0].message.tool_calls  # the step's calls are unchanged
        await client.close()
    assert hidden == {"scripted": 60, "small-fast": 0, "large-slow": 300}
    assert visible["small-fast"] < visible["scripted"] < visible["large-slow"]
