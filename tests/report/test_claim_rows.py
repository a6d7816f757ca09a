"""The claim panel's rows are honest: labelled by what ran, no CI or verdict below the
stated minimum n, an interval that does not sit on its estimate, verdicts in plain words,
the corpus in its own reference section, and no word broken in the terminal panel."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from looplab.claims.verdicts import TOO_FEW
from looplab.report.claims import corpus
from looplab.report.claims.panel import claim_panel
from looplab.report.claims.rows import make_row
from looplab.report.claims.views import claim_view
from looplab.report.data.records import RunRecord, record_from_trace
from looplab.report.views import money
from looplab.stats.intervals import MIN_PAIRED_N, bca_speedup
from looplab.traces.io import read_trace


def _paired(
    known_pair: Path, tasks: list[str], agent: str, source: str = "looplab"
) -> dict[str, list[RunRecord]]:
    """Slow (known-a) and fast (known-b) runs of `tasks` by `agent` (from `source`: `wrap`
    for a wrapped agent), times varied per task."""
    slow = record_from_trace(read_trace(known_pair / "traces/known-a.jsonl"), "known")
    fast = record_from_trace(read_trace(known_pair / "traces/known-b.jsonl"), "known")
    rng = random.Random(7)
    groups: dict[str, list[RunRecord]] = {"slow": [], "fast": []}
    for index, task in enumerate(tasks):
        scale = rng.uniform(0.5, 3.0)
        for name, base, factor in (("slow", slow, 1.0), ("fast", fast, rng.uniform(0.35, 0.6))):
            groups[name].append(
                replace(
                    base,
                    run_id=f"{name}-{index}",
                    task=task,
                    agent=agent,
                    source=source,
                    task_s=slow.task_s * scale * factor,
                    group=name,
                )
            )
    return groups


def test_a_wrapped_agent_is_labelled_by_its_name_not_as_a_scripted_agent(
    known_pair: Path,
) -> None:
    """A wrapped agent's row names it and its task kind; nothing calls it scripted."""
    view = claim_view(
        _paired(known_pair, ["coding/fix-pager"], "my-harness", "wrap"), ["slow", "fast"]
    )
    row = next(r for r in view.rows if r.section == "yours")
    assert row.key == "live:wrapped:my-harness" and row.label == "my-harness on coding tasks"
    assert "the wrapped agent my-harness" in row.agent and "scripted" not in row.agent
    assert row.n == 1 and row.ci is None and row.verdict == TOO_FEW


def test_a_web_task_is_not_labelled_as_coding(known_pair: Path) -> None:
    """Bundled rows count task kinds from the runs: 4 coding and 1 web is not 'coding tasks'."""
    tasks = ["coding/a", "coding/b", "coding/c", "coding/d", "web/signup-wizard"]
    view = claim_view(_paired(known_pair, tasks, "coding"), ["slow", "fast"])
    row = next(r for r in view.rows if r.key == "live:bundled")
    assert row.label == "bundled tasks (4 coding, 1 web)"
    assert "looplab's coding agent" in row.agent and row.n == 5


def test_rows_under_the_minimum_get_no_ci_and_no_verdict(known_pair: Path) -> None:
    """Below MIN_PAIRED_N pairs: no CI, verdict 'too few runs', and the sentence says why;
    from MIN_PAIRED_N on: a BCa CI and a verdict."""
    row = make_row("x", "live", "one run", "an agent", n=1, speedup=2.0, ci=(1.9, 2.1))
    assert row.ci is None and row.verdict == TOO_FEW
    assert f"n=1, under the {MIN_PAIRED_N}" in row.sentence and "no verdict" in row.sentence
    tasks = [f"coding/t{i}" for i in range(MIN_PAIRED_N)]
    enough = next(
        r
        for r in claim_view(_paired(known_pair, tasks, "coding"), ["slow", "fast"]).rows
        if r.key == "live:bundled"
    )
    assert enough.ci is not None and enough.verdict != TOO_FEW
    assert "95% BCa CI" in enough.sentence


def test_bca_interval_brackets_its_estimate_and_needs_the_minimum() -> None:
    """The BCa interval of a skewed sample holds the estimate strictly inside (the percentile
    interval at small n put its upper end on it); under MIN_PAIRED_N it is None."""
    rng = random.Random(3)
    slow = {f"t{i}": [rng.lognormvariate(3, 0.8)] for i in range(8)}
    fast = {k: [v[0] / rng.uniform(1.2, 4.0)] for k, v in slow.items()}
    slow_m = sorted(v[0] for v in slow.values())
    fast_m = sorted(v[0] for v in fast.values())
    estimate = ((slow_m[3] + slow_m[4]) / 2) / ((fast_m[3] + fast_m[4]) / 2)
    interval = bca_speedup(slow, fast)
    assert interval is not None and interval[0] < estimate < interval[1]
    few = {k: slow[k] for k in list(slow)[: MIN_PAIRED_N - 1]}
    assert bca_speedup(few, fast) is None


def test_verdicts_are_plain_words() -> None:
    """A result faster than claimed is called that, not 'contradicted (exceeds)', and its
    sentence says by how much against the 40-60% band."""

    def row(speedup: float, ci: tuple[float, float], n: int = MIN_PAIRED_N) -> tuple[str, str]:
        made = make_row("x", "live", "x", "an agent", n=n, speedup=speedup, ci=ci)
        return made.verdict, made.sentence

    faster, sentence = row(3.0, (2.6, 3.5))
    assert (
        faster == "faster than claimed" and "faster than claimed: more than 60% shorter" in sentence
    )
    slower, sentence = row(1.5, (1.2, 1.6))
    assert (
        slower == "slower than claimed" and "slower than claimed: less than 40% shorter" in sentence
    )
    assert row(2.0, (1.8, 2.3))[0] == "supported"
    few, sentence = row(2.0, (1.8, 2.3), n=MIN_PAIRED_N - 1)
    assert few == TOO_FEW and sentence.endswith("too few runs: no verdict (an agent).")


def test_panel_sections_and_unbroken_words(known_pair: Path) -> None:
    """The terminal panel puts the corpus under its own reference heading, the Amdahl range
    under 'p10-p90 range', and never folds a label's word, even at 100 columns."""
    groups = _paired(known_pair, ["workload/mini-swe-agent-deepseek-reasoning"], "coding")
    view = claim_view(groups, ["slow", "fast"])
    assert {r.section for r in view.rows} == {"yours", "reference", "bounds"}
    console = Console(width=100, record=True, color_system=None)
    console.print(claim_panel(view))
    text = console.export_text()
    assert "Your runs" in text and "Reference: the shipped corpus" in text
    assert text.index("Your runs") < text.index("Reference: the shipped corpus")
    assert "exceeds" not in text and "contradicted" not in text
    table = text[: text.index("\n│ - ")]  # the tables, before the sentences
    amdahl = table[table.index("Amdahl") :].split("\n")[0]
    assert "95%" not in amdahl and "p10-p90" in amdahl  # a range, not under a CI
    assert "mini-swe-agent-deepseek-reasoning " in table  # one piece, not folded mid-word
    assert "too few runs" in table  # the verdict column is not cut off
    assert "Reference (the shipped corpus, re-timed)" in view.sentence


def test_kept_corpus_rows_match_a_fresh_computation_and_a_tampered_file_is_redone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The corpus rows and the under-cap corpus times a report reads from the cache are a
    fresh computation's, field for field; a kept file whose field has another type is
    refused and computed again (issue 48: kept so each report does not re-time the corpus)."""
    monkeypatch.setenv("LOOPLAB_CACHE_DIR", str(tmp_path))
    base = corpus._profile(None)
    fresh = corpus._compute_rows(80.0, 750.0, base)
    assert corpus.corpus_rows(80.0, 750.0, None) == fresh  # computed, then written
    (kept,) = (tmp_path / "derived").glob("corpus-rows-*.json")
    assert corpus.corpus_rows(80.0, 750.0, None) == fresh  # read back
    stored = json.loads(kept.read_bytes().partition(b"\n")[2])  # after its HMAC line
    assert corpus._loaded(stored) == fresh
    stored["rows"][0]["n"] = "many"
    with pytest.raises(TypeError, match="corpus row: n"):
        corpus._loaded(stored)
    with pytest.raises(TypeError, match="rows, detail and shares"):
        corpus._loaded({**stored, "another": []})
    money._corpus_times.cache_clear()
    try:
        assert money._corpus_times() == money._compute_corpus_times()
        money._corpus_times.cache_clear()
        assert money._corpus_times() == money._compute_corpus_times()  # read back
    finally:
        money._corpus_times.cache_clear()
    with pytest.raises(TypeError, match="slow-80"):
        money._times_of({"slow-80": ["1.0"], "fast-750": []})
