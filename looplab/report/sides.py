"""What `looplab diff` and the dashboard's `/compare` compare: sides named by spec.

A spec is `PATH` (an experiment directory, a directory of traces or one trace file: a
run) or `PATH#NAME`, the runs of PATH whose profile, agent or model is NAME (one profile
of a two-profile experiment). One spec alone compares its profiles with each other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from looplab.errors import ConfigError
from looplab.report.data.records import RunRecord, load_runs
from looplab.report.views.run_metrics import run_metrics
from looplab.report.views.side_by_side import MAX_SIDES, Side

__all__ = ["SEPARATOR", "load_sides", "split_spec"]

SEPARATOR = "#"
"""Between a spec's path and the name of the runs it picks."""


def split_spec(spec: str) -> tuple[str, str | None]:
    """(`PATH`, `NAME` or None) of a spec."""
    path, sep, name = spec.rpartition(SEPARATOR)
    return (path, name) if sep and path and name else (spec, None)


def _picks(record: RunRecord, name: str) -> bool:
    metrics = run_metrics(record)
    return name in (record.profile, record.group, metrics.agent, metrics.model)


def load_sides(
    specs: Sequence[str],
    *,
    resolve: Callable[[str], Path] = Path,
    field: str = "SIDE",
) -> list[Side]:
    """The sides the specs name, in order (one spec: one side per profile of its runs).

    Args:
        specs: 1 to `MAX_SIDES` specs (module doc).
        resolve: turns a spec's path into a file system path (the dashboard confines it to
            its root and raises its own refusal).
        field: the flag or parameter named in errors.

    Raises:
        ConfigError: no spec, too many, a path without ended runs, a `#NAME` that picks no
            run (the names it could pick are listed), or a single spec with one profile.
        TraceError: a file that is not a looplab trace.
    """
    if not specs or len(specs) > MAX_SIDES:
        raise ConfigError(f"give 1 to {MAX_SIDES} sides, not {len(specs)}", field=field)
    sides: list[Side] = []
    for spec in specs:
        raw, name = split_spec(spec)
        runs = load_runs([resolve(raw)])
        if not runs:
            raise ConfigError(f"{raw}: no ended run to compare", field=field)
        if name is not None:
            picked = [r for r in runs if _picks(r, name)]
            if not picked:
                names = sorted({r.profile for r in runs} | {r.agent for r in runs})
                raise ConfigError(
                    f"{spec}: no run of {raw} has profile, agent or model {name!r}",
                    field=field,
                    allowed=names,
                )
            runs = picked
        sides.append(Side(spec, runs))
    if len(sides) == 1:
        profiles = sorted({r.profile for r in sides[0].runs})
        if len(profiles) < 2:
            raise ConfigError(
                f"{specs[0]} holds one profile ({profiles[0]}); give a second side to compare",
                field=field,
            )
        base = sides[0].label
        sides = [
            Side(f"{base}#{p}", [r for r in sides[0].runs if r.profile == p]) for p in profiles
        ]
        if len(sides) > MAX_SIDES:
            raise ConfigError(f"{specs[0]} holds {len(sides)} profiles", field=field)
    return sides
