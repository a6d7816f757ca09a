"""The Ray executor on a real (local) Ray cluster: a head without cell slots and two worker
nodes run a virtual-clock matrix; one worker is killed mid-run and the experiment still
completes, no run lost, none counted twice, traces shaped as in-process ones."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from looplab.config import validate_model
from looplab.experiments.config import ExperimentConfig
from looplab.experiments.executors.config import SLOT_RESOURCE
from looplab.experiments.runner import ExperimentResult, ExperimentRunner
from looplab.traces.io import read_trace
from looplab.traces.store import ResultStore

pytestmark = [pytest.mark.ray, pytest.mark.slow]


@pytest.fixture
def cluster() -> Iterator[Any]:
    """A head with 0 cell slots and two worker nodes with 2 slots each; all shut down after."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 1,
            "resources": {SLOT_RESOURCE: 0},
            "_system_config": {
                "worker_niceness": 0,  # as `address: local` does
                # a removed node is declared dead in ~1.5 s instead of ~15 s (defaults:
                # every 3 s, 5 misses): the test waits for that before cells rerun
                "health_check_initial_delay_ms": 1000,
                "health_check_period_ms": 500,
                "health_check_timeout_ms": 500,
                "health_check_failure_threshold": 3,
            },
        },
    )
    try:
        for _ in range(2):
            cluster.add_node(num_cpus=1, resources={SLOT_RESOURCE: 2})
        cluster.wait_for_nodes()
        yield cluster
    finally:
        import ray

        ray.shutdown()
        cluster.shutdown()


def _run(config: dict[str, Any]) -> ExperimentResult:
    runner = ExperimentRunner(validate_model(ExperimentConfig, config))
    runner.prepare_directory(fresh=False)
    return asyncio.run(runner.run())


def _header(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        header: dict[str, Any] = json.loads(handle.readline())
    return header


class NodeKiller(threading.Thread):
    """Removes the worker node of the first cell seen running (trace started, not ended)."""

    def __init__(self, cluster: Any, traces: Path) -> None:
        super().__init__(daemon=True)
        self.cluster, self.traces = cluster, traces
        self.killed: str | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        workers = {node.node_id: node for node in self.cluster.worker_nodes}
        while not self.stop.wait(0.1):
            for path in self.traces.glob("*.jsonl"):
                try:
                    node_id = _header(path)["node"]["ray_node_id"]
                except (ValueError, KeyError, OSError):
                    continue
                if node_id in workers and not read_trace(path).complete:
                    self.cluster.remove_node(workers[node_id], allow_graceful=False)
                    self.killed = node_id
                    return


def test_lost_node_mid_run_loses_no_run_and_counts_none_twice(
    cluster: Any, small_config: dict[str, Any], tmp_path: Path
) -> None:
    """A worker node killed mid-run: its cells rerun on the other; every cell counted once."""
    small_config |= {
        "clock": "virtual",
        "repetitions": 2,
        "executor": {"kind": "ray", "address": cluster.address, "max_attempts": 3},
    }
    traces = Path(small_config["output_dir"]) / "traces"
    killer = NodeKiller(cluster, traces)
    killer.start()
    try:
        result = _run(small_config)
    finally:
        killer.stop.set()
        killer.join()
    assert killer.killed is not None, "no cell was caught running"
    assert sorted(o.status for o in result.outcomes) == ["done"] * 4
    with ResultStore(result.database) as store:
        cells = store.query("SELECT run_id FROM runs WHERE complete")
    assert len(cells) == 4 and len({run_id.split(".")[0] for (run_id,) in cells}) == 4
    aside = list((traces / "incomplete").glob("*.jsonl"))
    assert aside and all(not read_trace(p).complete for p in aside)
    nodes = [_header(o.trace_path)["node"] for o in result.outcomes]
    assert all(n["ray_node_id"] != killer.killed for n in nodes)
    assert any(n["attempt"] > 1 for n in nodes)

    # the same cell in-process: same header keys, same event kinds, same step count
    small_config |= {
        "output_dir": str(tmp_path / "inprocess"),
        "repetitions": 1,
        "backends": small_config["backends"][:1],
        "executor": {"kind": "inprocess"},
    }
    started = time.perf_counter()
    local = read_trace(_run(small_config).outcomes[0].trace_path)
    assert time.perf_counter() - started < 60
    remote = read_trace(result.directory / "traces" / local.path.name)  # type: ignore[union-attr]
    assert set(local.header.model_dump()) == set(remote.header.model_dump())
    assert local.header.node == {} and remote.header.node["hostname"]
    assert [e.kind for e in local.events] == [e.kind for e in remote.events]


def _ray_processes(mark: str) -> set[int]:
    """Pids of Ray's own daemons (raylet, GCS) started under the environment marker `mark`
    (they inherit it from `looplab run`), so another test run's Ray on the machine is not
    counted."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if (b"raylet" in command or b"gcs_server" in command) and mark.encode() in environ:
                found.add(int(entry.name))
    return found


def test_ctrl_c_on_ray_cancels_cells_and_resumes_in_process(
    small_config: dict[str, Any], tmp_path: Path
) -> None:
    """`looplab run --executor ray`: Ctrl-C mid-cell exits 130 leaving no Ray process; the
    directory resumes (in-process here) and every cell is counted once."""
    small_config |= {
        "clock": "virtual",
        "backends": small_config["backends"][:1],
        "executor": {"local_slots": 1},
    }
    config_path = tmp_path / "exp.yaml"
    config_path.write_text(json.dumps(small_config))
    traces = Path(small_config["output_dir"]) / "traces"
    mark = f"LOOPLAB_TEST_MARK={uuid.uuid4().hex}"
    env = {**os.environ, "LOOPLAB_LOG_FILE": os.devnull, "LOOPLAB_TEST_MARK": mark[18:]}
    command = [sys.executable, "-m", "looplab", "run", str(config_path), "--executor", "ray"]
    process = subprocess.Popen(
        [*command, "--ray-address", "local"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        # Ray's start takes ~25 s on a loaded 2-core host: wait for the first trace (else
        # the Ctrl-C would come before any cell began and leave nothing to set aside)
        deadline = time.perf_counter() + 150
        while time.perf_counter() < deadline and not list(traces.glob("*.jsonl")):
            time.sleep(0.05)
        assert list(traces.glob("*.jsonl")), "no cell started within 150 s"
        assert _ray_processes(mark), "the marker reaches Ray's daemons (else the check is void)"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    time.sleep(0.5)
    assert not _ray_processes(mark), "a Ray process outlived `looplab run`"
    assert not any(read_trace(p).complete for p in traces.glob("*.jsonl"))
    small_config["executor"] = {"kind": "inprocess"}
    result = _run(small_config)
    assert [o.status for o in result.outcomes] == ["done"]
    assert list((traces / "incomplete").glob("*.jsonl")), "the cut-off trace is kept aside"
    with ResultStore(result.database) as store:
        assert store.query("SELECT count(*) FROM runs")[0][0] == 1
