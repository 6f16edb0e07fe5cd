"""Settings read from the environment at call time, and where moot keeps its files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from moot.errors import UsageError


def data_dir() -> Path:
    """moot's data directory: $MOOT_HOME, else $XDG_DATA_HOME/moot, else ~/.local/share/moot."""
    home = os.environ.get("MOOT_HOME")
    if home:
        return Path(home).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "moot"


def models_dir() -> Path:
    """Where models installed from PyPI wheels or registered locally are recorded."""
    return data_dir() / "models"


def debates_dir() -> Path:
    """Where saved debates live, one folder each."""
    return data_dir() / "debates"


def tournaments_dir() -> Path:
    """Where tournaments live, one folder each."""
    return data_dir() / "tournaments"


def resource_path(*parts: str) -> Path:
    """A file shipped with moot: inside the wheel (moot/_data) or, in a checkout, the repo."""
    packaged = Path(__file__).parent / "_data"
    if packaged.is_dir():
        return packaged.joinpath(*parts)
    repo = Path(__file__).resolve().parents[2]
    if parts and parts[0] == "catalog.toml":
        return repo / "models" / "catalog.toml"
    return repo.joinpath(*parts)


def physical_cores() -> int:
    """Physical cores (not hyperthreads) where Linux says; else the logical count."""
    try:
        pairs = set()
        cpuinfo = Path("/proc/cpuinfo").read_text()
        phys = core = None
        for line in cpuinfo.splitlines():
            if line.startswith("physical id"):
                phys = line.split(":")[1].strip()
            elif line.startswith("core id"):
                core = line.split(":")[1].strip()
                pairs.add((phys, core))
        if pairs:
            return len(pairs)
    except OSError:
        pass
    return os.cpu_count() or 1


# -- per-format parameters --------------------------------------------------------------

P = TypeVar("P", bound=BaseModel)


# CLI option names for the fields, so errors name what the user typed.
OPTION_NAMES = {"min_score": "--min-score", "max_rounds": "--max-rounds"}


def validate_params(cls: type[P], **values: Any) -> P:
    """Build a params model or raise a one-line UsageError naming the option and its range."""
    try:
        return cls(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else "?"
        option = OPTION_NAMES.get(name, "--" + name.replace("_", "-"))
        field = cls.model_fields.get(name)
        bounds = _bounds(field.metadata) if field else ""
        raise UsageError(
            f"{option} {values.get(name)!r} is not allowed: {first['msg'].lower()}",
            hint=f"use a value {bounds}".strip() if bounds else "see moot run --help",
        ) from None


def _bounds(metadata: list[Any]) -> str:
    lo = hi = None
    for m in metadata:
        lo = getattr(m, "ge", lo)
        hi = getattr(m, "le", hi)
    if lo is not None and hi is not None:
        return f"from {lo} to {hi}"
    return ""
