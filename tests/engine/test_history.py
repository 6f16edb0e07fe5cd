"""Saved debates: private files, `moot history`, and --no-save leaving nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Cli


def tree(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")} if path.exists() else set()


def test_saved_debates_are_private_and_can_be_listed_shown_and_deleted(
    tmp_path: Path, cli: Cli
) -> None:
    home = tmp_path / "home"
    for motion in ("cats are better than dogs", "tea is better than coffee"):
        proc = cli("run", motion, "--dry-run", "--max-rounds", "3", "--quiet", home=home)
        assert proc.returncode == 0, proc.stderr
    folders = sorted((home / "debates").iterdir())
    assert len(folders) == 2
    for folder in folders:
        assert folder.stat().st_mode & 0o777 == 0o700
        files = list(folder.iterdir())
        assert files
        for f in files:
            assert f.stat().st_mode & 0o777 == 0o600, f
    listing = cli("history", "list", home=home)
    listed = " ".join(listing.stdout.split())  # a motion wraps at its words
    assert "cats are better" in listed and "tea is better" in listed
    shown = cli("history", "show", folders[0].name, home=home)
    assert shown.returncode == 0 and "Debate Brief" in shown.stdout
    assert cli("history", "rm", folders[0].name, "--yes", home=home).returncode == 0
    assert not folders[0].exists() and folders[1].exists()
    assert cli("history", "rm", "--all", "--yes", home=home).returncode == 0
    assert list((home / "debates").iterdir()) == []
    missing = cli("history", "show", "nope", home=home)
    assert missing.returncode == 2 and missing.stderr.startswith("error:")


def test_no_save_leaves_no_file_anywhere(tmp_path: Path, cli: Cli) -> None:
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    # A process of its own, so that its temporary folder is this one.
    proc = cli.subprocess(
        "run",
        "cats are better than dogs",
        "--dry-run",
        "--max-rounds",
        "3",
        "--no-save",
        home=home,
        env={"TMPDIR": str(tmp)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Debate Brief" in proc.stdout and "saved:" not in proc.stdout
    assert tree(home) == set()
    assert tree(tmp) == set()


@pytest.mark.parametrize("fmt", ["challenge", "decision", "adversarial"])
def test_no_save_leaves_no_file_in_any_format(
    tmp_path: Path, cli: Cli, fmt: str, dry_models: tuple[str, str]
) -> None:
    """The challenge format's state file included: --no-save writes nothing at all."""
    home = tmp_path / "home"
    home.mkdir()
    args = {
        "challenge": ["--rounds", "1"],
        "decision": ["--positions", "ban cars", "--positions", "keep cars", "--yes"],
        "adversarial": ["--model", dry_models[0], "--model", dry_models[1], "--rounds", "1"],
    }[fmt]
    done = cli("run", "cars in cities", "--format", fmt, "--dry-run", "--no-save", *args, home=home)
    assert done.returncode == 0, done.stderr
    assert "saved:" not in done.stdout
    assert tree(home) == set()
