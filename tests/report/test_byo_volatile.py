"""Issue 45 item 6: the README's own-agent recipe works as written for an agent whose
tool prints a time and a temporary path (as every pytest run does): strict replay answers
400 on the changed request (its divergence shows the differing characters); the recipe's
`--replay-policy tolerant` replays to the end and names the first differing characters.
Real processes, real HTTP.

It sits in tests/report/ without importing looplab.report (it runs `looplab wrap` and the
proxy's replay policies in processes): it is one of the README's bring-your-own-agent
recipe tests, which share tests/report/byo/ (agent, upstream) and the `byo_upstream`
fixture of tests/report/conftest.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.report.test_byo_bottom_lines import _agent

VOLATILE = {"BYO_VOLATILE_TOOLS": "1"}


def _wrap(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m looplab wrap ARGS -- the openai agent` with volatile tool output."""
    return subprocess.run(
        [sys.executable, "-m", "looplab", "--no-log-file", "wrap", *args, "--", *_agent("openai")],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **VOLATILE},
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_readme_recipe_replays_an_agent_whose_tools_print_times(
    tmp_path: Path, byo_upstream: str
) -> None:
    """Record once; strict replay misses (the time moved); tolerant replay, as the
    README's recipe runs it, finishes and shows where the request first differs."""
    common = ["--agent", "my-agent", "--task", "lookup"]
    recorded = _wrap(tmp_path, "-p", "fast-750", "--upstream", byo_upstream, "--record", "rec",
                     *common, "-o", "runs/rec")  # fmt: skip
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    strict = _wrap(tmp_path, "-p", "fast-750", "--replay", "rec", *common, "-o", "runs/strict")
    missed = strict.stdout + strict.stderr
    assert strict.returncode != 0
    assert "not in the recording" in missed and "first difference at character" in missed
    tolerant = _wrap(tmp_path, "-p", "slow-80", "--replay", "rec", "--replay-policy",
                     "tolerant", *common, "-o", "runs/my-agent")  # fmt: skip
    said = tolerant.stdout + tolerant.stderr
    assert tolerant.returncode == 0, said
    assert "first difference at character" in said and "lookup-" in said
    assert list((tmp_path / "runs/my-agent").glob("*.jsonl"))
