"""Experiment axes: expansion, stable ids, path errors, variants in traces, resume."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from looplab.config import validate_model
from looplab.errors import ConfigError
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.matrix import expand_cells
from looplab.experiments.runner import ExperimentRunner
from looplab.report.build import build_model_for
from looplab.report.data.knobs import knob_rows
from looplab.report.data.records import load_runs
from looplab.traces.io import read_trace


def _config(data: dict[str, Any]) -> ExperimentConfig:
    return validate_model(ExperimentConfig, data)


def _run(config: dict[str, Any]) -> Any:
    runner = ExperimentRunner(_config(config))
    runner.prepare_directory(fresh=False)
    return asyncio.run(runner.run())


def test_axes_expand_into_the_cartesian_product_with_stable_ids(
    small_config: dict[str, Any],
) -> None:
    """Two boolean axes x two backends give 8 cells whose ids name the values, sorted."""
    small_config["axes"] = {
        "backend.profile.prefix_cache": [True, False],
        "agent.streaming_dispatch": [False, True],
    }
    cells = expand_cells(_config(small_config))
    assert len(cells) == 8
    ids = [c.id for c in cells]
    assert ids == [c.id for c in expand_cells(_config(small_config))]
    assert len(set(ids)) == 8
    assert (
        "slowish__coding__coding-fix-pager__prefix_cache-false+streaming_dispatch-true__r0" in ids
    )
    cell = next(c for c in cells if "prefix_cache-false" in c.id)
    assert cell.backend.overrides["prefix_cache"] is False
    assert cell.variant_dict()["backend.profile.prefix_cache"] is False


def test_no_axes_keep_the_old_ids(small_config: dict[str, Any]) -> None:
    """Without axes, cell ids and headers are what they were (no variant segment)."""
    cells = expand_cells(_config(small_config))
    assert [c.id for c in cells] == [
        "slowish__coding__coding-fix-pager__r0",
        "fastish__coding__coding-fix-pager__r0",
    ]
    assert "variant" not in cells[0].describe()


def test_variants_fill_defaults_and_name_every_path(small_config: dict[str, Any]) -> None:
    """Explicit variants: each names every path, with the default where it is left out."""
    small_config["backends"] = small_config["backends"][:1]
    small_config["variants"] = [{}, {"agent.speculation": True}, {"agent.max_parallel_tools": 4}]
    cells = expand_cells(_config(small_config))
    assert [c.variant_dict() for c in cells] == [
        {"agent.max_parallel_tools": 1, "agent.speculation": False},
        {"agent.max_parallel_tools": 1, "agent.speculation": True},
        {"agent.max_parallel_tools": 4, "agent.speculation": False},
    ]


@pytest.mark.parametrize(
    ("axes", "needle"),
    [
        ({"agent.streaming_dispach": [True]}, "has no field 'streaming_dispach'"),
        ({"nope.x": [1]}, "not an axis path"),
        ({"backend.profile.decode_tps": [-5]}, "value -5 is not allowed"),
        ({"agent.max_parallel_tools": []}, "has no values"),
    ],
)
def test_a_bad_axis_names_the_file_the_path_and_what_is_allowed(
    tmp_path: Path, small_config: dict[str, Any], axes: dict[str, Any], needle: str
) -> None:
    """A wrong path or value fails validation naming the config file and the path."""
    import yaml

    from looplab.config import load_model

    small_config["axes"] = axes
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(small_config))
    with pytest.raises(ConfigError) as info:
        load_model(ExperimentConfig, path, [])
    assert needle in str(info.value) and "bad.yaml" in str(info.value)


def test_an_axes_experiment_resumes_and_records_the_variant(small_config: dict[str, Any]) -> None:
    """Cells of an axes experiment carry their variant in the trace header and knobs in
    run_end; the report groups and compares them per variant (the knob table, with the
    end-to-end saving); a rerun
    finds every complete trace and skips it; a missing one is rerun."""
    small_config["backends"] = small_config["backends"][1:]
    small_config["clock"] = "virtual"
    small_config["axes"] = {"agent.streaming_dispatch": [False, True]}
    first = _run(small_config)
    assert [o.status for o in first.outcomes] == ["done", "done"]
    trace = read_trace(first.outcomes[1].trace_path)
    assert trace.header.cell.variant == {"agent.streaming_dispatch": True}
    assert trace.end is not None and trace.end.knobs["streaming_dispatch"] is True
    rows = knob_rows(load_runs([first.directory]))
    assert [(r.label, r.saving is None) for r in rows] == [
        ("all-off", True),
        ("streaming_dispatch", False),
    ]
    assert all(r.median_e2e_s is not None for r in rows)  # setup + task, from run_end
    assert rows[1].e2e_saving is not None and rows[0].e2e_saving is None
    model, records = build_model_for([first.directory])
    assert [r.label for r in model.knobs] == ["all-off", "streaming_dispatch"]
    assert {r.group for r in records} == {"fastish · all-off", "fastish · streaming_dispatch"}
    cut = first.outcomes[0].cell.id
    first.outcomes[0].trace_path.unlink()  # as if the run had been cut off before it
    second = _run(small_config)
    statuses = {o.cell.id: o.status for o in second.outcomes}
    assert statuses[cut] == "done" and list(statuses.values()).count("skipped") == 1
