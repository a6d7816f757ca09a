"""Write the two computer-use workloads, every parameter with its provenance:

- tasks/workload/browser-use-gpt-4o/workload.yaml: browser-use 0.1.40 + GPT-4o on
  WebVoyager (screenshots on), no hidden reasoning;
- tasks/workload/browser-use-gpt-4o-planning/workload.yaml: the same actions (`draws_as`)
  with a reasoning model's hidden tokens and a planner and a reflection call per action
  (Agent S2-like), sized so that planning + reflection is 75-94% of model time at 80 tok/s.

Measured knots are quantiles (p0, 5, 10, 20, ..., 90, 95, 99, p100) of the public
open-operator-evals records (nottelabs/open-operator-evals, WebVoyager30/BrowserUse: 240
runs of browser-use 0.1.40 + GPT-4o, 219 with steps), read by looplab's
`open-operator-evals` importer and fitted by `looplab calibrate`. Only these aggregates
are kept here: the records themselves are not shipped (the repository has no licence).
They reproduce the published aggregates: 9.2 s per step p50 (p90 17.2), 4,444 input and
87 output tokens per step (mean), 8.3 steps per run with steps (7.6 over all 240). Run
from the repository root:

    .venv/bin/python scripts/build-computer-use-workloads.py
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

from looplab.workloads.distributions import Categorical, Empirical

from looplab.workloads.model import (
    CallParameters,
    FittedFrom,
    Parameter,
    PositionFactors,
    Provenance,
    ToolNames,
    WorkloadModel,
    WorkloadParameters,
    dump_workload,
)

GRID = [0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0]
RECORDS = (
    "measured: quantiles of nottelabs/open-operator-evals WebVoyager30/BrowserUse "
    "(browser-use 0.1.40 + GPT-4o, screenshots on; 219 runs with steps, 1,828 steps), "
    "imported by looplab's open-operator-evals importer (records not shipped: no licence)"
)
ESTIMATED = (
    "estimated per step by the importer: steps[].duration_in_s (measured) minus the model "
    "call estimated from its tokens (0.5 s TTFT + 4.27e-5 s per input token + output / 80 "
    "tok/s; looplab.traces.importers.browser)"
)
STEPS = [1, 3, 4, 4, 5, 5, 6, 7, 8, 10, 17.3, 20, 20, 20]
OUTPUT = [47, 60.35, 63, 68, 71, 75, 79, 84, 89, 97, 114, 136, 253.66, 605]
INITIAL = [2878, 2878, 2881, 2881, 2882, 2883, 2884.5, 2886, 2891, 2896, 2897, 2904, 2913, 2913]
GROWTH = [-16466, -509.55, -207.1, 22, 103, 123, 191, 286.4, 417, 628.2, 919, 1411.5, 2550, 16463]
BROWSER = [
    1.3675,
    3.0589,
    3.4956,
    4.3477,
    5.0961,
    5.9696,
    7.1489,
    8.2472,
    9.425,
    10.9078,
    14.5647,
    21.7897,
    45.5879,
    129.5152,
]
POSITION = [0.683, 1.042, 1.142, 1.304]
POSITION_HOW = (
    "the records' median browser time per step (estimated as above) for steps 1-3, 4-6, "
    "7-9 and 10+ (5.20, 7.93, 8.70, 9.94 s) over the median of all steps (7.62 s); the "
    "records' step time grows with position likewise (median 6.7 s for steps 1-3, 11.7 s "
    "for 10+)"
)
OTHER_NOTE = (
    "0 per step: in the records a task's time beyond its steps (browser start and the like: "
    "p50 0, p95 23 s, p99 80 s per task) comes once per task, not per step, and a per-step "
    "draw would add it to every action; it is left out"
)
TOOLS = {
    "click_element": 642,
    "input_text": 236,
    "switch_tab": 158,
    "open_tab": 154,
    "done": 132,
    "extract_content": 124,
    "scroll_down": 91,
    "go_to_url": 73,
    "scroll_to_text": 33,
    "go_back": 15,
    "search_google": 7,
    "send_keys": 2,
}
ACTION_SHARE = 0.5
"""Share of the browser's time per step that is the action itself; the rest is the
observation (page-load wait, DOM extraction, screenshot). No public record splits it."""
SPLIT = (
    f"assumed split: {ACTION_SHARE:.0%} of the browser's measured-minus-model time per step "
    "is the action, the rest the observation (browser-use 0.1.40 waits 0.25-5 s for page "
    "load and network idle and extracts the DOM and a screenshot each step; AgentLab's "
    "StepTimestamps would measure the split, no public record of it was found)"
)
SCREENSHOT = (
    "GPT-4o image tokens of one 1280x800 screenshot at high detail: 85 + 170 per 512-px "
    "tile = 1,105 (OpenAI vision pricing rule); screenshots change every step, so every "
    "call prefills it (the DOM text of the state message, not counted here, comes on top)"
)
CACHE = (
    "assumed: GPT-4o's automatic prompt caching serves everything before the newest "
    "observation (system prompt, task, earlier replies); the prefix stops at the screenshot"
)


def _measured(values: list[float], how: str = RECORDS) -> Parameter:
    return Parameter(
        distribution=Empirical(probabilities=GRID, values=values),
        provenance=Provenance(status="measured", how=[how], observations=1828),
    )


def _estimated(values: list[float], *how: str) -> Parameter:
    return Parameter(
        distribution=Empirical(probabilities=GRID, values=values),
        provenance=Provenance(status="estimated", how=list(how)),
    )


def _fixed(value: float, how: str) -> Parameter:
    return Parameter(
        distribution=Categorical(values=[value], weights=[1.0]),
        provenance=Provenance(status="estimated", how=[how]),
    )


def _lognormal(median: float, sigma: float, how: str) -> Parameter:
    def knot(q: float) -> float:
        q = min(max(q, 0.001), 0.999)  # p0 / p100 at the 0.1% / 99.9% quantiles
        return round(median * math.exp(sigma * NormalDist().inv_cdf(q)))

    return _estimated([knot(q) for q in GRID], how)


def plain() -> WorkloadModel:
    """(b): browser-use 0.1.40 + GPT-4o, no hidden reasoning."""
    half = [round(v * ACTION_SHARE, 4) for v in BROWSER]
    rest = [round(v * (1 - ACTION_SHARE), 4) for v in BROWSER]
    parameters = WorkloadParameters(
        steps=_measured(STEPS),
        output_tokens=_measured(OUTPUT),
        reasoning_tokens=_fixed(0, "GPT-4o is not a reasoning model: no hidden tokens"),
        initial_prompt_tokens=_measured(INITIAL),
        new_prompt_tokens=_measured(
            GROWTH, RECORDS + "; negative: browser-use drops the previous state message"
        ),
        cached_share=_fixed(1.0, CACHE),
        tool_calls=_fixed(1, "browser-use runs one step's actions as one multi_act: one call"),
        tool_names=ToolNames(
            weights={k: float(v) for k, v in TOOLS.items()},
            provenance=Provenance(status="measured", how=[RECORDS], observations=1667),
        ),
        tool_s=_estimated(half, ESTIMATED, SPLIT),
        other_s=_fixed(0.0, OTHER_NOTE),
        observation_s=_estimated(rest, ESTIMATED, SPLIT),
        observation_tokens=_fixed(1105, SCREENSHOT),
        position_factors=PositionFactors(
            every=3,
            factors=POSITION,
            provenance=Provenance(status="estimated", how=[POSITION_HOW], observations=1828),
        ),
    )
    return WorkloadModel(
        name="browser-use-gpt-4o",
        description="browser-use 0.1.40 with GPT-4o on WebVoyager (screenshots on), no hidden "
        "reasoning; one step = one action (scripts/build-computer-use-workloads.py)",
        fitted_from=FittedFrom(
            sources=["import:open-operator-evals (aggregates only)"],
            agents=["browser-use 0.1.40"],
            models=["gpt-4o"],
        ),
        parameters=parameters,
        notes=[
            "parameters are drawn independently; the browser time's growth with position "
            "is the position factors'",
        ],
    )


PLANNER = "assumed (Agent S2-like manager with a reasoning model): log-normal median {} tokens"
SHARE_NOTE = (
    "sizes chosen so planner + reflection take 75-94% of model time at slow-80 (TTFT 0.3 s, "
    "prefill 10k tok/s): per action ~0.5 + 1,300/80 = 16.8 s planner, 0.5 + 550/80 = 7.4 s "
    "reflection, 0.5 + 279/80 = 4.0 s actor (medians): 86%; OSWorld-Human (arXiv "
    "2506.16042) measures 75-94% of Agent S2's task time in planning and reflection"
)


def planning() -> WorkloadModel:
    """(c): the same actions, a reasoning model, a planner and a reflection per action."""
    base = plain()
    parameters = base.parameters.model_copy(
        update={
            "reasoning_tokens": _lognormal(200, 0.8, PLANNER.format(200) + " for the actor"),
            "planner": CallParameters(
                output_tokens=_lognormal(300, 0.5, PLANNER.format(300) + "; " + SHARE_NOTE),
                reasoning_tokens=_lognormal(1000, 0.8, PLANNER.format(1000) + " hidden"),
            ),
            "reflection": CallParameters(
                output_tokens=_lognormal(150, 0.5, PLANNER.format(150) + " (reflection)"),
                reasoning_tokens=_lognormal(400, 0.8, PLANNER.format(400) + " hidden (reflection)"),
            ),
        }
    )
    return base.model_copy(
        update={
            "name": "browser-use-gpt-4o-planning",
            "draws_as": base.name,
            "description": "the browser-use-gpt-4o actions with a reasoning model's hidden tokens "
            "and a planner + a reflection call per action (Agent S2-like; OSWorld-Human "
            "arXiv 2506.16042: 75-94% of task time in planning and reflection)",
            "parameters": parameters,
            "notes": [
                *base.notes,
                "not modelled: Agent S2's 1.4-4.3x the human step count (the actions are "
                "browser-use's) and its later steps up to 3x longer (only browser-use's "
                "growth of browser time with position, up to 1.3x, is)",
            ],
        }
    )


def main() -> None:
    for model in (plain(), planning()):
        path = Path("tasks/workload") / model.name / "workload.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_workload(model))
        print(path)


if __name__ == "__main__":
    main()
