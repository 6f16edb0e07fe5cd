"""Every command's --help, readable at 80 columns: each option on the left with the one word
its value is (`--role ROLE=REF`, `--seed N`, never a type's name such as `<bool>`), its help
on the right in a column at least half the width, whole words only."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, get_args, get_origin

import typer
import typer.core
from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

NAMES_WIDTH = 26  # the widest the options' column grows; a longer name has a row of its own


class Command(typer.core.TyperCommand):
    """A command whose --help is `render`'s."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        render(self, ctx)


class Group_(typer.core.TyperGroup):  # noqa: N801  (rich's Group is the other)
    """A group of commands whose --help is `render`'s."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        render(self, ctx)


class App(typer.Typer):
    """typer's app whose commands' and groups' help is `render`'s."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cls", Group_)
        kwargs.setdefault("rich_markup_mode", None)  # help is plain text, never markup
        super().__init__(**kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("cls", Command)
        return super().command(*args, **kwargs)


def metavar(param: Any) -> str:
    """The word an option's value is shown as: its own metavar, else N for a number, PATH for
    a path, else the last word of its name (`--format FORMAT`); "" for a flag."""
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    own = getattr(param, "metavar", None)
    if own:
        return str(own)
    kind = param.type_descriptor.annotation
    if get_origin(kind) in (list, tuple):
        kind = get_args(kind)[0]
    if kind in (int, float):
        return "N"
    if kind is Path:
        return "PATH"
    long = [o for o in param.opts if o.startswith("--")] or [str(param.name)]
    return long[0].lstrip("-").replace("_", "-").split("-")[-1].upper()


def names(param: Any) -> str:
    """An option's names and value as typed: `-y, --yes`, `--quiet / --no-quiet`,
    `--seed N`; an argument's name in capitals."""
    if param.param_type_name == "argument":
        return argument_name(param)
    opts = sorted(param.opts, key=lambda o: o.startswith("--"))
    shown = ", ".join(opts)
    if param.secondary_opts:
        shown += " / " + ", ".join(param.secondary_opts)
    value = metavar(param)
    return f"{shown} {value}" if value else shown


def argument_name(param: Any) -> str:
    """An argument's name, alike in the usage line and the Arguments panel: its metavar
    (`DEBATE`), else its name in capitals."""
    return str(param.metavar or param.name).strip("[]").upper()


def usage(command: Any, ctx: Any) -> str:
    """The usage line: `Usage: moot history rm [OPTIONS] [DEBATE]`, each argument named as
    its panel names it, in brackets where it may be left out."""
    pieces = [ctx.command_path, "[OPTIONS]"]
    for param in command.get_params(ctx):
        if param.param_type_name == "argument" and not getattr(param, "hidden", False):
            name = argument_name(param) + ("..." if param.nargs != 1 else "")
            pieces.append(name if param.required else f"[{name}]")
    if isinstance(command, typer.core.TyperGroup):
        pieces.append("COMMAND [ARGS]...")
    return "Usage: " + " ".join(pieces)


def described(param: Any, ctx: Any) -> str:
    """An option's help, then its range and its default where they say something."""
    text = _plain(param.help or "")
    extra = []
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is not None or high is not None:
        extra.append(
            f"{_figure(low) if low is not None else ''}–{_figure(high) if high is not None else ''}"
        )
    if not getattr(param, "is_flag", False) and param.show_default is not False:
        default = param.get_default(ctx, call=False)
        if default not in (None, (), [], "") and not callable(default):
            extra.append(f"default: {_figure(default)}")
    if param.required:
        extra.append("required")
    return f"{text} [{'; '.join(extra)}]" if extra else text


def _plain(text: str) -> str:
    """Help written for rich's markup as it reads: `\\[` is a bracket."""
    return " ".join(text.replace("\\[", "[").split())


def _figure(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _table(rows: list[tuple[str, str]]) -> Table:
    widest = max((len(left) for left, _ in rows), default=0)
    table = Table.grid(padding=(0, 2), expand=True)
    table.add_column(no_wrap=True, width=min(widest, NAMES_WIDTH), style="bold cyan")
    table.add_column(ratio=1, overflow="fold")
    for left, right in rows:
        if len(left) > NAMES_WIDTH:  # its own row, its help below it
            table.add_row(Text(left), "")
            table.add_row("", Text(right))
        else:
            table.add_row(Text(left), Text(right))
    return table


def _panel(title: str, rows: list[tuple[str, str]]) -> Panel:
    return Panel(_table(rows), title=title, title_align="left", border_style="dim")


def render(command: Any, ctx: Any, console: Console | None = None) -> None:
    """COMMAND's help: usage, its text, its arguments, options and commands, its epilog."""
    console = console or Console(emoji=False, highlight=False)
    parts: list[Any] = [Padding(Text(usage(command, ctx), style="bold"), (1, 1, 0, 1))]
    text = inspect.cleandoc(command.help or "").partition("\f")[0]
    for paragraph in (p for p in text.split("\n\n") if p.strip()):
        parts.append(Padding(Text(_plain(paragraph)), (1, 1, 0, 1)))
    params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
    arguments = [(names(p), described(p, ctx)) for p in params if p.param_type_name == "argument"]
    options = [(names(p), described(p, ctx)) for p in params if p.param_type_name == "option"]
    parts.append(Text(""))
    if arguments:
        parts.append(_panel("Arguments", arguments))
    if options:
        parts.append(_panel("Options", options))
    if isinstance(command, typer.core.TyperGroup):
        commands = [command.get_command(ctx, name) for name in command.list_commands(ctx)]
        rows = [
            (c.name or "", _plain(c.short_help or c.help or ""))
            for c in commands
            if c is not None and not c.hidden
        ]
        parts.append(_panel("Commands", [(n, _first_sentence(h)) for n, h in rows]))
    if command.epilog:
        parts.append(Padding(Text(_plain(command.epilog), style="dim"), (1, 1, 0, 1)))
    console.print(Group(*parts))


def _first_sentence(text: str) -> str:
    """A command's help as its group lists it: up to the end of its first sentence."""
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]
