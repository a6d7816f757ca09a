"""`looplab wrap`: a foreign agent (OpenAI Agents SDK) at two speeds, traces, report, cleanup.

It sits in tests/backends/proxy/ without importing looplab.backends.proxy: it runs the
`wrap` command (`backends/proxy/wrap.py`) in a process, as its users do.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile

from .wrapped import decode_rate, only_trace, run_wrap

AGENT = Path(__file__).resolve().parents[2] / "fixtures" / "agents" / "openai_agents_fixer.py"


@pytest.fixture(scope="module")
def agent_upstream() -> Iterator[SimulatorServer]:
    """A fast simulator upstream whose text answers are 400 tokens."""
    profile = resolve_profile(
        "fast-750", ["decode_tps=20000", "ttft_s=0", "prefill_tps=null", "output_tokens=400"]
    )
    with SimulatorServer(profile) as server:
        yield server


# a wrapped agent's measured decode rate within 1-5% of its profile's (the proxy's
# pacing, seen by the stock client): one fell to 655 of 750 tok/s beside 2 workers
@pytest.mark.timing
def test_foreign_agent_at_slow_80_and_fast_750(
    agent_upstream: SimulatorServer, tmp_path: Path
) -> None:
    """The Agents SDK runs through wrap at both speeds; traces match the rates; report compares."""
    rates = {"slow-80": 80.0, "fast-750": 750.0}
    for name in rates:
        done = run_wrap(tmp_path, "-p", name, "--upstream", agent_upstream.base_url,
                     "-o", str(tmp_path / name), "--", sys.executable, str(AGENT))  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert "answer words: 400" in done.stdout
    for name, rate in rates.items():
        trace = only_trace(tmp_path / name)
        assert trace.header.source == "wrap" and trace.complete
        assert trace.header.cell.backend == name
        assert trace.end is not None and trace.end.exit_code == 0 and trace.end.steps >= 2
        assert decode_rate(trace) == pytest.approx(rate, rel=0.01)
        assert any(c.name == "read_file" for c in trace.tool_calls())
        assert all(c.estimated for c in trace.tool_calls())
    report = tmp_path / "report.html"
    made = subprocess.run(
        [sys.executable, "-m", "looplab", "--no-log-file", "report", str(tmp_path / "slow-80"),
         str(tmp_path / "fast-750"), "-o", str(report)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    html = report.read_text()
    assert "slow-80" in html and "fast-750" in html
    swept = subprocess.run(
        [sys.executable, "-m", "looplab", "--no-log-file", "sweep", str(tmp_path / "slow-80"),
         "--rates", "80,750"], capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert swept.returncode == 0, swept.stderr[-2000:]


@pytest.mark.timing
def test_recording_replays_the_agent_without_upstream(
    agent_upstream: SimulatorServer, tmp_path: Path
) -> None:
    """An agent run recorded once replays at another speed with no upstream, no divergence."""
    store = tmp_path / "rec"
    recorded = run_wrap(tmp_path, "-p", "fast-750", "--upstream", agent_upstream.base_url,
                     "--record", str(store), "-o", str(tmp_path / "recorded"),
                     "--", sys.executable, str(AGENT))  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    for rate in (400,):
        out = tmp_path / f"replay-{rate}"
        done = run_wrap(tmp_path, "-p", "fast-750", "--profile-set", f"decode_tps={rate}",
                     "--replay", str(store), "-o", str(out),
                     "--", sys.executable, str(AGENT))  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        assert "divergence" not in done.stderr
        # the 1% requirement is the foreign-agent test's; a replay's rate within 3%
        assert decode_rate(only_trace(out)) == pytest.approx(rate, rel=0.03)


def test_exit_code_passes_and_nothing_is_left_running(
    agent_upstream: SimulatorServer, tmp_path: Path
) -> None:
    """wrap exits with the command's status; its background children and the proxy are gone."""
    script = "sleep 300 & echo $! > child.pid; echo $OPENAI_BASE_URL > url; exit 3"
    done = run_wrap(tmp_path, "--upstream", agent_upstream.base_url, "-o", str(tmp_path / "t"),
                 "--", "sh", "-c", script)  # fmt: skip
    assert done.returncode == 3
    trace = only_trace(tmp_path / "t")
    assert trace.end is not None and trace.end.exit_code == 3 and trace.end.steps == 0
    child = int((tmp_path / "child.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
    port = int((tmp_path / "url").read_text().strip().rsplit(":", 1)[1].split("/")[0])
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass


@pytest.mark.timing
def test_wrap_without_upstream_runs_the_builtin_simulator(tmp_path: Path) -> None:
    """No --upstream: the built-in simulator answers a real model name (the trace says which
    policy), the proxy sets the pace (never "upstream slower"), tool arguments are kept, and
    the gap after the final text answer is the agent's own time, not a tool."""
    done = run_wrap(tmp_path, "-p", "fast-750", "-o", str(tmp_path / "t"),
                 "--", sys.executable, str(AGENT), "gpt-4o-mini")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "upstream slower on 0 call(s)" in done.stderr
    trace = only_trace(tmp_path / "t")
    assert trace.header.backend["upstream"] == "built-in simulator"
    assert trace.header.backend["policies"] == {"gpt-4o-mini": "looplab-lorem"}
    assert any("gpt-4o-mini by looplab-lorem" in note for note in trace.header.notes)
    tools = trace.tool_calls()
    assert tools and all(c.name == "read_file" for c in tools)  # no synthetic "harness" tool
    assert all('"path"' in c.arguments for c in tools)
    last = trace.steps()[-1]
    assert last.tool_s == 0.0 and last.overhead_s > 0 and "overhead_s" in last.estimated
    assert trace.end is not None and trace.end.tool_s == pytest.approx(
        sum(s.tool_s for s in trace.steps())
    )
    assert decode_rate(trace) == pytest.approx(750.0, rel=0.05)  # the proxy sets the pace


def test_replay_record_without_upstream_is_a_usage_error(tmp_path: Path) -> None:
    """--record needs an --upstream to record from (exit 2, the flag named)."""
    done = run_wrap(tmp_path, "--record", str(tmp_path / "rec"), "--", "true")
    assert done.returncode == 2
    assert "--record" in done.stderr


@pytest.mark.parametrize(
    ("script", "check", "solved", "by"),
    [
        ("exit 0", None, True, "exit code"),
        ("exit 1", None, False, "exit code"),
        ("echo fixed > out", "grep -q fixed out", True, "check command"),
        ("echo wrong > out", "grep -q fixed out", False, "check command"),
        ("echo fixed > out; exit 2", "grep -q fixed out", False, "check command"),
    ],
)
def test_wrap_records_the_verdict(
    tmp_path: Path, script: str, check: str | None, solved: bool, by: str
) -> None:
    """The agent's exit code decides without --check; with it, the check's exit status (run
    after the agent, in its directory) decides and an agent exiting non-zero fails anyway;
    the verdict, who gave it and the check's output are in the trace."""
    flags = ["--check", check] if check else []
    done = run_wrap(tmp_path, "-o", str(tmp_path / "t"), *flags, "--", "sh", "-c", script)
    trace = only_trace(tmp_path / "t")
    assert trace.end is not None
    assert (trace.end.success, trace.end.verdict_by) == (solved, by)
    assert ("solved" if solved else "failed") + f" ({by})" in done.stderr
    if check:
        assert trace.end.check_output is not None and "[check exited with status" in (
            trace.end.check_output
        )
