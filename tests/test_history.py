"""Saved debates: private files, `moot history`, and --no-save leaving nothing behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def moot(*args: str, home: Path, **env_extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MOOT_HOME": str(home), **env_extra}
    return subprocess.run(
        [sys.executable, "-m", "moot", *args], capture_output=True, text=True, env=env, timeout=120
    )


def tree(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")} if path.exists() else set()


def test_saved_debates_are_private_and_can_be_listed_shown_and_deleted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for motion in ("cats are better than dogs", "tea is better than coffee"):
        proc = moot("run", motion, "--dry-run", "--max-rounds", "3", "--quiet", home=home)
        assert proc.returncode == 0, proc.stderr
    folders = sorted((home / "debates").iterdir())
    assert len(folders) == 2
    for folder in folders:
        assert folder.stat().st_mode & 0o777 == 0o700
        files = list(folder.iterdir())
        assert files
        for f in files:
            assert f.stat().st_mode & 0o777 == 0o600, f
    listing = moot("history", "list", home=home)
    assert "cats are better" in listing.stdout and "tea is better" in listing.stdout
    shown = moot("history", "show", folders[0].name, home=home)
    assert shown.returncode == 0 and "Debate Brief" in shown.stdout
    assert moot("history", "rm", folders[0].name, home=home).returncode == 0
    assert not folders[0].exists() and folders[1].exists()
    assert moot("history", "rm", "--all", home=home).returncode == 0
    assert list((home / "debates").iterdir()) == []
    missing = moot("history", "show", "nope", home=home)
    assert missing.returncode == 2 and missing.stderr.startswith("error:")


def test_no_save_leaves_no_file_anywhere(tmp_path: Path) -> None:
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    proc = moot(
        "run",
        "cats are better than dogs",
        "--dry-run",
        "--max-rounds",
        "3",
        "--no-save",
        home=home,
        TMPDIR=str(tmp),
    )
    assert proc.returncode == 0, proc.stderr
    assert "Debate Brief" in proc.stdout and "saved:" not in proc.stdout
    assert tree(home) == set()
    assert tree(tmp) == set()
