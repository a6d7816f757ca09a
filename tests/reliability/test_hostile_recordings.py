"""Hostile and corrupt recordings: refused with a clear error, never followed off the
directory, never a traceback, a 500, a hang or an OOM (issue 36, findings 2 and 8).

A corpus is made here (one test per case) from one valid recording (a chat exchange, its
index line): names that leave the directory (`..`, absolute, symbolic links to outside
files, to /dev/zero, through a linked directory), files that are not regular (FIFO,
/dev/zero, a directory), a file over the size cap, a torn last index line, bad JSON and
wrong types in the index and in an exchange. Each case starts a real
`looplab proxy --replay DIR` (memory capped by RLIMIT_AS, so an unbounded read fails
instead of eating the machine), asks it the recorded request over loopback HTTP and stops
it with SIGTERM. A hostile case must be refused at
start-up (exit 2, one `error:` line naming the file or the index line, no traceback); the
torn line must be skipped and the recording served. The single-writer lock is tested on
two real `proxy --record` processes: the second is refused naming the first, and after a
SIGKILL of the first the lock is taken over.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from looplab.backends.proxy.store import request_hash

pytestmark = [pytest.mark.reliability]

MEMORY_CAP = 3 << 30
"""RLIMIT_AS of each proxy process: an unbounded read dies here, not in the machine."""
START_S = 60.0
"""Seconds a proxy has to bind its port (one took over 20 s beside six busy workers)."""
_PORT = ("--port", "0", "--port-file")
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
DIGEST = request_hash("chat", REQUEST)
NAME = f"exchanges/{DIGEST}.0.json"


def _exchange(**changes: Any) -> dict[str, Any]:
    """A valid recorded non-streamed chat exchange (`changes` replace fields)."""
    reply = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "hello"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
    entry = {
        "format": "looplab-proxy-1",
        "endpoint": "chat",
        "hash": DIGEST,
        "request": REQUEST,
        "stream": False,
        "status": 200,
        "usage": {},
        "message": None,
        "upstream": {},
        "body": reply,
    }
    return {**entry, **changes}


def _line(**changes: Any) -> str:
    """A valid index line for `NAME` (`changes` replace fields)."""
    entry = {"step": 0, "hash": DIGEST, "endpoint": "chat", "stream": False, "file": NAME}
    return json.dumps({**entry, "summary": "m: hi", **changes}) + "\n"


def _valid(directory: Path) -> None:
    (directory / "exchanges").mkdir(parents=True)
    (directory / NAME).write_text(json.dumps(_exchange()))
    (directory / "index.jsonl").write_text(_line())


def _index(text: str) -> Callable[[Path], object]:
    return lambda d: (d / "index.jsonl").write_text(text)


def _file(name: str) -> Callable[[Path], object]:
    return _index(_line(file=name))


def _body(data: str | bytes) -> Callable[[Path], None]:
    def make(directory: Path) -> None:
        path = directory / NAME
        path.write_bytes(data if isinstance(data, bytes) else data.encode())

    return make


def _link(name: str, target: str) -> Callable[[Path], None]:
    def make(directory: Path) -> None:
        (directory / name).symlink_to(target)
        _file(name)(directory)

    return make


def _special(name: str, kind: str) -> Callable[[Path], None]:
    def make(directory: Path) -> None:
        path = directory / name
        path.unlink(missing_ok=True)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dir":
            path.mkdir()
        else:  # a sparse file just over the 64 MiB cap
            with path.open("wb") as handle:
                handle.truncate((64 << 20) + 1)
        if not name.endswith("index.jsonl"):
            _file(name)(directory)

    return make


def _cases(outside: Path) -> dict[str, Callable[[Path], object]]:
    """Each hostile recording, by name: how to make it from a valid one."""
    target = outside / "x.json"
    return {
        "traversal ../": _file("../outside/x.json"),
        "traversal exchanges/../../": _file("exchanges/../../outside/x.json"),
        "absolute path": _file(str(target)),
        "absolute /dev/zero": _file("/dev/zero"),
        "file FIFO": _special("exchanges/f.json", "fifo"),
        "file is a directory": _file("exchanges"),
        "file missing": _file("exchanges/nope.json"),
        "file over the cap": _special("exchanges/big.json", "big"),
        "symlink to an outside file": _link("exchanges/l.json", str(target)),
        "symlink to /dev/zero": _link("exchanges/z.json", "/dev/zero"),
        "symlinked directory": _link("linked", str(outside)),
        "empty file name": _file(""),
        "NUL in file name": _file("exchanges/a\x00b.json"),
        "index FIFO": _special("index.jsonl", "fifo"),
        "index -> /dev/zero": lambda d: (
            (d / "index.jsonl").unlink(),
            (d / "index.jsonl").symlink_to("/dev/zero"),
        ),
        "index is a directory": _special("index.jsonl", "dir"),
        "index over the cap": _special("index.jsonl", "big"),
        "index bad JSON line": _index("not json\n" + _line()),
        "index line not an object": _index("[1, 2]\n" + _line()),
        "index invalid UTF-8": lambda d: (d / "index.jsonl").write_bytes(
            b"\xff\xfe{\n" + _line().encode()
        ),
        "index step a string": _index(_line(step="0")),
        "index step negative": _index(_line(step=-1)),
        "index file a number": _index(_line(file=5)),
        "index hash null": _index(_line(hash=None)),
        "index endpoint unknown": _index(_line(endpoint="bogus")),
        "index steps repeat": _index(_line() + _line()),
        "exchange bad JSON": _body("{not json"),
        "exchange a list": _body("[1, 2, 3]"),
        "exchange 100k deep": _body("[" * 100_000),
        "exchange invalid UTF-8": _body(b'{"endpoint": "\xff"}'),
        "exchange status a string": _body(json.dumps(_exchange(status="200"))),
        "exchange status 99999": _body(json.dumps(_exchange(status=99999))),
        "exchange request not an object": _body(json.dumps(_exchange(request="hi"))),
        "exchange body a list": _body(json.dumps(_exchange(body=[1]))),
        "exchange events not a list": _body(json.dumps(_exchange(stream=True, events="x"))),
        "exchange event data a number": _body(
            json.dumps(_exchange(stream=True, events=[{"event": None, "data": 5}]))
        ),
        "exchange endpoint unknown": _body(json.dumps(_exchange(endpoint="nope"))),
    }


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _proxy(args: list[str], work: Path) -> tuple[subprocess.Popen[bytes], Path, Path]:
    """A real `looplab proxy` process (memory capped); its port file and stderr file."""
    port_file, stderr = work / "port", work / "stderr"
    with stderr.open("wb") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "looplab", "proxy", *args, *_PORT, str(port_file)],
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env={**os.environ, "LOOPLAB_LOG_FILE": os.devnull, "COLUMNS": "400"},
            preexec_fn=_limit_memory,
        )
    return process, port_file, stderr


def _wait_port(process: subprocess.Popen[bytes], port_file: Path) -> int | None:
    """The bound port, or None when the process ended first (or never bound: a hang)."""
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if port_file.exists() and port_file.read_text().strip():
            return int(port_file.read_text())
        if process.poll() is not None:
            return None
        time.sleep(0.05)
    return None


def _stop(process: subprocess.Popen[bytes]) -> bool:
    """SIGTERM, then SIGKILL after 10 s; True when SIGTERM was enough."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(10)
        return True
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return False


def _outcome(directory: Path) -> str:
    """What a real `looplab proxy --replay` did with `directory`: `refused: <line>`,
    `served <status>`, or a failure (`traceback`, `hang`, `killed`)."""
    work = directory.parent / f"{directory.name}.run"
    work.mkdir()
    process, port_file, stderr = _proxy(["--replay", str(directory)], work)
    port = _wait_port(process, port_file)
    result = ""
    if port is None and process.poll() is None:
        result = "hang at start-up"
    elif port is not None:
        try:
            answer = httpx2.post(
                f"http://127.0.0.1:{port}/v1/chat/completions", json=REQUEST, timeout=10
            )
            result = f"served {answer.status_code}"
        except httpx2.HTTPError as exc:
            result = f"request failed ({type(exc).__name__}: a hang or a crash)"
    stopped = _stop(process)
    text = stderr.read_text(errors="replace")
    if "Traceback" in text or "MemoryError" in text:
        return f"traceback: {text.strip().splitlines()[-1][:200]}"
    if not stopped:
        return f"{result}; hang on SIGTERM"
    if port is None and not result:
        said = " ".join(text.split()) if text.startswith("error:") else ""
        if process.returncode == 2 and said and len(text.splitlines()) <= 4:
            return f"refused: {said}"
        return f"exit {process.returncode}: {text.strip()[-200:]}"
    return result


def _torn(directory: Path) -> None:
    with (directory / "index.jsonl").open("a") as handle:
        handle.write('{"step": 1, "hash": "ab')


TORN = "torn last index line"
CASES = [*_cases(Path("/outside")), TORN]
"""Every case of the corpus (a torn last line is the one to be served)."""


@pytest.mark.parametrize("name", CASES)
def test_hostile_recordings_are_refused_clearly(tmp_path: Path, campaign: Any, name: str) -> None:
    """Each hostile recording of the corpus is refused at start-up, exit 2, with one line
    naming the recording's file; a torn last index line is skipped and the rest served;
    none gives a traceback, a 500, a hang or an OOM."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.json").write_text(json.dumps(_exchange()))
    directory = tmp_path / "case"
    _valid(directory)
    (_torn if name == TORN else _cases(outside)[name])(directory)
    outcome = _outcome(directory)
    if name == TORN:
        good = outcome == "served 200"
    else:
        packed = "".join(outcome.split())  # rich folds long paths over lines
        named = str(directory) in packed or "insidetherecording" in packed
        good = outcome.startswith("refused: error:") and named
    campaign.add("proxy hostile recordings")
    campaign.add("proxy hostile recording failures", 0 if good else 1)
    assert good, outcome


def test_one_recorder_per_directory(tmp_path: Path, campaign: Any) -> None:
    """Two real `proxy --record` on one directory: the second exits 2 naming the first's
    pid; after the first is killed with SIGKILL, a third takes the lock over."""
    store = tmp_path / "rec"
    runs = [tmp_path / f"run{n}" for n in range(3)]
    for run in runs:
        run.mkdir()
    upstream = ["--upstream", "http://127.0.0.1:9/v1", "--record", str(store)]
    first, port_file, _ = _proxy(upstream, runs[0])
    try:
        assert _wait_port(first, port_file) is not None
        second, second_port, stderr = _proxy(upstream, runs[1])
        if _wait_port(second, second_port) is not None:  # it serves: a second writer
            _stop(second)
        second.wait()
        text = stderr.read_text()
        campaign.add("proxy second recorders", 1)
        refused = second.returncode == 2 and f"pid {first.pid}" in text and "Traceback" not in text
        campaign.add("proxy second recorders refused", int(refused))
        assert refused, (second.returncode, text)
    finally:
        first.kill()
        first.wait()
    third, port_file, stderr = _proxy(upstream, runs[2])
    try:
        assert _wait_port(third, port_file) is not None, stderr.read_text()
    finally:
        _stop(third)


def test_record_after_a_torn_index_line(tmp_path: Path) -> None:
    """`proxy --record` into a recording whose last index line is torn starts, cuts the
    torn tail, and what it appends is a line of its own."""
    store = tmp_path / "rec"
    _valid(store)
    with (store / "index.jsonl").open("a") as handle:
        handle.write('{"step": 1, "hash": "ab')
    work = tmp_path / "run"
    work.mkdir()
    process, port_file, stderr = _proxy(
        ["--upstream", "http://127.0.0.1:9/v1", "--record", str(store)], work
    )
    try:
        assert _wait_port(process, port_file) is not None, stderr.read_text()
    finally:
        _stop(process)
    assert "Traceback" not in stderr.read_text()
    assert (store / "index.jsonl").read_text() == _line()
