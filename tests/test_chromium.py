"""The one Chromium finder (`looplab.chromium`): its order, its error, its flags' users."""

from __future__ import annotations

from pathlib import Path

import pytest

from looplab.chromium import CHROMIUM_ARGS, chromium_candidates, find_chromium, require_chromium
from looplab.errors import PrerequisiteError
from looplab.sandboxes.browser import BrowserConfig


def test_explicit_path_is_the_only_candidate(tmp_path: Path) -> None:
    """An explicit executable is used alone: found when it exists, an error naming it if not."""
    binary = tmp_path / "chrome"
    binary.write_text("")
    assert find_chromium(str(binary)) == str(binary)
    with pytest.raises(PrerequisiteError, match="apt-get install -y chromium") as raised:
        require_chromium(str(tmp_path / "missing"))
    assert str(tmp_path / "missing") in str(raised.value)


def test_environment_variable_comes_before_playwright_and_the_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$LOOPLAB_CHROMIUM is looked at first, then Playwright's own, then the system's."""
    binary = tmp_path / "chrome"
    binary.write_text("")
    monkeypatch.setenv("LOOPLAB_CHROMIUM", str(binary))
    candidates = chromium_candidates(playwright_path="/pw/chrome")
    assert candidates[:2] == [str(binary), "/pw/chrome"]
    assert candidates[-1] == "/usr/bin/chromium"
    assert find_chromium(playwright_path="/pw/chrome") == str(binary)


def test_browser_tools_launch_with_the_shared_flags() -> None:
    """The computer-use browser's default flags are the shared ones (no second list)."""
    assert BrowserConfig().args == CHROMIUM_ARGS
    assert "--no-sandbox" in CHROMIUM_ARGS
    assert "--disable-background-networking" in CHROMIUM_ARGS
