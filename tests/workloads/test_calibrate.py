"""`looplab calibrate`: fitted values, provenance and the printed fit.

The hand-written fixtures (tests/fixtures/workloads/calibrate):

| trace | source | steps: prompt, cached, completion (reasoning), tools (s), other s |
|---|---|---|
| a | looplab | (100, 0, 10), (150, 90, 20), (230, 140, 30), (300, 220, 40); one bash call each of 1, 2, 3, 4 s; 0.5 s other each |
| b | looplab | (200, 0, 55 (5)) with bash 0.5 s + edit 0.5 s; (260, 190, 67 (7)), no tool |
| c | import, times estimated | no prompt counts; completion 70, 80, 90; bash 10, 20, 30 s |
"""  # noqa: E501

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from looplab.distributions import Categorical, Empirical
from looplab.traces.inputs import load_traces
from looplab.workloads.fit import calibrate
from looplab.workloads.model import load_workload


def test_fitted_values_and_provenance(fixtures: Path) -> None:
    """Each parameter's fit has the expected values, status, counts and source traces."""
    p = calibrate(load_traces([fixtures / "calibrate"]), "hand").model.parameters
    assert p.steps.distribution == Categorical(values=[2, 3, 4], weights=[1, 1, 1])
    assert p.steps.provenance.status == "measured" and p.steps.provenance.traces == ["a", "b", "c"]
    assert p.tool_calls.distribution == Categorical(values=[0, 1, 2], weights=[1, 7, 1])
    assert p.tool_names.weights == {"bash": 8.0, "edit": 1.0}
    tool_s = p.tool_s.distribution
    assert isinstance(tool_s, Empirical)
    assert tool_s.quantile(0.1) == 0.5 and tool_s.quantile(0.5) == 3.0
    assert tool_s.quantile(0.9) == pytest.approx(22.0) and tool_s.values[-1] == 30.0
    provenance = p.tool_s.provenance
    assert (provenance.status, provenance.observations, provenance.estimated) == (
        "estimated", 9, 3,
    )  # fmt: skip
    assert provenance.traces == ["a", "b", "c"] and provenance.how == ["previous message timestamp"]
    assert p.reasoning_tokens.distribution == Categorical(values=[5, 7], weights=[1, 1])
    assert p.reasoning_tokens.provenance.traces == ["b"]
    assert p.initial_prompt_tokens.distribution == Categorical(values=[100, 200], weights=[1, 1])
    assert p.initial_prompt_tokens.provenance.traces == ["a", "b"]
    assert p.new_prompt_tokens.distribution == Categorical(
        values=[50, 60, 70, 80], weights=[1, 1, 1, 1]
    )
    shares = p.cached_share.distribution
    assert shares is not None and shares.quantile(0.0) == pytest.approx(90 / 150)
    assert shares.quantile(1.0) == pytest.approx(220 / 300, abs=1e-6)
    assert p.output_tokens.distribution == Categorical(
        values=[10, 20, 30, 40, 50, 60, 70, 80, 90], weights=[1.0] * 9
    )
    assert p.other_s.provenance.status == "estimated"
    assert p.other_s.distribution is not None and p.other_s.distribution.quantile(1.0) == 0.5


def test_imported_run_keeps_its_estimates_and_absences(fixtures: Path) -> None:
    """An imported mini-swe-agent run: tokens measured, times estimated (with how), no reasoning."""
    result = calibrate(
        load_traces([fixtures / "imported" / "mini-swe-agent-pvlib-1072.jsonl"]), "m"
    )
    p = result.model.parameters
    assert p.output_tokens.provenance.status == "measured"
    assert p.output_tokens.provenance.observations == 59
    assert p.tool_s.provenance.status == "estimated"
    assert any("timestamp" in how for how in p.tool_s.provenance.how)
    assert p.reasoning_tokens.provenance.status == "absent"
    assert p.reasoning_tokens.distribution is None
    assert result.model.fitted_from.sources == ["import:mini-swe-agent"]
    rows = {row.name: row for row in result.parameters}
    assert rows["reasoning_tokens"].flags == ["absent"]
    assert "estimated" in rows["tool_s"].flags
    assert rows["output_tokens"].observed == pytest.approx(rows["output_tokens"].fitted)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "LOOPLAB_LOG_FILE": os.devnull}
    return subprocess.run(
        [sys.executable, "-m", "looplab", *args],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip


def test_calibrate_command_prints_the_fit_and_writes_the_model(
    fixtures: Path, tmp_path: Path
) -> None:
    """The command prints observed vs fitted quantiles and KS per parameter, and the file loads."""
    output = tmp_path / "mixed.yaml"
    result = _cli("calibrate", str(fixtures / "imported"), "-o", str(output))
    assert result.returncode == 0, result.stderr
    for text in ("tool_s", "observed", "fitted", "KS", "task tool s", "estimated", "measured"):
        assert text in result.stdout
    model = load_workload(output)
    assert model.name == "mixed" and len(model.fitted_from.traces) == 3


def test_calibrate_refuses_bad_input(fixtures: Path, tmp_path: Path) -> None:
    """No traces, or a file that is not a trace, is exit 2 with the path named; nothing written."""
    (tmp_path / "empty").mkdir()
    result = _cli("calibrate", str(tmp_path / "empty"), "-o", str(tmp_path / "w.yaml"))
    assert result.returncode == 2 and "no traces" in result.stderr
    bogus = tmp_path / "bogus.jsonl"
    bogus.write_text('{"hello": 1}\n')
    result = _cli("calibrate", str(bogus), "-o", str(tmp_path / "w.yaml"))
    assert result.returncode == 2 and str(bogus) in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "w.yaml").exists()
