"""Live tier: the coding agent against a real OpenAI-compatible API (never in CI).

Set LOOPLAB_LIVE_API_KEY (and optionally LOOPLAB_LIVE_BASE_URL, LOOPLAB_LIVE_MODEL).
"""

from __future__ import annotations

import os

import pytest

from looplab.agents.runner import run_task
from looplab.backends.client.client import EndpointConfig, InstrumentedClient
from looplab.tasks import load_task


@pytest.mark.live
async def test_real_model_runs_a_small_coding_task() -> None:
    """A real model drives coding/fix-pager; every step is timed with tokens from usage."""
    endpoint = EndpointConfig(
        base_url=os.environ.get("LOOPLAB_LIVE_BASE_URL", "https://api.openai.com/v1"),
        model=os.environ.get("LOOPLAB_LIVE_MODEL", "gpt-4.1-mini"),
        api_key_env="LOOPLAB_LIVE_API_KEY",
    )
    async with InstrumentedClient(endpoint) as client:
        run = await run_task(load_task("coding/fix-pager"), client)
    steps = run.result.steps
    assert steps, run.result.error
    for step in steps:
        assert step.model is not None
        assert step.model.timing.first_token is not None
        assert step.model.completion_tokens
    assert run.result.end_reason in {"finish", "answer", "step_limit"}
