"""A run's transcript as static HTML: per step its timing bar, the model's message, each tool
call with arguments, exit status and output (a preview, the rest behind `<details>`, so
expanding needs no script). Built from `views_transcript.TranscriptView`.
"""

from __future__ import annotations

from html import escape

from looplab.report.data.steps import PHASES
from looplab.report.render.diff import PHASE_COLORS
from looplab.report.render.graph import run_graph_html
from looplab.report.render.svg import fmt_s
from looplab.report.views.transcript import (
    SubRunTranscript,
    ToolEntry,
    TranscriptStep,
    TranscriptView,
)

__all__ = ["PREVIEW_CHARS", "transcript_html"]

PREVIEW_CHARS = 600
"""Characters of a text shown before its `show all` fold."""

_BROWSER_TOOLS = {"goto", "snapshot", "click", "type", "press", "select", "screenshot"}


def _fold(text: str, css: str, full_chars: int | None = None) -> str:
    """A `<pre>` preview of `text` and the rest behind `<details>`; says when the text
    itself was cut (the full result had `full_chars`)."""
    head, rest = text[:PREVIEW_CHARS], text[PREVIEW_CHARS:]
    out = f'<pre class="{css}">{escape(head)}</pre>'
    if rest:
        out += (
            f"<details><summary>show all ({len(text):,} chars)</summary>"
            f'<pre class="{css}">{escape(rest)}</pre></details>'
        )
    if full_chars is not None and full_chars > len(text):
        out += f'<p class="hint">cut: {len(text):,} of {full_chars:,} characters kept here.</p>'
    return out


def _timing(step: TranscriptStep) -> str:
    parts = step.row.parts
    total = step.row.wall_s or 1.0
    bar = "".join(
        f'<i style="width:{100 * (parts[k] or 0) / total:.1f}%;--c:{PHASE_COLORS[k]}" '
        f'title="{PHASES[k]} {fmt_s(parts[k] or 0)}"></i>'
        for k in PHASES
        if parts.get(k)
    )
    words = " · ".join(
        f"{PHASES[k]} {fmt_s(v)}"
        + (" (planned)" if k == "prefill" and step.row.prefill_planned else "")
        for k in PHASES
        if (v := parts.get(k)) is not None and v > 0
    )
    return (
        f'<div class="thead"><b>step {step.index + 1}</b> · {fmt_s(step.row.wall_s)} '
        f"<span class='hint'>(at {step.row.start:.2f} s)</span>"
        f'<span class="tbar">{bar}</span><span class="hint">{words}</span></div>'
    )


def _message(step: TranscriptStep) -> str:
    tokens = []
    if step.prompt_tokens is not None:
        tokens.append(f"prompt {step.prompt_tokens:,} tokens")
    if step.completion_tokens is not None:
        tokens.append(f"completion {step.completion_tokens:,}")
    if step.reasoning_tokens:
        tokens.append(f"of which {step.reasoning_tokens:,} hidden reasoning (not shown)")
    meta = f' <span class="hint">{escape(", ".join(tokens))}</span>' if tokens else ""
    body = _fold(step.text, "text") if step.text else '<p class="hint">(no visible text)</p>'
    images = "".join(
        f'<img class="shot" src="{escape(url)}" alt="image in the message" loading="lazy">'
        for url in step.images
    )
    attempts = "".join(
        f'<p class="hint err">failed attempt: {escape(error)}</p>' for error in step.attempts
    )
    return (
        f'<div class="msg"><span class="who">assistant</span>{meta}{body}{images}{attempts}</div>'
    )


def _call(tool: ToolEntry) -> str:
    status = [fmt_s(tool.duration_s)]
    if tool.exit_code is not None:
        status.append(f"exit {tool.exit_code}")
    if tool.ok is not None:
        status.append("ok" if tool.ok else "error")
    failed = tool.ok is False or (tool.exit_code not in (None, 0))
    arguments = (
        _fold(tool.arguments, "args")
        if tool.arguments
        else '<p class="hint">(no arguments recorded)</p>'
    )
    if tool.output is None:
        output = '<p class="hint">(output not in the trace)</p>'
    else:
        output = _fold(tool.output, "out", tool.output_chars)
    error = f'<p class="err">{escape(tool.error)}</p>' if tool.error else ""
    shot = (
        f'<img class="shot" src="{escape(tool.screenshot)}" '
        f'alt="the page after {escape(tool.name)}" loading="lazy">'
        if tool.screenshot
        else ""
    )
    return (
        f'<div class="call{" failed" if failed else ""}"><div><code class="name">'
        f"{escape(tool.name)}</code> <span class='hint'>{' · '.join(status)}</span></div>"
        f"{arguments}{error}{output}{shot}</div>"
    )


def _step_open(view: TranscriptView, step: TranscriptStep, prefix: str) -> str:
    """A step's item up to where its spawned sub-runs go (the caller closes it)."""
    diverged = (
        f'<p class="warn small">Diverged from the recording: {escape(step.diverged)}</p>'
        if step.diverged
        else ""
    )
    return (
        f'<li class="tstep{" diverged" if step.diverged else ""}" '
        f'id="{view.anchor}{prefix}-s{step.index + 1}">{_timing(step)}{diverged}{_message(step)}'
        f"{''.join(_call(t) for t in step.tools)}"
    )


_Part = tuple[str, str | None, list[TranscriptStep], str]
"""A piece of the transcript to emit: `("text", html, [], "")`, or `("run", parent id,
steps, anchor prefix)`: a run's steps with their sub-runs, expanded in place."""


def _steps_html(
    view: TranscriptView, parent: str | None, steps: list[TranscriptStep], prefix: str
) -> str:
    """A run's steps, each followed by the sub-runs it spawned (their own steps, nested);
    sub-runs spawned before any step come first. Iterative (an explicit stack), so a chain
    of 1,100 nested sub-runs renders as deep as it goes, in time linear in the steps."""
    children: dict[str | None, list[SubRunTranscript]] = {}
    for sub in view.subruns:
        children.setdefault(sub.lane.parent, []).append(sub)
    out: list[str] = []
    stack: list[_Part] = [("run", parent, steps, prefix)]
    while stack:
        kind, value, run_steps, run_prefix = stack.pop()
        if kind == "text":
            out.append(value or "")
            continue
        mine = children.get(value, [])
        indices = {s.index for s in run_steps}
        todo: list[_Part] = []
        for child in mine:
            if child.lane.spawn_step not in indices:
                todo += _subrun_parts(child)
        for step in run_steps:
            todo.append(("text", _step_open(view, step, run_prefix), [], ""))
            for child in mine:
                if child.lane.spawn_step == step.index:
                    todo += _subrun_parts(child)
            todo.append(("text", "</li>", [], ""))
        stack.extend(reversed(todo))
    return "".join(out)


def _subrun_parts(sub: SubRunTranscript) -> list[_Part]:
    """One sub-run's transcript, folded open, named, with its spawn and join steps."""
    lane = sub.lane
    joined = f", joined by step {lane.join_step + 1}" if lane.join_step is not None else ""
    spawned = f"spawned by step {lane.spawn_step + 1}" if lane.spawn_step is not None else "spawned"
    critical = ' <span class="badge">critical path</span>' if lane.critical else ""
    head = (
        f'<details open class="subrun" data-subrun="{escape(lane.id)}"><summary>'
        f"<b>sub-run {escape(lane.name)}</b> · {len(sub.steps)} steps, "
        f"{fmt_s(lane.end - lane.start)} ({spawned}{joined}){critical}</summary>"
        f'<ol class="tsteps">'
    )
    return [
        ("text", head, [], ""),
        ("run", lane.id, sub.steps, f"-{_slug(lane.id)}"),
        ("text", "</ol></details>", [], ""),
    ]


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)


def transcript_html(view: TranscriptView) -> str:
    """The transcript section of a run."""
    notes = []
    if not view.has_content:
        absent = ", ".join(view.absent) or "message and output text"
        notes.append(
            "This trace holds no message or tool output text (absent in the source: "
            f"{absent}): timings and tool names only."
        )
    browser = [t for s in view.steps for t in s.tools if t.name in _BROWSER_TOOLS]
    if browser:
        kept = any(t.screenshot for t in browser)
        notes.append(
            "Browser actions return the page snapshot (accessibility tree) the agent read, "
            "shown as their output"
            + (
                "; the image under an action is the page after it (a trace screenshot, "
                "never shown to the model)."
                if kept
                else "; this run kept no page images (`agent.trace_screenshots: true` keeps them)."
            )
        )
    if view.replay_of:
        notes.append(f"Live replay of {view.replay_of}; diverged steps are highlighted.")
    prompt = (
        f"<details><summary>task prompt</summary>{_fold(view.prompt, 'text')}</details>"
        if view.prompt
        else ""
    )
    verdict = {True: "solved", False: "not solved", None: "not checked"}[view.success]
    end = f"<p><b>end:</b> {escape(view.end_reason)} · {verdict}</p>"
    if view.error:
        end += f'<p class="err">{escape(view.error)}</p>'
    if view.check_output:
        end += (
            f"<details><summary>check output</summary>{_fold(view.check_output, 'out')}</details>"
        )
    steps = _steps_html(view, None, view.steps, "")
    hints = "".join(f'<p class="hint">{escape(n)}</p>' for n in notes)
    return run_graph_html(view.graph) + (
        f'<div class="transcript"><h4>Transcript</h4>{hints}{prompt}'
        f'<ol class="tsteps">{steps}</ol>{end}</div>'
    )
