"""The scripted policy's detours: what an imperfect model does on top of the reference.

With probability `imperfection` per eligible step (seeded by the caller's `rng`): an extra
exploratory `read_file` before it (web tasks: an extra `snapshot` of the page, after the
first step), and for a single `edit_file` step a wrong first attempt (the old text with a
stray comment, which fixes nothing), a test run that fails, and the correction
(`wrong_edit`). A model told it is short of time (`hurry_from`) takes no detour from that
step of the plan on.
"""

from __future__ import annotations

import random

from looplab.tasks import ScriptedCall, ScriptedStep

__all__ = ["WRONG_EDIT_MARK", "detoured", "wrong_edit"]

WRONG_EDIT_MARK = "  # first attempt"
"""Appended to the old text by a wrong-edit detour (a change that fixes nothing)."""


def detoured(
    steps: list[ScriptedStep],
    rng: random.Random,
    imperfection: float,
    hurry_from: int | None = None,
) -> list[ScriptedStep]:
    """`steps` with seeded detours (module doc); none placed at plan index `hurry_from`
    or later (None: no hurry). The plan before `hurry_from` is the same as without it."""
    if imperfection <= 0:
        return steps
    paths = sorted(
        {
            str(c.args["path"])
            for s in steps
            for c in s.calls
            if c.tool in ("read_file", "edit_file") and "path" in c.args
        }
    )
    web = not paths and any(c.tool == "goto" for s in steps for c in s.calls)
    planned: list[ScriptedStep] = []
    for position, step in enumerate(steps):
        if hurry_from is not None and len(planned) >= hurry_from:
            planned += steps[position:]
            break
        is_final = any(c.tool == "finish" for c in step.calls)
        if paths and not is_final and rng.random() < imperfection:
            planned.append(_extra_read(rng.choice(paths)))
        elif web and position > 0 and not is_final and rng.random() < imperfection:
            planned.append(_extra_snapshot())
        single_edit = len(step.calls) == 1 and step.calls[0].tool == "edit_file"
        if single_edit and rng.random() < imperfection:
            planned += wrong_edit(step)
            continue
        planned.append(step)
    return planned


def _extra_snapshot() -> ScriptedStep:
    return ScriptedStep(
        text="Let me look at the page again before going on.",
        calls=[ScriptedCall(tool="snapshot")],
    )


def _extra_read(path: str) -> ScriptedStep:
    return ScriptedStep(
        text=f"Before going on, let me look at {path} once more.",
        calls=[ScriptedCall(tool="read_file", args={"path": path})],
    )


def wrong_edit(step: ScriptedStep) -> list[ScriptedStep]:
    """A single-edit step played wrong first: the wrong edit, a failing test run, the fix."""
    call = step.calls[0]
    old = str(call.args.get("old_text", ""))
    trimmed = old.rstrip("\n")
    attempt = trimmed + WRONG_EDIT_MARK + old[len(trimmed) :]
    path = call.args.get("path")
    first = ScriptedCall(
        tool="edit_file", args={"path": path, "old_text": old, "new_text": attempt}
    )
    tests = ScriptedCall(tool="run_tests", expect="FAILED")
    fixed = dict(call.args, old_text=attempt)
    return [
        step.model_copy(update={"calls": [first]}),
        ScriptedStep(text="Let me check whether that fixed it.", calls=[tests]),
        ScriptedStep(
            text="That attempt did not fix it; the real problem is different. Correcting.",
            calls=[ScriptedCall(tool="edit_file", args=fixed, expect=call.expect)],
        ),
    ]
