"""Write tasks/workload/mini-swe-agent-deepseek-reasoning/workload.yaml: the calibrated
mini-swe-agent + DeepSeek-chat workload with a documented hidden-reasoning draw per step.

The base workload's reasoning tokens are absent (DeepSeek-chat emits none); everything
else is kept as fitted, and `draws_as` makes its draws the base's tasks exactly (same
steps, tokens and tool times) plus the reasoning, so the two pairs compare task by task.
The draw is the one looplab's reasoning-model presets assume
(`gpu-frontier-68`, `sol-cerebras-750`: log-normal, median 300, sigma 0.8; mean ~413), as
empirical quantile knots (the workload format has no log-normal). Its provenance says it
is estimated, and from what. Run from the repository root:

    .venv/bin/python scripts/build-reasoning-workload.py
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist

from looplab.workloads.distributions import Empirical

from looplab.workloads.model import Parameter, Provenance, dump_workload, load_workload

BASE = Path("tasks/workload/mini-swe-agent-deepseek/workload.yaml")
OUT = Path("tasks/workload/mini-swe-agent-deepseek-reasoning/workload.yaml")
MEDIAN, SIGMA = 300.0, 0.8
PROBABILITIES = [0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0]
SOURCE = (
    "assumed reasoning-model draw, not measured in these runs: log-normal median 300, "
    "sigma 0.8 tokens per step (mean ~413), the hidden-reasoning draw of looplab's "
    "gpu-frontier-68 and sol-cerebras-750 presets; for scale, the TraceLab Codex sample "
    "(gpt-5.4) has a median of 41 reasoning tokens per call and the lab's background "
    "estimate for reasoning models is 500-1,500 per step"
)


def _lognormal_quantile(q: float) -> float:
    q = min(max(q, 0.001), 0.999)  # p0 / p100 knots at the 0.1% / 99.9% quantiles
    return round(MEDIAN * math.exp(SIGMA * NormalDist().inv_cdf(q)))


def main() -> None:
    base = load_workload(BASE)
    draw = Empirical(
        probabilities=PROBABILITIES, values=[_lognormal_quantile(q) for q in PROBABILITIES]
    )
    reasoning = Parameter(
        distribution=draw, provenance=Provenance(status="estimated", how=[SOURCE])
    )
    parameters = base.parameters.model_copy(update={"reasoning_tokens": reasoning})
    model = base.model_copy(
        update={
            "name": "mini-swe-agent-deepseek-reasoning",
            "draws_as": base.name,
            "description": "mini-swe-agent 2.x with DeepSeek-chat on SWE-bench, plus a reasoning "
            "model's hidden tokens (log-normal median 300 per step, assumed; "
            "scripts/build-reasoning-workload.py)",
            "parameters": parameters,
        }
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(dump_workload(model))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
