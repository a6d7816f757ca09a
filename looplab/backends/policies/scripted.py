"""`scripted`: drives a bundled task through its reference solution, like an expert agent.

The policy is stateless; everything comes from the conversation, as with a real model:

1. **Which task.** The first user message is matched against every bundled task's prompt
   template (`tasks/*/*/task.yaml`, `prompt`; the format is `looplab.tasks`).
   Placeholders in the template (`{docs_url}`,
   `{app_url}`, a family parameter such as `{n}`) match any value, and the values found are
   substituted into the solution's arguments. No special headers: an agent sends the same
   request it would send a real model.
2. **Which step.** The plan is the solution's steps (a parametric family expanded for its
   parameter) with seeded detours; the step is the number of assistant messages so far.
   Every earlier assistant message must have called the plan's tools with the plan's
   arguments, and the latest tool results must contain what the plan `expect`s (and none
   may be an `ERROR:` the plan did not foresee); otherwise the conversation has left the
   script and the reply says so, in text, without tool calls, so the agent ends.
3. **Fan-out.** When the request offers the `delegate` tool, the plan is `fan_out`'s
   (parallel calls, sub-agent delegation, `fanout.py`); a sub-agent's conversation (its
   first user message a delegate task) follows `subagent_plan` and ends with a report.
4. **What to say.** The step's tool calls, its `text` padded with lorem words to its size
   (`text_tokens`, else the profile's `output_tokens` draw for the whole visible reply),
   and its `reasoning_tokens` (else the profile's draw).

**Element refs (web tasks).** A browser agent points at elements by the refs of the
latest page snapshot, which the script cannot know in advance. An argument string may
hold `{ref:ROLE "NAME"}` (or `{ref:ROLE "NAME"#K}` for the K-th such element, 1-based);
it is replaced by the ref of the first (K-th) line `- ROLE "NAME" ... [ref=REF]` of the
latest tool result that holds a snapshot (any `[ref=`) before the step, exactly as a
model reading the snapshot would. An element missing from that snapshot is off-script.
With screenshot observations (`agent.observation: screenshot | marks | dom`) the tool
result keeps the page's interactive elements as the same aria lines (the refs a model
could not read off pixels), so refs resolve from that list. The policy cannot see
images: when a step's results came with a screenshot, an `expect` the text does not
hold counts as seen in the picture (the task's checker still judges the outcome).

Model behaviour (`behaviour`, `models.py`): a small fast or large slow model's detour
probability (its `imperfection`), reply length, hidden reasoning and chance to give up
(the task left unsolved, so its check fails).

Imperfection (`imperfection`, 0..1, or env `LOOPLAB_SCRIPTED_IMPERFECTION`): each eligible
step independently gets, with that probability, an extra exploratory `read_file` before
it (web tasks: an extra `snapshot` of the page, after the first step), and each single
`edit_file` step a wrong first attempt (the old text with a stray comment, which fixes
nothing), a test run that fails, and the correction. Detours are
seeded by the profile seed, the task and its parameter (not the service URLs, whose ports
change per run), so a seed gives the same plan on every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from looplab.backends.policies.base import PlannedToolCall, PolicyContext, Reply
from looplab.backends.policies.budget import budget_reply
from looplab.backends.policies.detours import WRONG_EDIT_MARK, detoured, wrong_edit
from looplab.backends.policies.fanout import DELEGATE_TOOL, fan_out, report_text, subagent_plan
from looplab.backends.policies.lorem import lorem_pieces
from looplab.backends.policies.models import ModelBehaviour, given_up, hurry_from
from looplab.backends.simulator.protocol import ChatMessage, ChatRequest
from looplab.tasks import (
    ScriptedStep,
    Solution,
    default_tasks_dir,
    expand_solution,
    prompt_pattern,
    read_all_tasks,
)

__all__ = ["WRONG_EDIT_MARK", "ScriptedPolicy", "latest_snapshot", "resolve_refs"]

_REF = re.compile(r'\{ref:([a-z]+) "([^"]*)"(?:#(\d+))?\}')
_SNAPSHOT_REF = re.compile(r"\[ref=([A-Za-z0-9_-]+)\]")


@dataclass(frozen=True)
class _Task:
    task_id: str
    pattern: re.Pattern[str]
    solution: Solution


class ScriptedPolicy:
    """Plays bundled tasks' reference solutions (see the module docstring).

    Args:
        imperfection: probability of each detour per eligible step (0 = the pure script);
            default from env `LOOPLAB_SCRIPTED_IMPERFECTION`, else 0.
        tasks_dir: where `<kind>/<id>/task.yaml` live; default `default_tasks_dir()`.
        behaviour: a model behaviour (`models.BEHAVIOURS`); its `detours` is the
            imperfection unless `imperfection` is given. None: the reference player.
    """

    name = "scripted"

    def __init__(
        self,
        imperfection: float | None = None,
        tasks_dir: Path | None = None,
        behaviour: ModelBehaviour | None = None,
    ) -> None:
        self.behaviour = behaviour
        if behaviour is not None:
            self.name = behaviour.name
        if imperfection is None and behaviour is not None:
            imperfection = behaviour.detours
        if imperfection is None:
            imperfection = float(os.environ.get("LOOPLAB_SCRIPTED_IMPERFECTION", "0") or 0)
        self.imperfection = min(1.0, max(0.0, imperfection))
        self.tasks_dir = tasks_dir or default_tasks_dir()
        self._tasks: list[_Task] | None = None

    def reply(self, request: ChatRequest, context: PolicyContext) -> Reply:
        """The next step of the recognised task's plan, or an off-script message."""
        budgeted = budget_reply(request, context)
        if budgeted is not None:  # a planning or reflection call: text of its budget
            return budgeted
        prompt = _first_user_text(request.messages)
        plan = subagent_plan(prompt)
        sub = plan is not None
        if plan is None:
            found = self._recognise(prompt)
            if found is None:
                text = "I do not recognise this task (no bundled task has this prompt)."
                return _say(text, context)
            told = [(m.role, _text(m)) for m in request.messages]
            hurry = hurry_from(told, self.behaviour)
            plan = self.plan(found[0], found[1], context.profile.seed, hurry)
            if DELEGATE_TOOL in {t.function.name for t in request.tools or []}:
                plan = fan_out(plan)
        assistants = [m for m in request.messages if m.role == "assistant"]
        problem = _check_history(request.messages, assistants, plan)
        if problem is not None:
            return _say(f"The conversation has left my script ({problem}); stopping.", context)
        index = len(assistants)
        if index >= len(plan):
            if sub:  # a sub-agent reports its latest results to its parent
                return _say(report_text(_latest_results(request.messages)), context)
            return _say("The script is complete.", context)
        step, missing = resolve_refs(plan[index], latest_snapshot(request.messages))
        if missing is not None:
            return _say(f"The conversation has left my script ({missing}); stopping.", context)
        return _render(step, index, context, self.behaviour)

    def plan(
        self, task: _Task, values: dict[str, str], seed: int, hurry_from: int | None = None
    ) -> list[ScriptedStep]:
        """The expanded steps of `task` with this policy's seeded detours (none from plan
        index `hurry_from` on), then (a model behaviour's `give_up`, drawn apart from the
        detours) left unsolved."""
        steps = expand_solution(task.solution, values)
        # service URLs carry ephemeral ports: leave them out so a seed gives the same detours
        stable = sorted((k, v) for k, v in values.items() if not k.endswith("_url"))
        digest = hashlib.sha256(f"{seed}|{task.task_id}|{stable}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        planned = detoured(steps, rng, self.imperfection, hurry_from)
        give_up = self.behaviour.give_up if self.behaviour is not None else 0.0
        if give_up > 0 and random.Random(int.from_bytes(digest[8:16], "big")).random() < give_up:
            return given_up(planned, wrong_edit)
        return planned

    def _recognise(self, prompt: str) -> tuple[_Task, dict[str, str]] | None:
        if self._tasks is None:
            self._tasks = _load_tasks(self.tasks_dir)
        for task in self._tasks:
            match = task.pattern.fullmatch(prompt.strip())
            if match:
                return task, {k: v for k, v in match.groupdict().items() if v is not None}
        return None


def _load_tasks(root: Path) -> list[_Task]:
    return [
        _Task(task.task_id, prompt_pattern(task.spec.prompt), task.solution)
        for task in read_all_tasks(root)
        if task.solution is not None
    ]


def _first_user_text(messages: list[ChatMessage]) -> str:
    for message in messages:
        if message.role == "user":
            return _text(message)
    return ""


def _latest_results(messages: list[ChatMessage]) -> list[str]:
    """The tool results after the latest assistant message, in order."""
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    return [_text(m) for m in messages[last + 1 :] if m.role == "tool"]


def _text(message: ChatMessage) -> str:
    content = message.content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content)
    return content or ""


def _check_history(
    messages: list[ChatMessage], assistants: list[ChatMessage], plan: list[ScriptedStep]
) -> str | None:
    """Why the conversation is off the plan, or None when it follows it."""
    positions = [i for i, m in enumerate(messages) if m.role == "assistant"]
    for index, message in enumerate(assistants):
        if index >= len(plan):
            return f"step {index + 1} is past the end of the script"
        step, missing = resolve_refs(plan[index], latest_snapshot(messages[: positions[index]]))
        if missing is not None:
            return f"step {index + 1}: {missing}"
        wanted = [(c.tool, c.args) for c in step.calls]
        made = []
        for call in message.tool_calls or []:
            try:
                made.append((call.function.name, json.loads(call.function.arguments or "{}")))
            except ValueError:
                made.append((call.function.name, None))
        if made != wanted:
            return (
                f"step {index + 1} called {[m[0] for m in made]}, expected {[w[0] for w in wanted]}"
            )
    if not assistants:
        return None
    last = max(i for i, m in enumerate(messages) if m.role == "assistant")
    results = {m.tool_call_id: _text(m) for m in messages[last + 1 :] if m.role == "tool"}
    pictured = any(_has_image(m) for m in messages[last + 1 :])
    calls = assistants[-1].tool_calls or []
    for call, planned in zip(calls, plan[len(assistants) - 1].calls, strict=False):
        result = results.get(call.id)
        if result is None:
            return f"no result for the {planned.tool} call of step {len(assistants)}"
        if result.startswith("ERROR") and not (planned.expect or "").startswith("ERROR"):
            return f"{planned.tool} failed: {result[:160]}"
        if planned.expect is not None and planned.expect not in result and not pictured:
            return f"{planned.tool} did not return {planned.expect!r}: {result[:160]!r}"
    return None


def _has_image(message: ChatMessage) -> bool:
    content = message.content
    return isinstance(content, list) and any(p.get("type") == "image_url" for p in content)


def latest_snapshot(messages: list[ChatMessage]) -> str:
    """The latest tool result holding a page snapshot (any `[ref=`), or ''."""
    for message in reversed(messages):
        if message.role == "tool":
            text = _text(message)
            if "[ref=" in text:
                return text
    return ""


def resolve_refs(step: ScriptedStep, snapshot: str) -> tuple[ScriptedStep, str | None]:
    """`step` with its `{ref:ROLE "NAME"}` placeholders replaced from `snapshot`.

    Returns:
        The resolved step, and None; or the step unchanged and what could not be found.
    """
    if "{ref:" not in step.model_dump_json():
        return step, None
    lines = snapshot.splitlines()
    missing: list[str] = []

    def ref_of(match: re.Match[str]) -> str:
        role, name, nth = match.group(1), match.group(2), int(match.group(3) or 1)
        head = re.compile(
            rf"\s*- {re.escape(role)} {re.escape(json.dumps(name, ensure_ascii=False))}(?: |:|$)"
        )
        found = [
            r.group(1)
            for line in lines
            if head.match(line)
            for r in [_SNAPSHOT_REF.search(line)]
            if r
        ]
        if len(found) < nth:
            missing.append(f'no {role} "{name}"' + (f" #{nth}" if nth > 1 else "") + " on the page")
            return match.group(0)
        return found[nth - 1]

    calls = [
        call.model_copy(update={"args": _map_strings(call.args, lambda t: _REF.sub(ref_of, t))})
        for call in step.calls
    ]
    if missing:
        return step, missing[0]
    return step.model_copy(update={"calls": calls}), None


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {k: _map_strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, change) for v in value]
    return value


def _render(
    step: ScriptedStep, index: int, context: PolicyContext, behaviour: ModelBehaviour | None
) -> Reply:
    rng = context.rng
    calls = [
        PlannedToolCall(
            id=f"call_{index}_{position}_{rng.getrandbits(32):08x}",
            name=call.tool,
            argument_pieces=context.tokenizer.split(json.dumps(call.args)),
        )
        for position, call in enumerate(step.calls)
    ]
    pieces = context.tokenizer.split(step.text) if step.text else []
    if step.text_tokens is not None:
        target = step.text_tokens
    else:
        drawn = sum(round(context.profile.output_tokens.sample(rng)) for _ in range(step.merged))
        target = drawn - sum(1 + len(c.argument_pieces) for c in calls)
    reasoning = step.reasoning_tokens
    if behaviour is not None:
        target = round(target * behaviour.reply_scale)
        if behaviour.reasoning_tokens is not None:
            reasoning = behaviour.reasoning_tokens
    if target > len(pieces):
        filler = lorem_pieces(target - len(pieces), rng)
        if pieces:
            filler[0] = " " + filler[0].lstrip()
        pieces += filler
    return Reply(content_pieces=pieces, tool_calls=calls, reasoning_tokens=reasoning)


def _say(text: str, context: PolicyContext) -> Reply:
    return Reply(content_pieces=context.tokenizer.split(text), reasoning_tokens=0)
