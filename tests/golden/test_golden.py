"""Golden traces: what the agents and the scripted model do, step by step, pinned.

The golden file is a projection of a real run's trace that leaves out what legitimately
varies (times, ports, ids, durations in tool output). Regenerate after an intended
change with:  LOOPLAB_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/golden
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.runner import ExperimentRunner
from looplab.traces.inputs import load_traces
from looplab.traces.io import Trace
from looplab.traces.schema import ModelCallEvent, RunEndEvent, ToolCallEvent

HERE = Path(__file__).resolve().parent
DIGITS = re.compile(r"\d+")
CASES = ["coding/fix-pager", "coding/nbugs-2"]


def project(trace: Trace) -> list[dict[str, Any]]:
    """The stable part of a trace: who called what, with which tokens and verdicts."""
    out: list[dict[str, Any]] = []
    for event in trace.events:
        if isinstance(event, ModelCallEvent):
            calls = (event.message or {}).get("tool_calls") or []
            out.append(
                {
                    "kind": "model_call",
                    "step": event.step,
                    "completion_tokens": event.completion_tokens,
                    "reasoning_tokens": event.reasoning_tokens,
                    "finish_reason": event.finish_reason,
                    "calls": [
                        [c["function"]["name"], DIGITS.sub("#", c["function"]["arguments"])]
                        for c in calls
                    ],
                }
            )
        elif isinstance(event, ToolCallEvent):
            first = (event.output or "").strip().splitlines()[:1]
            out.append(
                {
                    "kind": "tool_call",
                    "step": event.step,
                    "name": event.name,
                    "ok": event.ok,
                    "output_head": DIGITS.sub("#", first[0])[:120] if first else "",
                }
            )
        elif isinstance(event, RunEndEvent):
            out.append(
                {"kind": "run_end", "end_reason": event.end_reason, "success": event.success,
                 "steps": event.steps}
            )  # fmt: skip
    return out


@pytest.mark.parametrize("task", CASES)
def test_trace_matches_golden(task: str, tmp_path: Path) -> None:
    """The scripted coding agent's run of the task matches its golden projection."""
    config = validate_model(
        ExperimentConfig,
        {
            "name": "golden",
            "backends": [{"name": "fast-750", "profile": "fast-750"}],
            "tasks": [task],
            "clock": "virtual",
            "output_dir": str(tmp_path),
        },
    )
    runner = ExperimentRunner(config)
    runner.prepare_directory(fresh=True)
    asyncio.run(runner.run())
    (trace,) = load_traces([tmp_path])
    actual = project(trace)
    golden = HERE / f"{task.replace('/', '__')}.json"
    if os.environ.get("LOOPLAB_REGEN_GOLDEN") == "1":
        golden.write_text(json.dumps(actual, indent=1) + "\n")
    assert golden.exists(), f"no golden file; regenerate: LOOPLAB_REGEN_GOLDEN=1 pytest {HERE}"
    assert actual == json.loads(golden.read_text())
