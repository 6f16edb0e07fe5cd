"""Local GGUF files registered under a name (`moot models add NAME PATH`), kept in registry.json."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from moot.config import data_dir, models_dir
from moot.errors import Phrase, UsageError
from moot.inference.human import is_human_ref
from moot.models import integrity
from moot.models.catalog import CHAT_FORMATS, ID_PATTERN
from moot.records import files


def registry_path() -> Path:
    """Where registered names are recorded."""
    return models_dir() / "registry.json"


def check_folder(folder: Path) -> None:
    """Refuse a FOLDER moot keeps its files in when it, or a folder above it, is a file."""
    for path in (folder, *folder.parents):
        if not os.path.lexists(path):
            continue
        if path.is_dir():
            return
        if path == data_dir() and os.environ.get("MOOT_HOME"):
            raise UsageError(key="models.registry.moot_home_which_file_not", path=path)
        what = "a link to nothing" if path.is_symlink() and not path.exists() else "a file"
        raise UsageError(
            key="models.registry.where_moot_keeps_folder", path=path, what=what, folder=folder
        )


def load() -> dict[str, dict[str, Any]]:
    """Every registered name with its entry (path, sha256, chat_format, added)."""
    path = registry_path()
    check_folder(path.parent)
    if not os.path.lexists(path):
        return {}
    data = _read(path)
    entries: dict[str, dict[str, Any]] = {}
    for name, entry in data.items():
        problem = _entry_problem(name, entry)
        if problem:
            raise UsageError(
                key="models.registry.entry_malformed",
                path=path,
                name=repr(name),
                again=name,
                problem=problem,
            )
        entries[name] = entry
    return entries


def recorded(name: str) -> bool:
    """Whether NAME is in the registry at all, its entry well-formed or not."""
    path = registry_path()
    check_folder(path.parent)
    return os.path.lexists(path) and name in _read(path)


def _read(path: Path) -> dict[str, Any]:
    data = files.read_json(path, what="the model registry", limit=files.RECORD_LIMIT)
    if not isinstance(data, dict):
        raise UsageError(key="models.registry.model_registry_not_json_object", path=path)
    return data


def _entry_problem(name: str, entry: object) -> Phrase | None:
    if not isinstance(entry, dict):
        return Phrase("models.registry.entry_not_object")
    where = entry.get("path")
    if not isinstance(where, str) or not where or "\0" in where:
        return Phrase("models.registry.entry_path_not_file_name")
    sha = entry.get("sha256")
    if sha is not None and not (isinstance(sha, str) and integrity.is_sha256(sha)):
        return Phrase("models.registry.entry_sha256_not_hex")
    fmt = entry.get("chat_format")
    if fmt is not None and not (isinstance(fmt, str) and fmt in CHAT_FORMATS):
        formats = ", ".join(sorted(CHAT_FORMATS))
        return Phrase("models.registry.entry_chat_format_unknown", formats=formats)
    return None


def check_name(name: str, *, taken: set[str]) -> None:
    """Refuse a name that could be mistaken for a catalog id, a hub reference or a path."""
    if not re.fullmatch(ID_PATTERN, name) or name.endswith(".gguf"):
        raise UsageError(key="models.registry.not_usable_model_name", name=name)
    if name in taken:
        raise UsageError(key="models.registry.already_catalog_model", name=name)
    if is_human_ref(name):
        raise UsageError(key="models.registry.names_seat_person_takes_role", name=name)


def register(name: str, path: Path, *, sha256: str, chat_format: str | None) -> None:
    """Record NAME -> PATH with the sha256 it has now."""
    entries = load()
    entries[name] = {
        "path": str(path),
        "sha256": sha256,
        "chat_format": chat_format,
        "added": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    _write(entries)


def unregister(name: str) -> bool:
    """Forget NAME; True if it was registered. The file itself is left alone. Works on a
    registry whose other entries are malformed: forgetting one is how to fix it."""
    path = registry_path()
    check_folder(path.parent)
    if not os.path.lexists(path):
        return False
    entries = _read(path)
    if entries.pop(name, None) is None:
        return False
    _write(entries)
    return True


def _write(entries: dict[str, Any]) -> None:
    path = registry_path()
    check_folder(path.parent)
    try:
        integrity.write_json_atomic(path, entries)
    except OSError as exc:
        raise UsageError(
            key="models.registry.cannot_write_model_registry", path=path, value=exc.strerror or exc
        ) from None
