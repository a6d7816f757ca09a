"""Regenerate docs/screens/*.png: the dashboard's compare, run, task, run-list, diff and
index pages at 1400 and 390 px, from data made with the project's own commands.

Data (in --root, default a fresh temporary directory; about 1-2 minutes on 2 cores):
two quickstart-like experiments at slow-80 and fast-750 (virtual clock, three coding
tasks, two repetitions each), and the Claude Code session with two parallel sub-agents
(tests/fixtures/graph, written for looplab) imported and re-timed at fast-750 with
`looplab replay`. Needs Chromium (/usr/bin/chromium or $LOOPLAB_CHROMIUM). Run from the
repository root:

    .venv/bin/python scripts/make-screens.py [--root DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from looplab.chromium import CHROMIUM_ARGS, find_chromium
from looplab.report.dashboard.server import DashboardServer

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "screens"
SESSION = (
    REPO / "tests/fixtures/graph/claude-code-sidechains/7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f.jsonl"
)
TASKS = "[coding/fix-pager,coding/fix-discount,coding/nbugs-4]"
WIDTHS = (1400, 390)


def looplab(*args: str) -> None:
    """Run `looplab ARGS` with this interpreter, failing loudly."""
    subprocess.run([sys.executable, "-m", "looplab", "--no-log-file", *args], check=True)


def make_data(root: Path) -> None:
    """The experiments and the re-timed sub-agent session under `root`."""
    for name, profile in (("quick-slow", "slow-80"), ("quick-fast", "fast-750")):
        if (root / name / "traces").is_dir():
            continue
        overrides = {
            "name": name,
            "description": f"quickstart coding tasks at {profile}",
            "output_dir": str(root / name),
            "backends": f"[{{name: {profile}, profile: {profile}}}]",
            "tasks": TASKS,
            "repetitions": "2",
            "clock": "virtual",
            "concurrency": "2",
        }
        sets = [arg for key, value in overrides.items() for arg in ("-s", f"{key}={value}")]
        looplab("run", "quickstart", *sets)
    if not (root / "subagents").is_dir():
        looplab("import", "claude-code", str(SESSION), "-o", str(root / "subagents"))
        looplab(
            "replay", str(root / "subagents"), "-p", "fast-750", "-o", str(root / "subagents-fast")
        )


def pages(root: Path) -> dict[str, str]:
    """Screen name -> dashboard path."""
    run = next((root / "subagents-fast").glob("*.jsonl")).name
    recorded = next((root / "subagents").glob("*.jsonl")).name
    return {
        "index": "",
        "compare": "compare?a=quick-slow&b=quick-fast",
        "run-subagents": f"run/subagents-fast/{run}",
        "task": "task?name=coding%2Ffix-pager",
        "runs-filtered": "runs?profile=slow-80&min_s=5",
        "diff-subagents": f"diff?a=subagents/{recorded}&b=subagents-fast/{run}",
    }


def shoot(root: Path) -> list[Path]:
    """Every page at every width; returns the files written."""
    OUT.mkdir(parents=True, exist_ok=True)
    written = []
    with DashboardServer(root) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        for name, path in pages(root).items():
            for width in WIDTHS:
                page = browser.new_page(viewport={"width": width, "height": 1000})
                page.goto(server.url + path)
                file = OUT / f"{name}-{width}.png"
                page.screenshot(path=str(file), full_page=width == 1400 and name != "run-subagents")
                overflow = page.evaluate("document.scrollingElement.scrollWidth") > width
                note = "  (page wider than the screen!)" if overflow else ""
                print(f"{file.relative_to(REPO)}{note}")
                written.append(file)
                page.close()
        browser.close()
    return written


def main() -> None:
    """Make the data (or reuse --root's), then the screenshots."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, help="data directory (kept; reused when present)")
    args = parser.parse_args()
    if args.root is not None:
        args.root.mkdir(parents=True, exist_ok=True)
        make_data(args.root)
        shoot(args.root)
        return
    with tempfile.TemporaryDirectory(prefix="looplab-screens-") as tmp:
        make_data(Path(tmp))
        shoot(Path(tmp))


if __name__ == "__main__":
    main()
