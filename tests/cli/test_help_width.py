"""Every command's --help reads at 80 columns: a description column at least 30 wide, no
word broken across lines, no type's name standing in for a value, and `--role` naming each
format's seats."""

from __future__ import annotations

import re

import pytest
import typer

from conftest import Cli
from moot.cli import _register, app
from moot.formats import NAMES, get_format
from moot.formats.base import RunOptions

NOISE = re.compile(
    r"<(bool|str|int|float|path|list\[[^\]]*\]|\w+ range)>|\b(TEXT|INTEGER|FLOAT|BOOLEAN)\b"
)
NARROWEST = 30  # columns: the least a description may wrap in


def commands() -> list[list[str]]:
    """Every command and group of `moot`, as the words that name it."""
    _register()
    found: list[list[str]] = [[]]
    stack: list[tuple[list[str], object]] = [([], typer.main.get_command(app))]
    while stack:
        path, command = stack.pop()
        for name, sub in getattr(command, "commands", {}).items():
            found.append([*path, name])
            stack.append(([*path, name], sub))
    return sorted(found)


def help_of(cli: Cli, words: list[str], columns: int) -> str:
    done = cli(*words, "--help", env={"COLUMNS": str(columns)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def left_cells(text: str) -> set[str]:
    """What the options panel's rows show on the left: an option's names and value."""
    return {
        re.split(r"\s{2,}", line.strip("│ "), maxsplit=1)[0]
        for line in text.splitlines()
        if line.startswith("│ -")
    }


def words_of(text: str) -> set[str]:
    return set(re.findall(r"[\w'-]+", text))


@pytest.mark.parametrize("words", commands(), ids=lambda w: " ".join(w) or "moot")
def test_every_commands_help_reads_at_80_columns(cli: Cli, words: list[str]) -> None:
    shown = help_of(cli, words, 80)
    assert all(len(line) <= 80 for line in shown.splitlines()), shown
    assert not NOISE.search(shown), NOISE.search(shown)
    for line in shown.splitlines():
        gap = re.search(r"\S  +(?=\S)", line)  # an option, then its description
        if line.startswith("│ -") and gap is not None:
            assert 80 - 2 - gap.end() >= NARROWEST, line
    # Every word of every option's help is on the screen whole: none is broken by wrapping.
    _register()
    command = typer.main.get_command(app)
    for word in words:
        command = command.commands[word]  # type: ignore[attr-defined]
    on_screen = words_of(shown)
    for param in command.params:  # type: ignore[attr-defined]
        for word in words_of(param.help or ""):
            assert word in on_screen, (word, param.name)


def test_run_help_wide_gives_each_option_one_line(cli: Cli) -> None:
    shown = help_of(cli, ["run"], 200)
    assert all(len(line) <= 200 for line in shown.splitlines())
    quiet = next(line for line in shown.splitlines() if "--quiet / --no-quiet" in line)
    assert "Print only the result and where it is saved." in quiet
    assert not NOISE.search(shown)


def test_options_show_what_their_value_is(cli: Cli) -> None:
    shown = help_of(cli, ["run"], 80)
    cells = left_cells(shown)
    assert {"--role SEAT=REF", "--seed N", "--out PATH", "-y, --yes", "--hide-reasoning"} <= cells
    assert {"--dry-run / --no-dry-run", "--format FORMAT", "--model REF"} <= cells
    time_limit = next(line for line in shown.splitlines() if "--time-limit" in line)
    assert time_limit.split("│")[1].split()[:2] == ["--time-limit", "N"]
    assert "[1–86400]" in shown


def test_role_help_names_every_formats_seats(cli: Cli) -> None:
    shown = " ".join(help_of(cli, ["run"], 80).replace("│", " ").split())
    role = shown.split("--role SEAT=REF", 1)[1].split("--temperature", 1)[0]
    for name in NAMES:
        fmt = get_format(name)
        seats = fmt.cast(fmt.params(RunOptions(models=("a", "b")))).roles
        listed = role.split(f"{name}:", 1)[1].split(";", 1)[0]
        assert all(seat in listed for seat in seats), (name, listed)
    assert "human" in role


def test_help_at_a_real_80_column_terminal_width(cli: Cli) -> None:
    """The command as typed, in its own process, with the width the terminal says."""
    done = cli.subprocess("run", "--help", env={"COLUMNS": "80"})
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    role = next(i for i, line in enumerate(lines) if "--role SEAT=REF" in line)
    assert "Bind one seat to a model" in lines[role]


@pytest.mark.parametrize("command", ["tournament", "calibrate"])
def test_a_default_the_help_states_is_not_said_twice(cli: Cli, command: str) -> None:
    """A help that gives its range and default, "(1 or 2; 2)", gets no "[default: 2]" too."""
    shown = " ".join(help_of(cli, [command], 200).replace("│", " ").split())
    for option, metavar in (("--orders", "1|2"), ("--ballot", "METHOD"), ("--margin", "M")):
        said = shown.split(f" {option} {metavar} ", 1)[1].split(" --", 1)[0]
        assert re.search(r"; [\w.]+\)", said) and "[default:" not in said, said
