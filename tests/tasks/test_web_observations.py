"""Web tasks with screenshot, marks and DOM observations, end to end in real Chromium: the
image reaches the simulator's requests and counts by the profile's vision token rule."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from looplab.agents.computer_use.agent import computer_use_toolbox
from looplab.agents.config import AgentConfig
from looplab.agents.runner import TaskRun, run_task
from looplab.tasks import load_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile
from looplab.latency.tokens import REPLY_PRIMING_TOKENS, default_tokenizer

FAST = ["ttft_s=0", "decode_tps=20000", "output_tokens=8", "prefill_tps=null"]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    """One fast simulator for the module, counting images by the `claude` rule."""
    with SimulatorServer(resolve_profile("fast-750", [*FAST, "vision_tokens=claude"])) as running:
        yield running


async def _run(server: SimulatorServer, observation: str, **more: object) -> TaskRun:
    task = load_task("web/signup-wizard")
    endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
    config = AgentConfig.model_validate({"observation": observation, **more})
    async with InstrumentedClient(endpoint) as client:
        return await run_task(task, client, agent_config=config)


@pytest.mark.parametrize("observation", ["screenshot", "marks", "dom"])
async def test_signup_wizard_is_solved_with_each_observation(
    server: SimulatorServer, observation: str
) -> None:
    """The scripted agent solves web/signup-wizard seeing screenshots, marks or the DOM."""
    run = await _run(server, observation)
    assert run.result.end_reason == "finish", run.result.final_text
    assert run.solved, run.check.output
    observed = [t.observation for s in run.result.steps for t in s.tools if t.observation]
    assert observed and {o["kind"] for o in observed} == {observation}
    if observation != "dom":
        assert all(o["width"] == 1280 and o["height"] == 800 for o in observed)
        assert all(o["image_bytes"] > 1000 for o in observed)


async def test_screenshot_tokens_reach_the_prompt(server: SimulatorServer) -> None:
    """The second call's prompt (after goto's screenshot) is the simulator's count of the
    conversation with the screenshot at the `claude` rule's 1,334 tokens."""
    run = await _run(server, "screenshot")
    messages: list[dict[str, Any]] = run.result.messages
    second = [i for i, m in enumerate(messages) if m.get("role") == "assistant"][1]
    sent = messages[:second]
    images = [p for m in sent if isinstance(m.get("content"), list) for p in m["content"]]
    shots = [p for p in images if p.get("type") == "image_url"]
    assert len(shots) == 1 and shots[0]["image_url"]["url"].startswith("data:image/png;base64,")
    tools = computer_use_toolbox(observation="screenshot").openai_tools()
    tokenizer = default_tokenizer()
    counted = tokenizer.count_messages(sent, tools, "claude")[-1] + REPLY_PRIMING_TOKENS
    call = run.result.steps[1].model
    assert call is not None and call.prompt_tokens == counted
    text_only = [
        {**m, "content": [p for p in m["content"] if p.get("type") != "image_url"]}
        if isinstance(m.get("content"), list)
        else m
        for m in sent
    ]
    assert counted - tokenizer.count_messages(text_only, tools)[-1] - REPLY_PRIMING_TOKENS == 1334


async def test_images_kept_bounds_the_screenshots_in_the_conversation(
    server: SimulatorServer,
) -> None:
    """With `images_kept: 1` only the latest screenshot stays; older ones become text."""
    run = await _run(server, "screenshot", images_kept=1)
    messages: list[dict[str, Any]] = run.result.messages
    parts = [p for m in messages if isinstance(m.get("content"), list) for p in m["content"]]
    assert run.solved
    assert sum(p.get("type") == "image_url" for p in parts) == 1
    assert any("no longer shown" in str(p.get("text")) for p in parts)
