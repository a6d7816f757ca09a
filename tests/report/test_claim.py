"""The claim check: experiments/configs/claim.yaml runs, and "Is 750 tok/s worth it?" is
computed from its runs and the shipped corpus (HTML section, JSON, terminal panel)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from looplab.claims.verdicts import TOO_FEW
from looplab.report.build import build_model_for
from looplab.report.claims.rows import amdahl, make_row, required_share, row_verdict
from looplab.report.data.records import load_runs
from looplab.stats.intervals import median
from looplab.tasks.references import is_trace_driven

if TYPE_CHECKING:
    from tests.conftest import BuildOnce

REPO = Path(__file__).resolve().parents[2]
CLAIM = REPO / "experiments/configs/claim.yaml"


def _looplab(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "LOOPLAB_LOG_FILE": os.devnull}
    return subprocess.run(
        [sys.executable, "-m", "looplab", *args],
        capture_output=True, text=True, timeout=300, env=env, check=False, cwd=REPO,
    )  # fmt: skip


@pytest.fixture(scope="session")
def claim_run(build_once: BuildOnce) -> Path:
    """The claim config on the virtual clock, tools x0.01, one workload: seconds, not minutes
    (run once per test run, whichever xdist worker asks first)."""
    return build_once("claim", _run_claim) / "out"


def _run_claim(root: Path) -> None:
    out = root / "out"
    tasks = "[workload/mini-swe-agent-deepseek-reasoning, coding/fix-pager, coding/nbugs-2]"
    result = _looplab(
        "run", str(CLAIM), "-s", f"output_dir={out}", "-s", "clock=virtual",
        "-s", f"tasks={tasks}", "-s", "workload.tool_scale=0.01", "-s", "concurrency=2",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]


def test_claim_config_runs_bundled_once_and_three_workload_draws(claim_run: Path) -> None:
    """Bundled tasks run once per backend, the workload three draws (workload.repetitions)."""
    runs = load_runs([claim_run])
    per_task: dict[str, int] = {}
    for run in runs:
        per_task[run.task] = per_task.get(run.task, 0) + 1
    assert per_task["workload/mini-swe-agent-deepseek-reasoning"] == 6
    assert {t: n for t, n in per_task.items() if not is_trace_driven(t)} == {
        "coding/fix-pager": 2, "coding/nbugs-2": 2,
    }  # fmt: skip
    assert {r.clock for r in runs} == {"virtual"}


def test_claim_rows_are_computed_from_the_runs_and_the_corpus(claim_run: Path) -> None:
    """Every row's speedup, CI, verdict and sentence come from data: the bundled row is the
    ratio of median task times, sentences quote the numbers, verdicts follow the CIs."""
    model, _ = build_model_for([claim_run], title=None, group_by="profile", transcripts=0)
    view = model.claim
    assert view is not None and (view.slow_tps, view.fast_tps) == (80.0, 750.0)
    rows = {r.key: r for r in view.rows}
    expected = {
        "live:bundled", "live:workload/mini-swe-agent-deepseek-reasoning", "amdahl",
        "corpus:mini-swe-agent", "corpus:swe-agent", "claim-40-60", "claim-54",
    }  # fmt: skip
    assert expected <= set(rows)
    runs = load_runs([claim_run])
    slow = [r.task_s for r in runs if r.profile == "slow-80" and not is_trace_driven(r.task)]
    fast = [r.task_s for r in runs if r.profile == "fast-750" and not is_trace_driven(r.task)]
    assert rows["live:bundled"].speedup == pytest.approx(median(slow) / median(fast))
    for row in view.rows:
        if row.kind in ("claim", "bound"):
            continue
        if row.speedup is None:
            assert row.verdict == "no data" and "no timed runs" in row.sentence
            continue
        assert row.verdict == row_verdict(row)
        assert f"{row.speedup:.2f}x" in row.sentence and row.verdict != "no data"
    reasoning = rows["live:workload/mini-swe-agent-deepseek-reasoning"]
    assert reasoning.n == 3 and reasoning.decode_share
    assert reasoning.ci is None and reasoning.verdict == TOO_FEW  # 3 draws: under MIN_PAIRED_N
    corpus = rows["corpus:mini-swe-agent"]
    assert corpus.n == 42 and corpus.ci is not None and corpus.section == "reference"
    assert corpus.speedup is not None and corpus.ci[0] < corpus.speedup < corpus.ci[1]
    assert rows["corpus:swe-agent"].untimed == 11 and rows["corpus:swe-agent"].speedup is None
    amdahl_row = rows["amdahl"]
    assert amdahl_row.ci is not None and amdahl_row.ci[0] <= amdahl_row.ci[1]
    assert "45%-67%" in amdahl_row.sentence  # the decode share 40-60% shorter needs at 9.4x
    assert rows["corpus:mini-swe-agent"].label in rows["claim-40-60"].sentence
    assert rows["live:bundled"].label not in rows["claim-40-60"].sentence  # 2 tasks: no verdict
    assert "Against the claimed 40-60% shorter tasks" in view.sentence


def test_claim_section_json_and_panel(claim_run: Path, tmp_path: Path) -> None:
    """The HTML has the section (chart, table, one verdict sentence per row), the JSON has
    the rows and sentences, and `looplab report` prints the claim panel, then ends with the
    bottom lines (the answer last)."""
    html = tmp_path / "report.html"
    result = _looplab("report", str(claim_run), "-o", str(html))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Is 750 tok/s worth it?" in result.stdout
    panel_end = result.stdout.rindex("╯")
    tail = result.stdout[panel_end:]
    assert "Your answer, per agent and task set" in tail  # the bottom lines after the panel
    assert tail.rstrip().splitlines()[-1].rstrip().endswith(").")
    page = html.read_text()
    assert 'id="claim"' in page and 'data-chart="claim"' in page
    assert 'data-export="claim-yours"' in page and 'data-export="claim-reference"' in page
    assert 'data-export="claim-corpus"' in page and "Reference: the shipped corpus" in page
    assert 'href="#claim"' in page  # the headline points to it
    data = json.loads(_looplab("report", str(claim_run), "--format", "json", "-o", "-").stdout)
    rows = data["claim"]["rows"]
    assert page.count("<li>") >= len(rows)
    for row in rows:
        assert row["sentence"] and row["verdict"]
        if row["speedup"] is not None and row["kind"] not in ("claim", "bound"):
            assert f"{row['speedup']:.2f}x" in row["sentence"]
    assert data["claim"]["corpus_detail"]


def test_verdicts_and_amdahl_arithmetic() -> None:
    """Verdict bands (40-60% shorter = 1.67-2.5x), Amdahl and the decode share a claim needs."""

    def judged(speedup: float | None, ci: tuple[float, float] | None) -> str:
        return make_row("x", "live", "x", "an agent", n=6, speedup=speedup, ci=ci).verdict

    assert judged(2.0, (1.8, 2.3)) == "supported"
    assert judged(2.0, (1.5, 2.3)) == "consistent with the claim"
    assert judged(1.5, (1.2, 1.6)) == "slower than claimed"
    assert judged(3.0, (2.6, 3.5)) == "faster than claimed"
    assert judged(2.7, (2.4, 3.0)) == "undecided"
    assert judged(None, None) == "no data"
    assert amdahl(0.0, 9.375) == 1.0 and amdahl(1.0, 9.375) == pytest.approx(9.375)
    share = required_share(0.4, 9.375)
    assert amdahl(share, 9.375) == pytest.approx(1 / 0.6)
