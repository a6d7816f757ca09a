"""Test tiers of design.md: unit/simulated (always), docker, browser, ray, live.

A tier whose prerequisite is missing is skipped with the reason, except that
LOOPLAB_REQUIRE_DOCKER=1 / LOOPLAB_REQUIRE_BROWSER=1 / LOOPLAB_REQUIRE_RAY=1 turn that
skip into a failure (CI sets them, so a broken CI machine cannot pass by skipping).
"""

from __future__ import annotations

import gc
import os
import signal
import warnings
from collections.abc import Iterator

import pytest


def _docker_engine_problem() -> str | None:
    """Return why no Docker engine answers, or None when one does."""
    from looplab.errors import PrerequisiteError
    from looplab.sandboxes.engine import connect_engine

    # docker-py's version negotiation leaves a socket to the garbage collector; collect it
    # here, with its ResourceWarning silenced, so it is not blamed on whichever test runs next.
    problem: str | None = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            connect_engine(timeout_s=5).close()
        except PrerequisiteError as exc:
            problem = str(exc).splitlines()[0]
        gc.collect()
    return problem


def _chromium_problem() -> str | None:
    """Return why no Chromium is usable, or None when one is (`looplab.chromium`)."""
    from looplab.chromium import require_chromium
    from looplab.errors import PrerequisiteError

    try:
        require_chromium()
    except PrerequisiteError as exc:
        return str(exc).splitlines()[0]
    return None


def _ray_problem() -> str | None:
    """Return why Ray cannot be imported (the `looplab[ray]` extra), or None when it can."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        return "ray is not installed (pip install 'looplab[ray]')"
    return None


_TIERS = {
    "docker": ("LOOPLAB_REQUIRE_DOCKER", _docker_engine_problem),
    "browser": ("LOOPLAB_REQUIRE_BROWSER", _chromium_problem),
    "ray": ("LOOPLAB_REQUIRE_RAY", _ray_problem),
}


def pytest_configure(config: pytest.Config) -> None:
    """Deliver SIGINT to the processes the tests start, as a terminal's Ctrl-C would.

    A shell's background job (`make test &`) starts with SIGINT ignored and its children
    inherit that, so the tests that interrupt `looplab` would see it carry on.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip (or, when required, fail) tests whose tier cannot run on this machine."""
    problems: dict[str, str | None] = {}
    for item in items:
        for tier, (require_var, probe) in _TIERS.items():
            if tier not in item.keywords:
                continue
            if tier not in problems:
                problems[tier] = probe()
            problem = problems[tier]
            if problem is None:
                continue
            if os.environ.get(require_var) == "1":
                item.add_marker(pytest.mark.usefixtures("_tier_required_failure"))
                item.user_properties.append(("tier_problem", f"{require_var}=1 but {problem}"))
            else:
                item.add_marker(pytest.mark.skip(reason=f"{tier} tier: {problem}"))
        if "live" in item.keywords and not os.environ.get("LOOPLAB_LIVE_API_KEY"):
            item.add_marker(pytest.mark.skip(reason="live tier: LOOPLAB_LIVE_API_KEY is not set"))


@pytest.fixture
def _tier_required_failure(request: pytest.FixtureRequest) -> None:
    """Fail a test whose tier is required (LOOPLAB_REQUIRE_*=1) but cannot run."""
    for key, value in request.node.user_properties:
        if key == "tier_problem":
            pytest.fail(str(value))


@pytest.fixture(scope="session", autouse=True)
def _nothing_left_behind() -> Iterator[None]:
    """After the whole session, no sandbox process, marked temp dir, cgroup or container that
    this test process started is left (tests that spawn `looplab run` check their own)."""
    yield
    gc.collect()
    from looplab.sandboxes.leftovers import find_owned

    left = find_owned(os.getpid())
    containers = _own_containers()
    problems = [
        f"{kind}: {items}"
        for kind, items in (
            ("processes", left.processes),
            ("temporary directories", left.dirs),
            ("cgroups", left.cgroups),
            ("containers", containers),
        )
        if items
    ]
    assert not problems, "left behind by this test session: " + "; ".join(problems)


def _own_containers() -> list[str]:
    """Ids of looplab containers labelled with this process as owner (engine permitting)."""
    if _docker_engine_problem() is not None:
        return []
    from looplab.sandboxes.engine import connect_engine
    from looplab.sandboxes.owner import owner_label

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        client = connect_engine(timeout_s=5)
        try:
            found = client.containers.list(
                all=True, filters={"label": [f"looplab.owner={owner_label()}"]}
            )
            return [str(c.id)[:12] for c in found]
        finally:
            client.close()
            gc.collect()
