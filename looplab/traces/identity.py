"""`RunIdentity`: what a run is compared by, written into every trace header.

A run is compared only with runs of the same agent, on the same task set, timed by the
same clock; within such a group, runs differ by the latency profile they ran (or were
re-timed) at. Every door that writes a trace (`looplab run`, `replay`, `wrap`, `collect`,
`import`) builds this value with `run_identity`, the one builder, and stores it as the
header's `identity`. Traces written before it existed read unchanged: `identity_of`
derives the same value tolerantly from the header's `cell`, `profile` dict and `source`.

Fields:
- `agent`: the agent (`coding`, a wrapped agent's name) or, for imports, the source
  harness's agent (else the harness: `import:otlp`).
- `tasks`: the task set: the part of the task id before `/` (`coding/fix-pager` ->
  `coding`; a workload's whole id, `workload/mini-swe-agent-deepseek`), a parametric
  family's base (`nbugs-8` -> `nbugs`), else the id itself; imported runs: their source
  (`import:swe_agent`), one set per harness's export.
- `profile` / `decode_tps`: the latency profile the run's model times belong to (None:
  not known, e.g. a collected run without `-p`).
- `clock`: `wall` (waited for), `virtual` (computed from the profile), `recorded` (taken
  from another harness's recording).
- `model`: the model the run talked to (the request's model through `wrap`/the proxy,
  `gen_ai.request.model` through `collect`, the harness's model on import, the backend's
  on `run`; None: not known). Not part of the comparison key: within one key, arms of two
  models make a model comparison, never a decode-rate change (`report/data/pairing.py`).
- `replies`: where the model's replies came from when that is not the agent's own model:
  `simulator` (a `looplab wrap` without `--upstream`/`--replay`: the simulator's filler,
  so the agent's steps are not its own), `recording` (replayed), `upstream`; None: the
  usual source for the door (bundled agents on the simulator, imports).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from looplab.config import StrictModel
from looplab.latency.spec import profile_name, profile_rate
from looplab.traces.cell import TraceCell

__all__ = [
    "Clock",
    "Replies",
    "RunIdentity",
    "assign_profile",
    "identity_of",
    "retimed",
    "run_identity",
    "task_set",
]

Clock = Literal["wall", "virtual", "recorded"]
Replies = Literal["upstream", "recording", "simulator"]

_FAMILY = re.compile(r"^(?P<base>.+)-\d+$")


class HeaderFields(Protocol):
    """What this module reads and writes of `schema.TraceHeader` (a protocol: the schema
    imports this module, not the other way round)."""

    identity: RunIdentity | None
    profile: dict[str, Any] | None
    cell: TraceCell
    source: str
    agent: str | None
    task: str | None
    model: str | None
    clock: Literal["wall", "virtual", "recorded"]
    notes: list[str]


class RunIdentity(StrictModel):
    """What a run is compared by (see the module docstring)."""

    agent: str
    """The agent, or the source harness's."""
    tasks: str
    """The task set."""
    profile: str | None = None
    """Latency profile name the model times belong to (None: unknown)."""
    decode_tps: float | None = None
    """That profile's decode rate, tokens/s (None: unknown)."""
    clock: Clock = "wall"
    """How the model times were obtained."""
    replies: Replies | None = None
    """Where the replies came from, when notable (`simulator`: not the agent's own)."""
    model: str | None = None
    """The model the run talked to (None: unknown)."""


def task_set(task: str | None) -> str:
    """The task set a task id belongs to (`coding/fix-pager` -> `coding`, `nbugs-8` ->
    `nbugs`, a workload -> its id, another id -> itself, None -> `?`)."""
    if not task:
        return "?"
    if task.startswith("workload/"):
        return task  # each calibrated workload models its own agent and task source
    if "/" in task:
        return task.split("/", 1)[0]
    match = _FAMILY.match(task)
    return match["base"] if match else task


def run_identity(
    *,
    agent: str | None,
    task: str | None = None,
    tasks: str | None = None,
    profile: str | None = None,
    decode_tps: float | None = None,
    clock: Clock = "wall",
    replies: Replies | None = None,
    model: str | None = None,
) -> RunIdentity:
    """The one builder of a run's identity (`tasks` wins over the set derived from `task`)."""
    return RunIdentity(
        agent=agent or "?",
        tasks=tasks or task_set(task),
        profile=profile,
        decode_tps=float(decode_tps) if decode_tps else None,
        clock=clock,
        replies=replies,
        model=model or None,
    )


def identity_of(header: HeaderFields) -> RunIdentity:
    """The header's identity, or one derived from an older header: the profile it was
    re-timed at for replays (the `profile` dict; their `cell.backend` kept the original),
    else `cell.backend`, else the profile dict's name; the agent, else the source."""
    if header.identity is not None:
        if header.identity.model is None and header.model:
            return header.identity.model_copy(update={"model": header.model})
        return header.identity
    backend = header.cell.backend
    if header.source.startswith("replay:"):
        name = profile_name(header.profile) or backend
    else:
        name = backend or profile_name(header.profile)
    rate = profile_rate(header.profile)
    imported = header.source.startswith("import:")
    return run_identity(
        agent=header.agent or (header.source if header.source != "looplab" else None),
        task=header.task,
        tasks=header.source if imported else None,
        profile=name or None,
        decode_tps=rate,
        clock=header.clock,
        model=header.model,
    )


def retimed(
    header: HeaderFields,
    profile: str,
    decode_tps: float | None,
    clock: Clock,
    replies: Replies | None = None,
) -> RunIdentity:
    """The identity of `header`'s run re-timed (replayed) at `profile` on `clock`: the same
    agent and task set, the new profile."""
    base = identity_of(header)
    return run_identity(
        agent=base.agent,
        tasks=base.tasks,
        profile=profile,
        decode_tps=decode_tps,
        clock=clock,
        replies=replies or base.replies,
        model=base.model,
    )


def assign_profile(
    header: HeaderFields,
    profile: str,
    decode_tps: float | None,
    how: str,
    spec: Mapping[str, Any] | None = None,
) -> None:
    """Record that `header`'s run was served at `profile` (`looplab import -p`, `collect
    -p`, or the spans' `looplab.profile` attribute): its identity, and a note saying `how`
    it is known. `spec` (the served profile, dumped) becomes the header's `profile` dict
    where it has none, so the run is priced at its entry; a header's own profile dict (a
    full simulated profile) is left alone."""
    if spec is not None and header.profile is None:
        header.profile = dict(spec)
    base = identity_of(header)
    header.identity = run_identity(
        agent=base.agent,
        tasks=base.tasks,
        profile=profile,
        decode_tps=decode_tps,
        clock=base.clock,
        replies=base.replies,
        model=base.model,
    )
    header.notes.append(f"profile {profile}: {how}")
