"""The model-policy interface: what the simulated model says (never when it says it).

A policy turns a validated chat request into a `Reply`: visible text and tool calls, each
already split into token pieces, so the simulator's output token counts are exact by
construction (one piece, one token). Timing is entirely the server's business.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Protocol

from looplab.backends.simulator.protocol import ChatRequest
from looplab.latency.profile import LatencyProfile
from looplab.latency.tokens import Tokenizer

__all__ = ["ModelPolicy", "PlannedToolCall", "PolicyContext", "Reply"]


@dataclass(frozen=True)
class PlannedToolCall:
    """One tool call of a reply.

    The call's header (id, type, name) occupies one token slot in the stream; each
    argument piece occupies one more.
    """

    id: str
    name: str
    argument_pieces: list[str]

    @property
    def arguments(self) -> str:
        """The full JSON arguments string."""
        return "".join(self.argument_pieces)


@dataclass(frozen=True)
class Reply:
    """What the model answers.

    Attributes:
        content_pieces: visible text, one token per piece (may be empty).
        tool_calls: tool calls, streamed after the text.
        reasoning_tokens: hidden reasoning tokens; None means "draw from the profile".
        cached_tokens: prompt tokens to count as served from the prefix cache instead of
            what the simulator's own cache finds (trace-driven runs replay the recorded
            cache hits); None means "the prefix cache decides".
    """

    content_pieces: list[str] = field(default_factory=list)
    tool_calls: list[PlannedToolCall] = field(default_factory=list)
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None

    @property
    def visible_tokens(self) -> int:
        """Token slots the visible part occupies (text + tool-call headers + arguments)."""
        return len(self.content_pieces) + sum(1 + len(c.argument_pieces) for c in self.tool_calls)


@dataclass(frozen=True)
class PolicyContext:
    """What a policy may use besides the request.

    Attributes:
        profile: the server's latency profile (output length distributions live here).
        rng: a generator seeded from the profile seed and the conversation, so the same
            conversation gets the same reply whatever else the server is doing.
        tokenizer: for splitting text into token pieces.
    """

    profile: LatencyProfile
    rng: random.Random
    tokenizer: Tokenizer


class ModelPolicy(Protocol):
    """A model stand-in. Adding one = one module in this package + one registry entry."""

    name: str
    """The policy name; served as model id `looplab-<name>`."""

    def reply(self, request: ChatRequest, context: PolicyContext) -> Reply:
        """Return the next assistant message for `request`.

        Raises:
            looplab.backends.simulator.protocol.ApiError: when the request cannot be answered by
                this policy (e.g. a replay policy past the end of its trace).
        """
        ...
