"""The dashboard's `/compare?a=<spec>&b=<spec>[&c=..&h=..][&base=<index>]`: 2 to 8
experiments, profiles of one (`rel#profile`) or runs side by side, each against the
baseline (`views.side_by_side`, drawn by `render.compare_html`; `looplab diff` prints
the same numbers).

Specs are paths relative to the root (`sides.load_sides`, confined to the root); two
sides that are the same input, or one inside the other, without a `#NAME` telling their
runs apart, are refused (the same runs on both sides compare nothing).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlencode

from looplab.errors import ConfigError
from looplab.report.assets import inline_scripts
from looplab.report.dashboard.experiments import Experiment, Reports, resolve_inside
from looplab.report.render.compare_html import SIDE_KEYS, compare_body, compare_tables
from looplab.report.render.page import shell
from looplab.report.sides import load_sides, split_spec
from looplab.report.views.side_by_side import side_by_side

__all__ = ["compare_choices", "compare_page", "compare_url", "read_specs"]


def compare_url(specs: Sequence[str], base: int) -> str:
    """The URL of a compare page over `specs` with baseline `base`."""
    query = {SIDE_KEYS[i]: s for i, s in enumerate(specs)}
    return "/compare?" + urlencode({**query, "base": str(base)})


def read_specs(params: dict[str, str], root: Path) -> tuple[list[str], int]:
    """The sides' specs (`a`..`h`, blanks skipped) and the baseline index from a query.

    Raises:
        PathRefused: a spec's path outside the root (403/404, from `resolve_inside`).
        ConfigError: fewer than two sides, overlapping sides, a bad `base`.
    """
    specs = [v for k in SIDE_KEYS if (v := params.get(k, "").strip())]
    if len(specs) < 2:
        raise ConfigError("compare needs two sides or more: /compare?a=<path>&b=<path>", field="b")
    paths = [(resolve_inside(root, split_spec(s)[0]), split_spec(s)[1]) for s in specs]
    for i, (a, name_a) in enumerate(paths):
        for j, (b, name_b) in enumerate(paths[i + 1 :], start=i + 1):
            nested = a == b or a in b.parents or b in a.parents
            if nested and name_a == name_b:
                raise ConfigError(
                    f"{specs[i]} and {specs[j]} overlap (the same input, or one inside the "
                    "other): both sides would hold the same runs; pick two distinct inputs "
                    "or name a profile (PATH#profile)",
                    field=SIDE_KEYS[j],
                )
    raw = params.get("base", "0") or "0"
    if not raw.isdigit() or int(raw) >= len(specs):
        raise ConfigError(
            f"base={raw!r} is not a side", field="base", allowed=[str(i) for i in range(len(specs))]
        )
    return specs, int(raw)


def compare_choices(experiments: Sequence[Experiment]) -> list[tuple[str, str]]:
    """What the compare form offers: every readable experiment, and each of its profiles
    when it holds several."""
    choices: list[tuple[str, str]] = []
    for e in experiments:
        if e.model is None:
            continue
        label = e.name if e.name == e.rel else f"{e.name} ({e.rel})"
        choices.append((e.rel, label))
        profiles = sorted({r.profile for r in e.records})
        if len(profiles) > 1:
            choices += [(f"{e.rel}#{p}", f"{label} · {p}") for p in profiles]
    return choices


def compare_page(reports: Reports, specs: list[str], base: int) -> str:
    """The page comparing `specs` against `specs[base]`.

    Raises:
        ConfigError: a side without ended runs, or a `#NAME` that picks none.
    """
    sides = load_sides(specs, resolve=lambda rel: resolve_inside(reports.root, rel), field="a")
    view = side_by_side(sides, base)
    body = "<p><a href='/'>index</a></p>" + compare_body(
        view, specs=specs, choices=compare_choices(reports.experiments()), url=compare_url
    )
    data = json.dumps({"tables": compare_tables(view)}, separators=(",", ":"))
    script = (
        '<script type="application/json" id="report-data">'
        + data.replace("</", "<\\/")
        + "</script>"
    )
    return shell(
        "looplab: compare " + " vs ".join(specs),
        f"<main>{body}</main>{script}",
        scripts=inline_scripts(),
    )
