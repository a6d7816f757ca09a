"""What `looplab run` prints for a `backend.transport` axis: how much shorter the Responses
WebSocket made the task than HTTP, per backend, next to OpenAI's claim.

Runs are paired: the same backend, task and seed over `http` and over `websocket` (the
scripted model draws the same replies on both). Two savings, medians over the pairs:

- task: `1 - websocket task time / http task time`, as measured;
- with tools held: the same after giving the WebSocket run the HTTP run's tool time, so
  the tools' own run-to-run change (real tools on a busy machine vary by seconds) is not
  credited to the transport. On the virtual clock the model time is the profile's, so this
  is the transport's effect alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from looplab.report.data.knobs import variant_of
from looplab.report.data.records import RunRecord
from looplab.stats.intervals import median

__all__ = ["TransportSaving", "transport_lines", "transport_savings"]

AXIS = "backend.transport"


@dataclass(frozen=True)
class TransportSaving:
    """One backend's WebSocket runs against its HTTP runs (shares: 0.1 = 10% shorter)."""

    backend: str
    pairs: int
    http_s: float
    """Median HTTP task time."""
    websocket_s: float
    """Median WebSocket task time."""
    saving: float
    """Median paired share of task time saved."""
    saving_tools_held: float
    """The same with the WebSocket run given the HTTP run's tool time."""


def transport_savings(records: Sequence[RunRecord]) -> list[TransportSaving]:
    """Per backend with runs over both transports, the paired savings (module docstring)."""
    runs: dict[tuple[str, str, Any], dict[str, RunRecord]] = defaultdict(dict)
    for record in records:
        transport = variant_of(record).get(AXIS)
        if transport is None or not record.complete or record.trace is None:
            continue
        seed = record.trace.header.cell.seed
        runs[(record.profile, record.task, seed)][str(transport)] = record
    by_backend: dict[str, list[tuple[RunRecord, RunRecord]]] = defaultdict(list)
    for (backend, _, _), pair in runs.items():
        if "http" in pair and "websocket" in pair and pair["http"].task_s > 0:
            by_backend[backend].append((pair["http"], pair["websocket"]))
    out: list[TransportSaving] = []
    for backend in sorted(by_backend):
        pairs = by_backend[backend]
        out.append(
            TransportSaving(
                backend=backend,
                pairs=len(pairs),
                http_s=median([h.task_s for h, _ in pairs]),
                websocket_s=median([w.task_s for _, w in pairs]),
                saving=median([1 - w.task_s / h.task_s for h, w in pairs]),
                saving_tools_held=median(
                    [1 - (w.task_s - w.tool_s + h.tool_s) / h.task_s for h, w in pairs]
                ),
            )
        )
    return out


def transport_lines(records: Sequence[RunRecord], claimed: str) -> list[str]:
    """One sentence per backend (`transport_savings`), each ending with `claimed`."""
    return [
        f"{s.backend}: over the Responses WebSocket the task took {s.websocket_s:.2f} s "
        f"against {s.http_s:.2f} s over HTTP: {_shorter(s.saving)} "
        f"({_shorter(s.saving_tools_held)} with the tools' run-to-run change taken out), "
        f"median of {s.pairs} paired run(s); {claimed}"
        for s in transport_savings(records)
    ]


def _shorter(saving: float) -> str:
    return f"{saving:.1%} shorter" if saving >= 0 else f"{-saving:.1%} longer"
