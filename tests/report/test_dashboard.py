"""The dashboard server over HTTP: read-only, confined to its root, guarded against DNS
rebinding, bounded, and honest about unreadable experiments and unlike comparisons."""

from __future__ import annotations

import http.client
import json
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import pytest

from looplab.report.dashboard.experiments import PathRefused, resolve_inside
from looplab.report.dashboard.server import DashboardServer
from looplab.serving.hosts import host_check


def _get(url: str, method: str = "GET", host: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, method=method)
    if host is not None:
        request.add_unredirected_header("Host", host)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        body = exc.read().decode(errors="replace")
        exc.close()
        return exc.code, body


@pytest.fixture
def root(runs_root: Path, known_pair: Path, tmp_path: Path) -> Path:
    """A root with the real experiment, the imported traces, the known pair, a bad
    experiment (a trace that is not JSON), and a secret file beside the root."""
    root = tmp_path / "root"
    root.mkdir()
    for name in ("quick", "imported"):
        shutil.copytree(runs_root / name, root / name)
    shutil.copytree(known_pair, root / "known")
    (root / "bad/traces").mkdir(parents=True)
    (root / "bad/traces/broken.jsonl").write_text('{"trace_format": "looplab-1", "run_id"\n')
    (tmp_path / "secret.jsonl").write_text('{"trace_format": "looplab-1"}\n')
    return root


def test_index_lists_names_and_a_bad_experiment_with_its_error(root: Path) -> None:
    """Experiment names (not directories), a bad one with its error, the rest intact."""
    with DashboardServer(root) as server:
        status, index = _get(server.url)
    assert status == 200
    assert '/report/quick">quick</a>' in index and "/report/imported" in index
    assert "cannot be read" in index and "broken.jsonl" in index
    assert "/task?name=coding%2Fknown" in index


def test_report_task_run_and_diff_pages(root: Path) -> None:
    """A report, a task's runs with its diff matrix, a run's transcript, a diff."""
    with DashboardServer(root) as server:
        status, report = _get(server.url + "report/quick")
        assert status == 200 and 'data-chart="compounding"' in report and 'id="live"' in report
        status, task = _get(server.url + "task?" + urlencode({"name": "coding/known"}))
        assert status == 200 and task.count('class="pair"') == 2 and "agent coding" in task
        assert "A: known · slow #1" in task  # the diff grid names the experiment
        status, run = _get(server.url + "run/known/traces/known-a.jsonl")
        assert status == 200 and "KNOWN-OUTPUT-42: 3 passed" in run
        query = urlencode({"a": "known/traces/known-a.jsonl", "b": "known/traces/known-b.jsonl"})
        status, diff = _get(server.url + "diff?" + query)
        assert status == 200 and 'class="diff sortable"' in diff and "only in B" in diff
        status, state = _get(server.url + "api/state?path=quick")
        assert status == 200 and json.loads(state)["running"] is False


def test_compare_refuses_overlaps_and_flags_unlike_inputs(root: Path) -> None:
    """An input against itself or a part of itself is refused (its profiles are not);
    unlike inputs are flagged and shown side by side per task, never pooled."""
    with DashboardServer(root) as server:
        run = next((root / "quick/traces").glob("fast-750*.jsonl")).name
        for a, b in (("quick", "quick"), ("quick", f"quick/traces/{run}")):
            status, body = _get(server.url + "compare?" + urlencode({"a": a, "b": b}))
            assert status == 422 and "overlap" in body, (a, b)
        query = urlencode({"a": "quick#slow-80", "b": "quick#fast-750"})
        status, body = _get(server.url + "compare?" + query)
        assert status == 200 and 'id="sxs-b"' in body and body.count('data-task="') == 3
        query = urlencode({"a": "quick#slow-80", "b": "quick#fast-750", "c": "quick", "base": "2"})
        status, body = _get(server.url + "compare?" + query)  # three sides, C the baseline
        assert status == 200 and 'id="sxs-a"' in body and 'id="sxs-b"' in body
        assert 'id="sxs-c"' not in body and body.count("make baseline") == 2
        status, body = _get(server.url + "compare?" + urlencode({"a": "quick", "b": "known"}))
        # quick runs on the virtual clock, known on the wall clock: flagged, per task
        assert status == 200 and "Unlike inputs" in body and "Different clocks" in body
        assert "only in baseline" in body and "not in baseline" in body


@pytest.mark.parametrize(
    "path",
    [
        "report/../secret.jsonl",
        "report/%2e%2e/secret.jsonl",
        "report/..%2fsecret.jsonl",
        "report/quick/../../secret.jsonl",
        "report//etc/passwd",
        "report/%2fetc%2fpasswd",
        "run/../secret.jsonl",
        "compare?a=quick&b=../secret.jsonl",
        "compare?a=/etc&b=quick",
        "diff?a=known/traces/known-a.jsonl&b=../secret.jsonl",
        "report/" + "a" * 300,
    ],
)
def test_paths_outside_the_root_are_refused(root: Path, path: str) -> None:
    """Traversal by `..`, encoded `..`, absolute paths, overlong names: 403 or 404."""
    with DashboardServer(root) as server:
        status, body = _get(server.url + path)
    assert status in (403, 404), (path, status)
    assert "looplab-1" not in body


def test_symlink_out_of_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    """A symlink inside the root pointing outside it does not open the outside."""
    outside = tmp_path / "outside"
    (outside / "traces").mkdir(parents=True)
    (root / "escape").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefused) as refused:
        resolve_inside(root, "escape")
    assert refused.value.status == 403


def test_dashboard_is_read_only_and_checks_the_host(root: Path) -> None:
    """Only GET/HEAD; a foreign Host header (DNS rebinding) is refused; loopback names pass."""
    with DashboardServer(root) as server:
        for method in ("POST", "PUT", "DELETE"):
            assert _get(server.url + "report/quick", method)[0] == 405, method
        assert _get(server.url, host="evil.example")[0] == 400
        assert _get(server.url, host=f"evil.example:{server.port}")[0] == 400
        assert _get(server.url, host=f"localhost:{server.port}")[0] == 200
    assert server.url.startswith("http://127.0.0.1:")
    check = host_check("127.0.0.1", 8760)
    assert check("127.0.0.1:8760") and check("[::1]:8760") and not check("127.0.0.1.nip.io")


def test_idle_connections_are_closed(root: Path) -> None:
    """A connection that never sends a request is closed by the server (no thread each)."""
    with DashboardServer(root, idle_s=1.0) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            started = time.perf_counter()
            assert sock.recv(1) == b""  # closed by the server
            assert time.perf_counter() - started < 8
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        connection.request("GET", "/api/state")
        assert connection.getresponse().status == 200
        connection.close()


def test_ctrl_c_stops_the_dashboard_and_frees_the_port(root: Path) -> None:
    """`looplab dashboard` serves until SIGINT, exits 130, and leaves the port free."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(Path(sys.executable).parent / "looplab"), "--no-log-file", "dashboard"]
    process = subprocess.Popen(
        [*command, str(root), "--port", str(port)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        banner = ""
        for _ in range(3):  # the banner wraps at the console's width (a long root path)
            banner += process.stdout.readline()
            if "Ctrl-C" in " ".join(banner.split()):
                break
        assert "Ctrl-C" in " ".join(banner.split())
        assert _get(f"http://127.0.0.1:{port}/api/state")[0] == 200
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", port), timeout=2),
    ):
        pass


def test_run_lists_filter_by_url_and_search_transcripts(root: Path) -> None:
    """/runs keeps what the URL's filter names (profile, outcome, duration, text in a
    transcript); a bad value is a 422 naming the parameter; the task page shows B - A."""
    with DashboardServer(root) as server:
        status, every = _get(server.url + "runs")
        total = every.count("<tr data-run=")
        assert status == 200 and total >= 9 and "<th>cost</th>" in every
        _, slow = _get(server.url + "runs?" + urlencode({"profile": "slow-80"}))
        assert 0 < slow.count("<tr data-run=") < total and "fast-750__" not in slow
        _, found = _get(server.url + "runs?" + urlencode({"q": "known-output-42"}))
        assert found.count("<tr data-run=") == 2  # a tool output both known runs hold
        _, found = _get(server.url + "runs?" + urlencode({"q": "edit_file done"}))
        assert found.count("<tr data-run=") == 1 and 'data-run="known-b"' in found
        _, long = _get(server.url + "runs?" + urlencode({"min_s": "1e9"}))
        assert long.count("<tr data-run=") == 0
        status, bad = _get(server.url + "runs?" + urlencode({"outcome": "maybe"}))
        assert status == 422 and "outcome" in bad
        _, task = _get(server.url + "task?" + urlencode({"name": "coding/known"}))
        # known-b took 4 steps to known-a's 3 and less time: B - A is negative, +1 step
        assert "+1 steps" in task and 'class="better"' in task


def test_report_page_takes_the_users_deadline(root: Path) -> None:
    """A report page has the deadline form; `?deadline=2m` judges success under it (the
    bottom line and the Success section say "your"), and a bad value is a 422 naming it."""
    with DashboardServer(root) as server:
        status, plain = _get(server.url + "report/quick")
        assert status == 200 and 'name="deadline"' in plain and 'id="success"' in plain
        status, judged = _get(server.url + "report/quick?deadline=2m")
        assert status == 200 and "under your 2-minute deadline" in judged
        status, bad = _get(server.url + "report/quick?deadline=soon")
        assert status == 422 and "deadline" in bad
