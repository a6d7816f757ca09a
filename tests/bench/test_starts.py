"""`looplab bench starts`: real `serve` and `proxy` processes started, timed and stopped."""

from __future__ import annotations

from looplab.bench.starts import measure_starts


def test_each_command_is_started_timed_and_stopped() -> None:
    """One start each: wall to the first answer and the CPU spent are real positive numbers,
    the CPU no more than two cores' worth of the wall."""
    rows = {row.command: row for row in measure_starts(1)}
    assert set(rows) == {"serve", "proxy"}
    for row in rows.values():
        assert row.starts == 1 and row.wall_s_p50 > 0 and row.cpu_s_p50 > 0.05
        assert row.cpu_s_p50 == row.cpu_s_max
        assert row.cpu_s_p50 < 2 * row.wall_s_p50 + 0.5
