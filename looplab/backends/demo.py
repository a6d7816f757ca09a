"""The simulator alone, as a client sees it: one short conversation at one preset.

The logic of `looplab demo` (backends/commands.py).
"""

from __future__ import annotations

from typing import Any

from looplab.backends.client.client import EndpointConfig, InstrumentedClient, ModelResponse
from looplab.backends.simulator.inprocess import SimulatorServer
from looplab.latency.presets import resolve_profile

__all__ = ["run_demo"]


async def run_demo(preset: str, tokens: int, steps: int) -> list[ModelResponse]:
    """`steps` calls of one growing conversation against an in-process simulator.

    Args:
        preset: latency preset name.
        tokens: output tokens per reply (the profile's `output_tokens`).
        steps: model calls to make.

    Returns:
        The responses, in order, with their measured timing.
    """
    profile = resolve_profile(preset, [f"output_tokens={tokens}"])
    responses: list[ModelResponse] = []
    async with SimulatorServer(profile) as server:
        endpoint = EndpointConfig(base_url=server.base_url, model="looplab-lorem")
        async with InstrumentedClient(endpoint) as client:
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": "You are a coding agent."},
                {"role": "user", "content": "Explain the failing test, then fix it."},
            ]
            for _ in range(steps):
                response = await client.complete(messages)
                responses.append(response)
                messages += [response.message, {"role": "user", "content": "Go on."}]
    return responses
