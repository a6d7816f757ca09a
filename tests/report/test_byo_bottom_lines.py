"""Bring your own agent, end to end, as a new user would (issue 33's "done when"): two
agents of our own (a plain openai-client one, a LangGraph one; `tests/report/byo/`) are
recorded through `looplab wrap --upstream` against a scripted stand-in upstream on
loopback, replayed at slow-80 and fast-750, and the openai agent's own OTLP spans go into
`looplab collect -p`; the report gives each agent its own bottom line, never a cross-agent
pair, and labels replays by the profile they ran at. Real processes, real HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from looplab.report.build import build_model_for
from looplab.traces.io import read_trace

BYO = Path(__file__).resolve().parent / "byo"


def _looplab(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`python -m looplab ARGS`, which must succeed; its output."""
    done = subprocess.run(
        [sys.executable, "-m", "looplab", "--no-log-file", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _port(path: Path, process: subprocess.Popen[bytes]) -> int:
    """The port a process wrote to `path` once listening."""
    for _ in range(1200):  # 60 s: a loaded machine took over 15 s to start collect
        if path.exists() and path.read_text():
            return int(path.read_text())
        assert process.poll() is None, f"{process.args!r} exited"
        time.sleep(0.05)
    raise AssertionError(f"{process.args!r} never wrote {path}")


def _agent(name: str) -> list[str]:
    return [sys.executable, str(BYO / f"agent_{name}.py")]


def _collect(tmp_path: Path, profile: str) -> None:
    """The openai agent, replayed at `profile`, its spans into `collect -p profile`."""
    port_file = tmp_path / f"collect-{profile}.port"
    command = [sys.executable, "-m", "looplab", "--no-log-file", "collect", "-o", "collected"]
    command += ["-p", profile, "--port", "0", "--port-file", str(port_file)]
    command += ["--max-runs", "1", "--until-idle", "120", "--settle-s", "0.3"]
    collector = subprocess.Popen(command, cwd=tmp_path)
    try:
        endpoint = f"http://127.0.0.1:{_port(port_file, collector)}/v1/traces"
        wrap = ["wrap", "-p", profile, "--replay", "rec-openai", "--agent", "openai-agent"]
        wrap += ["--task", "lookup", "-o", "otel-wrapped", "--", *_agent("openai")]
        _looplab(tmp_path, *wrap, env={"LOOPLAB_OTLP": endpoint})
        assert collector.wait(60) == 0
    finally:
        if collector.poll() is None:
            collector.terminate()
            collector.wait(10)


def _record(tmp_path: Path, upstream: str, name: str) -> None:
    """Record agent `name` through `wrap --upstream` into `rec-<name>`."""
    record = ["wrap", "-p", "fast-750", "--upstream", upstream, "--record", f"rec-{name}"]
    record += ["--agent", f"{name}-agent", "--task", "lookup", "-o", f"recorded-{name}"]
    said = _looplab(tmp_path, *record, "--", *_agent(name))
    assert "simulator's filler" not in said


def _replay(tmp_path: Path, name: str, profile: str) -> None:
    """Replay agent `name`'s recording at `profile` into `replays-<name>`."""
    replay = ["wrap", "-p", profile, "--replay", f"rec-{name}", "--agent", f"{name}-agent"]
    replay += ["--task", "lookup", "-o", f"replays-{name}", "--", *_agent(name)]
    _looplab(tmp_path, *replay)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_each_agent_gets_its_own_bottom_line(tmp_path: Path, byo_upstream: str) -> None:
    """Two agents recorded, replayed at both profiles, one also collected: three bottom
    lines (agent, task set, clock), each slow-80 against fast-750 of its own runs."""
    # the runs are independent once recorded (each replay writes its own trace file), and
    # mostly wait on paced replies: run them side by side, as a user's shell jobs would
    agents, profiles = ("openai", "langgraph"), ("slow-80", "fast-750")
    with ThreadPoolExecutor(max_workers=5) as pool:
        list(pool.map(lambda name: _record(tmp_path, byo_upstream, name), agents))
        jobs = [pool.submit(_replay, tmp_path, n, p) for n in agents for p in profiles]
        # one collector at a time: both write the same `collected` directory
        jobs.append(pool.submit(lambda: [_collect(tmp_path, p) for p in profiles]))
        for job in jobs:
            job.result()
    for path in sorted((tmp_path / "replays-openai").glob("*.jsonl")):
        identity = read_trace(path).header.identity
        assert identity is not None and identity.replies == "recording"
        assert identity.profile is not None and identity.profile in path.name
    inputs = [tmp_path / d for d in ("replays-openai", "replays-langgraph", "collected")]
    model, _ = build_model_for(inputs)
    lines = {(line.key.agent, line.key.tasks, line.key.clock): line for line in model.bottom_lines}
    assert set(lines) == {
        ("langgraph-agent", "lookup", "wall"),
        ("openai-agent", "import:otlp", "recorded"),
        ("openai-agent", "lookup", "wall"),
    }
    for line in lines.values():
        assert (line.slow, line.fast) == ("slow-80", "fast-750"), line.text
        assert line.speedup is not None and line.speedup > 1.0, line.text
        assert line.text.startswith(f"For {line.key.agent} on {line.key.tasks}")
        print(line.text)  # the notes quote them
    assert model.claim is not None and "no runs of yours" not in model.claim.sentence


def test_wrap_without_upstream_says_the_replies_were_the_simulators(tmp_path: Path) -> None:
    """No --upstream, no --replay: printed and in the header; a run with zero model calls
    reports in words, never NaN."""
    said = _looplab(tmp_path, "wrap", "-p", "fast-750", "-o", "w", "--", sys.executable, "-c", "0")
    assert "simulator's filler" in said and "--record" in said and "--replay" in said
    (path,) = (tmp_path / "w").glob("*.jsonl")
    header = read_trace(path).header
    assert header.identity is not None and header.identity.replies == "simulator"
    assert any("simulator's filler" in note for note in header.notes)
    model, _ = build_model_for([tmp_path / "w"])
    (line,) = model.bottom_lines
    assert "only one profile" in line.text and "nan" not in line.text.lower()
    assert "nan" not in model.sentence.lower()


def test_import_takes_the_profile(tmp_path: Path) -> None:
    """`looplab import -p fast-750`: the runs' identity names the profile and its rate."""
    fixture = BYO.parents[1] / "fixtures/external-traces/mini-swe-agent"
    source = next(fixture.glob("*.traj.json"))
    _looplab(tmp_path, "import", "auto", str(source), "-o", "imp", "-p", "fast-750")
    (path,) = (tmp_path / "imp").glob("*.jsonl")
    identity = read_trace(path).header.identity
    assert identity is not None and identity.profile == "fast-750"
    assert identity.clock == "recorded" and identity.tasks.startswith("import:")
    _, records = build_model_for([tmp_path / "imp"])
    assert records[0].decode_tps == 750.0 and records[0].profile == "fast-750"
