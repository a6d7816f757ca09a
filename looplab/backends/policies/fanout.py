"""Fan-out for the scripted policy: parallel tool calls and sub-agent delegation.

When the request offers the `delegate` tool (the agent runs with `fanout: true`), the
scripted policy plays a bundled task's reference solution the way a 2026 coding agent
would (`fan_out`):

1. **Parallel tool calls.** A run of consecutive read-only steps (every call one of
   `READ_ONLY`) becomes one step with all their calls; a run of consecutive single-edit
   steps becomes steps of parallel `edit_file` calls, the k-th holding each file's k-th
   edit (no two edits of one file race; each file's edits keep their order).
2. **Delegation.** In a merged read-only step of at least two calls, the `read_file`
   calls go to one `search` sub-agent and each `run_tests` call to a `test` sub-agent,
   through `delegate` calls issued in the same reply as the step's remaining calls, so
   the sub-agents run concurrently with them (and with each other) on the same sandbox.

A sub-agent's conversation starts with the delegate call's `task` text, in the formats
below (`subagent_plan` reads them back): a `search` sub-agent reads its files in one step
of parallel calls, a `test` sub-agent runs the tests; then it reports, in text without
tool calls, the first line of each result (`report_text`), so a delegated test run's
verdict (`PASSED` / `FAILED`) reaches the parent, whose plan still `expect`s it.

Without `delegate` in the request the plan is unchanged (the pure reference solution).
"""

from __future__ import annotations

import re

from looplab.tasks import ScriptedCall, ScriptedStep

__all__ = [
    "DELEGATE_TOOL",
    "READ_ONLY",
    "fan_out",
    "report_text",
    "run_tests_task",
    "search_task",
    "subagent_plan",
]

DELEGATE_TOOL = "delegate"
"""The tool name that switches the policy to the fan-out plan."""
READ_ONLY = frozenset({"list_files", "read_file", "browse", "run_tests"})
"""Tools that change nothing in the workspace: their steps may merge and run together."""

_SEARCH = re.compile(r"Sub-agent task \(search\): read (?P<paths>.+) and report what each holds\.")
_TEST = re.compile(
    r"Sub-agent task \(test\): run the tests(?: selected by keyword (?P<kw>\S+))? and report "
    r"the verdict\."
)
_REPORT_LINE_CHARS = 200


def search_task(paths: list[str]) -> str:
    """A `search` sub-agent's task: read `paths` and report."""
    return f"Sub-agent task (search): read {', '.join(paths)} and report what each holds."


def run_tests_task(keyword: str | None) -> str:
    """A `test` sub-agent's task: run the tests (by keyword, when given) and report."""
    selected = f" selected by keyword {keyword}" if keyword else ""
    return f"Sub-agent task (test): run the tests{selected} and report the verdict."


def subagent_plan(prompt: str) -> list[ScriptedStep] | None:
    """The steps of a sub-agent whose first user message is `prompt`; None: not one."""
    text = prompt.strip()
    search = _SEARCH.fullmatch(text)
    if search is not None:
        paths = [p.strip() for p in search.group("paths").split(",") if p.strip()]
        calls = [ScriptedCall(tool="read_file", args={"path": p}) for p in paths]
        return [ScriptedStep(text="Reading the files together.", reasoning_tokens=20, calls=calls)]
    test = _TEST.fullmatch(text)
    if test is not None:
        args = {"keyword": test.group("kw")} if test.group("kw") else {}
        call = ScriptedCall(tool="run_tests", args=args)
        return [ScriptedStep(text="Running the tests.", reasoning_tokens=10, calls=[call])]
    return None


def report_text(results: list[str]) -> str:
    """A sub-agent's final report: the first line of each of its latest tool results."""
    lines = [(r.strip().splitlines() or [""])[0][:_REPORT_LINE_CHARS] for r in results]
    return "Report:\n" + "\n".join(f"- {line}" for line in lines)


def fan_out(steps: list[ScriptedStep]) -> list[ScriptedStep]:
    """`steps` with read-only runs and independent edits merged, reads and test runs of a
    merged read-only step delegated (see the module docstring)."""
    out: list[ScriptedStep] = []
    for group in _groups(steps):
        if len(group) == 1:
            out.append(group[0])
            continue
        merged = _merge(group)
        out.append(_delegated(merged) if _read_only(group[0]) else merged)
    return out


def _read_only(step: ScriptedStep) -> bool:
    return bool(step.calls) and all(c.tool in READ_ONLY for c in step.calls)


def _single_edit(step: ScriptedStep) -> str | None:
    """The file a one-call `edit_file` step edits; None for any other step."""
    if len(step.calls) == 1 and step.calls[0].tool == "edit_file":
        return str(step.calls[0].args.get("path"))
    return None


def _groups(steps: list[ScriptedStep]) -> list[list[ScriptedStep]]:
    """Consecutive steps that may run as one: read-only runs; and a run of single edits
    layered so that layer k holds the k-th edit of each file (no file edited twice in one
    step, each file's edits in their order; edits of distinct files are independent)."""
    groups: list[list[ScriptedStep]] = []
    edits: list[ScriptedStep] = []
    for step in steps:
        if _single_edit(step) is not None:
            edits.append(step)
            continue
        groups += _layers(edits)
        edits = []
        last = groups[-1] if groups else None
        if last is not None and _read_only(step) and _read_only(last[0]):
            last.append(step)
        else:
            groups.append([step])
    return groups + _layers(edits)


def _layers(edits: list[ScriptedStep]) -> list[list[ScriptedStep]]:
    """A run of single-edit steps as layers (see `_groups`)."""
    layers: list[list[ScriptedStep]] = []
    seen: dict[str | None, int] = {}
    for step in edits:
        path = _single_edit(step)
        depth = seen.get(path, 0)
        seen[path] = depth + 1
        if depth == len(layers):
            layers.append([])
        layers[depth].append(step)
    return layers


def _merge(group: list[ScriptedStep]) -> ScriptedStep:
    """One step making every call of `group`: its text joined, reasoning and visible size
    summed (`merged`: the profile's output draw taken once per reference step), so a
    fan-out plan writes as many tokens as the reference, in fewer calls."""
    reasoning = [s.reasoning_tokens for s in group if s.reasoning_tokens is not None]
    sized = [s.text_tokens for s in group if s.text_tokens is not None]
    return ScriptedStep(
        text=" ".join(s.text for s in group if s.text),
        text_tokens=sum(sized) if len(sized) == len(group) else None,
        reasoning_tokens=sum(reasoning) if reasoning else None,
        calls=[c for s in group for c in s.calls],
        merged=sum(s.merged for s in group),
    )


def _delegated(step: ScriptedStep) -> ScriptedStep:
    """A merged read-only step with its reads and test runs handed to sub-agents."""
    if len(step.calls) < 2:
        return step
    reads = [str(c.args["path"]) for c in step.calls if c.tool == "read_file" and "path" in c.args]
    calls: list[ScriptedCall] = []
    if reads:
        calls.append(_delegate("search", search_task(reads), None))
    for call in step.calls:
        if call.tool == "run_tests":
            keyword = call.args.get("keyword")
            task = run_tests_task(str(keyword) if keyword else None)
            calls.append(_delegate("test", task, call.expect))
        elif call.tool != "read_file" or "path" not in call.args:
            calls.append(call)
    return step.model_copy(update={"calls": calls})


def _delegate(role: str, task: str, expect: str | None) -> ScriptedCall:
    return ScriptedCall(tool=DELEGATE_TOOL, args={"role": role, "task": task}, expect=expect)
