"""The recording format's reader and lock, the credential rule and the URL join, in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from looplab.backends.proxy.recordings import (
    RecordingError,
    hold_recording,
    read_exchange,
    read_index,
    release_recording,
)
from looplab.traces.scrub import credential_values
from looplab.urls import join_path

LINE = {"step": 0, "hash": "h", "endpoint": "chat", "stream": False, "file": "exchanges/h.0.json"}


def _recording(tmp_path: Path, index: str) -> Path:
    (tmp_path / "exchanges").mkdir(parents=True)
    exchange = {"endpoint": "chat", "status": 200, "request": {}, "body": {}}
    (tmp_path / "exchanges" / "h.0.json").write_text(json.dumps(exchange))
    (tmp_path / "index.jsonl").write_text(index)
    return tmp_path


def test_a_torn_last_line_is_skipped_and_not_counted(tmp_path: Path) -> None:
    """The intact part ends after the last whole line; the torn tail is left out."""
    whole = json.dumps(LINE) + "\n"
    entries, intact = read_index(_recording(tmp_path, whole + '{"step": 1, "ha'))
    assert [e["step"] for e in entries] == [0]
    assert intact == len(whole)


def test_a_bad_line_before_the_last_names_its_line(tmp_path: Path) -> None:
    """A corrupt line that is not the last is an error naming file and line."""
    directory = _recording(tmp_path, "{}\n" + json.dumps(LINE) + "\n")
    with pytest.raises(RecordingError, match=r"index.jsonl line 1: field 'step'"):
        read_index(directory)


def test_names_outside_the_directory_are_refused(tmp_path: Path) -> None:
    """`..`, absolute paths and links out are refused before anything is opened."""
    directory = _recording(tmp_path / "rec", json.dumps(LINE) + "\n")
    (directory / "exchanges" / "out.json").symlink_to(directory / "exchanges" / "h.0.json")
    assert read_exchange(directory, "exchanges/h.0.json")["status"] == 200
    for name in ("../x.json", "/etc/passwd", "exchanges/out.json"):
        with pytest.raises(RecordingError):
            read_exchange(directory, name)


def test_the_lock_is_held_once(tmp_path: Path) -> None:
    """A second hold on a held directory is refused naming this pid; after release, free."""
    first = hold_recording(tmp_path)
    with pytest.raises(RecordingError, match="pid"):
        hold_recording(tmp_path)
    release_recording(first)
    release_recording(hold_recording(tmp_path))


def test_credential_values_and_join_path() -> None:
    """Credential-named headers, cookies and query values are found; others are not; the
    query stays after the joined path."""
    headers = {
        "Authorization": "Bearer abcdefgh12345",
        "x-goog-api-key": "goog12345678",
        "cookie": "sid=cookie123456; x=1",
        "content-type": "application/json",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    }
    found = credential_values(headers, "http://h/v1?key=query1234567&model=gpt-4o-mini")
    assert {"abcdefgh12345", "goog12345678", "cookie123456", "query1234567"} <= set(found)
    assert "application/json" not in found and "gpt-4o-mini" not in found
    assert "dGhlIHNhbXBsZSBub25jZQ==" not in found
    assert join_path("http://h/v1/?key=K", "/chat/completions") == (
        "http://h/v1/chat/completions?key=K"
    )
