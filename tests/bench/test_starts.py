"""`looplab bench starts`: real `serve` and `proxy` processes started, timed and stopped."""

from __future__ import annotations

from pathlib import Path

from looplab.bench.starts import LOADERS, measure_starts, measure_tokenizer_loads


def test_each_command_is_started_timed_and_stopped() -> None:
    """One start each: wall to the first answer and the CPU spent are real positive numbers,
    the CPU no more than two cores' worth of the wall."""
    rows = {row.command: row for row in measure_starts(1)}
    assert set(rows) == {"serve", "proxy"}
    for row in rows.values():
        assert row.starts == 1 and row.wall_s_p50 > 0 and row.cpu_s_p50 > 0.05
        assert row.cpu_s_p50 == row.cpu_s_max
        assert row.cpu_s_p50 < 2 * row.wall_s_p50 + 0.5


def test_each_tokenizer_loader_is_timed_in_a_fresh_process_and_they_agree() -> None:
    """Both exact loaders load here (tiktoken from the seeded cache, bpe-openai), each in
    its own process with a positive CPU time, and they count the sample alike."""
    sample = Path(__file__).resolve().parents[2] / "looplab" / "config.py"
    loads = {load.loader: load for load in measure_tokenizer_loads(1, str(sample))}
    assert list(loads) == list(LOADERS)
    assert loads["_load_tiktoken"].name == "o200k_base (tiktoken)"
    assert loads["_load_bpe_openai"].name == "o200k_base (bpe-openai)"
    assert all(load.cpu_s_p50 > 0 for load in loads.values())
    assert loads["_load_tiktoken"].tokens == loads["_load_bpe_openai"].tokens > 1000
