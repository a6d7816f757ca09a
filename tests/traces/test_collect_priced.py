"""Issue 45 item 4: `collect -p` prices its runs and accepts only a preset or a profile
file (`collect -p slow-80` runs were unpriced, header `profile: null`; `-p fast75` made a
group that never pairs)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from looplab.report.build import load_records
from looplab.report.views.cost import cost_figure
from looplab.traces.io import read_trace

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="needs the dev extra")
from .collect_apps import exporting, genai_spans  # after the importorskip
from .test_collect import CollectCli


def test_collect_p_prices_the_runs(tmp_path: Path) -> None:
    """`collect -p slow-80`: the header carries slow-80's profile and price entry, and the
    report's cost figure prices the run from the spans' token counts."""
    out = tmp_path / "collected"
    with CollectCli(tmp_path, out, "--max-runs", "1", "-p", "slow-80") as (process, url):
        with exporting(url, "genai-app") as provider:
            genai_spans(provider)
        _, errors = process.communicate(timeout=30)
        assert process.returncode == 0, errors
    (path,) = out.glob("*.jsonl")
    header = read_trace(path).header
    assert header.profile is not None and header.profile["price"] == "openai-gpt-5.4-standard"
    assert header.identity is not None and header.identity.decode_tps == 80.0
    figure = cost_figure(load_records([out]))
    assert figure.price == "openai-gpt-5.4-standard" and figure.usd is not None
    assert figure.usd > 0 and figure.unpriced is None


def test_collect_p_refuses_a_typo(tmp_path: Path) -> None:
    """`collect -p fast75` exits 2 before listening, naming the nearest presets."""
    cli = CollectCli(tmp_path, tmp_path / "out", "-p", "fast75")
    process = subprocess.run(cli.command, capture_output=True, text=True, timeout=60)
    assert process.returncode == 2
    assert "fast75" in process.stderr and "nearest presets: fast-750" in process.stderr
    assert not (tmp_path / "out").exists()
