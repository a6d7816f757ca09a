"""Prices checked at every door (issue 45 item 4, issue 47 finding 6): values, files, the
book, profiles naming an entry, and what `collect -p` / `import -p` accept."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from looplab.cli.app import app
from looplab.errors import ConfigError
from looplab.latency.presets import resolve_profile, served_profile
from looplab.latency.prices import load_book, load_price, resolve_price
from looplab.latency.profile import RECORDED, LatencyProfile
from looplab.report.views.cost import cost_figure
from tests.invariants.flat import RunSpec, flat_run

REPO = Path(__file__).resolve().parents[2]
MINI_SWE = REPO / "tests/fixtures/external-traces/mini-swe-agent/sqlfluff__sqlfluff-2419.traj.json"

ENTRY = (
    "name: mine\nprovider: p\nmodel: m\ntier: t\nspeed_tier: fast\n"
    "input_per_m: {value}\ncached_input_per_m: 0\noutput_per_m: 1\n"
    "source: assumed\ndate: 2026-12-04\n"
)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("-1", "greater than or equal to 0"),
        (".nan", "finite"),
        (".inf", "finite"),
        ("true", "not a boolean"),
        ("1e308", "bound"),
        ("'abc'", "valid number"),
    ],
)
def test_bad_price_values_name_the_file_and_field(tmp_path: Path, value: str, said: str) -> None:
    """Negative, NaN, infinite, boolean, absurd and non-numeric prices are refused, naming
    the file and the field."""
    path = tmp_path / "mine.yaml"
    path.write_text(ENTRY.format(value=value))
    with pytest.raises(ConfigError) as info:
        load_price(path)
    text = str(info.value)
    assert str(path) in text and "input_per_m" in text and said in text


def test_non_mapping_fifo_and_directory_are_refused_by_name(tmp_path: Path) -> None:
    """A price file that is a list, random bytes, a FIFO or a directory is an error naming
    it, never a hang or a silent skip."""
    listed = tmp_path / "listed.yaml"
    listed.write_text("- 1\n- 2\n")
    junk = tmp_path / "junk.yaml"
    junk.write_bytes(bytes(range(256)))
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.yaml"
    folder.mkdir()
    for path in (listed, junk, fifo, folder):
        with pytest.raises(ConfigError) as info:
            resolve_price(str(path))
        assert str(path) in str(info.value)


def test_one_bad_file_in_the_book_is_reported(tmp_path: Path) -> None:
    """A price book with one bad file among good ones is an error naming that file."""
    good = REPO / "looplab/latency/prices/openai-gpt-5.4-standard.yaml"
    (tmp_path / good.name).write_text(good.read_text())
    bad = tmp_path / "zz-broken.yaml"
    bad.write_text(ENTRY.format(value="true").replace("name: mine", "name: zz-broken"))
    with pytest.raises(ConfigError) as info:
        load_book(tmp_path)
    assert str(bad) in str(info.value)


@pytest.mark.parametrize("entry", ["openai-gpt-9-standard", "nope-entry"])
def test_unknown_price_entry_in_a_profile_is_an_error_naming_nearest(entry: str) -> None:
    """A profile naming an unknown entry (config overrides, `--profile-set price=`) fails
    validation, naming the entry and the nearest names."""
    with pytest.raises(ConfigError) as info:
        resolve_profile("slow-80", [f"price={entry}"])
    text = str(info.value)
    assert entry in text and "nearest: openai-gpt-5.4" in text


def test_run_refuses_an_unknown_price_override(tmp_path: Path) -> None:
    """`looplab run` with `overrides: {price: openai-gpt-9-standard}` is a config error
    before any cell runs, naming the entry."""
    config = tmp_path / "bad.yaml"
    out = tmp_path / "out"
    config.write_text(
        "name: bad\nbackends:\n  - {name: slow-80, profile: slow-80, "
        "overrides: {price: openai-gpt-9-standard}}\n"
        f"tasks: [coding/fix-pager]\nclock: virtual\noutput_dir: {out}\n"
    )
    result = CliRunner().invoke(app, ["run", str(config)])
    assert isinstance(result.exception, ConfigError)
    assert "openai-gpt-9-standard" in str(result.exception) and not out.exists()


def test_a_price_alone_keeps_the_presets_name() -> None:
    """`--profile-set price=...` keeps `slow-80` (it still pairs); a timing change renames."""
    priced = resolve_profile("slow-80", ["price=openai-gpt-5.4-priority"])
    assert (priced.name, priced.price) == ("slow-80", "openai-gpt-5.4-priority")
    assert resolve_profile("slow-80", ["decode_tps=81"]).name == "slow-80+custom"


def test_recorded_profiles_are_read_back_without_the_price_check() -> None:
    """A trace naming an entry since removed still reads (timing intact), and its cost
    says why it is unpriced, naming the entry."""
    spec = {"name": "slow-80", "decode_tps": 80.0, "price": "gone-entry"}
    assert LatencyProfile.model_validate(spec, context=RECORDED).price == "gone-entry"
    record = flat_run(RunSpec(agent="coding", task="coding/a", profile="slow-80", price="gone"))
    figure = cost_figure([record])
    assert figure.usd is None and figure.unpriced is not None and "'gone'" in figure.unpriced
    named = cost_figure([flat_run(RunSpec(agent="coding", task="coding/a", profile="mid-300"))])
    assert named.unpriced == "the profile 'mid-300' names no price entry"


def test_served_profile_accepts_only_presets_and_files(tmp_path: Path) -> None:
    """`fast75` is an error naming the nearest presets; a preset and a file resolve."""
    with pytest.raises(ConfigError) as info:
        served_profile("fast75", "--profile")
    assert "--profile" in str(info.value) and "nearest presets: fast-750" in str(info.value)
    assert served_profile("slow-80", "--profile").price == "openai-gpt-5.4-standard"
    mine = tmp_path / "mine.yaml"
    mine.write_text("name: mine\ndecode_tps: 100\nprice: openai-gpt-5.4-standard\n")
    assert served_profile(str(mine), "--profile").name == "mine"


def test_import_p_prices_its_runs(tmp_path: Path) -> None:
    """`import -p slow-80` writes the preset's profile (with its price entry) into the
    header, so the report prices the run; `-p fast75` is refused before writing."""
    runner = CliRunner()
    out = tmp_path / "imported"
    typo = runner.invoke(app, ["import", "auto", str(MINI_SWE), "-o", str(out), "-p", "fast75"])
    assert isinstance(typo.exception, ConfigError) and not out.exists()
    ok = runner.invoke(app, ["import", "auto", str(MINI_SWE), "-o", str(out), "-p", "slow-80"])
    assert ok.exit_code == 0, ok.output
    (trace,) = out.glob("*.jsonl")
    header = json.loads(trace.read_text().splitlines()[0])
    assert header["profile"]["price"] == "openai-gpt-5.4-standard"
    assert header["identity"]["profile"] == "slow-80"


@pytest.mark.parametrize(
    "door",
    [
        ["serve"],
        ["proxy", "--upstream", "http://127.0.0.1:9/v1"],
        ["wrap"],
    ],
)
def test_serve_proxy_and_wrap_refuse_an_unknown_price(door: list[str], tmp_path: Path) -> None:
    """`--profile-set price=nope-entry` at serve, proxy and wrap: a config error naming the
    entry before anything starts (wrap ran with exit 0 and renamed the profile)."""
    args = [*door, "--profile-set", "price=nope-entry"]
    if door[0] == "wrap":
        args = ["wrap", "-o", str(tmp_path / "wrapped"), "--profile-set", "price=nope-entry"]
        args += ["--", "true"]
    result = CliRunner().invoke(app, args)
    assert isinstance(result.exception, ConfigError), result.output
    assert "unknown price entry 'nope-entry'" in str(result.exception)
    assert not (tmp_path / "wrapped").exists()
