"""The shipped fast-vs-smart experiment: a real failure, and "which to use" from its runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from looplab.backends.policies.models import GAVE_UP_SUMMARY
from looplab.cli.app import app
from looplab.config import load_model
from looplab.errors import ConfigError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.traces.io import read_trace

CONFIG = Path(__file__).resolve().parents[2] / "experiments" / "configs" / "fast-vs-smart.yaml"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fix-discount (seed 0: small-fast gives up) and implement-slugify (both solve), one
    repetition each, on the shipped config's backends and virtual clock."""
    out = tmp_path_factory.mktemp("fvs") / "exp"
    config = load_model(
        ExperimentConfig,
        CONFIG,
        [
            "tasks=[coding/fix-discount, coding/implement-slugify]",
            "repetitions=1",
            f"output_dir={out}",
        ],
    )
    runner = ExperimentRunner(config)
    runner.prepare_directory(fresh=False)
    asyncio.run(runner.run())
    return out


@pytest.mark.slow
def test_small_fast_leaves_a_task_unsolved_by_its_real_check(runs: Path) -> None:
    """small-fast's fix-discount run finishes (it says it gave up) but the task's own check
    fails; large-slow solves it; both models are recorded."""
    ends = {}
    for path in sorted((runs / "traces").glob("*.jsonl")):
        trace = read_trace(path)
        ends[(trace.header.cell.backend, trace.header.task)] = trace
    small = ends[("small-fast", "coding/fix-discount")]
    large = ends[("large-slow", "coding/fix-discount")]
    assert small.end is not None and large.end is not None
    assert (small.end.end_reason, small.end.success) == ("finish", False)
    assert small.end.check_output
    finish = [t for t in small.tool_calls() if t.name == "finish"]
    assert finish and GAVE_UP_SUMMARY in finish[0].arguments
    assert large.end.success is True
    assert (small.header.model, large.header.model) == ("looplab-small-fast", "looplab-large-slow")
    assert ends[("small-fast", "coding/implement-slugify")].end.success is True  # type: ignore[union-attr]


@pytest.mark.slow
def test_choose_command_answers_from_the_runs(runs: Path) -> None:
    """`looplab choose --format json`: small-fast alone solves 1 of 2, small-fast then
    large-slow solves both, and is on the Pareto set; the text names the arms."""
    cli = CliRunner()
    result = cli.invoke(
        app,
        ["choose", str(runs), "--a", "small-fast", "--b", "large-slow", "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    (view,) = json.loads(result.output)
    rows = {r["policy"]: r for r in view["policies"]}
    assert rows["A only"]["success"] == 0.5 and rows["B only"]["success"] == 1.0
    assert rows["A then B"]["success"] == 1.0 and rows["A then B"]["pareto"]
    assert rows["A then B"]["time_s"] < rows["B only"]["time_s"]
    assert view["models"] == {"A": "looplab-small-fast", "B": "looplab-large-slow"}
    text = cli.invoke(app, ["choose", str(runs), "--deadline", "1m"])
    assert text.exit_code == 0, text.output
    assert "small-fast then large-slow" in text.output and "in time" in text.output


def test_choose_names_a_wrong_label_and_deadline(tmp_path: Path) -> None:
    """A label that has no runs and a deadline that is not one are refused by name."""
    from looplab.report.choose_commands import parse_deadline

    assert parse_deadline("2m") == 120.0 and parse_deadline("90") == 90.0
    with pytest.raises(ConfigError, match="--deadline"):
        parse_deadline("soon")


def test_config_choose_must_name_two_backends() -> None:
    """`choose.a` not among the backends is a config error listing them."""
    with pytest.raises(ConfigError, match="choose"):
        load_model(ExperimentConfig, CONFIG, ["choose.a=nope"])


@pytest.mark.slow
def test_report_has_the_which_to_use_section(runs: Path) -> None:
    """The report's model carries the pair (fastest label A, slowest B) for its "Which to
    use" section and its JSON; the page renders the policy table."""
    from looplab.report.build import build_model_for
    from looplab.report.data.exports import report_json
    from looplab.report.render.choice import render_choice

    model, _ = build_model_for([runs], title=None, group_by="profile", transcripts=0)
    (view,) = report_json(model)["choice"]
    assert view["arms"] == {"A": "small-fast", "B": "large-slow"}
    assert {r["policy"] for r in view["policies"] if r["pareto"]} >= {"A then B"}
    html = render_choice(model)
    assert "small-fast then large-slow" in html and "Behaviour shift" in html
