"""Checksums of model files, and the stamps that spare a second resolve from re-hashing them."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from moot.config import models_dir
from moot.errors import ModelIntegrityError, Phrase, UsageError
from moot.records import files
from moot.records.files import write_atomic

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def is_sha256(value: str | None) -> bool:
    """Whether VALUE looks like a sha256 hex digest (as an LFS ETag or blob name does)."""
    return bool(value) and _SHA256.fullmatch(value or "") is not None


def sha256_file(path: Path) -> str:
    """The sha256 of PATH's bytes, read in chunks."""
    with Path(path).open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def stamps_dir() -> Path:
    """Where verification stamps live (one small JSON file per verified model file)."""
    return models_dir() / ".verified"


def _stamp_path(real: Path) -> Path:
    return stamps_dir() / f"{hashlib.sha256(str(real).encode()).hexdigest()[:32]}.json"


def _identity(real: Path) -> dict[str, Any]:
    st = real.stat()
    return {"path": str(real), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def read_stamp(path: Path) -> str | None:
    """The sha256 recorded for PATH, if the file is unchanged since (same size and mtime)."""
    real = Path(os.path.realpath(path))
    stamp_path = _stamp_path(real)
    try:
        if not os.path.lexists(stamp_path):
            return None
        # A stamp that is not a small JSON file moot wrote (a FIFO, garbage) only costs a hash.
        stamp = files.read_json(stamp_path, what="a verification stamp", limit=files.KIB * 4)
        if not isinstance(stamp, dict):
            return None
        if {k: stamp.get(k) for k in ("path", "size", "mtime_ns")} != _identity(real):
            return None
    except (OSError, UsageError):
        return None
    digest = stamp.get("sha256")
    return digest if isinstance(digest, str) and is_sha256(digest) else None


def write_stamp(path: Path, digest: str) -> None:
    """Record that PATH, as it is now, hashes to DIGEST."""
    real = Path(os.path.realpath(path))
    try:
        write_json_atomic(_stamp_path(real), {**_identity(real), "sha256": digest})
    except OSError:
        pass  # a read-only data dir only costs a re-hash next time


def drop_stamp(path: Path) -> None:
    """Forget what was recorded for PATH."""
    _stamp_path(Path(os.path.realpath(path))).unlink(missing_ok=True)


def verify_file(
    path: Path, expected: str | None, *, trust_stamp: bool = True, hint: str | Phrase = ""
) -> str:
    """Hash PATH (or trust its stamp) and compare with EXPECTED; return the sha256.

    With EXPECTED unknown the hash is only recorded. A mismatch raises ModelIntegrityError and
    leaves no stamp behind.
    """
    stamped = read_stamp(path) if trust_stamp else None
    digest = stamped or sha256_file(path)
    if expected is not None and digest != expected:
        drop_stamp(path)
        if not hint:
            raise ModelIntegrityError(
                key="models.integrity.fails_checksum", path=path, digest=digest, expected=expected
            )
        raise ModelIntegrityError(
            key="models.integrity.fails_checksum_fix",
            path=path,
            digest=digest,
            expected=expected,
            fix=hint,
        )
    if stamped is None:
        write_stamp(path, digest)
    return digest


def write_json_atomic(path: Path, data: Any) -> None:
    """Write DATA as JSON to PATH so that readers see the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
