"""Files written safely (atomic replace, create-only, private folders) and read safely
(regular files only, under a size limit)."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

from moot.errors import UsageError


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_private_dir(path: Path) -> Path:
    """PATH as a folder: made, with any missing parent, readable only by its owner (debates
    can be sensitive). A folder that exists is left as it is: moot sets the mode only of
    the folders it makes, never of one it was given (a shared /tmp, a read-only folder, the
    target of a symlink). A file in the way is a FileExistsError (NotADirectoryError when
    it is a parent)."""
    try:
        path.mkdir(mode=0o700)
    except FileNotFoundError:
        if path.parent == path:
            raise
        make_private_dir(path.parent)
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            if not path.is_dir():  # made meanwhile by someone else: a folder is fine
                raise
    except FileExistsError:
        if not path.is_dir():
            raise
    return path


def _private_temp(path: Path, data: str) -> str:
    """DATA in a fsynced 0600 temp file beside PATH; returns the temp file's name."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def write_atomic(path: Path, data: str) -> None:
    """Write via a temp file, fsync, rename: a reader never sees a half-written file."""
    tmp = _private_temp(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def create_atomic(path: Path, data: str) -> bool:
    """Create PATH holding DATA unless it exists (then False): written to a temp file and
    linked into place, so a reader never sees it half-written and no writer replaces it."""
    tmp = _private_temp(path, data)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
    finally:
        Path(tmp).unlink(missing_ok=True)
    _fsync_dir(path.parent)
    return True


# -- reading files a user names ------------------------------------------------------------

KIB = 1024
MIB = 1024 * KIB

# Size limits of the files moot reads; each far above what moot itself writes.
TEXT_LIMIT = 1 * MIB  # a motions file, a prompt template
RECORD_LIMIT = 64 * MIB  # a transcript, a journal, a saved debate's document


def read_bytes(path: Path, *, what: str, limit: int, follow_symlinks: bool = True) -> bytes:
    """The bytes of PATH if it is a regular file of at most LIMIT bytes, else a UsageError
    naming WHAT. A FIFO or a device is refused without blocking on it; with
    follow_symlinks=False, neither is a symlink."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow_symlinks else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise UsageError(key="records.files.does_not_exist", what=what, path=path) from None
    except IsADirectoryError:
        raise UsageError(key="records.files.folder_not_file", what=what, path=path) from None
    except OSError as exc:
        if not follow_symlinks and os.path.islink(path):
            raise UsageError(
                key="records.files.symlink_moot_does_not_follow", what=what, path=path
            ) from None
        raise UsageError(
            key="records.files.cannot_read", what=what, path=path, value=exc.strerror or exc
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise UsageError(key="records.files.is_kind", what=what, path=path, kind=kind)
        if info.st_size > limit:
            raise UsageError(
                key="records.files.bytes_over_moot_s_limit",
                what=what,
                path=path,
                st_size=info.st_size,
                limit=limit,
            )
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise UsageError(
            key="records.files.cannot_read_2", what=what, path=path, value=exc.strerror or exc
        ) from None
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while being read
        raise UsageError(
            key="records.files.over_moot_s_limit_bytes", what=what, path=path, limit=limit
        )
    return data


def read_text(path: Path, *, what: str, limit: int, follow_symlinks: bool = True) -> str:
    """read_bytes, decoded as UTF-8 (a BOM is dropped); invalid UTF-8 is a UsageError."""
    data = read_bytes(path, what=what, limit=limit, follow_symlinks=follow_symlinks)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(
            key="records.files.not_utf_8_text_byte", what=what, path=path, start=exc.start
        ) from None


def read_json(
    path: Path, *, what: str, limit: int = RECORD_LIMIT, follow_symlinks: bool = True
) -> object:
    """read_text, parsed as JSON; malformed or absurdly nested JSON is a UsageError."""
    text = read_text(path, what=what, limit=limit, follow_symlinks=follow_symlinks)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            key="records.files.not_valid_json_line",
            what=what,
            path=path,
            msg=exc.msg,
            lineno=exc.lineno,
        ) from None
    except RecursionError:
        raise UsageError(
            key="records.files.nested_too_deeply_moot_s", what=what, path=path
        ) from None
