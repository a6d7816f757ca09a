"""The reliability campaign: kills, injected faults, fuzzing, containment probes.

Every test here records what it did into `CAMPAIGN` (kills, lost and duplicated runs,
leftovers, fuzz cases, tracebacks, hangs, probes passed), and the session ends with the
campaign's table (`make reliability` runs it with more fuzz cases: LOOPLAB_FUZZ_EXAMPLES,
random instead of derandomized examples with LOOPLAB_FUZZ_RANDOM=1).
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

FUZZ_EXAMPLES = int(os.environ.get("LOOPLAB_FUZZ_EXAMPLES", "40"))
"""Fuzz cases per target (CI keeps the suite within a few minutes)."""
HANG_S = 10.0
"""A single fuzz case taking longer than this counts as a hang."""

FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,  # hangs are timed by `Campaign.case`, with a wall-time budget
    database=None,  # nothing written into the checkout
    derandomize=os.environ.get("LOOPLAB_FUZZ_RANDOM") != "1",
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
"""Hypothesis settings of every fuzz test."""


@dataclass
class Campaign:
    """The campaign's figures, filled in by the tests."""

    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    probes: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    notes: list[str] = field(default_factory=list)

    def add(self, key: str, amount: int = 1) -> None:
        """Add to one figure."""
        self.counts[key] += amount

    def probe(self, kind: str, passed: bool) -> None:
        """Record one containment probe of a sandbox kind."""
        self.probes[kind].append(passed)

    @contextmanager
    def case(self, target: str, expected: tuple[type[BaseException], ...]) -> Iterator[None]:
        """One fuzz case of `target`: a clear error (`expected`) or success; anything else
        is a traceback, and a case over `HANG_S` a hang (both recorded, then raised)."""
        self.add(f"fuzz {target}")
        started = time.perf_counter()
        try:
            yield
        except expected:
            pass
        except Exception:
            self.add(f"tracebacks {target}")
            raise
        finally:
            if time.perf_counter() - started > HANG_S:
                self.add(f"hangs {target}")
        if time.perf_counter() - started > HANG_S:
            raise AssertionError(f"{target}: one case took more than {HANG_S} s")


CAMPAIGN = Campaign()


@pytest.fixture(scope="session")
def campaign() -> Campaign:
    """The session's campaign figures."""
    return CAMPAIGN


_PROXY_ROWS = [
    (
        "proxy hostile recordings",
        "proxy hostile recording failures",
        "hostile recordings (failures)",
    ),
    ("proxy upstream fault cases", "proxy upstream fault failures", "upstream faults (failures)"),
    ("websocket frame cases", "websocket frame failures", "WebSocket frames (failures)"),
    ("proxy planted secrets", "proxy secrets found", "secrets echoed into a recording (found)"),
]
"""Issue 36's proxy and WebSocket figures: (cases key, failures key, row name)."""


def _rows(campaign: Campaign) -> list[tuple[str, str]]:
    counts = campaign.counts
    rows = [
        ("kills (SIGKILL / SIGINT / SIGTERM of `looplab run`)", str(counts["kills"])),
        ("runs lost after resume", str(counts["lost"])),
        ("runs duplicated after resume", str(counts["duplicated"])),
        ("leftovers (processes, dirs, cgroups, containers)", str(counts["leftovers"])),
        (
            "failed model attempts recorded / made",
            f"{counts['attempts recorded']} / {counts['attempts made']}",
        ),
    ]
    extra = {
        "second writers refused": "second `looplab run` on a live run's directory: refused",
        "secrets planted": "planted secrets found in files or console output (of planted)",
        "uncontained refused": "non-scripted runs without bubblewrap: refused",
        "sockets left open": "idle / half-sent sockets open after the read deadline (of 250 x 2)",
    }
    for key, name in extra.items():
        if key in counts:
            value = str(counts[key])
            if key == "secrets planted":
                value = f"{counts['secrets found']} (of {counts[key]})"
            rows.append((name, value))
    if counts["collect cases"]:
        rows.append(
            (
                "collect cases (failures, runs lost, runs duplicated)",
                f"{counts['collect cases']} ({counts['collect failures']}, "
                f"{counts['collect lost']}, {counts['collect duplicated']})",
            )
        )
    for target in ("config", "trace", "http"):
        rows.append(
            (
                f"fuzz cases: {target} (tracebacks, hangs)",
                f"{counts[f'fuzz {target}']} ({counts[f'tracebacks {target}']}, "
                f"{counts[f'hangs {target}']})",
            )
        )
    if counts["trace cases read"]:
        rows.append(
            (
                "  of which read / through every reader",
                f"{counts['trace cases read']} / {counts['trace cases through every reader']}",
            )
        )
    for cases, failures, name in _PROXY_ROWS:
        if counts[cases]:
            rows.append((name, f"{counts[cases]} ({counts[failures]})"))
    for kind, results in sorted(campaign.probes.items()):
        rows.append((f"containment probes passed: {kind}", f"{sum(results)} / {len(results)}"))
    return rows


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the campaign table when reliability tests ran."""
    if not CAMPAIGN.counts and not CAMPAIGN.probes:
        return
    write: Callable[[str], None] = terminalreporter.write_line
    write("")
    write("reliability campaign")
    rows = _rows(CAMPAIGN)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        write(f"  {name.ljust(width)}  {value}")
    for note in CAMPAIGN.notes:
        write(f"  note: {note}")


class _BrokenApi(BaseHTTPRequestHandler):
    """An endpoint that answers (so preflight finds it alive) but fails every request."""

    def _fail(self) -> None:
        body = b'{"error": {"message": "broken on purpose", "type": "server_error"}}'
        self.send_response(500)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _fail  # http.server's handler names

    def log_message(self, format: str, *args: Any) -> None:  # the base's name
        return


@pytest.fixture
def broken_api() -> Iterator[str]:
    """The base URL of a loopback API that answers every request with 500 (cells end in
    `backend_error` after the backend preflight has found it answering)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _BrokenApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
