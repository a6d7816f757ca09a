"""Nested agent spans -> sub-runs (looplab-2): an OTLP trace's sub-agents.

An agent span (`invoke_agent`, OpenInference `AGENT`) below an agent span that made model
calls of its own (an orchestrator; `owners`) is a sub-agent: the
model and tool spans below it (and no deeper sub-agent) form its sub-run. It is spawned
by the parent's step whose model call started last before it, and joined by the parent's
first step whose model call starts after it ends. A tool span of the parent around it (an
agent used as a tool) is its spawning call, whose time is the parent's wait.
"""

from __future__ import annotations

from collections.abc import Callable

from looplab.traces.collect.conventions import Role, first_value
from looplab.traces.collect.spans import Span
from looplab.traces.importers.drafts import StepDraft, SubRunDraft

__all__ = ["owners", "subrun_drafts"]


def owners(
    spans: list[Span], roles: dict[str, Role | None]
) -> tuple[dict[str, str | None], list[str]]:
    """Span id -> the nearest sub-agent span above it (None: the top-level run), and the
    sub-agent span ids: agent spans below an agent span that made model calls of its own
    (an SDK's workflow span around its one agent is no parent; handoffs are siblings)."""
    by_id = {s.span_id: s for s in spans}

    def above(span: Span) -> list[str]:
        out: list[str] = []
        seen: set[str] = set()
        current = span.parent_id
        while current is not None and current in by_id and current not in seen:
            out.append(current)
            seen.add(current)
            current = by_id[current].parent_id
        return out

    chains = {s.span_id: above(s) for s in spans}
    nearest = {i: next((a for a in c if roles[a] == "agent"), None) for i, c in chains.items()}
    working = {nearest[s.span_id] for s in spans if roles[s.span_id] == "model"}
    nested = [
        s.span_id
        for s in spans
        if roles[s.span_id] == "agent" and any(a in working for a in chains[s.span_id])
    ]
    found = set(nested)
    owner = {i: next((a for a in chain if a in found), None) for i, chain in chains.items()}
    return owner, nested


def subrun_drafts(
    spans: list[Span],
    owned: tuple[dict[str, str | None], list[str]],
    steps_of: Callable[[list[Span], list[Span]], list[StepDraft]],
    picked: tuple[list[Span], list[Span]],
    main_steps: list[StepDraft],
) -> list[SubRunDraft]:
    """One sub-run per sub-agent span, its steps from its own model and tool spans."""
    models, tools = picked
    owner, nested = owned
    by_id = {s.span_id: s for s in spans}
    steps: dict[str | None, list[StepDraft]] = {None: main_steps}
    out: list[SubRunDraft] = []
    for agent_id in sorted(nested, key=lambda i: by_id[i].start or 0.0):
        agent = by_id[agent_id]
        own = steps_of(
            [m for m in models if owner[m.span_id] == agent_id],
            [t for t in tools if owner[t.span_id] == agent_id],
        )
        steps[agent_id] = own
        parent = owner[agent_id]
        above = steps.get(parent, [])
        starts = [s.model.start if s.model and s.model.start is not None else None for s in above]
        spawn = [i for i, t in enumerate(starts) if t is not None and t <= (agent.start or 0.0)]
        join = [i for i, t in enumerate(starts) if t is not None and t >= (agent.end or 0.0)]
        wrapper = by_id.get(agent.parent_id or "")
        call = first_value(wrapper.attributes, "tool_call_id") if wrapper else None
        if wrapper is None or owner[wrapper.span_id] != parent:
            call = None
        name = first_value(agent.attributes, "agent_name")
        out.append(
            SubRunDraft(
                id=agent_id,
                steps=own,
                parent=parent,
                parent_step=spawn[-1] if spawn else None,
                join_step=join[0] if join else None,
                spawn_call_id=None if call is None else str(call),
                agent=str(name) if name is not None else agent.name or None,
            )
        )
    return out
