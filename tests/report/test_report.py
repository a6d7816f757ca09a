"""Report data and HTML without a browser: views, estimated marks, speed, the CLI."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from looplab.bench.synthetic import write_synthetic_experiment
from looplab.cli.app import app
from looplab.errors import ConfigError
from looplab.report.build import build_report, write_report
from looplab.stats.intervals import bootstrap_speedup, quantile


def _data(html: str) -> dict[str, object]:
    match = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html)
    assert match is not None
    return dict(json.loads(match.group(1)))


def test_report_of_a_real_experiment_has_every_view(runs_root: Path) -> None:
    """Headline sentence, both profiles, the nbugs family, sweep and per-run timelines."""
    html, model = build_report([runs_root / "quick"])
    assert [g.label for g in model.groups] == ["slow-80", "fast-750"]
    no_ci = r"\[n=3, under the 6 a 95% interval needs: no CI\]"  # one CI rule (issue 45)
    assert re.match(r"9\.4x faster decode -> \d+\.\dx faster tasks " + no_ci, model.sentence)
    fast = model.groups[1]
    assert fast.ci is None and fast.paired_tasks == 3
    assert [f.name for f in model.families] == ["coding/nbugs-N"]
    assert model.sweep is not None and model.sweep.ceiling > 1
    assert len(model.featured) == 2 and model.featured[0].task == model.featured[1].task
    for key in ("headline", "compounding", "time", "timeline", "sensitivity", "tasks"):
        assert f'id="{key}"' in html
    assert html.count('class="run"') == 6
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?(?:https?:)?//""", html)
    assert "@import" not in html and "url(http" not in html
    data = _data(html)
    assert data["runs"] == 6 and len(data["timelines"]) == 6 and "runs" in data["tables"]


def test_imported_runs_are_marked_estimated(runs_root: Path) -> None:
    """An imported trace's group carries `est.`, hatched bars and a provenance note."""
    html, model = build_report([runs_root / "quick", runs_root / "imported"])
    imported = [g for g in model.groups if g.source.startswith("import:")]
    assert imported and "model" in imported[0].estimated
    assert 'class="est"' in html
    assert 'fill="url(#hatch)"' in html
    assert "absent in the source" in html


def test_same_profile_from_two_inputs_gets_input_prefix(runs_root: Path, tmp_path: Path) -> None:
    """Two experiments at the same profiles are kept apart, labelled by input."""
    other = write_synthetic_experiment(tmp_path / "other", 10)
    _, model = build_report([runs_root / "quick", other])
    labels = {g.label for g in model.groups}
    assert "quick · slow-80" in labels and "other · fast-750" in labels


def test_a_thousand_runs_take_seconds(tmp_path: Path) -> None:
    """1,000 synthetic runs: written in well under 20 s of CPU (about 4 s here; CPU time,
    so a loaded machine does not decide it), transcripts embedded for a bounded number of
    runs only."""
    directory = write_synthetic_experiment(tmp_path / "syn", 1000)
    started = time.process_time()  # the report is built in this process, on one thread
    result = write_report([directory], tmp_path / "report.html")
    spent = time.process_time() - started
    assert result.runs == 1000
    assert spent < 20, f"1,000-run report took {spent:.1f} s of CPU"
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.count('<div class="transcript">') == len(result.model.transcripts) == 40
    assert html.count("Transcript not embedded in this file") == 960


def test_cli_writes_report_next_to_the_experiment(runs_root: Path) -> None:
    """`looplab report DIR` writes DIR/report.html and prints the sentence and path."""
    out = CliRunner().invoke(app, ["report", str(runs_root / "quick")])
    assert out.exit_code == 0, out.output
    assert "faster decode" in out.output
    assert (runs_root / "quick/report.html").stat().st_size > 10_000


def test_cli_format_json_to_stdout(runs_root: Path) -> None:
    """`looplab report DIR --format json -o -` prints the report's data as JSON."""
    out = CliRunner().invoke(
        app, ["report", str(runs_root / "quick"), "--format", "json", "-o", "-"]
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["runs"] == 6 and [g["label"] for g in data["groups"]] == ["slow-80", "fast-750"]
    runs = data["tables"]["runs"]
    assert len(runs["rows"]) == 6 and runs["columns"][:3] == ["run_id", "group", "task"]
    assert {"compounding", "headline", "tasks", "sweep"} <= set(data["tables"])
    bad = CliRunner().invoke(app, ["report", str(runs_root / "quick"), "--format", "pdf"])
    assert isinstance(bad.exception, ConfigError) and "pdf" in str(bad.exception)


def test_the_same_run_twice_is_refused(runs_root: Path) -> None:
    """An input compared with itself would count its runs twice: a ConfigError."""
    with pytest.raises(ConfigError, match="given twice"):
        build_report([runs_root / "quick", runs_root / "quick"])


def test_input_without_traces_is_a_config_error(tmp_path: Path) -> None:
    """A directory with no traces names the input instead of writing an empty report."""
    with pytest.raises(ConfigError, match="no traces"):
        build_report([tmp_path])


def test_paired_bootstrap_brackets_a_clear_speedup() -> None:
    """Same tasks in both groups: the CI of a ~2x speedup is tight around 2."""
    slow = {f"t{i}": [10.0 + i, 10.5 + i] for i in range(8)}
    fast = {k: [v / 2 for v in values] for k, values in slow.items()}
    low, high = bootstrap_speedup(slow, fast)
    assert 1.9 < low <= 2.0 <= high < 2.1
    assert quantile([1, 2, 3, 4], 0.5) == 2.5
