"""Synthetic experiments: many plausible traces in seconds, to measure report speed.

The runs follow the shape of the quickstart experiment (two profiles differing only in
decode rate; coding tasks including the `coding/nbugs-N` family) with seeded random
token counts and tool times, and lorem content of realistic sizes (messages, tool
arguments, outputs of up to a few KB), so report size and speed are measured with
transcripts to show. They are labelled `synthetic` in their header notes and are not
measurements of anything. Their lorem content is a seeded slice of one fixed lorem text
(`_lorem`), not drawn word by word: a thousand runs hold millions of words.
"""

from __future__ import annotations

import functools
import json
import random
from datetime import UTC, datetime
from pathlib import Path

from looplab.backends.policies.lorem import lorem_pieces
from looplab.latency.presets import resolve_profile
from looplab.latency.timing import CallTokens, TimingModel
from looplab.layout import ExperimentDir
from looplab.traces.assembly.axis import RunAxis
from looplab.traces.assembly.builder import EventBuilder
from looplab.traces.assembly.items import ModelDraft, RunEndDraft, StepDraft, ToolDraft
from looplab.traces.cell import TraceCell
from looplab.traces.end_reason import EndReason
from looplab.traces.schema import TraceHeader

__all__ = ["write_synthetic_experiment"]

_TASKS = [
    "coding/nbugs-2",
    "coding/nbugs-4",
    "coding/nbugs-8",
    "coding/fix-pager",
    "coding/slow-suite",
]


def write_synthetic_experiment(
    directory: Path,
    runs: int,
    *,
    profiles: tuple[str, ...] = ("slow-80", "fast-750"),
    seed: int = 0,
) -> Path:
    """Write `runs` synthetic traces into `directory/traces/` (an experiment directory).

    Returns:
        The directory.
    """
    rng = random.Random(seed)
    layout = ExperimentDir(directory)
    traces = layout.traces
    traces.mkdir(parents=True, exist_ok=True)
    created = datetime(2026, 1, 1, tzinfo=UTC)
    timings = {name: TimingModel.from_profile(resolve_profile(name)) for name in profiles}
    for index in range(runs):
        name = profiles[index % len(profiles)]
        task = _TASKS[(index // len(profiles)) % len(_TASKS)]
        repetition = index // (len(profiles) * len(_TASKS))
        cell = f"{name}__coding__{task.replace('/', '-')}__r{repetition}"
        lines = _run(rng, cell, (name, timings[name]), task, repetition, created)
        layout.trace(cell).write_text("\n".join(lines) + "\n", encoding="utf-8")
    layout.config.write_text(json.dumps({"name": "synthetic", "runs": runs}))
    return directory


def _run(
    rng: random.Random,
    cell: str,
    profile: tuple[str, TimingModel],
    task: str,
    repetition: int,
    created: datetime,
) -> list[str]:
    profile_name, timing = profile
    run_id = f"{cell}.{rng.getrandbits(32):08x}"
    bugs = int(task.rsplit("-", 1)[1]) if task.split("/")[1].startswith("nbugs") else 2
    steps = 2 + 2 * bugs + rng.randint(0, 2)
    header = _header(run_id, created, profile_name, task, repetition)
    text = random.Random(f"{cell}-text")  # content never shifts the timings' draws
    builder = EventBuilder(run_id, RunAxis(0.0))
    events: list[str] = [header.model_dump_json()]
    events.append(builder.run_start(task=task).model_dump_json())
    t = 0.0
    prompt = 1000
    for step in range(steps):
        start = t
        completion = max(2, int(rng.lognormvariate(5.37, 0.6)))
        uncached = 400 + rng.randint(0, 400)
        sent = start + 0.002
        plan = timing.plan(CallTokens(prompt + uncached, prompt, 0, completion))
        first = sent + plan.first_visible_s
        last = first + plan.decode_s
        end = last + 0.0005
        call = ModelDraft(
            start=start,
            end=end,
            sent=sent,
            first_token=first,
            last_token=last,
            prompt_tokens=prompt + uncached,
            cached_tokens=prompt,
            completion_tokens=completion,
            reasoning_tokens=0,
            finish_reason="tool_calls",
            profile=profile_name,
            message={"role": "assistant", "content": _lorem(text, completion // 2)},
        )
        prompt += uncached + completion
        tools, t = _tool_calls(rng, text, step, end + 0.001)
        t += 0.0008
        draft = StepDraft(model=call, tools=tools, start=start, end=t)
        events.extend(e.model_dump_json() for e in builder.step(step, draft))
    outcome = RunEndDraft(
        end_reason=EndReason.FINISH, end_time=t, success=rng.random() > 0.05, sandbox_start_s=0.15
    )
    events.append(builder.run_end(outcome).model_dump_json())
    return events


def _header(
    run_id: str, created: datetime, profile_name: str, task: str, repetition: int
) -> TraceHeader:
    cell = TraceCell(backend=profile_name, agent="coding", task=task, repetition=repetition, seed=0)
    return TraceHeader(
        run_id=run_id,
        created=created,
        experiment="synthetic",
        cell=cell,
        task=task,
        agent="coding",
        model="looplab-scripted",
        profile=resolve_profile(profile_name).model_dump(mode="json", by_alias=True),
        clock="virtual",
        notes=["synthetic: generated by looplab.bench.synthetic, not a measurement"],
    )


def _tool_calls(
    rng: random.Random, text: random.Random, step: int, t: float
) -> tuple[list[ToolDraft], float]:
    """One or two tool calls from `t` on, one after another; the calls and when the last
    one ended."""
    tools = []
    for call in range(rng.choice((1, 1, 2))):
        duration = rng.choice((0.001, 0.05, 0.4, 1.2)) * rng.uniform(0.5, 1.5)
        name = ("read_file", "edit_file", "run_tests", "browse")[rng.randint(0, 3)]
        output = _lorem(text, text.randint(20, 600))
        tools.append(
            ToolDraft(
                name=name,
                start=t,
                end=t + duration,
                call_id=f"c{step}_{call}",
                arguments=json.dumps({"path": f"src/module_{step}.py", "note": _lorem(text, 8)}),
                ok=True,
                exit_code=0,
                output=output,
                output_chars=len(output),
            )
        )
        t += duration
    return tools, t


LOREM_WORDS = 8192
"""Words of the fixed lorem text every synthetic content is a slice of."""


@functools.cache
def _lorem_text() -> tuple[str, ...]:
    """The fixed lorem text, as word pieces (each but the first after a space)."""
    return tuple(lorem_pieces(LOREM_WORDS, random.Random("looplab-synthetic-lorem")))


def _lorem(rng: random.Random, words: int) -> str:
    """`words` lorem words from a seeded place in the fixed text (drawn word by word only
    past its length)."""
    words = max(1, words)
    text = _lorem_text()
    if words >= len(text):
        return "".join(lorem_pieces(words, rng))
    start = rng.randrange(len(text) - words)
    return "".join(text[start : start + words]).lstrip()
