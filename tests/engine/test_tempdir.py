"""A failed command leaves nothing behind in the temporary folder: each runs as a process of
its own with TMPDIR an empty folder, which is empty again when it exits."""

from __future__ import annotations

import importlib.util
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import Cli

MOTION = "cities should ban cars"


def failing(tmp_path: Path, dry_models: tuple[str, str]) -> dict[str, list[str]]:
    """Commands that fail, each after it has started its work."""
    saved = tmp_path / "saved"
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "journal.jsonl").write_text('{"type": "debate"}\n{"type": "turn", "index": 7}\n')
    motions = tmp_path / "motions.txt"
    motions.write_text(f"{MOTION}\n")
    a, b = dry_models
    return {
        "run, a bad option": ["run", MOTION, "--dry-run", "--max-rounds", "99"],
        "run, a folder it cannot write": ["run", MOTION, "--dry-run", "--out", "/proc/moot"],
        "resume, a damaged journal": ["resume", str(damaged)],
        "replay, a transcript that is not one": ["replay", str(motions)],
        "check, a transcript that is not one": ["check", str(motions)],
        "judge, a judge that is not there": [
            "judge", str(saved / "transcript.json"), "--judge", str(tmp_path / "none.gguf"),
        ],
        "a tournament of one model": [
            "tournament", "--model", a, "--motions", str(motions), "--dry-run",
        ],
    }  # fmt: skip


def empty_tmpdir(tmp_path: Path) -> Path:
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    return folder


def test_failed_commands_leave_the_temporary_folder_empty(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str]
) -> None:
    home = tmp_path / "home"
    ran = cli("run", MOTION, "--dry-run", "--quiet", "--out", str(tmp_path / "saved"), home=home)
    assert ran.returncode == 0, ran.stderr
    tmpdir = empty_tmpdir(tmp_path)
    for name, args in failing(tmp_path, dry_models).items():
        done = cli.subprocess(*args, home=home, env={"TMPDIR": str(tmpdir)})
        assert done.returncode in (1, 2), (name, done.stderr)
        assert "Traceback" not in done.stderr, name
        assert sorted(p.name for p in tmpdir.iterdir()) == [], name


@pytest.mark.real  # a real local Ray instance
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="Ray is not installed")
def test_a_failed_tournament_on_a_local_ray_leaves_no_session_behind(
    tmp_path: Path, cli: Cli, dry_models: tuple[str, str], request: pytest.FixtureRequest
) -> None:
    motions = tmp_path / "motions.txt"
    motions.write_text(f"{MOTION}\n")
    # Ray's sockets live in the temporary folder, whose path must leave them 107 bytes.
    tmpdir = Path(tempfile.mkdtemp(prefix="moot-test-", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(tmpdir, ignore_errors=True))
    a, b = dry_models
    # Each debate asks Ray for a GPU, and the local instance has none: refused once Ray runs.
    done = cli.subprocess(
        "tournament", "--model", a, "--model", b, "--motions", str(motions), "--dry-run",
        "--executor", "ray", "--gpu-layers", "1", "--out", str(tmp_path / "t"),
        home=tmp_path / "home", env={"TMPDIR": str(tmpdir)}, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "has none" in done.stderr
    assert sorted(p.name for p in tmpdir.iterdir()) == []  # Ray's own session folder too
    assert json.loads((tmp_path / "t" / "tournament.json").read_text())["debates"]
