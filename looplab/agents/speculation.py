"""Speculative read-only tools: run the likely next call while the model decodes.

At the start of each model call the `Speculator` asks its predictors (a registry, first
answer wins) which call the agent will most likely make first, given the previous step's
calls: the tests after a successful edit, a file just written read back. It starts that
call at once, but only when the tool is in `READ_ONLY_TOOLS` and in the agent's toolbox;
nothing else is ever run speculatively.

Back-off: after `MISSES_BEFORE_PAUSE` misses in a row the speculator stops running its
guesses and only keeps them as shadows; the first shadow that would have matched resumes
it (an agent that edits several times before testing wastes a test run per edit
otherwise, and on a busy machine those runs slow the real tools down).

When the reply's first call is exactly the guess (same name, same arguments as JSON) the
speculative run is that call's result (`dispatch: speculative`): no call of the reply ran
before it, and the previous step's calls had all ended before it started, so it saw the
state the real call would have seen. Otherwise (another call, or no call) it is a miss:
its result is dropped, never shown to the model, and it runs to its end in the
background (its time counted as wasted) instead of being cut off mid-command.

Why these tools are read-only:
- `read_file`, `list_files`: read the workspace, write nothing.
- `run_tests`: runs the sandbox's test command, `pytest -p no:cacheprovider`; with the
  cache provider off its only writes are Python bytecode caches, which Python checks
  against each source's mtime and size and rewrites atomically, so a speculative run
  cannot change what a later real call sees. A task whose tests write to the workspace
  would break this; the bundled tasks' tests do not.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from looplab.agents.dispatch import CallOutcome, RunCall, StepDispatcher, same_call
from looplab.agents.records import ToolCallRecord

__all__ = ["PREDICTORS", "READ_ONLY_TOOLS", "Speculator", "predict_next"]

READ_ONLY_TOOLS = frozenset({"read_file", "list_files", "run_tests"})
"""The only tools ever run speculatively (see the module docstring for why)."""

EDIT_TOOLS = frozenset({"edit_file", "write_file"})
MISSES_BEFORE_PAUSE = 2
"""Misses in a row after which guesses are only shadowed (module docstring)."""

Predictor = Callable[[list[ToolCallRecord], frozenset[str]], tuple[str, dict[str, Any]] | None]
"""(previous step's calls, the toolbox's tool names) -> (tool, arguments) or None."""


def _tests_after_edit(
    previous: list[ToolCallRecord], tools: frozenset[str]
) -> tuple[str, dict[str, Any]] | None:
    edited = any(t.name in EDIT_TOOLS and t.ok for t in previous)
    return ("run_tests", {}) if edited and "run_tests" in tools else None


def _read_after_write(
    previous: list[ToolCallRecord], tools: frozenset[str]
) -> tuple[str, dict[str, Any]] | None:
    written = [t for t in previous if t.name == "write_file" and t.ok]
    if not written or "read_file" not in tools:
        return None
    try:
        path = json.loads(written[-1].arguments).get("path")
    except (ValueError, AttributeError):
        return None
    return ("read_file", {"path": path}) if isinstance(path, str) else None


PREDICTORS: list[Predictor] = [_tests_after_edit, _read_after_write]
"""Tried in order; the first guess is run. A new rule joins by one line."""


def predict_next(
    previous: list[ToolCallRecord], tools: frozenset[str]
) -> tuple[str, dict[str, Any]] | None:
    """The predictors' first guess for the next call, or None."""
    for predictor in PREDICTORS:
        guess = predictor(previous, tools)
        if guess is not None:
            return guess
    return None


class Speculator:
    """Runs one speculative call per model call (see the module docstring).

    Args:
        run_call: runs a tool call (the loop's own, so it is timed like any call).
        tools: the toolbox's tool names.
        predict: the prediction function (default `predict_next`).
    """

    def __init__(
        self,
        run_call: RunCall,
        tools: frozenset[str],
        predict: Callable[
            [list[ToolCallRecord], frozenset[str]], tuple[str, dict[str, Any]] | None
        ] = predict_next,
    ) -> None:
        self._run_call = run_call
        self._tools = tools
        self._predict = predict
        self._guess: dict[str, Any] | None = None
        self._task: asyncio.Task[CallOutcome] | None = None
        self._misses: list[asyncio.Task[CallOutcome]] = []
        self._in_a_row = 0
        self.hits = 0
        self.started = 0
        self.paused = 0

    def start(self, previous: list[ToolCallRecord]) -> None:
        """Start the guess for the coming reply, if any, read-only and not paused."""
        if self._task is not None:  # never resolved (the reply failed): a miss
            self._misses.append(self._task)
        self._guess = self._task = None
        guess = self._predict(previous, self._tools)
        if guess is None:
            return
        name, arguments = guess
        if name not in READ_ONLY_TOOLS or name not in self._tools:
            return  # never run a tool that might write
        self._guess = {"id": "", "function": {"name": name, "arguments": json.dumps(arguments)}}
        if self._in_a_row >= MISSES_BEFORE_PAUSE:
            self.paused += 1  # a shadow guess: checked in `resolve`, never run
            return
        self._task = asyncio.ensure_future(self._run_call(self._guess))
        self.started += 1

    def resolve(self, first_call: dict[str, Any] | None, dispatcher: StepDispatcher) -> None:
        """The reply's first call is known: hand a matching run to the dispatcher as call
        0's result, or drop the run (a miss). Idempotent within one reply."""
        if self._guess is None:
            return
        task, guess = self._task, self._guess
        self._task = self._guess = None
        matched = first_call is not None and same_call(first_call, guess)
        self._in_a_row = 0 if matched else self._in_a_row + 1
        if task is None:
            return
        if matched:
            self.hits += 1
            dispatcher.take(0, task)
        else:
            self._misses.append(task)

    async def drain(self) -> None:
        """Wait for every dropped run (call once the run has ended)."""
        self.resolve(None, StepDispatcher(self._run_call, limit=1, streaming=False))
        await asyncio.gather(*self._misses, return_exceptions=True)

    def stats(self) -> dict[str, float]:
        """Hits, misses, the tool time of dropped runs (after `drain`) and guesses not run
        while paused."""
        wasted = sum(
            t.result()[0].duration_s
            for t in self._misses
            if t.done() and not t.cancelled() and t.exception() is None
        )
        return {
            "speculation_hits": float(self.hits),
            "speculation_misses": float(self.started - self.hits),
            "speculation_wasted_s": wasted,
            "speculation_paused": float(self.paused),
        }
