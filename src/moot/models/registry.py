"""Local GGUF files registered under a name (`moot models add NAME PATH`), kept in registry.json."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from moot.config import models_dir
from moot.errors import MootError, UsageError
from moot.models import integrity
from moot.models.catalog import ID_PATTERN


def registry_path() -> Path:
    """Where registered names are recorded."""
    return models_dir() / "registry.json"


def load() -> dict[str, dict[str, Any]]:
    """Every registered name with its entry (path, sha256, chat_format, added)."""
    path = registry_path()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise MootError(
            f"{path} is unreadable: {exc}",
            hint="fix or delete the file; it only records names given with `moot models add`",
        ) from exc
    if not isinstance(data, dict):
        raise MootError(f"{path} is not a JSON object", hint="fix or delete the file")
    return {k: v for k, v in data.items() if isinstance(v, dict) and "path" in v}


def check_name(name: str, *, taken: set[str]) -> None:
    """Refuse a name that could be mistaken for a catalog id, a hub reference or a path."""
    if not re.fullmatch(ID_PATTERN, name) or name.endswith(".gguf"):
        raise UsageError(
            f"{name!r} is not a usable model name",
            hint="use letters, digits, '.', '_' and '-', not ending in .gguf",
        )
    if name in taken:
        raise UsageError(
            f"{name!r} is already a catalog model", hint="pick another name for your file"
        )


def register(name: str, path: Path, *, sha256: str, chat_format: str | None) -> None:
    """Record NAME -> PATH with the sha256 it has now."""
    entries = load()
    entries[name] = {
        "path": str(path),
        "sha256": sha256,
        "chat_format": chat_format,
        "added": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    integrity.write_json_atomic(registry_path(), entries)


def unregister(name: str) -> bool:
    """Forget NAME; True if it was registered. The file itself is left alone."""
    entries = load()
    if entries.pop(name, None) is None:
        return False
    integrity.write_json_atomic(registry_path(), entries)
    return True
