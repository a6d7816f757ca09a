"""Workload settings the claim check uses: own repetitions and clock for trace-driven tasks,
and a reasoning variant (`draws_as`) that plays its base's tasks plus reasoning."""

from __future__ import annotations

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.matrix import expand_cells
from looplab.experiments.workload import cell_clock
from looplab.tasks.references import parse_reference
from looplab.workloads.model import load_workload
from looplab.workloads.sample import draw_shape

BASE = "workload/mini-swe-agent-deepseek"
REASONING = "workload/mini-swe-agent-deepseek-reasoning"


def _config() -> ExperimentConfig:
    return validate_model(
        ExperimentConfig,
        {
            "name": "c",
            "backends": [{"name": "slow-80"}, {"name": "fast-750"}],
            "tasks": [BASE, "coding/fix-pager"],
            "workload": {"repetitions": 3, "clock": "virtual", "concurrency": 8},
        },
    )


def test_trace_driven_tasks_get_their_own_repetitions_and_clock() -> None:
    """Three draws of the workload beside one run of the bundled task; the workload's cells
    on the virtual clock, the bundled task's on the experiment's (wall)."""
    config = _config()
    cells = expand_cells(config)
    draws = sorted(c.repetition for c in cells if c.task == BASE and c.backend.name == "slow-80")
    assert draws == [0, 1, 2]
    assert [c.repetition for c in cells if c.task == "coding/fix-pager"] == [0, 0]
    assert cell_clock(config, BASE) == "virtual"
    assert cell_clock(config, "coding/fix-pager") == "wall"


def test_reasoning_variant_draws_the_base_tasks_plus_reasoning() -> None:
    """`draws_as`: same steps, tokens and tool times as the base workload's draw, plus
    hidden reasoning on every step (the base has none)."""
    paths = [parse_reference(name) for name in (BASE, REASONING)]
    base, variant = (load_workload(p.path) for p in paths if p is not None)
    assert variant.draws_as == base.name
    assert variant.parameters.reasoning_tokens.provenance.status == "estimated"
    for seed in range(3):
        plain, thinking = draw_shape(base, seed), draw_shape(variant, seed)
        assert len(plain.steps) == len(thinking.steps)
        for a, b in zip(plain.steps, thinking.steps, strict=True):
            assert a.reasoning_tokens is None and (b.reasoning_tokens or 0) > 0
            assert b.model_copy(update={"reasoning_tokens": None}) == a
