"""The per-step views: latency against step index and context, and the task time split
into "more steps" and "slower steps"."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.report.build import write_report
from looplab.report.data.records import load_runs
from looplab.report.views.report_model import build_model


@pytest.fixture(scope="module")
def context_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """nbugs-6 on the virtual clock with a steep context slope and with a flat profile."""
    directory = tmp_path_factory.mktemp("context")
    config = {
        "name": "context",
        "backends": [
            {
                "name": "context",
                "profile": "fast-750",
                "overrides": {"decode_context_slowdown": 20, "reasoning_tokens": 0},
            },
            {"name": "flat", "profile": "fast-750", "overrides": {"reasoning_tokens": 0}},
        ],
        "tasks": ["coding/nbugs-6"],
        "clock": "virtual",
        "concurrency": 2,
        "output_dir": str(directory),
    }
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=True)
    asyncio.run(runner.run())
    return directory


def test_slower_steps_are_separated_from_more_steps(context_runs: Path) -> None:
    """Under the context slope a share of the task is "slower steps"; under a flat profile
    with a prefix cache none is; the late steps' decode per token is slower only there."""
    model = build_model(load_runs([context_runs]), "t", ["context"])
    rows = {row.group: row for row in model.slowdown}
    assert rows["context"].label == "coding/nbugs-N, N=6"
    assert 0.05 < rows["context"].share < 0.6
    assert rows["flat"].slowdown_s == pytest.approx(0, abs=1e-9)
    view = model.step_latency
    assert view is not None
    early, late = view.per_token_ms["context"] or (0, 0)
    assert late > 1.2 * early
    flat_early, flat_late = view.per_token_ms["flat"] or (0, 0)
    assert flat_late == pytest.approx(flat_early)
    contexts = [p.x for p in view.by_context["context"]]
    assert contexts == sorted(contexts) and len(contexts) >= 3
    assert [p.x for p in view.by_step["flat"]][:3] == [1, 2, 3]


def test_report_draws_the_per_step_charts(context_runs: Path, tmp_path: Path) -> None:
    """The compounding section holds both latency charts and the split chart."""
    output = tmp_path / "report.html"
    write_report([context_runs], output)
    html = output.read_text(encoding="utf-8")
    for chart in ("step-latency-step", "step-latency-context", "slowdown"):
        assert f'data-chart="{chart}"' in html
    assert "slower steps: context growth" in html
