"""Claims per harness: per-harness rows, the equal-weight pooled row, break-even, new entries."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from looplab.claims.breakeven import BISECTIONS, find_break_even, shown
from looplab.claims.check import check_claim
from looplab.claims.groups import pooled_equal
from looplab.claims.model import BreakEven, get_claim
from looplab.cli.app import app


def test_typical_row_shows_each_harness_and_an_equal_weight_pool() -> None:
    """claim-54: the run-count value stays 63%; per harness mini-swe-agent 2.6x, OpenHands
    1.6x, Codex 1.6x, Claude Code 2.0x, Inspect 1.1x; weighted equally 41% shorter."""
    check = check_claim(get_claim("claim-54"))
    assert check.prediction == pytest.approx(0.63, abs=0.01)
    rows = {g.group: g for g in check.groups}
    assert sorted(rows) == ["claude-code", "codex", "inspect", "mini-swe-agent", "openhands"]
    assert rows["mini-swe-agent"].n == 42 and rows["inspect"].n == 10
    speedups = {name: 1 / (1 - row.prediction) for name, row in rows.items()}
    wanted = {
        "mini-swe-agent": 2.6,
        "openhands": 1.6,
        "codex": 1.6,
        "claude-code": 2.0,
        "inspect": 1.1,
    }
    for name, value in wanted.items():
        assert speedups[name] == pytest.approx(value, abs=0.06), name
    assert rows["codex"].ci is None and rows["mini-swe-agent"].ci is not None
    pooled = check.pooled
    assert pooled is not None and pooled.groups == 5
    geo = math.exp(sum(math.log(v) for v in speedups.values()) / 5)
    assert pooled.prediction == pytest.approx(1 - 1 / geo, abs=1e-9)
    assert pooled.prediction == pytest.approx(0.41, abs=0.01)
    assert pooled.ci is not None and pooled.ci[0] < pooled.prediction <= pooled.ci[1] + 1e-9
    assert check.pooled_verdict == "slower than claimed"


def test_equal_weight_ignores_run_counts() -> None:
    """Two groups, 1 and 40 runs: the pool is the geometric mean of their speedups."""
    groups = {
        "big": {f"b{i}": (4.0, 1.0) for i in range(40)},
        "small": {"s0": (1.0, 1.0)},
    }
    pooled = pooled_equal("speedup", groups)
    assert pooled is not None and pooled.prediction == pytest.approx(2.0)
    assert pooled_equal("speedup", {"only": groups["big"]}) is None


def test_codex_spark_prints_its_break_even() -> None:
    """codex-spark is supported only from ~227 hidden reasoning tokens per step on (the
    re-timing searched), below that slower than claimed; assumed 300."""
    check = check_claim(get_claim("codex-spark"))
    found = check.break_even
    assert found is not None and found.verdict == "supported"
    assert found.value is not None and found.above
    assert found.value * 300 == pytest.approx(227, abs=3)
    assert found.other == "slower than claimed"


def test_break_even_search_finds_a_step() -> None:
    """On a known step function the search lands on the step, from either side, to the
    resolution the text prints (0.01 of the knob at 100 shown per unit); it stops once the
    bracket's ends print the same, so a coarser unit costs fewer judgements."""
    spec = BreakEven(
        knob="reasoning_scale", label="x", per_unit=100.0, assumed=5.0, low=0.0, high=10.0
    )
    result = find_break_even(spec, lambda v: "yes" if v >= 2.5 else "no")
    assert result.value == pytest.approx(2.5, abs=0.01) and result.above
    flipped = find_break_even(spec, lambda v: "yes" if v <= 7.0 else "no")
    assert flipped.value == pytest.approx(7.0, abs=0.01) and not flipped.above
    same = find_break_even(spec, lambda v: "yes")
    assert same.value is None
    coarse = spec.model_copy(update={"per_unit": 1.0})
    judged: list[float] = []

    def judge(value: float) -> str:
        judged.append(value)
        return "yes" if value <= 7.2 else "no"

    found = find_break_even(coarse, judge)
    assert found.value is not None and shown(coarse, found.value) == "7" and not found.above
    assert found.value <= 7.2 and len(judged) < 2 + BISECTIONS


def test_general_compute_arithmetic_by_the_timing_formula() -> None:
    """20 calls of 100 tokens: the lab's formula gives 45.0 s vs 12.9 s (3.49x), inside
    the band the published 46 s vs 13 s rounds to."""
    check = check_claim(get_claim("general-compute-example"))
    assert check.evidence.slow == [pytest.approx(45.0, abs=0.01)]
    assert check.evidence.fast == [pytest.approx(12.9, abs=0.01)]
    assert check.prediction == pytest.approx(45.0 / 12.9, abs=1e-6)
    assert check.verdict == "supported"


@pytest.mark.parametrize(
    ("name", "lab", "pooled"),
    [
        ("anthropic-fast-mode", 1.84, 1.48),
        ("codex-fast", 1.33, 1.22),
        ("swe-1-5", 2.48, 1.61),
    ],
)
def test_fast_mode_entries_per_harness(name: str, lab: float, pooled: float) -> None:
    """Each fast-mode entry: the corpus value, the equal-weight pool and the 2026 workload's
    row (not pooled); no harness reaches the claimed output speedup end to end."""
    check = check_claim(get_claim(name))
    assert check.prediction == pytest.approx(lab, abs=0.02)
    assert check.pooled is not None and check.pooled.prediction == pytest.approx(pooled, abs=0.02)
    rows = {g.group: g for g in check.groups}
    assert rows["workload coding-agent-2026"].n == 30
    assert all(g.prediction < check.entry.claimed.high for g in check.groups)


def test_fazm_counter_example() -> None:
    """400 ms less per call: Claude Code and the 2026 workload barely move (<5%), Inspect's
    many short calls do (about half)."""
    rows = {g.group: g.prediction for g in check_claim(get_claim("fazm")).groups}
    assert rows["claude-code"] < 0.05 and rows["workload coding-agent-2026"] < 0.05
    assert rows["inspect"] > 0.4


def test_cli_prints_rows_pool_and_break_even() -> None:
    """`looplab claims check` prints per-harness rows, the pool and the break-even line;
    `--json` carries them."""
    runner = CliRunner()
    text = runner.invoke(app, ["claims", "check", "claim-40-60"]).output
    assert "mini-swe-agent   (n=42)" in text and "equal weight     (5 groups)" in text
    assert "weighted equally, not by run count" in text
    spark = runner.invoke(app, ["claims", "check", "codex-spark"]).output
    assert "break-even: supported if hidden reasoning >= 22" in spark
    assert "assumed 300 tokens per step" in spark
    data = json.loads(runner.invoke(app, ["claims", "check", "fazm", "--json"]).output)
    entry = data[0] if isinstance(data, list) else data
    assert {g["group"] for g in entry["groups"]} >= {"codex", "claude-code"}
    assert entry["pooled_equal"]["how"].startswith("5 groups weighted equally")
