""" "Two minutes for a click?" in the claim section: time per action at both rates, what
an action is made of, and the observation token sizes (numbers from `views_click` and
`views_observations`)."""

from __future__ import annotations

from html import escape
from typing import Any

from looplab.report.claims.click_views import CLICK_TITLE, CLICK_WAIT_S, ClickRow, ClickSide
from looplab.report.claims.rows import ClaimView
from looplab.report.data.actions import PARTS
from looplab.report.views.observations import ObservationRow

__all__ = ["click_tables", "render_click"]


def _s(value: float | None, ci: tuple[float, float] | None = None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" + (f" ({ci[0]:.1f}-{ci[1]:.1f})" if ci else "")


def _tokens(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _split(side: ClickSide) -> str:
    total = sum(side.parts.values()) or 1.0
    shown = [k for k in PARTS if side.parts.get(k, 0.0) >= 0.005]
    return ", ".join(
        f"{PARTS[k]} {side.parts[k]:.2f} s ({side.parts[k] / total:.0%})" for k in shown
    )


def _click_cells(row: ClickRow) -> list[str]:
    return [
        row.label,
        row.kind,
        f"{row.n} / {row.slow.actions} + {row.fast.actions}",
        _s(row.slow.median_s, row.slow.ci),
        _s(row.fast.median_s, row.fast.ci),
        f"{row.speedup:.2f}x" if row.speedup else "-",
        _split(row.slow),
        _split(row.fast),
        row.verdict,
    ]


def _observation_cells(row: ObservationRow) -> list[str]:
    image = "-" if row.image_tokens is None else f"{row.image_tokens:,} ({row.rule})"
    prompt = _tokens(row.prompt_tokens) + (
        f" / {_tokens(row.prompt_p90)}" if row.prompt_p90 is not None else ""
    )
    return [
        row.label,
        row.observation,
        str(row.observations),
        image,
        _tokens(row.text_tokens),
        prompt,
        _tokens(row.uncached_tokens),
    ]


def _columns(view: ClaimView) -> tuple[list[str], list[str]]:
    click = [
        "computer use",
        "kind",
        "runs / actions",
        f"s per action at {view.slow_tps:g} tok/s (95% CI)",
        f"s per action at {view.fast_tps:g} tok/s (95% CI)",
        "speedup per action",
        f"an action at {view.slow_tps:g} tok/s",
        f"an action at {view.fast_tps:g} tok/s",
        "verdict",
    ]
    observations = [
        "computer use",
        "observation",
        "observations",
        "image tokens each",
        "page text tokens each (p50)",
        "prompt tokens per action call (p50 / p90)",
        "uncached (prefilled) tokens per action call (p50)",
    ]
    return click, observations


def _table(name: str, columns: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return (
        f'<div class="scroll"><table class="sortable" data-export="{name}">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def render_click(view: ClaimView) -> str:
    """The sub-section's static HTML ("" without computer-use runs)."""
    if not view.click:
        return ""
    click, observations = _columns(view)
    sentences = "".join(f"<li>{escape(r.sentence)}</li>" for r in view.click)
    return (
        f"<h3>{escape(CLICK_TITLE)}</h3>"
        + _table("claim-click", click, [_click_cells(r) for r in view.click])
        + f'<ul class="verdicts">{sentences}</ul>'
        + "<h3>Observations and prompt tokens per action</h3>"
        + _table(
            "claim-observations", observations, [_observation_cells(r) for r in view.observations]
        )
        + '<p class="hint">An action is one acting step: the model call that acts and its '
        "browser tool calls, with the planner, reflection and look-only (snapshot, "
        'screenshot) calls around it counted in its time (README "Computer use"). Medians '
        "over actions, 95% BCa CIs over runs (a run's actions resampled together; none "
        "under 6 runs); the split is the mean action. Verdicts compare the CIs with the "
        f"press line's two minutes ({CLICK_WAIT_S:.0f} s). Prefill is planned from the "
        "profile for the uncached prompt tokens: the new screenshot and page text.</p>"
    )


def click_tables(view: ClaimView) -> dict[str, Any]:
    """The sub-section's export tables."""
    if not view.click:
        return {}
    click, observations = _columns(view)
    return {
        "claim-click": {
            "title": CLICK_TITLE,
            "columns": click,
            "rows": [_click_cells(r) for r in view.click],
        },
        "claim-observations": {
            "title": "observations and prompt tokens per action",
            "columns": observations,
            "rows": [_observation_cells(r) for r in view.observations],
        },
    }
