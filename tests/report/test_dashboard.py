"""The dashboard server over HTTP: read-only, and nothing outside the root is served."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from looplab.report.server import DashboardServer, PathRefused, resolve_inside


def _get(url: str, method: str = "GET") -> tuple[int, str]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as exc:
        body = exc.read().decode(errors="replace")
        exc.close()
        return exc.code, body


@pytest.fixture
def dashboard(runs_root: Path) -> DashboardServer:
    """A dashboard over the session's runs root, plus a secret file beside the root."""
    (runs_root.parent / "secret.jsonl").write_text('{"trace_format": "looplab-1"}\n')
    return DashboardServer(runs_root)


def test_index_and_report_and_compare_over_http(dashboard: DashboardServer) -> None:
    """The index lists the experiments; report and compare pages are served."""
    with dashboard:
        status, index = _get(dashboard.url)
        assert status == 200 and "/report/quick" in index and "/report/imported" in index
        status, report = _get(dashboard.url + "report/quick")
        assert status == 200 and 'data-chart="compounding"' in report
        run = next((dashboard.root / "quick/traces").glob("fast-750*.jsonl")).name
        status, compare = _get(f"{dashboard.url}compare?a=quick&b=quick/traces/{run}")
        assert status == 200 and "quick · slow-80" in compare


@pytest.mark.parametrize(
    "path",
    [
        "report/../secret.jsonl",
        "report/%2e%2e/secret.jsonl",
        "report/..%2fsecret.jsonl",
        "report/quick/../../secret.jsonl",
        "report//etc/passwd",
        "report/%2fetc%2fpasswd",
        "compare?a=quick&b=../secret.jsonl",
        "compare?a=/etc&b=quick",
    ],
)
def test_paths_outside_the_root_are_refused(dashboard: DashboardServer, path: str) -> None:
    """Traversal by `..`, encoded `..`, absolute paths: 403 (or 404), never the file."""
    with dashboard:
        status, body = _get(dashboard.url + path)
    assert status in (403, 404), (path, status)
    assert "looplab-1" not in body


def test_symlink_out_of_the_root_is_refused(runs_root: Path, tmp_path: Path) -> None:
    """A symlink inside the root pointing outside it does not open the outside."""
    outside = tmp_path / "outside"
    (outside / "traces").mkdir(parents=True)
    link = runs_root / "escape"
    link.symlink_to(outside, target_is_directory=True)
    try:
        with pytest.raises(PathRefused) as refused:
            resolve_inside(runs_root, "escape")
        assert refused.value.status == 403
    finally:
        link.unlink()


def test_dashboard_is_read_only(dashboard: DashboardServer) -> None:
    """Only GET is served: POST, PUT and DELETE are refused."""
    with dashboard:
        for method in ("POST", "PUT", "DELETE"):
            status, _ = _get(dashboard.url + "report/quick", method)
            assert status == 501, method
    assert dashboard.url.startswith("http://127.0.0.1:")
