"""Costs `looplab bench backend` prints beside pacing fidelity: the simulator's request
preparation on a growing conversation, and the prompt tokenizer fallback's agreement."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from looplab.latency.tokens import Tokenizer, default_tokenizer

__all__ = ["prepare_cost", "tokenizer_agreement"]


def prepare_cost(steps: int = 60) -> tuple[int, float, float]:
    """Server-side cost of accepting one request of a growing agent conversation.

    Each step appends a ~2k-token tool result and a short reply, as an agent does; the
    simulator validates, counts and hashes the whole conversation on its event loop, so
    this is time other streams' pacing waits.

    Returns:
        (prompt tokens at the last step, last step's ms, median ms over the steps).
    """
    import json as _json

    from looplab.backends.simulator.model import Simulator
    from looplab.clock import VirtualClock
    from looplab.latency.presets import resolve_profile

    simulator = Simulator(resolve_profile("fast-750", ["output_tokens=50"]), clock=VirtualClock())
    messages: list[dict[str, str]] = [
        {"role": "system", "content": "You are a coding agent. " * 200}
    ]
    costs: list[float] = []
    prompt = 0
    for step in range(steps):
        messages.append({"role": "user", "content": f"tool output line {step} " * 400})
        body = _json.dumps({"model": "looplab-lorem", "messages": messages}).encode()
        started = time.perf_counter()
        prompt = simulator.prepare(body).prompt_tokens
        costs.append((time.perf_counter() - started) * 1000)
        messages.append({"role": "assistant", "content": "ok " * 100})
    return prompt, costs[-1], statistics.median(costs)


def tokenizer_agreement(root: Path) -> list[tuple[str, int, int, int]]:
    """The approximate tokenizer against o200k on the project's own files.

    Returns:
        Per corpus (task code, task docs pages, READMEs): (name, files, o200k tokens,
        approximate tokens). Empty when no exact encoding loads here.
    """
    exact = default_tokenizer()
    if not exact.exact:
        return []
    approx = Tokenizer("approx-words-4c", None, None)
    rows = []
    for name, pattern in (
        ("task code", "tasks/**/*.py"),
        ("task docs", "tasks/**/*.html"),
        ("READMEs", "**/README.md"),
    ):
        files = [p for p in sorted(root.glob(pattern)) if ".venv" not in p.parts]
        text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in files)
        rows.append((name, len(files), exact.count(text), approx.count(text)))
    return rows
