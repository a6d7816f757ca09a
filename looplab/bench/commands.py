"""`looplab bench ...`: the registry of every benchmark command (wired by `looplab.cli.app`).

Each bench prints numbers measured side by side in one run (medians and ratios); what each
measures is in its module's docstring and `docs/backends.md` "Benchmarks".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from looplab.bench import backend_commands, run_commands, serving_commands, wakeups

__all__ = ["BENCHES"]

BENCHES: dict[str, Callable[..., Any]] = {
    "backend": backend_commands.bench_backend_command,
    "transport": serving_commands.bench_transport_command,
    "timers": wakeups.bench_timers_command,
    "proxy": serving_commands.bench_proxy_command,
    "starts": serving_commands.bench_starts_command,
    "sandbox": run_commands.bench_sandbox_command,
    "browser": run_commands.bench_browser_command,
    "replay": run_commands.bench_replay_command,
    "report": run_commands.bench_report_command,
    "clock": run_commands.bench_clock_command,
    "knobs": run_commands.bench_knobs_command,
    "workload": run_commands.bench_workload_command,
    "scale": run_commands.bench_scale_command,
}
"""`looplab bench NAME` -> its command; a new bench joins by one line."""
