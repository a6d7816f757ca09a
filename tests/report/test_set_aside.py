"""Said where people look (issue 47, finding 9): a trace file set aside (unreadable, or a run
that never ended) is named with its reason in the report file (HTML and JSON) and on the
dashboard's index and report pages, not on stderr only; the sweep names each untimed trace
it leaves out; a broken bubblewrap's own message reaches the user.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from looplab.errors import SandboxError
from looplab.report.build import write_report
from looplab.report.dashboard.server import DashboardServer
from looplab.sandbox_contract import SandboxConfig
from looplab.sandboxes.local import LocalSandbox

BROKEN = "not a trace at all\n"


def _with_two_set_aside(known_pair: Path) -> Path:
    """`known_pair` plus a file that is not a trace and a copy of a run cut before its end."""
    traces = known_pair / "traces"
    (traces / "broken.jsonl").write_text(BROKEN)
    lines = (traces / "known-b.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header["run_id"] = "known-cut"
    (traces / "known-cut.jsonl").write_text("\n".join([json.dumps(header), *lines[1:-1]]) + "\n")
    return known_pair


def test_the_report_file_names_every_set_aside_trace(known_pair: Path, tmp_path: Path) -> None:
    """4 trace files, 2 runs counted: the HTML and the JSON report both name the two set
    aside and why, and `looplab report` says so (before: nothing in either; the reason was
    on stderr only)."""
    directory = _with_two_set_aside(known_pair)
    html = write_report([directory], tmp_path / "r.html").path.read_text()
    data = json.loads(
        write_report([directory], tmp_path / "r.json", format="json").path.read_text()
    )
    assert data["runs"] == 2
    named = {Path(s["path"]).name: s["reason"] for s in data["set_aside"]}
    assert set(named) == {"broken.jsonl", "known-cut.jsonl"}
    assert "run has not ended" in named["known-cut.jsonl"]
    assert "2 trace file(s) set aside" in html
    assert "broken.jsonl" in html and "known-cut.jsonl" in html
    assert "run has not ended" in html
    done = subprocess.run(
        [sys.executable, "-m", "looplab", "report", str(directory), "-o", str(tmp_path / "c.html")],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "300", "PATH": "/usr/bin:/bin", "LOOPLAB_LOG_FILE": "/dev/null"},
    )
    assert "2 runs" in done.stdout and "2 trace file(s) set aside" in done.stdout, done.stderr


def test_the_dashboard_index_and_report_pages_name_them(known_pair: Path, tmp_path: Path) -> None:
    """The dashboard's index row and the experiment's report page both name the set-aside
    files with their reasons."""
    root = tmp_path / "root"
    shutil.copytree(_with_two_set_aside(known_pair), root / "known")
    with DashboardServer(root) as server:
        with urllib.request.urlopen(server.url, timeout=60) as response:
            index = response.read().decode()
        with urllib.request.urlopen(server.url + "report/known", timeout=60) as response:
            report = response.read().decode()
    for page in (index, report):
        assert "2 trace file(s) set aside" in page
        assert "broken.jsonl" in page and "known-cut.jsonl" in page


def test_the_sweep_names_an_untimed_trace(known_pair: Path) -> None:
    """A trace whose timestamps run backwards (a negative task time) is named with why it
    was left out (before: "1 untimed trace(s) left out", no name)."""
    traces = known_pair / "traces"
    lines = (traces / "known-b.jsonl").read_text().splitlines()
    header, end = json.loads(lines[0]), json.loads(lines[-1])
    header["run_id"], end["run_id"], end["end"] = "known-neg", "known-neg", -5.0
    (traces / "known-neg.jsonl").write_text(
        "\n".join([json.dumps(header), *lines[1:-1], json.dumps(end)]) + "\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "looplab", "sweep", str(known_pair), "--rates", "50,100"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"COLUMNS": "300", "PATH": "/usr/bin:/bin", "LOOPLAB_LOG_FILE": "/dev/null"},
    )
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "1 untimed trace(s) left out" in text
    assert "known-neg.jsonl: its recorded task time is -5 s" in text


async def test_a_broken_bubblewrap_is_heard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bwrap that cannot start says why on its stderr: that line is the sandbox's error
    (before: "sandbox helper cannot be reached: Connection lost")."""
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\n"
        "exit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    with pytest.raises(SandboxError, match="Creating new namespace failed: Operation not"):
        await LocalSandbox.create(config=SandboxConfig(isolation="bwrap"))
