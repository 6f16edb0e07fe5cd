"""What a command prints at 80 columns can be copied: a saved path, a debate's id or a
model's file is never cut across lines by wrapping; at 200 columns a table stays a table."""

from __future__ import annotations

from pathlib import Path

from conftest import Cli

MOTION = "cities should ban cars, because a long motion makes a long folder name"
RUN = ["--dry-run", "--max-rounds", "3", "--quiet"]


def deep(tmp_path: Path) -> Path:
    """A folder whose path is longer than 80 columns."""
    return tmp_path / "a-folder-with-a-rather-long-name" / "and-another-below-it-to-pass-80" / "d"


def whole_on_a_line(shown: str, text: str) -> bool:
    return any(text in line for line in shown.splitlines())


def test_run_prints_each_saved_path_whole_at_80_columns(cli: Cli, tmp_path: Path) -> None:
    out = deep(tmp_path)
    done = cli("run", MOTION, *RUN, "--out", str(out), home=tmp_path, env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    for name in ("transcript.json", "debate.md"):
        assert len(str(out / name)) > 80
        assert whole_on_a_line(done.stdout, f"saved: {out / name}"), done.stdout


def test_history_list_keeps_ids_and_folders_whole(cli: Cli, tmp_path: Path) -> None:
    home = tmp_path / "home"
    out = deep(tmp_path)
    assert cli("run", MOTION, *RUN, home=home).returncode == 0
    assert cli("run", "tea beats coffee", *RUN, "--out", str(out), home=home).returncode == 0
    ids = [p.name for p in (home / "debates").iterdir()]
    narrow = cli("history", "list", home=home, env={"COLUMNS": "80"})
    assert narrow.returncode == 0, narrow.stderr
    assert all(len(line) <= 80 for line in narrow.stdout.splitlines() if str(out) not in line)
    assert whole_on_a_line(narrow.stdout, str(out))
    for debate in ids:
        assert whole_on_a_line(narrow.stdout, debate), narrow.stdout
    assert whole_on_a_line(narrow.stdout, "20")
    assert "tea beats coffee" in " ".join(narrow.stdout.split())  # a motion wraps at words
    alone = tmp_path / "alone"  # no folder elsewhere: the table fits 200 columns
    assert cli("run", MOTION, *RUN, home=alone).returncode == 0
    (only,) = [p.name for p in (alone / "debates").iterdir()]
    wide = cli("history", "list", home=alone, env={"COLUMNS": "200"})
    row = next(line for line in wide.stdout.splitlines() if only in line)
    assert row.startswith("│") and "finished" in row  # one row of a table
    # A dry run's words are scripted: the list says so, in the table and in its lines.
    assert "finished, dry run" in row and "dry run ·" in " ".join(narrow.stdout.split())


def test_models_info_keeps_the_files_path_whole(cli: Cli, tmp_path: Path) -> None:
    from gguf_samples import write_gguf

    path = deep(tmp_path) / "a-model-file-with-a-long-name.gguf"
    model = write_gguf(path, chat_template="{{ messages }}")
    done = cli("models", "info", str(model), home=tmp_path, env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    path = next(line for line in done.stdout.splitlines() if line.startswith("path"))
    assert path.split(None, 1)[1] == str(model)
    files = next(line for line in done.stdout.splitlines() if line.startswith("files"))
    assert files.split(None, 1)[1] == str(model)
