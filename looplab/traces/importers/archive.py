"""Bounded reads of zip archives (Inspect `.eval` logs): every member and count capped.

A zip's header may claim any size and decompress to far more than its own bytes (a 1 MB
file with a 1 GiB member), and an archive may hold any number of samples. Readers here
check a member before reading it and read with a bounded stream in case the header lies:

- `MAX_MEMBER_MB` uncompressed per member (raise: env `LOOPLAB_IMPORT_MAX_MEMBER_MB`);
- `MAX_TOTAL_MB` for all sample members together (raise: `LOOPLAB_IMPORT_MAX_TOTAL_MB`);
- `MAX_SAMPLES` members read as samples per archive (raise: `LOOPLAB_IMPORT_MAX_SAMPLES`);
- encrypted members (flag bit 0x1) and compression methods Python cannot read (anything
  but stored, deflate, bzip2, lzma) are refused by name.

Each refusal is a `TraceError` naming the file, the member, the cap and how to raise it.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from looplab.errors import TraceError

__all__ = ["MAX_MEMBER_MB", "MAX_SAMPLES", "MAX_TOTAL_MB", "check_count", "read_member"]

MAX_MEMBER_MB = 256
"""Default cap on one member's uncompressed size, MiB (assumed: a large Inspect sample
with its attachments is tens of MB; parsed JSON takes several times its bytes in memory)."""

MAX_SAMPLES = 5_000
"""Default cap on the samples read from one archive (assumed: every parsed sample is held
until the runs are built; 10k samples took 6.5 GB in the issue-36 campaign)."""

MAX_TOTAL_MB = 2_048
"""Default cap on all sample members of one archive together, MiB uncompressed (assumed)."""

_TOTAL_ENV = "LOOPLAB_IMPORT_MAX_TOTAL_MB"
_MEMBER_ENV = "LOOPLAB_IMPORT_MAX_MEMBER_MB"
_SAMPLES_ENV = "LOOPLAB_IMPORT_MAX_SAMPLES"
_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    zipfile.ZIP_BZIP2: "bzip2",
    zipfile.ZIP_LZMA: "lzma",
}


def _cap(env: str, default: int, path: Path) -> int:
    """The cap `env` sets (a positive integer), else `default`."""
    raw = os.environ.get(env)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise TraceError(f"{env}={raw!r}: expected a positive integer", path=str(path))
    return value


def check_count(archive: zipfile.ZipFile, members: list[str], path: Path) -> None:
    """Refuse an archive with more sample `members` than the sample cap, or whose members
    together claim more than the total cap (zipfile never reads past a member's claimed
    size, so the claims bound what is read).

    Raises:
        TraceError: a cap exceeded; names the cap and how to raise it.
    """
    cap = _cap(_SAMPLES_ENV, MAX_SAMPLES, path)
    if len(members) > cap:
        raise TraceError(
            f"{len(members)} sample members (samples/*.json) exceed the cap of {cap} per "
            f"archive; raise it with {_SAMPLES_ENV}=N or split the log",
            path=str(path),
        )
    for name in members:
        _member_cap(archive.getinfo(name), path)
    total_mb = _cap(_TOTAL_ENV, MAX_TOTAL_MB, path)
    claimed = sum(archive.getinfo(name).file_size for name in members)
    if claimed > total_mb * 1024 * 1024:
        raise TraceError(
            f"sample members claim {claimed} bytes uncompressed, over the cap of {total_mb} "
            f"MiB per archive; raise it with {_TOTAL_ENV}=N or split the log",
            path=str(path),
        )


def read_member(archive: zipfile.ZipFile, name: str, path: Path) -> bytes:
    """The bytes of member `name`, at most the member cap, whatever its header claims.

    Raises:
        TraceError: encrypted, an unsupported compression method, larger than the cap
            (claimed or actual), or unreadable; each names the member.
    """
    info = archive.getinfo(name)
    if info.flag_bits & 0x1:
        raise TraceError(f"{name}: encrypted zip member (not supported)", path=str(path))
    if info.compress_type not in _METHODS:
        raise TraceError(
            f"{name}: unsupported zip compression method {info.compress_type} "
            f"(supported: {', '.join(_METHODS.values())})",
            path=str(path),
        )
    cap = _member_cap(info, path)
    try:
        with archive.open(info) as stream:
            data = stream.read(cap + 1)
    except (RuntimeError, NotImplementedError, OSError, EOFError) as exc:
        raise TraceError(f"{name}: unreadable zip member ({exc})", path=str(path)) from None
    except zipfile.BadZipFile as exc:
        raise TraceError(f"{name}: corrupt zip member ({exc})", path=str(path)) from None
    if len(data) > cap:
        raise TraceError(
            f"{name}: uncompressed size over the cap of {cap // 2**20} MiB per member "
            f"(its header claimed {info.file_size}); raise it with {_MEMBER_ENV}=N",
            path=str(path),
        )
    return data


def _member_cap(info: zipfile.ZipInfo, path: Path) -> int:
    """The member cap in bytes, after refusing a member whose header claims more."""
    cap_mb = _cap(_MEMBER_ENV, MAX_MEMBER_MB, path)
    if info.file_size > cap_mb * 2**20:
        raise TraceError(
            f"{info.filename}: uncompressed size over the cap of {cap_mb} MiB per member "
            f"(header says {info.file_size} bytes); raise it with {_MEMBER_ENV}=N",
            path=str(path),
        )
    return cap_mb * 2**20
