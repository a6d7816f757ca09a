"""Conformance suite of the Sandbox contract, run on LocalSandbox and DockerSandbox alike."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from looplab.errors import SandboxError
from looplab.sandbox_contract import TRUNCATION_MARKER, Sandbox, SandboxConfig, SandboxEvent
from looplab.sandboxes.factory import open_sandbox

KINDS = ["local", pytest.param("docker", marks=pytest.mark.docker)]


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    """A small task: a text file and a nested module."""
    root = tmp_path / "task"
    (root / "pkg").mkdir(parents=True)
    (root / "hello.txt").write_text("hello task\n")
    (root / "pkg" / "mod.py").write_text("VALUE = 42\n")
    return root


@pytest.fixture
def events() -> list[SandboxEvent]:
    """Collects the sandbox's timing events."""
    return []


@pytest.fixture(params=KINDS)
async def sandbox(
    request: pytest.FixtureRequest, task_dir: Path, events: list[SandboxEvent]
) -> AsyncIterator[Sandbox]:
    """A sandbox of each kind with the task copied in; closed after the test."""
    config = SandboxConfig(kind=request.param, output_limit_bytes=64 * 1024)
    box = await open_sandbox(config, task_dir, sink=events.append)
    yield box
    await box.close()


async def test_task_files_are_copied_into_the_workspace(sandbox: Sandbox) -> None:
    """create copies the task directory's files into the workspace root."""
    assert await sandbox.list_files() == ["hello.txt", "pkg/mod.py"]
    assert await sandbox.read_file("pkg/mod.py") == b"VALUE = 42\n"
    result = await sandbox.exec("cat hello.txt && pwd")
    assert result.stdout == f"hello task\n{sandbox.workdir}\n"


async def test_exec_returns_stdout_stderr_and_exit_code(sandbox: Sandbox) -> None:
    """A non-zero exit is a result with both streams, not an exception."""
    result = await sandbox.exec("echo out; echo err >&2; exit 3")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.ok
    assert not result.timed_out
    assert not result.truncated
    assert 0 < result.duration_s < 5


async def test_argv_commands_run_without_a_shell(sandbox: Sandbox) -> None:
    """A list command is an argv: shell metacharacters reach the program verbatim."""
    result = await sandbox.exec(["python3", "-c", "import sys; print(sys.argv[1])", "$HOME;|"])
    assert result.stdout == "$HOME;|\n"
    assert result.ok


async def test_missing_program_exits_127(sandbox: Sandbox) -> None:
    """An argv naming no program reports 127 like a shell would."""
    result = await sandbox.exec(["no-such-program-xyz"])
    assert result.exit_code == 127


async def test_env_is_added_and_host_env_does_not_leak(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """exec env is visible; the host's own variables are not."""
    monkeypatch.setenv("LOOPLAB_HOST_SECRET", "leaked")
    result = await sandbox.exec(
        'echo "$GREETING:${LOOPLAB_HOST_SECRET:-none}"', env={"GREETING": "hi"}
    )
    assert result.stdout == "hi:none\n"


async def test_cwd_is_relative_to_the_workspace(sandbox: Sandbox) -> None:
    """cwd names a workspace directory; one that escapes is refused."""
    result = await sandbox.exec("python3 -c 'import mod; print(mod.VALUE)'", cwd="pkg")
    assert result.stdout == "42\n"
    with pytest.raises(SandboxError, match="workspace"):
        await sandbox.exec("true", cwd="../..")


async def test_timeout_kills_the_command_tree_and_sandbox_stays_usable(sandbox: Sandbox) -> None:
    """A timeout kills the command and its children; the next exec works."""
    started = time.perf_counter()
    result = await sandbox.exec("sleep 31.5 & sleep 31.5", timeout_s=0.5)
    assert result.timed_out
    assert result.exit_code == 137
    assert time.perf_counter() - started < 5
    after = await sandbox.exec("ps -eo args | grep -c '^sleep 31.5' || true")
    assert after.stdout.strip() == "0"
    assert (await sandbox.exec("echo alive")).stdout == "alive\n"


async def test_output_flood_is_truncated_with_a_marker(sandbox: Sandbox) -> None:
    """Output beyond the limit is dropped, flagged and marked; the rest is kept."""
    result = await sandbox.exec("head -c 200000 /dev/zero | tr '\\0' a")
    assert result.truncated
    assert result.ok
    dropped = 200000 - 64 * 1024
    assert result.stdout == "a" * 64 * 1024 + TRUNCATION_MARKER.format(dropped=dropped)


async def test_binary_output_decodes_with_replacement(sandbox: Sandbox) -> None:
    """Bytes that are not UTF-8 become replacement characters, not errors."""
    result = await sandbox.exec(["printf", "ok\\377\\376end"])
    assert result.stdout == "ok\ufffd\ufffdend"


async def test_file_io_round_trips_and_is_shared_with_exec(sandbox: Sandbox) -> None:
    """Written files (bytes or str, nested) are read back and seen by commands."""
    payload = bytes(range(256)) * 10
    await sandbox.write_file("out/deep/data.bin", payload)
    await sandbox.write_file("note.txt", "héllo")
    assert await sandbox.read_file("out/deep/data.bin") == payload
    assert (await sandbox.exec("cat note.txt")).stdout == "héllo"
    await sandbox.exec("echo made > made.txt")
    assert await sandbox.read_file(f"{sandbox.workdir}/made.txt") == b"made\n"
    assert "out/deep/data.bin" in await sandbox.list_files()
    assert await sandbox.list_files("out") == ["out/deep/data.bin"]


async def test_missing_file_raises_file_not_found(sandbox: Sandbox) -> None:
    """Reading a file or listing a directory that does not exist is FileNotFoundError."""
    with pytest.raises(FileNotFoundError):
        await sandbox.read_file("nope.txt")
    with pytest.raises(FileNotFoundError):
        await sandbox.list_files("nodir")


@pytest.mark.parametrize("path", ["../escape.txt", "/etc/passwd", "pkg/../../x", "/tmp/x"])
async def test_paths_outside_the_workspace_are_refused(sandbox: Sandbox, path: str) -> None:
    """`..`, absolute paths outside the workspace are refused for read and write."""
    with pytest.raises(SandboxError, match="workspace"):
        await sandbox.read_file(path)
    with pytest.raises(SandboxError, match="workspace"):
        await sandbox.write_file(path, "x")


async def test_symlinks_pointing_out_are_refused(sandbox: Sandbox) -> None:
    """A symlink inside the workspace that points outside cannot be followed."""
    await sandbox.exec("ln -s /etc/passwd link && ln -s / rootdir")
    with pytest.raises(SandboxError, match="symlink"):
        await sandbox.read_file("link")
    with pytest.raises(SandboxError, match="symlink"):
        await sandbox.write_file("rootdir/tmp/evil", "x")
    with pytest.raises(SandboxError, match="symlink"):
        await sandbox.list_files("rootdir")


@pytest.mark.timing
async def test_concurrent_execs_overlap(sandbox: Sandbox) -> None:
    """Two commands in one sandbox run at the same time, not one after the other."""
    started = time.perf_counter()
    first, second = await asyncio.gather(sandbox.exec("sleep 0.4"), sandbox.exec("sleep 0.4"))
    assert first.ok
    assert second.ok
    assert time.perf_counter() - started < 0.75


async def test_close_is_idempotent_and_final(sandbox: Sandbox) -> None:
    """close twice is fine; using a closed sandbox raises SandboxError."""
    await sandbox.close()
    await sandbox.close()
    with pytest.raises(SandboxError, match="closed"):
        await sandbox.exec("true")


async def test_operations_are_timed_as_events(sandbox: Sandbox, events: list[SandboxEvent]) -> None:
    """create, exec and close each emit one event with ordered monotonic times."""
    await sandbox.exec("true")
    await sandbox.close()
    assert [event.kind for event in events] == ["create", "exec", "close"]
    assert all(event.sandbox_id == sandbox.id for event in events)
    assert all(0 <= event.duration_s < 30 for event in events)
    assert events[0].ended <= events[1].started <= events[1].ended <= events[2].started
    assert events[1].detail["exit_code"] == 0
    assert events[0].wall_time.utcoffset() is not None


async def test_description_says_whether_it_is_isolated(sandbox: Sandbox) -> None:
    """The description names the isolation, or says NOT ISOLATED."""
    if sandbox.isolated:
        assert "NOT ISOLATED" not in sandbox.description
    else:
        assert "NOT ISOLATED" in sandbox.description


async def test_unisolated_local_fallback_still_conforms(task_dir: Path) -> None:
    """isolation=none runs plain subprocesses, says so, and still obeys the contract."""
    async with await open_sandbox(SandboxConfig(isolation="none"), task_dir) as box:
        assert not box.isolated
        assert "NOT ISOLATED" in box.description
        assert (await box.exec("cat hello.txt")).stdout == "hello task\n"
        result = await box.exec("sleep 30", timeout_s=0.3)
        assert result.timed_out
        with pytest.raises(SandboxError):
            await box.read_file("../../etc/passwd")
        workspace = Path(box.workdir)
    assert not await asyncio.to_thread(workspace.exists)
    assert os.path.isabs(str(workspace))
