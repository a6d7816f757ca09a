"""Bounded Inspect `.eval` imports: hostile zips built from a real log, each refused clearly.

A member whose header claims ~4 GiB, a real member over the member cap, more samples than
the sample cap, an encrypted-flag member and compression method 99: each is a clear
`looplab import` error naming the file and the member (exit 2, no traceback), and the
caps say how to raise them (`LOOPLAB_IMPORT_MAX_*`).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.reliability]

_IMPORT = [sys.executable, "-m", "looplab", "import", "inspect"]
SEED = Path(__file__).parents[1] / "fixtures" / "corpus" / "inspect"
SEED_LOG = SEED / "log_message_deduplication.eval"
SAMPLE = "samples/0_epoch_1.json"


def _build(path: Path, samples: int = 1, pad: int = 0, stored: bool = False) -> Path:
    """A `.eval` with the seed's header and `samples` copies of its sample (the first one
    padded with `pad` bytes of a string field)."""
    with zipfile.ZipFile(SEED_LOG) as seed:
        header = seed.read("header.json")
        sample = json.loads(seed.read(SAMPLE))
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(path, "w", compression=method) as archive:
        archive.writestr("header.json", header)
        for index in range(samples):
            body = dict(sample, id=f"s{index}")
            if pad and index == 0:
                body["metadata"] = {"pad": "x" * pad}
            archive.writestr(f"samples/{index}_epoch_1.json", json.dumps(body))
    return path


def _patch(path: Path, member: str, **fields: int) -> None:
    """Rewrite `member`'s local and central headers in place: `flags`, `method`, `size`."""
    data = bytearray(path.read_bytes())
    local = {"flags": (6, "<H"), "method": (8, "<H"), "size": (22, "<I")}
    central = {"flags": (8, "<H"), "method": (10, "<H"), "size": (24, "<I")}
    with zipfile.ZipFile(path) as archive:
        offset = archive.getinfo(member).header_offset
    start = data.find(b"PK\x01\x02")
    while start != -1:
        length = struct.unpack_from("<H", data, start + 28)[0]
        if data[start + 46 : start + 46 + length] == member.encode():
            break
        start = data.find(b"PK\x01\x02", start + 4)
    assert start != -1, member
    for name, value in fields.items():
        struct.pack_into(local[name][1], data, offset + local[name][0], value)
        struct.pack_into(central[name][1], data, start + central[name][0], value)
    path.write_bytes(bytes(data))


def _import(path: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`looplab import inspect PATH` as a real process, stderr joined into one line."""
    done = subprocess.run(
        [*_IMPORT, str(path), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env={**os.environ, "LOOPLAB_LOG_FILE": os.devnull, "COLUMNS": "300", **env},
        timeout=120,
    )
    done.stderr = " ".join(done.stderr.split())
    return done


def _refused(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 2 (bad input) with every needle in stderr and no traceback."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    for needle in needles:
        assert needle in done.stderr, (needle, done.stderr)


def test_the_seed_imports(tmp_path: Path) -> None:
    """The rebuilt `.eval` imports (so each refusal below is the hostile part's doing)."""
    done = _import(_build(tmp_path / "ok.eval", samples=2), tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_member_claiming_4_gib_is_refused_before_reading(tmp_path: Path) -> None:
    """A header claiming ~4 GiB is refused by name from the header, before any read."""
    path = _build(tmp_path / "claims.eval", stored=True)
    _patch(path, SAMPLE, size=0xFFFFFFF0)
    _refused(_import(path, tmp_path), "claims.eval", "samples/0_epoch_1.json", "256 MiB")


def test_a_member_over_the_cap_is_refused(tmp_path: Path) -> None:
    """A real 3 MiB member over a 1 MiB cap is refused naming the cap and its variable."""
    path = _build(tmp_path / "big.eval", pad=3 * 1024 * 1024)
    done = _import(path, tmp_path, LOOPLAB_IMPORT_MAX_MEMBER_MB="1")
    _refused(done, "big.eval", "samples/0_epoch_1.json", "1 MiB", "LOOPLAB_IMPORT_MAX_MEMBER_MB")


def test_too_many_samples_are_refused(tmp_path: Path) -> None:
    """More sample members than the cap is refused naming the count, cap and variable."""
    path = _build(tmp_path / "many.eval", samples=12)
    done = _import(path, tmp_path, LOOPLAB_IMPORT_MAX_SAMPLES="10")
    _refused(done, "many.eval", "12 sample members", "cap of 10", "LOOPLAB_IMPORT_MAX_SAMPLES")


def test_an_encrypted_member_is_refused(tmp_path: Path) -> None:
    """A member flagged encrypted (bit 0x1) is a clear error naming it, not a traceback."""
    path = _build(tmp_path / "locked.eval")
    _patch(path, "samples/0_epoch_1.json", flags=0x1)
    _refused(_import(path, tmp_path), "locked.eval", "samples/0_epoch_1.json", "encrypted")


def test_compression_method_99_is_refused(tmp_path: Path) -> None:
    """Method 99 (AES) is a clear error naming the member and the supported methods."""
    path = _build(tmp_path / "aes.eval")
    _patch(path, "samples/0_epoch_1.json", method=99)
    _refused(_import(path, tmp_path), "aes.eval", "samples/0_epoch_1.json", "method 99")


def test_samples_over_the_total_cap_are_refused(tmp_path: Path) -> None:
    """Sample members claiming more than the total cap together are refused before reading."""
    path = _build(tmp_path / "wide.eval", samples=30)  # 30 x ~80 KB = ~2.4 MB
    done = _import(path, tmp_path, LOOPLAB_IMPORT_MAX_TOTAL_MB="1")
    _refused(done, "wide.eval", "cap of 1 MiB per archive", "LOOPLAB_IMPORT_MAX_TOTAL_MB")
