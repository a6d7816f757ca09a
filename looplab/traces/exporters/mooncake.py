"""Traces -> Mooncake-style request traces (JSON lines) for serving benchmarks.

`mooncake_rows(traces)` gives one row per model call, the shape Mooncake's FAST'25 traces
have and AIPerf's `mooncake_trace` loader reads:

- `timestamp`: when the request arrives, integer milliseconds from the first session's
  start: the call's start on its run axis (so the agent's tool and harness time between
  two calls is the gap between their timestamps), plus `stagger_s` x the session's index;
- `input_length`: the call's prompt tokens; `output_length`: its completion tokens (1
  when the trace lacks them: benchmarks refuse 0);
- `hash_ids`: one id per `block_tokens` block of the prompt (the last one partial), ids
  that only a request with the same prompt prefix shares, so a benchmark's prefix cache
  model sees the agent's reuse.

Traces hold token counts, not prompts, so the prefix structure is derived (`shared_prefix`):
an agent's conversation grows by appending, so when a call's prompt is at least its
predecessor's, it starts with the predecessor's prompt and reply (up to its own length);
when it is shorter (the context was cut or compacted), only its `cached_tokens` are taken
as shared. A block keeps its predecessor's id when the shared prefix covers the whole
block and the predecessor had that full block; every other block gets a new id. Sessions
(traces) never share ids. Calls without a prompt token count are left out (counted in
`MooncakeExport.skipped`).

`mooncake_sessions(traces)` gives the same calls as closed-loop multi-turn sessions (AIPerf's
multi-turn `mooncake_trace`: a turn is sent only after the previous turn's reply, then its
`delay`), which is how an agent's calls depend on each other:

- `session_id`: the trace's run id; the first turn has `timestamp` (the session's start,
  `stagger_s` x its index), each later turn `delay`: integer ms from the previous call's
  end to this call's start (the agent's tool and harness time);
- `input_length`: what the turn adds to the conversation (AIPerf accumulates the turns and
  the live replies): the first turn's whole prompt, then the prompt less the previous
  prompt and reply (at least 1). A call whose prompt is shorter than that (the context was
  cut or compacted) cannot be a delta: it is sent with 1 new token and counted in
  `MooncakeExport.compacted` (the benchmark's context then runs longer than the agent's);
- `output_length` as above; no `hash_ids` (the accumulated conversation is the prefix).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from looplab.traces.io import Trace
from looplab.traces.schema import ModelCallEvent

__all__ = [
    "BLOCK_TOKENS",
    "MooncakeExport",
    "mooncake_rows",
    "mooncake_sessions",
    "shared_prefix",
]

BLOCK_TOKENS = 512
"""Mooncake's block size (tokens per hash id)."""


@dataclass
class MooncakeExport:
    """The rows and what they hold."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0
    """Model calls without a prompt token count (not exported)."""
    reused_blocks: int = 0
    """Blocks whose id an earlier request of the session had (prefix reuse)."""
    blocks: int = 0
    """All blocks."""
    compacted: int = 0
    """Sessions: calls whose prompt shrank (sent as a 1-token delta; module docstring)."""


def shared_prefix(previous: ModelCallEvent | None, call: ModelCallEvent) -> int:
    """Tokens the call's prompt shares with its predecessor's prompt and reply (module doc)."""
    prompt = call.prompt_tokens or 0
    if previous is None or previous.prompt_tokens is None:
        return 0
    if prompt >= previous.prompt_tokens:
        return min(prompt, previous.prompt_tokens + (previous.completion_tokens or 0))
    return min(prompt, call.cached_tokens or 0)


def mooncake_rows(
    traces: Sequence[Trace], *, block_tokens: int = BLOCK_TOKENS, stagger_s: float = 0.0
) -> MooncakeExport:
    """One Mooncake row per model call of every trace, by timestamp (module docstring).

    Args:
        traces: the sessions, in order.
        block_tokens: tokens per hash id block.
        stagger_s: seconds between one session's start and the next's.
    """
    out = MooncakeExport()
    next_id = 0
    for index, trace in enumerate(traces):
        calls = sorted(trace.model_calls(), key=lambda c: c.start)
        origin = min((c.start for c in calls), default=0.0)
        previous: ModelCallEvent | None = None
        previous_ids: list[int] = []
        for call in calls:
            if call.prompt_tokens is None:
                out.skipped += 1
                continue
            keep = shared_prefix(previous, call) // block_tokens
            full_before = (previous.prompt_tokens or 0) // block_tokens if previous else 0
            keep = min(keep, full_before, len(previous_ids))
            count = max(1, math.ceil(call.prompt_tokens / block_tokens))
            fresh = list(range(next_id, next_id + count - keep))
            next_id += len(fresh)
            ids = previous_ids[:keep] + fresh
            out.reused_blocks += keep
            out.blocks += count
            at = (call.start - origin) + index * stagger_s
            out.rows.append(
                {
                    "timestamp": round(at * 1000),
                    "input_length": call.prompt_tokens,
                    "output_length": max(1, call.completion_tokens or 1),
                    "hash_ids": ids,
                }
            )
            previous, previous_ids = call, ids
    out.rows.sort(key=lambda r: r["timestamp"])
    return out


def mooncake_sessions(traces: Sequence[Trace], *, stagger_s: float = 0.0) -> MooncakeExport:
    """One closed-loop multi-turn session per trace, its turns in call order (module doc).

    Args:
        traces: the sessions, in order.
        stagger_s: seconds between one session's start and the next's.
    """
    out = MooncakeExport()
    for index, trace in enumerate(traces):
        previous: ModelCallEvent | None = None
        for call in sorted(trace.model_calls(), key=lambda c: c.start):
            if call.prompt_tokens is None:
                out.skipped += 1
                continue
            row: dict[str, Any] = {"session_id": trace.header.run_id}
            if previous is None:
                row["timestamp"] = round(index * stagger_s * 1000)
                added = call.prompt_tokens
            else:
                row["delay"] = max(0, round((call.start - previous.end) * 1000))
                context = (previous.prompt_tokens or 0) + (previous.completion_tokens or 0)
                added = call.prompt_tokens - context
                if added < 0:
                    out.compacted += 1
            row["input_length"] = max(1, added)
            row["output_length"] = max(1, call.completion_tokens or 1)
            out.rows.append(row)
            previous = call
    return out
