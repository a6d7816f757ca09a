"""Observation token sizes of computer-use runs: what each action puts in the prompt.

One row per kind of computer-use run (`views_click.click_groups`) and observation kind
(`tool_call.observation.kind`: aria, screenshot, marks, dom; a workload's drawn
observations are `drawn`): observations seen, image tokens of one screenshot under the
profile's vision rule (`backends.vision`; for a workload, its drawn observation tokens),
page-text tokens per observation (the tool result as the model read it), and per acting
model call the prompt tokens and the uncached ones (what prefill computes: the new
screenshot and page text), medians over the slowest group's runs (the token counts do
not depend on the decode rate).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from looplab.errors import LooplabError
from looplab.latency.spec import profile_vision
from looplab.latency.tokens import default_tokenizer
from looplab.latency.vision import DEFAULT_VISION_RULE, image_tokens
from looplab.report.claims.click_views import click_groups
from looplab.report.data.records import RunRecord
from looplab.stats.intervals import median, quantile
from looplab.tasks.references import parse_reference
from looplab.traces.schema import ToolCallEvent
from looplab.workloads.model import load_workload
from looplab.workloads.shape import PLAN_TOOL, REFLECT_TOOL

__all__ = ["ObservationRow", "observation_json", "observation_rows"]


@dataclass
class ObservationRow:
    """Observation and prompt sizes of one kind of computer-use run."""

    label: str
    observation: str
    observations: int
    image_tokens: int | None
    """Tokens of one screenshot under `rule` (None: no image)."""
    rule: str
    text_tokens: float | None
    """Median page-text tokens per observation."""
    prompt_tokens: float | None
    """Median prompt tokens per acting model call."""
    prompt_p90: float | None
    uncached_tokens: float | None
    """Median uncached prompt tokens per acting call (what prefill computes)."""


def _text_tokens(tool: ToolCallEvent) -> float:
    """The tool result's tokens as the model read it (scaled up where the trace cut it)."""
    text = tool.output or ""
    count = default_tokenizer().count(text) if text else 0
    full = tool.output_chars or len(text)
    return count * full / len(text) if text else 0.0


def _row(label: str, kind: str, runs: Sequence[RunRecord]) -> ObservationRow:
    rule = profile_vision(runs[0].profile_spec) or DEFAULT_VISION_RULE
    texts: list[float] = []
    images: list[int] = []
    prompts: list[float] = []
    uncached: list[float] = []
    for run in runs:
        if run.trace is None:
            continue
        for tool in run.trace.tool_calls():
            seen = tool.observation
            if seen is None or str(seen.get("kind")) != kind:
                continue
            texts.append(_text_tokens(tool))
            if seen.get("width") and seen.get("height"):
                images.append(image_tokens(rule, int(seen["width"]), int(seen["height"])))
        thinking = {t.step for t in run.trace.tool_calls() if t.name in (PLAN_TOOL, REFLECT_TOOL)}
        for call in run.trace.model_calls():
            side = call.purpose in ("planner", "reflection") or call.step in thinking
            if side or call.prompt_tokens is None:
                continue
            prompts.append(float(call.prompt_tokens))
            uncached.append(float(call.prompt_tokens - (call.cached_tokens or 0)))
    return ObservationRow(
        label=label,
        observation=kind,
        observations=len(texts),
        image_tokens=round(median([float(i) for i in images])) if images else None,
        rule=rule,
        text_tokens=median(texts) if texts else None,
        prompt_tokens=median(prompts) if prompts else None,
        prompt_p90=quantile(prompts, 0.9) if prompts else None,
        uncached_tokens=median(uncached) if uncached else None,
    )


def _drawn_tokens(task: str) -> int | None:
    """A computer-use workload's observation tokens (median of the drawn parameter)."""
    reference = parse_reference(task)
    if reference is None or reference.kind != "model":
        return None
    try:
        drawn = load_workload(reference.path).parameters.observation_tokens
    except LooplabError:
        return None
    if drawn is None or drawn.distribution is None:
        return None
    return round(drawn.distribution.quantile(0.5))


def observation_rows(runs: Sequence[RunRecord], labels: dict[str, str]) -> list[ObservationRow]:
    """Rows for the computer-use runs of one group (`labels`: row key -> label)."""
    rows: list[ObservationRow] = []
    for key, group in click_groups(runs).items():
        kinds: dict[str, None] = defaultdict(lambda: None)
        for run in group:
            for tool in run.trace.tool_calls() if run.trace else []:
                if tool.observation:
                    kinds[str(tool.observation.get("kind"))] = None
        for kind in list(kinds):
            rows.append(_row(labels.get(key, key), kind, group))
        if not kinds:
            row = _row(labels.get(key, key), "drawn", group)
            row.image_tokens, row.rule = _drawn_tokens(key), "as drawn"
            rows.append(row)
    return rows


def observation_json(row: ObservationRow) -> dict[str, Any]:
    """A row for scripts and downloads."""
    return asdict(row)
