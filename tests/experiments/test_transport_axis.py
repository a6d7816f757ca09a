"""The transport as a backend field and an axis: bundled agents over the Responses
WebSocket, traced per call, priced by it on the virtual clock."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from looplab.agents.runner import run_task
from looplab.analysis.retime import profile_model_timing
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.config import load_model, validate_model
from looplab.errors import ConfigError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.matrix import expand_cells
from looplab.experiments.runner import ExperimentRunner
from looplab.experiments.summaries.transport_line import transport_savings
from looplab.latency.presets import resolve_profile
from looplab.report.data.records import load_runs
from looplab.tasks import load_task
from looplab.traces.io import read_trace
from looplab.traces.schema import ModelCallEvent

pytestmark = [pytest.mark.timing]  # wall-clock pacing asserts: run serially (make test)

REPO = Path(__file__).resolve().parents[2]
OVERHEAD = {"request_overhead_s": 0.2, "websocket_overhead_s": 0.04}


def test_the_shipped_config_sweeps_http_and_websocket_per_backend() -> None:
    """experiments/configs/responses-websocket.yaml parses; each backend x repetition runs
    once over HTTP and once over the WebSocket, on nbugs-20 at 1,000 tok/s, 50 ms RTT."""
    config = load_model(ExperimentConfig, REPO / "experiments/configs/responses-websocket.yaml")
    cells = expand_cells(config)
    assert config.clock == "virtual"
    assert {c.task for c in cells} == {"coding/nbugs-20"}
    for backend in config.backends:
        mine = [c for c in cells if c.backend.name == backend.name]
        assert sorted(c.backend.transport for c in mine) == sorted(
            ["http", "websocket"] * config.repetitions
        )
        assert all(c.backend.overrides["network_rtt_s"] == 0.05 for c in mine)
    assert any("transport-websocket" in c.id for c in cells)


def test_an_unknown_transport_names_the_allowed_ones(small_config: dict[str, Any]) -> None:
    """`backend.transport: [grpc]` is refused before anything runs, naming http, websocket."""
    small_config["axes"] = {"backend.transport": ["http", "grpc"]}
    with pytest.raises(ConfigError, match=r"backend.transport.*'http'.*'websocket'"):
        validate_model(ExperimentConfig, small_config)


async def test_a_bundled_agent_solves_a_task_over_one_websocket() -> None:
    """The coding agent over `transport: websocket` solves fix-pager: every call a turn on
    one connection, every turn after the first sent as its new items only."""
    profile = resolve_profile("fast-750", ["decode_tps=5000", "ttft_s=0", "prefill_tps=null"])
    with SimulatorServer(profile) as server:
        endpoint = EndpointConfig(
            base_url=server.base_url, model="looplab-scripted", transport="websocket"
        )
        async with InstrumentedClient(endpoint) as client:
            run = await run_task(load_task("coding/fix-pager"), client)
            assert client.websocket.opened == 1
            assert client.websocket.continued == len(run.result.steps) - 1
    assert run.solved
    models = [s.model for s in run.result.steps]
    assert len(models) >= 3
    assert all(m is not None and m.transport == "websocket" for m in models)


def test_virtual_clock_prices_each_call_by_its_transport(
    small_config: dict[str, Any], tmp_path: Path
) -> None:
    """A virtual-clock run with the transport axis: the trace says the transport of every
    call, each WebSocket call is 0.16 s shorter (0.2 s HTTP overhead cut to 0.04 s), and
    the printed saving with tools held is that cut over the HTTP task time."""
    small_config["backends"] = [
        {"name": "fast", "profile": "fast-750", "overrides": {"decode_tps": 5000, **OVERHEAD}}
    ]
    small_config.update(clock="virtual", axes={"backend.transport": ["http", "websocket"]})
    runner = ExperimentRunner(validate_model(ExperimentConfig, small_config))
    runner.prepare_directory(fresh=True)
    result = asyncio.run(runner.run())
    assert all(o.status == "done" and o.success for o in result.outcomes)
    calls: dict[str, list[ModelCallEvent]] = {}
    for outcome in result.outcomes:
        trace = read_trace(outcome.trace_path)
        transport = outcome.cell.backend.transport
        calls[transport] = trace.model_calls()
        assert {c.transport for c in calls[transport]} == {transport}
        assert trace.header.backend.get("transport", "http") == transport
    (saving,) = transport_savings(load_runs([runner.directory]))
    http_s = saving.http_s
    assert saving.pairs == 1
    assert saving.saving_tools_held == pytest.approx(0.16 * len(calls["http"]) / http_s, abs=0.01)
    http, ws = calls["http"], calls["websocket"]
    assert [c.completion_tokens for c in ws] == [c.completion_tokens for c in http]
    for over_ws, over_http in zip(ws, http, strict=True):
        assert over_ws.ttft_s is not None and over_http.ttft_s is not None
        assert over_http.ttft_s - over_ws.ttft_s == pytest.approx(0.16, abs=0.01)


def test_replay_retiming_charges_the_recorded_transport() -> None:
    """`looplab replay --mode virtual`'s timing prices a WebSocket call with
    websocket_overhead_s and an HTTP one (or an old trace's, without the field) with
    request_overhead_s."""
    timing = profile_model_timing(
        resolve_profile("fast-750", [f"{k}={v}" for k, v in OVERHEAD.items()])
    )
    base: dict[str, Any] = {
        "run_id": "r",
        "step": 0,
        "wall_time": "2026-01-01T00:00:00Z",
        "start": 0.0,
        "end": 1.0,
        "prompt_tokens": 1000,
        "completion_tokens": 50,
    }
    old = ModelCallEvent.model_validate(base)
    ws = ModelCallEvent.model_validate({**base, "transport": "websocket"})
    assert old.transport == "http"
    old_t, ws_t = timing(old), timing(ws)
    assert old_t is not None and ws_t is not None
    assert old_t.ttft_s - ws_t.ttft_s == pytest.approx(0.16)
