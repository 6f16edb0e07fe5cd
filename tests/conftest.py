"""Shared fixtures: a private moot home per test, and the real tiny models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The real models live in the user's moot home (installed by `make install`); remember it
# before any test points MOOT_HOME elsewhere.
REAL_HOME = Path(
    os.environ.get("MOOT_HOME")
    or Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "moot"
)


@pytest.fixture
def moot_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty, private moot data directory for one test."""
    home = tmp_path / "moot-home"
    monkeypatch.setenv("MOOT_HOME", str(home))
    return home


def real_model_path(model_id: str) -> Path:
    """Path of an installed tiny model; fails (never skips) when `make install` has not run."""
    folder = REAL_HOME / "models" / model_id
    files = sorted(folder.glob("*.gguf")) if folder.is_dir() else []
    if not files:
        pytest.fail(f"model {model_id} is not installed in {folder}: run `make install`")
    return files[0]
