"""The task time cap stops the work, not only the record (issue 47, finding 7): on the wall
clock a tool command still running at the cap is killed with its whole tree (setsid and
background children too) and recorded as a `tool_call` marked `cut`; `looplab run` ends
near the cap, not at the command's own exec timeout. Booleans are refused as budgets.

A real `looplab run` process on a scripted task whose one step runs `sleep` commands, and
a cancelled exec on each sandbox kind.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.sandbox_contract import SandboxConfig
from looplab.sandboxes.factory import open_sandbox
from looplab.traces.io import read_trace
from looplab.traces.schema import ToolCallEvent


def _mark() -> str:
    """A sleep length of its own for one test's commands: names their processes in the
    process table apart from another test's (xdist runs this file's tests side by side)."""
    return f"300.{secrets.randbelow(10**6):06d}"


CAP_S = 2.0


def _sleeps(mark: str) -> str:
    """A command with a setsid child, a background child and a foreground sleep."""
    return f"setsid sleep {mark} & sleep {mark} & sleep {mark}"


def _task(root: Path, mark: str) -> None:
    """A coding task whose scripted first step runs a 30 s command with a setsid child
    and a background child."""
    task = root / "coding" / "hang"
    (task / "files").mkdir(parents=True)
    (task / "files" / "README").write_text("nothing here\n")
    spec = {
        "title": "Hang in a tool",
        "kind": "coding",
        "category": "bug-fix",
        "prompt": "Wait.",
        "check": {"command": "true"},
    }
    (task / "task.yaml").write_text(yaml.safe_dump(spec))
    call = {"tool": "run_shell", "args": {"command": _sleeps(mark), "timeout_s": 400}}
    steps = [
        {"text": "Waiting.", "calls": [call]},
        {"text": "Done.", "calls": [{"tool": "finish", "args": {"summary": "waited"}}]},
    ]
    (task / "solution.yaml").write_text(yaml.safe_dump({"steps": steps}))


def _left(mark: str) -> list[str]:
    """Command lines of processes still running the task's sleeps."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if mark in line and "sleep" in line:
            found.append(f"{pid}: {line}")
    return found


@pytest.mark.slow
def test_the_cap_kills_a_running_tool_and_records_it_cut(tmp_path: Path, campaign: Any) -> None:
    """A 2 s cap hit while a 300 s `sleep` (with setsid and background children) runs under
    a 400 s exec timeout: the run ends well before the sleep would (a 10 s cap took 67 s
    with a 60 s command before; the bound is loose for a loaded machine), no sleep is left,
    and the trace ends `timeout` with the run_shell call kept, `cut`, ending at the cap."""
    mark = _mark()
    _task(tmp_path / "tasks", mark)
    config = {
        "name": "cap",
        "clock": "wall",
        "backends": [{"name": "fast", "profile": "fast-750"}],
        "tasks": ["coding/hang"],
        "output_dir": str(tmp_path / "exp"),
        "budgets": {"task_timeout_s": CAP_S, "max_steps": 4},
    }
    file = tmp_path / "cap.yaml"
    file.write_text(yaml.safe_dump(config))
    env = {
        **os.environ,
        "LOOPLAB_TASKS_DIR": str(tmp_path / "tasks"),
        "LOOPLAB_LOG_FILE": os.devnull,
    }
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "looplab", "run", str(file)],
        capture_output=True,
        text=True,
        env=env,
        timeout=280,
    )
    took = time.monotonic() - started
    left = _left(mark)
    campaign.add("leftovers (processes, dirs, cgroups, containers)", len(left))
    assert done.returncode == 0, done.stderr[-3000:]
    assert not left, left
    assert took < 150, (took, done.stderr[-2000:])
    (path,) = (tmp_path / "exp" / "traces").glob("*.jsonl")
    trace = read_trace(path)
    assert trace.end is not None and trace.end.end_reason == "timeout"
    assert trace.end.end == pytest.approx(CAP_S)
    (call,) = [e for e in trace.events if isinstance(e, ToolCallEvent) and e.name == "run_shell"]
    assert call.cut and call.ok is False and call.end <= CAP_S
    assert call.error is not None and "cut" in call.error


@pytest.mark.parametrize("kind", ["local", pytest.param("docker", marks=pytest.mark.docker)])
async def test_a_cancelled_exec_kills_the_command_tree(tmp_path: Path, kind: str) -> None:
    """Cancelling an exec (as the cap does) kills the command, its setsid child and its
    background child before the cancellation returns, also when cancelled before the
    command started; the sandbox stays usable."""
    mark = _mark()
    (tmp_path / "task").mkdir()
    async with await open_sandbox(SandboxConfig(kind=kind), tmp_path / "task") as box:
        running = asyncio.ensure_future(box.exec(_sleeps(mark), timeout_s=400))
        for _ in range(600):  # the three sleeps started (30 s at most)
            if len(_left(mark)) >= 3:
                break
            await asyncio.sleep(0.05)
        assert len(_left(mark)) >= 3
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        assert _left(mark) == []
        early = asyncio.ensure_future(box.exec(_sleeps(mark), timeout_s=400))
        await asyncio.sleep(0.005)  # sent, likely not started: the cancel is asked again
        early.cancel()
        with pytest.raises(asyncio.CancelledError):
            await early
        await asyncio.sleep(1.0)
        assert _left(mark) == []
        assert (await box.exec("echo alive")).stdout == "alive\n"


@pytest.mark.parametrize("field", ["task_timeout_s", "wall_time_s", "max_steps", "max_tokens"])
def test_a_boolean_budget_is_refused(tmp_path: Path, field: str) -> None:
    """`task_timeout_s: true` was read as a 1 s cap: a boolean is refused for every budget,
    naming the field; numbers (ints for the seconds too) are still accepted."""
    base = {
        "name": "b",
        "backends": [{"name": "fast", "profile": "fast-750"}],
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "exp"),
    }
    with pytest.raises(Exception, match=field) as refused:
        validate_model(ExperimentConfig, {**base, "budgets": {field: True}})
    assert "bool" in str(refused.value) or "valid" in str(refused.value)
    config = validate_model(ExperimentConfig, {**base, "budgets": {field: 10}})
    assert getattr(config.budgets, field) == 10
