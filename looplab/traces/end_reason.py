"""Why a run ended (`run_end.end_reason`): the one vocabulary every producer and reader uses.

`EndReason` is a `StrEnum`, so a member is the very string it stands for: traces hold the
same JSON as before, and a member compares equal to the string read from an old trace.
Other harnesses end for reasons of their own (mini-swe-agent's `exit_status`, Inspect's
`<type>_limit`, Harbor's exception names), kept verbatim: the trace field is
`EndReasonValue`, a member for a known string and the plain string otherwise, so an
imported trace with an unknown reason still loads and round-trips unchanged.

Nothing else in `looplab/` spells an end reason as a bare string literal
(`tests/traces/test_end_reasons.py` fails when one reappears).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BeforeValidator

__all__ = [
    "FINISHED_ENDS",
    "HARNESS_LIMIT_SUFFIX",
    "EndReason",
    "EndReasonValue",
    "harness_limit",
    "known_end_reason",
]


class EndReason(StrEnum):
    """The end reasons looplab writes or reads by name.

    The agent loop (`looplab.agents.loop`): `finish`, `answer`, `step_limit`,
    `token_budget`, `wall_time_budget`, `backend_error`. The experiment runner: `timeout`
    (the task time cap, `budgets.task_timeout_s`: `analysis.caps.cap_events`). Wrapped and
    collected runs, imports: `exit`, `error`, `cancelled`, `unknown` (the source said
    nothing), and the spellings the importers give other harnesses' ends (`done`,
    `stopped`, `terminated`, `truncated`, `verified`, `completion_result`,
    `no completion_result`).
    """

    FINISH = "finish"
    """The agent called its finish tool."""
    ANSWER = "answer"
    """The agent replied without tool calls."""
    STEP_LIMIT = "step_limit"
    """The step budget (`AgentConfig.max_steps`) ran out."""
    TOKEN_BUDGET = "token_budget"
    """The token budget (`AgentConfig.token_budget`) ran out."""
    WALL_TIME_BUDGET = "wall_time_budget"
    """The agent's time budget (`AgentConfig.wall_time_budget_s`) ran out."""
    BACKEND_ERROR = "backend_error"
    """A model call failed for good (retries spent)."""
    TIMEOUT = "timeout"
    """The experiment's task time cap (`budgets.task_timeout_s`) cut the run: not finished."""
    ERROR = "error"
    """The harness or the run failed (an imported or collected run's error)."""
    CANCELLED = "cancelled"
    """The run was cancelled before it ended."""
    EXIT = "exit"
    """A wrapped agent command exited (`looplab wrap`; its status in `exit_code`)."""
    UNKNOWN = "unknown"
    """The source did not say why the run ended."""
    DONE = "done"
    """A browser agent's (OSWorld, browser-use) `done` action."""
    STOPPED = "stopped"
    """An OpenHands run that stopped without `finish` or an error."""
    TERMINATED = "terminated"
    """An AgentLab episode its environment terminated."""
    TRUNCATED = "truncated"
    """An AgentLab episode cut by its step limit."""
    VERIFIED = "verified"
    """A Harbor trial its verifier ran on, no exception recorded."""
    COMPLETION_RESULT = "completion_result"
    """A Cline task that ended with its `completion_result` message."""
    NO_COMPLETION_RESULT = "no completion_result"
    """A Cline task that never reached `completion_result`."""


FINISHED_ENDS = frozenset({EndReason.FINISH, EndReason.ANSWER})
"""The agent loop ended on its own (a finish call or a final answer), not at a limit."""

HARNESS_LIMIT_SUFFIX = "_limit"
"""How an imported harness's own limit is spelled (`harness_limit`); a run that ended at one
stopped, as one at a looplab budget did (`analysis.outcomes.stopped`)."""


def harness_limit(kind: str) -> str:
    """The end reason of a run an imported harness stopped at its `kind` limit (Inspect's
    `message`, `token`, `time`, `working`, `context`, `operator`, `custom`, `cost`):
    `message_limit`, kept verbatim rather than mapped onto a looplab budget."""
    return f"{kind}{HARNESS_LIMIT_SUFFIX}"


def known_end_reason(value: object) -> object:
    """`value` as an `EndReason` member when it spells one; anything else unchanged (an
    unknown string stays a string, a wrong type is left for validation to refuse)."""
    if isinstance(value, str) and not isinstance(value, EndReason):
        try:
            return EndReason(value)
        except ValueError:
            return value
    return value


EndReasonValue = Annotated[EndReason | str, BeforeValidator(known_end_reason)]
"""A trace's end reason: an `EndReason` member when known, else the source's own string."""
