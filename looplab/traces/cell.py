"""The trace header's `cell`: which experiment cell a run was, typed.

Written by the experiment runner (`experiments.matrix.Cell.describe`), `looplab wrap` and
the replays (`analysis.replay.replayed_cell`); read by attribute wherever a run is grouped
(the results index, identities of older traces, the report's pairing and knob views).
Every field is optional (an imported trace's cell is empty), other keys an older or
foreign trace holds are kept (`extra="allow"`), and a cell dumps exactly the keys it was
given, in the JSON shape the header's former `dict` had: no `null` for a field never set.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from looplab.config import StrictModel

__all__ = ["TraceCell"]


class TraceCell(StrictModel):
    """One cell of an experiment as a trace header records it (module doc)."""

    model_config = ConfigDict(extra="allow")

    backend: str | None = None
    """The backend's name (a simulated backend's profile name); a replay's is the profile
    it was re-timed at."""
    agent: str | None = None
    """The agent's name."""
    task: str | None = None
    """The task id."""
    repetition: int | None = Field(default=None, strict=True)
    """0-based repetition of (backend, agent, task)."""
    seed: int | None = Field(default=None, strict=True)
    """The simulator's and the policy's seed for this repetition."""
    variant: dict[str, Any] | None = None
    """The axis values, dotted path -> value (only when the experiment has axes)."""
    replayed_from: str | None = None
    """A replay's original backend (`looplab replay`)."""

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the keys set (and the extra ones): the JSON a dict cell had."""
        data: dict[str, Any] = handler(self)
        given = self.model_fields_set | set(self.model_extra or {})
        return {key: value for key, value in data.items() if key in given}
