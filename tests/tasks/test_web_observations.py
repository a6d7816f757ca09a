"""Web tasks with screenshot, marks and DOM observations, end to end in real Chromium: the
image reaches the simulator's requests and counts by the profile's vision token rule."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from looplab.agents.config import AgentConfig
from looplab.agents.runner import run_task
from looplab.agents.taskset import load_task
from looplab.backends.client import EndpointConfig, InstrumentedClient
from looplab.backends.inprocess import SimulatorServer
from looplab.backends.presets import resolve_profile

FAST = ["ttft_s=0", "decode_tps=20000", "output_tokens=8", "prefill_tps=null"]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatorServer]:
    """One fast simulator for the module, counting images by the `claude` rule."""
    with SimulatorServer(resolve_profile("fast-750", [*FAST, "vision_tokens=claude"])) as running:
        yield running


async def _run(server: SimulatorServer, observation: str, **more: object) -> object:
    task = load_task("web/signup-wizard")
    endpoint = EndpointConfig(base_url=server.base_url, model="looplab-scripted")
    config = AgentConfig(observation=observation, **more)  # type: ignore[arg-type]  # test kwargs
    async with InstrumentedClient(endpoint) as client:
        return await run_task(task, client, agent_config=config)


@pytest.mark.parametrize("observation", ["screenshot", "marks", "dom"])
async def test_signup_wizard_is_solved_with_each_observation(
    server: SimulatorServer, observation: str
) -> None:
    """The scripted agent solves web/signup-wizard seeing screenshots, marks or the DOM."""
    run = await _run(server, observation)
    assert run.result.end_reason == "finish", run.result.final_text  # type: ignore[attr-defined]
    assert run.solved, run.check.output  # type: ignore[attr-defined]
    observed = [t.observation for s in run.result.steps for t in s.tools if t.observation]  # type: ignore[attr-defined]
    assert observed and {o["kind"] for o in observed} == {observation}
    if observation != "dom":
        assert all(o["width"] == 1280 and o["height"] == 800 for o in observed)
        assert all(o["image_bytes"] > 1000 for o in observed)


async def test_screenshot_tokens_reach_the_prompt(server: SimulatorServer) -> None:
    """Each screenshot in the conversation adds the rule's 1,334 prompt tokens (claude)."""
    aria = await _run(server, "aria")
    shots = await _run(server, "screenshot")
    messages = shots.result.messages  # type: ignore[attr-defined]
    images = [
        part
        for m in messages
        if isinstance(m.get("content"), list)
        for part in m["content"]
        if part.get("type") == "image_url"
    ]
    assert images and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
    # the step after the first goto sees exactly one screenshot: 1,334 tokens of it
    second = shots.result.steps[1].model  # type: ignore[attr-defined]
    from looplab.backends.tokens import default_tokenizer

    tokenizer = default_tokenizer()
    upto = messages[: messages.index(next(m for m in messages if m.get("role") == "assistant")) + 3]
    with_images = tokenizer.count_messages(upto, [], "claude")[-1]
    flat = tokenizer.count_messages(upto, [], "gemini-3-low")[-1]
    assert with_images - flat == 1334 - 280
    assert second.prompt_tokens is not None
    first_aria = aria.result.steps[1].model.prompt_tokens  # type: ignore[attr-defined]
    assert first_aria is not None and second.prompt_tokens != first_aria


async def test_images_kept_bounds_the_screenshots_in_the_conversation(
    server: SimulatorServer,
) -> None:
    """With `images_kept: 1` only the latest screenshot stays; older ones become text."""
    run = await _run(server, "screenshot", images_kept=1)
    messages = run.result.messages  # type: ignore[attr-defined]
    parts = [p for m in messages if isinstance(m.get("content"), list) for p in m["content"]]
    assert run.solved  # type: ignore[attr-defined]
    assert sum(p.get("type") == "image_url" for p in parts) == 1
    assert any("no longer shown" in str(p.get("text")) for p in parts)
