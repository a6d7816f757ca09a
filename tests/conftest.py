"""Test tiers of design.md and the marks `make test` schedules by.

Tiers: unit/simulated (always), docker, browser, ray, bwrap, live. A tier whose
prerequisite is missing is skipped with the reason (a Docker engine without the sandbox
image counts as missing), except that LOOPLAB_REQUIRE_<TIER>=1 turns that skip into a
failure (CI sets them, so a broken CI machine cannot pass by skipping). While `make test`
builds the sandbox image in the background (LOOPLAB_IMAGE_BUILD_LOCK), the docker-tier
tests run last (the long ones, tests/long-tests.txt, start first) and the first of them
waits for the build before deciding.

Marks by need follow the tree: `timing` (asserts on wall-clock pacing or latency: run
serially, on their own) is set in the test file itself (`pytestmark`, or a decorator with
the reason above it), so a test moved keeps its mark; `_NEEDS` gives marks by directory
(`reliability`: tests/reliability);
`integration` (starts subprocesses or servers; its hang guard is `INTEGRATION_TIMEOUT_S`,
not the 120 s of the rest) is read off the module's text.
`make test` runs `-m "not timing"` across pytest-xdist workers, then `-m timing` serially.
"""

from __future__ import annotations

import fcntl
import functools
import gc
import os
import shutil
import signal
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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


def _docker_problem() -> str | None:
    """Return why the docker tier cannot run (no engine, or no sandbox image), or None."""
    return _docker_engine_problem() or _image_problem()


def _image_problem() -> str | None:
    """Return why the sandbox image is not there (the engine answers), or None."""
    import docker as docker_sdk

    from looplab.sandbox_contract import IMAGE_ENV, default_image
    from looplab.sandboxes.engine import connect_engine

    image = default_image()
    problem: str | None = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        client = connect_engine(timeout_s=5)
        try:
            client.images.get(image)
        except docker_sdk.errors.ImageNotFound:
            named = f" ({IMAGE_ENV})" if os.environ.get(IMAGE_ENV) else ""
            problem = f"the sandbox image {image}{named} is not there (looplab sandbox build)"
        finally:
            client.close()
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


IMAGE_BUILD_LOCK_ENV = "LOOPLAB_IMAGE_BUILD_LOCK"
"""Set by `make test` while it builds the sandbox image in the background: a file that
build holds an exclusive flock on until it ends (scripts/image-in-background.sh)."""


def _image_build_pending() -> bool:
    """True while the background image build of `make test` still runs."""
    lock = os.environ.get(IMAGE_BUILD_LOCK_ENV)
    if not lock or not os.path.exists(lock):
        return False
    with open(lock) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def _docker_deferred() -> str | None:
    """The docker tier's problem at collection; None also while the image is missing but
    still being built (its tests then wait for the build: `_docker_after_build`)."""
    engine = _docker_engine_problem()
    if engine is not None:
        return engine
    image = _image_problem()
    return None if image is not None and _image_build_pending() else image


@functools.cache
def _docker_after_build() -> str | None:
    """Wait for `make test`'s background image build (once per process), then say why the
    docker tier still cannot run, or None."""
    lock = os.environ.get(IMAGE_BUILD_LOCK_ENV)
    if lock and os.path.exists(lock):
        with open(lock) as handle:
            fcntl.flock(handle, fcntl.LOCK_SH)  # free once the build has ended
            fcntl.flock(handle, fcntl.LOCK_UN)
    return _docker_problem()


def _ray_problem() -> str | None:
    """Return why Ray cannot be imported (the `looplab[ray]` extra), or None when it can."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        return "ray is not installed (pip install 'looplab[ray]')"
    return None


def _bwrap_problem() -> str | None:
    """Return why bubblewrap cannot contain a local sandbox (not on PATH), or None."""
    import shutil

    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install bubblewrap; make venv as root)"
    return None


_TIERS = {
    "docker": ("LOOPLAB_REQUIRE_DOCKER", _docker_deferred),
    "browser": ("LOOPLAB_REQUIRE_BROWSER", _chromium_problem),
    "ray": ("LOOPLAB_REQUIRE_RAY", _ray_problem),
    "bwrap": ("LOOPLAB_REQUIRE_BWRAP", _bwrap_problem),
}
"""Tier mark -> (the variable that makes it required, why it cannot run here or None)."""

_NEEDS: dict[str, tuple[str, ...]] = {
    "reliability": ("tests/reliability/",),
}
"""Mark -> node-id prefixes (a directory, a file, or a file::test) that get it."""

INTEGRATION_TIMEOUT_S = 600
"""The hang guard of an `integration` test (pyproject's `timeout`, 120 s, guards the rest):
an end-to-end run that takes 30 s on a quiet machine takes minutes beside two other heavy
jobs, which must make it slow, not failed. A test's own `timeout` mark wins."""

_INTEGRATION_WORDS = ("subprocess", "SimulatorServer", "open_sandbox", "serve(", "Popen")
"""A test module naming one of these starts processes or servers: mark `integration`."""


def pytest_configure(config: pytest.Config) -> None:
    """Deliver SIGINT to the processes the tests start, as a terminal's Ctrl-C would.

    A shell's background job (`make test &`) starts with SIGINT ignored and its children
    inherit that, so the tests that interrupt `looplab` would see it carry on.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark tests by need (`_NEEDS`, integration by module text); skip (or, when
    required, fail) tests whose tier cannot run on this machine."""
    problems: dict[str, str | None] = {}
    texts: dict[str, bool] = {}
    items.sort(key=_start_rank)
    for item in items:
        _mark_needs(item, texts)
        for tier, (require_var, probe) in _TIERS.items():
            if item.get_closest_marker(tier) is None:
                continue
            if tier not in problems:
                problems[tier] = probe()
            problem = problems[tier]
            if problem is None:
                continue
            if os.environ.get(require_var) == "1":
                item.user_properties.append(("tier_problem", f"{require_var}=1 but {problem}"))
            else:
                item.add_marker(pytest.mark.skip(reason=f"{tier} tier: {problem}"))
        if "live" in item.keywords and not os.environ.get("LOOPLAB_LIVE_API_KEY"):
            item.add_marker(pytest.mark.skip(reason="live tier: LOOPLAB_LIVE_API_KEY is not set"))


LONG_TESTS = Path(__file__).with_name("long-tests.txt")
"""Node ids (without parameters) of the tests that take ~10 s or more: started first."""


@functools.cache
def _long_tests() -> frozenset[str]:
    """The node ids listed in `LONG_TESTS` (read once, at the first collection)."""
    lines = LONG_TESTS.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def _start_rank(item: pytest.Item) -> int:
    """Where a test starts (the same order in every xdist worker, whatever the state of the
    image build when each collects): the long tests first, so the run does not end waiting
    on one of them, then the rest; while `make test` builds the sandbox image (2-3 minutes
    on a fresh host beside the tests), the docker-tier tests last (right after the long
    ones, the first of them held a worker idle for 137 s waiting for the build)."""
    if os.environ.get(IMAGE_BUILD_LOCK_ENV) and item.get_closest_marker("docker") is not None:
        return 2
    return 0 if item.nodeid.split("[")[0] in _long_tests() else 1


def _mark_needs(item: pytest.Item, integration: dict[str, bool]) -> None:
    """Add the `_NEEDS` marks whose prefix the item's node id has, and `integration` when
    its module names a process or server (`_INTEGRATION_WORDS`; cached per file)."""
    node = item.nodeid.split("[")[0]
    for mark, prefixes in _NEEDS.items():
        if any(node == p or node.startswith(p if p.endswith("/") else p + "::") for p in prefixes):
            item.add_marker(getattr(pytest.mark, mark))
    path = str(item.path)
    if path not in integration:
        text = item.path.read_text(encoding="utf-8") if item.path.suffix == ".py" else ""
        integration[path] = any(word in text for word in _INTEGRATION_WORDS)
    if integration[path] or any(item.get_closest_marker(t) for t in _TIERS):
        item.add_marker(pytest.mark.integration)
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(INTEGRATION_TIMEOUT_S))


BuildOnce = Callable[[str, Callable[[Path], None]], Path]
"""`build_once(name, build)`: the directory `build` filled, built once per test run."""


@pytest.fixture(scope="session")
def build_once(tmp_path_factory: pytest.TempPathFactory) -> BuildOnce:
    """Build an expensive read-only fixture directory once per test run, not once per
    pytest-xdist worker: under xdist the first worker to ask builds it in the run's shared
    base directory (under a file lock) and the others wait for it and reuse it; without
    xdist it is built in this session's own temporary directory. A build that fails leaves
    no directory behind, so the next worker tries again (and fails the same way)."""

    def once(name: str, build: Callable[[Path], None]) -> Path:
        if not os.environ.get("PYTEST_XDIST_WORKER"):
            target = tmp_path_factory.mktemp(name)
            _off_the_loop(build, target)
            return target
        root = tmp_path_factory.getbasetemp().parent  # shared by this run's workers
        target, built = root / f"shared-{name}", root / f"shared-{name}.built"
        with open(root / f"shared-{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not built.exists():
                shutil.rmtree(target, ignore_errors=True)
                target.mkdir()
                try:
                    _off_the_loop(build, target)
                except BaseException:
                    shutil.rmtree(target, ignore_errors=True)
                    raise
                built.touch()
        return target

    return once


def _off_the_loop(build: Callable[[Path], None], target: Path) -> None:
    """`build(target)` on a thread of its own: a builder may call `asyncio.run`, which
    refuses to start inside the event loop of an async test that happened to ask first
    (handed out one at a time, a browser test asked first and every report test errored)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(build, target).result()


@pytest.fixture(autouse=True)
def _tier_gate(request: pytest.FixtureRequest) -> None:
    """Fail a test whose tier is required (LOOPLAB_REQUIRE_*=1) but cannot run; a docker-tier
    test collected while the image was still building waits for the build, then skips (or
    fails, when required) with the reason if the tier still cannot run. (A fixture named
    by a mark added at collection would come too late: pytest has fixed the test's
    fixtures by then, so the gate is autouse.)"""
    for key, value in request.node.user_properties:
        if key == "tier_problem":
            pytest.fail(str(value))
    if request.node.get_closest_marker("docker") is None:
        return
    if not os.environ.get(IMAGE_BUILD_LOCK_ENV):
        return
    problem = _docker_after_build()
    if problem is None:
        return
    if os.environ.get("LOOPLAB_REQUIRE_DOCKER") == "1":
        pytest.fail(f"LOOPLAB_REQUIRE_DOCKER=1 but {problem}")
    pytest.skip(f"docker tier: {problem}")


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
    from looplab.sandboxes.prune import looplab_containers

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        client = connect_engine(timeout_s=5)
        try:
            found = looplab_containers(client, f"looplab.owner={owner_label()}")
            return [str(c.id)[:12] for c in found]
        finally:
            client.close()
            gc.collect()
