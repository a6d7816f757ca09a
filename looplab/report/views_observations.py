"""What a computer-use agent was shown, and what it cost in prompt tokens, per group.

From the traces' browser tool calls (`tool_call.observation`: kind, text characters,
image size) and the run's latency profile (`vision_tokens`, the rule that priced its
images): per group and observation kind, how many observations, the median text part in
tokens (the trace's tool output, counted with the simulator's tokenizer), the tokens of
one image by the profile's rule, and the median prompt tokens of the action calls.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from looplab.backends.tokens import default_tokenizer
from looplab.backends.vision import DEFAULT_VISION_RULE, VISION_RULES, image_tokens
from looplab.report.model import RunRecord
from looplab.report.stats import median

__all__ = ["ObservationRow", "observation_rows"]


@dataclass(frozen=True)
class ObservationRow:
    """One group's observations of one kind."""

    group: str
    kind: str
    count: int
    text_tokens_p50: float
    """Median tokens of the observation's text part (aria tree, element list, DOM)."""
    image_tokens: int
    """Tokens of one of its images by the profile's vision rule (0: no image)."""
    rule: str
    """The vision token rule that priced the images."""
    prompt_tokens_p50: float
    """Median prompt tokens of the runs' action calls (what the observations grew to)."""


def observation_rows(
    by_group: dict[str, list[RunRecord]], order: list[str]
) -> list[ObservationRow]:
    """The rows for the groups whose runs recorded observations (empty: none did)."""
    rows: list[ObservationRow] = []
    for group in order:
        rows.extend(_group_rows(group, by_group[group]))
    return rows


def _group_rows(group: str, runs: Sequence[RunRecord]) -> list[ObservationRow]:
    tokenizer = default_tokenizer()
    texts: dict[str, list[float]] = defaultdict(list)
    images: dict[str, int] = {}
    prompts: dict[str, list[float]] = defaultdict(list)
    rules: dict[str, str] = {}
    for record in runs:
        if record.trace is None:
            continue
        rule = str((record.profile_spec or {}).get("vision_tokens") or DEFAULT_VISION_RULE)
        rule = rule if rule in VISION_RULES else DEFAULT_VISION_RULE
        kinds = set()
        for tool in record.trace.tool_calls():
            seen = tool.observation
            if not seen:
                continue
            kind = str(seen.get("kind"))
            kinds.add(kind)
            rules[kind] = rule
            texts[kind].append(float(tokenizer.count(tool.output or "")))
            width, height = int(seen.get("width") or 0), int(seen.get("height") or 0)
            if seen.get("image_bytes") and width and height:
                images[kind] = image_tokens(rule, width, height)
        calls = [c for c in record.trace.model_calls() if c.purpose in (None, "actor")]
        for kind in kinds:
            prompts[kind].extend(float(c.prompt_tokens) for c in calls if c.prompt_tokens)
    return [
        ObservationRow(
            group=group,
            kind=kind,
            count=len(values),
            text_tokens_p50=median(values),
            image_tokens=images.get(kind, 0),
            rule=rules[kind],
            prompt_tokens_p50=median(prompts[kind]) if prompts[kind] else 0.0,
        )
        for kind, values in sorted(texts.items())
    ]
