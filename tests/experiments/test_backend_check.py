"""`looplab run` checks a `kind: real` backend (key variable, endpoint) before anything is
written, naming the field; through the real CLI against real loopback sockets."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from looplab.cli.app import app
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.guards.backend_check import check_backends, endpoint_answers


def _config(tmp_path: Path, base_url: str, **backend: object) -> Path:
    """An experiment with one real backend at `base_url`."""
    config = {
        "name": "realcheck",
        "backends": [
            {"name": "api", "kind": "real", "base_url": base_url, "model": "m", **backend}
        ],
        "tasks": ["coding/fix-pager"],
        "output_dir": str(tmp_path / "out"),
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _run(config: Path) -> str:
    """`looplab run CONFIG`, failing: what it said (output and the error it exits with)."""
    result = CliRunner().invoke(app, ["run", str(config)])
    assert result.exit_code != 0
    return result.output + str(result.exception)


def _dead_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Answer(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def live_url() -> Iterator[str]:
    """A real HTTP server on loopback answering 401 to everything."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_unset_key_variable_is_refused_before_anything_is_written(
    tmp_path: Path, live_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unset api_key_env: exit 2-ish with the field named; no output directory."""
    monkeypatch.delenv("LOOPLAB_TEST_UNSET_KEY", raising=False)
    config = _config(tmp_path, live_url, api_key_env="LOOPLAB_TEST_UNSET_KEY")
    said = _run(config)
    assert "backends[0].api_key_env" in said and "LOOPLAB_TEST_UNSET_KEY" in said
    assert not (tmp_path / "out").exists()


def test_dead_endpoint_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """Nothing listening at base_url: the field named, never a "NOT solved" table."""
    config = _config(tmp_path, f"http://127.0.0.1:{_dead_port()}/v1")
    said = _run(config)
    assert "backends[0].base_url" in said and "nothing answers" in said
    assert "NOT solved" not in said
    assert not (tmp_path / "out").exists()


def test_an_answering_endpoint_passes(tmp_path: Path, live_url: str) -> None:
    """Any HTTP answer (here 401) counts as answering; a set key variable passes."""
    assert endpoint_answers(live_url) is None
    experiment = ExperimentConfig.model_validate(
        yaml.safe_load(_config(tmp_path, live_url, api_key_env="K").read_text())
    )
    check_backends(experiment, environ={"K": "sk-test"})
