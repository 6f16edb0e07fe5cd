"""Every command's --help reads at 80 columns: a description column at least 30 wide, no
word broken across lines, no type's name standing in for a value, and `--role` naming each
format's seats."""

from __future__ import annotations

import inspect
import re
from typing import Any

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


# -- the same conventions in every command's help ------------------------------------------


def command_of(words: list[str]) -> Any:
    _register()
    command: Any = typer.main.get_command(app)
    for word in words:
        command = command.commands[word]
    return command


def shown_params(words: list[str]) -> list[Any]:
    return [p for p in command_of(words).params if p.name != "help" and not p.hidden]


@pytest.mark.parametrize("words", commands(), ids=lambda w: " ".join(w) or "moot")
def test_every_argument_and_option_is_described_in_a_sentence(words: list[str]) -> None:
    command = command_of(words)
    first = inspect.cleandoc(command.help or "").split("\n\n")[0].strip()
    assert first.endswith("."), (words, first)
    for param in shown_params(words):
        said = " ".join((param.help or "").split())
        assert said, (words, param.name)
        assert said.endswith("."), (words, param.name, said)


@pytest.mark.parametrize("words", commands(), ids=lambda w: " ".join(w) or "moot")
def test_the_usage_line_names_each_argument_as_its_panel_does(cli: Cli, words: list[str]) -> None:
    shown = help_of(cli, words, 80)
    usage = next(line for line in shown.splitlines() if "Usage:" in line).split()
    assert usage[: len(words) + 3] == ["Usage:", "moot", *words, "[OPTIONS]"], usage
    in_usage = [w for w in usage[len(words) + 3 :] if w not in ("COMMAND", "[ARGS]...")]
    panel = shown.split("Arguments", 1)[1].split("╰", 1)[0] if "─ Arguments" in shown else ""
    listed = [ln.strip("│ ").split()[0] for ln in panel.splitlines() if ln.startswith("│ ") and
              ln[2] != " "]  # fmt: skip
    assert [w.strip("[]") for w in in_usage] == listed, (usage, listed)
    for param, word in zip([p for p in shown_params(words) if p.param_type_name == "argument"],
                           in_usage, strict=True):  # fmt: skip
        assert word.startswith("[") != param.required, (word, param.name)
        assert word == word.upper() and "{" not in word


# Options that two commands share by name but not by meaning, each with why.
DIFFER = {
    "--out": "each command writes its own files",
    "--model": "run seats it, tournament ranks it, calibrate has it debate the controls",
    "--judge": "judge re-judges, tournament judges, calibrate measures",
    "--quiet": "each command has its own output to cut",
    "--parallel": "debates of a tournament, of the page, of an MCP client",
    "--yes": "run accepts proposals, rm deletes",
    "--n-ctx": "models info sizes a cache for one model",
    "--pace": "serve's default differs from mcp's",
    "--port": "mcp serves on a port only with --http",
    "--controls": "tournament may have none; calibrate has its own default",
    "--format": "run takes every format; tournament and calibrate the two-sided ones",
    "--rounds": "as --format: the formats each command takes",
    "--evidence": "as --format: the formats each command takes",
    "--keep-sources": "as --format: the formats each command takes",
    "--motions": "calibrate needs two",
    "ref": "a saved debate, or a model",
}


def test_an_option_two_commands_share_is_described_alike() -> None:
    said: dict[str, dict[str, str]] = {}
    for words in commands():
        for param in shown_params(words):
            name = max(param.opts, key=len) if param.param_type_name == "option" else param.name
            said.setdefault(name, {})[" ".join(words)] = param.help or ""
    shared = {name: helps for name, helps in said.items() if len(helps) > 1}
    assert {"--json", "--seed", "--dry-run", "--lang", "--max-tokens"} <= set(shared)
    for name, helps in shared.items():
        if name not in DIFFER:
            assert len(set(helps.values())) == 1, (name, helps)


HYPHENED = re.compile(r"\b\d+-\d+\b|\b\d+ to \d+\b")  # a range as 1-16 or 0 to 9, not 1–16


@pytest.mark.parametrize("words", commands(), ids=lambda w: " ".join(w) or "moot")
def test_a_range_is_written_one_way_and_said_once(words: list[str]) -> None:
    for param in shown_params(words):
        said = " ".join((param.help or "").split())
        assert not HYPHENED.search(said), (words, said)
        low, high = getattr(param, "min", None), getattr(param, "max", None)
        if low is not None and high is not None:  # the panel shows it: [1–16]
            assert f"{low}–{high}" not in said, (words, said)


def option_rows(shown: str) -> dict[str, str]:
    """Each option's row of a --help, by its first name: its help with its lines joined."""
    rows: dict[str, str] = {}
    name = ""
    for line in shown.splitlines():
        cells = re.split(r"\s{2,}", line.strip("│ "), maxsplit=1)
        if line.startswith("│ -"):
            name = cells[0].split()[0].rstrip(",")
            rows[name] = cells[1] if len(cells) > 1 else ""
        elif line.startswith("│  ") and name:
            rows[name] += " " + line.strip("│ ")
    return rows


@pytest.mark.parametrize("words", [["run"], ["tournament"], ["calibrate"]], ids=" ".join)
def test_every_default_is_on_screen(cli: Cli, words: list[str]) -> None:
    """Every option's default, typer's or a format's, is in its row: "[default: 1]", or as
    a format's help states it, "(3–8; 5)", "(default: decision 1, challenge 2)"."""
    rows = option_rows(help_of(cli, words, 200))
    checked = 0
    for param in shown_params(words):
        if param.param_type_name != "option" or param.is_flag:
            continue
        row = rows[max(param.opts, key=len)]
        default = param.default
        if default not in (None, (), []):
            shown = (
                str(int(default))
                if isinstance(default, float) and default.is_integer()
                else default
            )
            assert re.search(
                rf"default: {re.escape(str(shown))}\b|; {re.escape(str(shown))}\)", row
            ), (param.opts, row)
            checked += 1
    from moot.formats import parameters

    for shared in parameters().values():
        option = shared.first.option
        if option not in rows:
            continue
        for fmt, p in shared.declared:
            if p.default not in (None, (), []) and fmt in rows[option]:
                d = re.escape(str(p.default))
                forms = (
                    rf"default: ({fmt} )?{d}\b|\(default: [^)]*{fmt} {d}\b|; {d}\)"
                    rf"|{d} \(.*the default"
                )
                assert re.search(forms, rows[option]), (option, fmt, rows[option])
                checked += 1
    assert checked >= 5
