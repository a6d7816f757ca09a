"""Build the sandbox image `looplab/sandbox:<version>`, online or offline, idempotently.

Two equivalent paths:
- `dockerfile`: `docker build` of `images/python/Dockerfile` (needs a registry for the base).
- `debootstrap`: a minimal Debian root (`debootstrap --variant=minbase` with PACKAGES),
  the sandbox user and workspace made in it, then `docker import` with IMAGE_ENV, the
  workdir and the user of the Dockerfile. Needs root, debootstrap and a Debian mirror.

Either way the image carries the label `looplab.inputs`, a hash of everything the build
reads; a build whose tag already has the same hash does nothing (`cached`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from looplab.cache import cache_dir
from looplab.errors import PrerequisiteError, SandboxError
from looplab.sandboxes.engine import connect_engine

if TYPE_CHECKING:
    import docker

__all__ = [
    "DOCKERFILE",
    "IMAGE_ENV",
    "IMAGE_TAG",
    "IMAGE_USER",
    "IMAGE_WORKDIR",
    "PACKAGES",
    "BuildMethod",
    "BuildResult",
    "build_image",
    "inputs_hash",
]

IMAGE_REPOSITORY = "looplab/sandbox"
IMAGE_VERSION = "1"
IMAGE_TAG = f"{IMAGE_REPOSITORY}:{IMAGE_VERSION}"
DOCKERFILE = Path(__file__).parent / "images" / "python" / "Dockerfile"
SUITE = "bookworm"
BASE_IMAGE = "debian:bookworm-slim"
PACKAGES = ("python3", "python3-pytest", "git", "ca-certificates", "procps", "patch", "ripgrep")
IMAGE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/home/sandbox",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}
IMAGE_WORKDIR = "/workspace"
IMAGE_USER = "1000:1000"
INPUTS_LABEL = "looplab.inputs"
_BUILDER_FORMAT = "2"  # bump when the build steps below change what the image contains
_FALLBACK_MIRROR = "http://deb.debian.org/debian"

BuildMethod = Literal["auto", "dockerfile", "debootstrap"]


@dataclass(frozen=True)
class BuildResult:
    """What `build_image` did.

    Attributes:
        tag: the image tag built or found.
        image_id: the engine's image id.
        method: `dockerfile`, `debootstrap`, or `cached` when nothing was built.
        duration_s: wall time of the call.
    """

    tag: str
    image_id: str
    method: str
    duration_s: float


def inputs_hash() -> str:
    """Return the hash of every input of the build (Dockerfile, packages, config)."""
    digest = hashlib.sha256()
    for part in (
        _BUILDER_FORMAT,
        IMAGE_VERSION,
        SUITE,
        BASE_IMAGE,
        " ".join(PACKAGES),
        repr(sorted(IMAGE_ENV.items())),
        IMAGE_WORKDIR,
        IMAGE_USER,
        DOCKERFILE.read_text(),
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def build_image(
    *,
    method: BuildMethod = "auto",
    tag: str = IMAGE_TAG,
    mirror: str | None = None,
    force: bool = False,
    client: docker.DockerClient | None = None,
) -> BuildResult:
    """Build the sandbox image unless an image with the same inputs is already tagged.

    Args:
        method: `dockerfile`, `debootstrap`, or `auto` (Dockerfile when the base image is
            present or can be pulled, else debootstrap).
        tag: tag to give the image.
        mirror: Debian mirror for debootstrap; default: the host's apt sources.
        force: rebuild even when the tag has the same inputs hash.
        client: engine client; default: `connect_engine()`.

    Returns:
        The tag, id and how it was obtained.

    Raises:
        PrerequisiteError: no engine, or debootstrap missing / not root for the offline path.
        SandboxError: a build step failed (its output is in the message).
    """
    import docker as docker_sdk

    started = time.perf_counter()
    client = client or connect_engine(timeout_s=600)
    wanted = inputs_hash()
    if not force:
        try:
            existing = client.images.get(tag)
        except docker_sdk.errors.ImageNotFound:
            existing = None
        if existing is not None and existing.labels.get(INPUTS_LABEL) == wanted:
            return BuildResult(tag, str(existing.id), "cached", time.perf_counter() - started)
    chosen = method if method != "auto" else _pick_method(client)
    if chosen == "dockerfile":
        image_id = _build_dockerfile(client, tag, wanted)
    else:
        image_id = _build_debootstrap(client, tag, wanted, mirror or detect_mirror())
    return BuildResult(tag, image_id, chosen, time.perf_counter() - started)


def _pick_method(client: docker.DockerClient) -> Literal["dockerfile", "debootstrap"]:
    """Use the Dockerfile when its base image is present or pullable, else debootstrap."""
    import docker as docker_sdk

    try:
        client.images.get(BASE_IMAGE)
        return "dockerfile"
    except docker_sdk.errors.ImageNotFound:
        pass
    try:
        client.images.pull(BASE_IMAGE)
        return "dockerfile"
    except docker_sdk.errors.APIError:
        return "debootstrap"


def _build_dockerfile(client: docker.DockerClient, tag: str, wanted: str) -> str:
    """`docker build` the Dockerfile; return the image id."""
    import docker as docker_sdk

    try:
        image, _logs = client.images.build(
            path=str(DOCKERFILE.parent),
            tag=tag,
            buildargs={"PACKAGES": " ".join(PACKAGES)},
            labels={INPUTS_LABEL: wanted, "looplab": "1"},
            rm=True,
        )
    except docker_sdk.errors.BuildError as exc:
        log = "".join(str(line.get("stream", "")) for line in exc.build_log)
        raise SandboxError(f"docker build of {DOCKERFILE} failed: {exc}\n{log[-4000:]}") from exc
    return str(image.id)


def _build_debootstrap(client: docker.DockerClient, tag: str, wanted: str, mirror: str) -> str:
    """Bootstrap a Debian root, configure it, `docker import` it; return the image id."""
    if shutil.which("debootstrap") is None:
        raise PrerequisiteError(
            "the offline image build needs debootstrap", fix="apt-get install -y debootstrap"
        )
    if os.geteuid() != 0:
        raise PrerequisiteError(
            "the offline image build (debootstrap) must run as root",
            fix="run `sudo looplab sandbox build`, or build with a registry reachable",
        )
    cache = cache_dir() / "debs"
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="looplab-rootfs-", dir="/var/tmp") as tmp:
        root = Path(tmp) / "root"
        _run(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(PACKAGES)}",
                f"--cache-dir={cache}",
                SUITE,
                str(root),
                mirror,
            ]
        )
        uid, gid = IMAGE_USER.split(":")
        _run(
            [
                "chroot",
                str(root),
                "useradd",
                "--uid",
                uid,
                "--user-group",
                "--create-home",
                "--home-dir",
                IMAGE_ENV["HOME"],
                "--shell",
                "/bin/bash",
                "sandbox",
            ]
        )
        workspace = root / IMAGE_WORKDIR.lstrip("/")
        workspace.mkdir(parents=True, exist_ok=True)
        os.chown(workspace, int(uid), int(gid))
        for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (root / leftover).glob("*"):
                if entry.is_file():
                    entry.unlink()
        tarball = Path(tmp) / "rootfs.tar"
        _run(["tar", "--numeric-owner", "-C", str(root), "-cf", str(tarball), "."])
        changes = [f"ENV {key}={value}" for key, value in IMAGE_ENV.items()]
        changes += [
            f"WORKDIR {IMAGE_WORKDIR}",
            f"USER {IMAGE_USER}",
            f"LABEL {INPUTS_LABEL}={wanted}",
            "LABEL looplab=1",
        ]
        repository, _, version = tag.partition(":")
        client.api.import_image_from_file(
            str(tarball), repository=repository, tag=version or "latest", changes=changes
        )
    return str(client.images.get(tag).id)


def detect_mirror() -> str:
    """Return the host's Debian mirror from its apt sources (deb822 or one-line format)."""
    candidates: list[str] = []
    sources = Path("/etc/apt/sources.list.d")
    for path in sorted(sources.glob("*.sources")) if sources.is_dir() else []:
        candidates += re.findall(r"^URIs:\s*(\S+)", path.read_text(), flags=re.M)
    legacy = Path("/etc/apt/sources.list")
    if legacy.is_file():
        candidates += re.findall(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)", legacy.read_text(), flags=re.M)
    for url in candidates:
        if url.rstrip("/").endswith("/debian"):
            return url
    return _FALLBACK_MIRROR


def _run(argv: list[str]) -> None:
    """Run a build step quietly; raise SandboxError with its output when it fails."""
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-4000:]
        raise SandboxError(f"image build step failed ({' '.join(argv[:2])}...):\n{output}")
