"""`--out` names a folder of its own in every command that takes it, and `out` in every
function of the Python API that takes it: an empty value, or the working folder, is refused
before anything is written (the output would spill among the working folder's files)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main

import moot
from conftest import Cli
from moot.errors import UsageError
from test_usage_errors import refused

MOTIONS = ["cities should ban cars", "schools should abolish homework"]
NO_FOLDER = ["", ".", "./", " "]


def _motions(folder: Path) -> str:
    path = folder / "motions.txt"
    path.write_text("\n".join(MOTIONS) + "\n", encoding="utf-8")
    return str(path)


# Each command that takes --out, on a dry run that would finish (and write) were --out a folder.
COMMANDS: dict[str, Callable[[Path], list[str]]] = {
    "run": lambda _: ["run", MOTIONS[0], "--dry-run", "--max-rounds", "3"],
    "tournament": lambda tmp: [
        *"tournament --dry-run --max-rounds 3 --bootstrap 10 --model a --model b".split(),
        *["--motions", _motions(tmp)],
    ],
    "calibrate": lambda tmp: [
        *"calibrate --dry-run --max-rounds 3 --judge j --controls 1 --quiet".split(),
        *["--motions", _motions(tmp)],
    ],
}


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The commands under COMMAND (a group's, or itself) that take an option named out."""
    if hasattr(command, "commands"):  # a group
        for name, sub in command.commands.items():
            yield from _commands(sub, (*path, name))
    elif any(param.name == "out" for param in command.params):
        yield path


def test_every_command_that_takes_out_is_checked_here() -> None:
    from moot.cli import _register
    from moot.cli.root import app

    _register()
    taking_out = {" ".join(path) for path in _commands(typer.main.get_command(app))}
    # `history export --out` names a file to write, never a folder (test_transcript_export).
    assert taking_out == set(COMMANDS) | {"history export"}


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder, the command's."""
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.usefixtures("any_model_name")
@pytest.mark.parametrize("out", NO_FOLDER)
@pytest.mark.parametrize("command", list(COMMANDS))
def test_out_that_names_no_folder_of_its_own_is_refused(
    tmp_path: Path, work: Path, cli: Cli, command: str, out: str
) -> None:
    home = tmp_path / "home"
    proc = cli(*COMMANDS[command](tmp_path), "--out", out, home=home)
    refused(proc, "--out names no folder of its own")
    assert "--out ./debate" in proc.stderr  # the hint shows what to give
    assert list(work.iterdir()) == []
    assert not home.exists() or list(home.rglob("*")) == []


def _debate(out: str) -> Any:
    return moot.debate(MOTIONS[0], run={"dry_run": True}, max_rounds=3, out=out)


def _tournament(out: str) -> Any:
    return moot.tournament(["a", "b"], MOTIONS[:1], run={"dry_run": True}, max_rounds=3, out=out)


def _calibrate(out: str) -> Any:
    return moot.calibrate(["j"], MOTIONS, run={"dry_run": True}, max_rounds=3, out=out)


@pytest.mark.usefixtures("any_model_name")
@pytest.mark.parametrize("out", NO_FOLDER)
@pytest.mark.parametrize("call", [_debate, _tournament, _calibrate])
def test_the_library_refuses_the_same_naming_the_field(
    moot_home: Path, work: Path, call: Callable[[str], Any], out: str
) -> None:
    with pytest.raises(UsageError) as caught:
        call(out)
    assert caught.value.field == "out"
    assert caught.value.message.startswith("out names no folder of its own")
    assert "out='./debate'" in caught.value.hint
    assert list(work.iterdir()) == []
    assert not moot_home.exists()


def test_a_folder_named_under_the_working_folder_is_taken(
    tmp_path: Path, work: Path, cli: Cli
) -> None:
    proc = cli(*COMMANDS["calibrate"](tmp_path), "--out", "./cal", home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    assert [p.name for p in work.iterdir()] == ["cal"]
    assert (work / "cal" / "calibration.json").is_file()
