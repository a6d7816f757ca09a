"""One bad trace among good ones (issue 36, finding 6): a `prompt_tokens` of 400 digits, as
a collected OTLP `intValue` used to write. The schema refuses it (token counts are bounded),
and every reader of a directory names it, sets it aside and reads the rest: report, sweep,
the exports, and the dashboard over real HTTP on loopback (no 500 for the directory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from looplab.bench.synthetic import write_synthetic_experiment
from looplab.errors import TraceError
from looplab.report.dashboard.server import DashboardServer
from looplab.traces.io import read_trace

BAD = "zz-huge-tokens.jsonl"


@pytest.fixture(scope="module")
def experiment(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four synthetic runs and a copy of one whose prompt tokens have 400 digits."""
    directory = write_synthetic_experiment(tmp_path_factory.mktemp("bad") / "exp", 4)
    good = sorted((directory / "traces").glob("*.jsonl"))[0]
    lines = []
    for line in good.read_text().splitlines():
        event = json.loads(line)
        if event.get("kind") == "model_call" and event.get("prompt_tokens") is not None:
            event["prompt_tokens"] = int("9" * 400)
        if "run_id" in event and event.get("kind") is None:
            event["run_id"] = "huge-tokens"
        lines.append(json.dumps(event))
    (directory / "traces" / BAD).write_text("\n".join(lines) + "\n")
    return directory


def test_the_schema_bounds_token_counts(experiment: Path) -> None:
    """A token count past `schema.MAX_TOKENS` is refused, naming the field and bound."""
    with pytest.raises(TraceError, match=r"prompt_tokens.*less than or equal"):
        read_trace(experiment / "traces" / BAD)


@pytest.mark.parametrize(
    "command",
    [
        ["report", "{dir}", "-o", "{out}/r.html"],
        ["sweep", "{dir}"],
        ["export", "mooncake", "{dir}", "-o", "{out}/m.jsonl"],
        ["export", "inference-perf", "{dir}", "-o", "{out}/ip"],
        ["export", "otel", "{dir}", "-o", "{out}/o.json"],
        ["export", "atif", "{dir}", "-o", "{out}/a.jsonl"],
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_each_cli_reader_sets_the_bad_trace_aside(
    experiment: Path, tmp_path: Path, command: list[str]
) -> None:
    """The command succeeds on the other four runs and names the bad file on stderr."""
    argv = [a.format(dir=experiment, out=tmp_path) for a in command]
    env = {**os.environ, "LOOPLAB_LOG_FILE": os.devnull, "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "looplab", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "trace set aside" in done.stderr and BAD in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def _get(url: str) -> tuple[int, str]:
    """GET `url`: status and body (an HTTP error is an answer too)."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_dashboard_serves_the_directory_and_names_the_bad_run(experiment: Path) -> None:
    """Index, the experiment's report and a good run answer 200; the bad run itself is
    refused with its reason (not a 500)."""
    good = sorted(p.name for p in (experiment / "traces").glob("*.jsonl") if p.name != BAD)[0]
    with DashboardServer(experiment.parent) as server:
        assert _get(server.url)[0] == 200
        status, report = _get(server.url + "report/exp")
        assert status == 200, report[:400]
        assert _get(server.url + f"run/exp/traces/{good}")[0] == 200
        status, body = _get(server.url + f"run/exp/traces/{BAD}")
    assert status == 422 and "prompt_tokens" in body
