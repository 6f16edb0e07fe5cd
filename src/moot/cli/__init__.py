"""The command-line interface: parses, wires and prints; the one error boundary."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from moot.cli.root import EXIT_CODES as EXIT_CODES
from moot.cli.root import app, debate_language, err, speak, speak_as_saved, speaking
from moot.errors import MootError


def _register() -> None:
    from moot.cli import calibrate, check, history, judge, models, run, schema, serve, tournament  # noqa: F401  (commands register themselves on import)
    from moot.cli import config as _config  # noqa: F401  (moot config: the defaults file)
    from moot.cli import mcp as _mcp  # noqa: F401  (moot mcp: the MCP server)


def main() -> None:
    """Entry point: run the app; known errors become one line plus a hint."""
    _register()
    speak("en")  # until a command knows its debate's language
    argv = sys.argv[1:]
    debug = "--debug" in argv
    if debug:
        argv.remove("--debug")
    try:
        check_arguments(argv)
        # Without standalone mode click returns typer.Exit's code instead of exiting.
        code = app(args=argv, prog_name="moot", standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except MootError as exc:
        if debug:
            raise
        _error(exc)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print(f"[yellow]{_say('interrupted')}[/]")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print(f"[yellow]{_say('aborted')}[/]")
        sys.exit(130)
    except typer.TyperException as exc:  # click's usage errors: a bad option, a bad value
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.exit(0)  # the help is printed already: that is what a bare command asks for
        if debug:
            raise
        ctx = getattr(exc, "ctx", None)
        command = ctx.command_path if ctx is not None else "moot"
        speak(_language_of(argv))  # a Chinese motion's command line is told in Chinese
        message = exc.format_message()
        _error(
            MootError(
                key="cli.click", message_value=message[:1].lower() + message[1:], command=command
            )
        )
        sys.exit(exc.exit_code)
    except Exception as exc:
        if debug:
            raise
        _error(MootError(key="cli.unexpected", kind=type(exc).__name__, why=str(exc)))
        sys.exit(1)


def _say(key: str) -> str:
    from moot.words import words

    return words(speaking.language).say(key)


def _error(error: MootError) -> None:
    """ERROR's message and hint in the language of the command's debate."""
    from moot.render import safe
    from moot.words import words

    said = words(speaking.language)
    shown = said.error(error)
    err.print(f"[bold red]{said.say('error')}[/] {safe(shown['message'])}", highlight=False)
    if shown["hint"]:
        err.print(f"[dim]{said.say('hint')}[/] {safe(shown['hint'])}", highlight=False)


def check_arguments(argv: list[str]) -> None:
    """Refuse what click would take silently: arguments that are not valid UTF-8, and an
    option given twice (the last would win)."""
    from moot.errors import UsageError

    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(
                key="cli.argument_not_valid_utf_8", value=arg.encode("utf-8", "surrogateescape")
            ) from None
    command, rest = _command(argv)
    single = _single_options(command)
    seen: dict[str, str] = {}
    for token in rest:
        if token == "--":
            break
        name = token.partition("=")[0] if token.startswith("--") else token
        param = single.get(name)
        if param is None:
            continue
        if param in seen and seen[param] == name:
            raise UsageError(key="cli.option_given_twice", option=name)
        if param in seen:
            raise UsageError(key="cli.options_both_given", first=seen[param], second=name)
        seen[param] = name


# The commands whose first argument says the language of what they are asked about.
_ON_A_MOTION = ("run",)
_ON_A_SAVED_DEBATE = ("check", "judge", "replay")


def _language_of(argv: list[str]) -> str:
    """The language of the debate a command line is about, read before click could parse
    it: `moot run`'s --lang, else its motion's script; a saved debate's, for the commands on
    one; English otherwise."""
    command, rest = _command(argv)
    name = getattr(command, "name", "")
    if name not in (*_ON_A_MOTION, *_ON_A_SAVED_DEBATE):
        return "en"
    takes_value = {
        opt
        for p in getattr(command, "params", [])
        if getattr(p, "param_type_name", "") == "option" and not getattr(p, "is_flag", False)
        for opt in (*p.opts, *p.secondary_opts)
    }
    first, lang, tokens = "", "auto", iter(rest)
    for token in tokens:
        option, eq, value = token.partition("=")
        if token == "--":
            first = first or next(tokens, "")
            break
        if not token.startswith("-") or token == "-":
            first = first or token
        elif option in takes_value:
            value = value if eq else next(tokens, "")
            lang = value if option == "--lang" else lang
    if name in _ON_A_MOTION:
        return debate_language(lang, first)
    return speak_as_saved(Path(first))[0] if first else "en"


def _command(argv: list[str]) -> tuple[object, list[str]]:
    """The click command ARGV runs, and the arguments after its name."""
    command: object = typer.main.get_command(app)
    rest = list(argv)
    while rest and hasattr(command, "commands") and rest[0] in command.commands:
        command = command.commands[rest.pop(0)]
    return command, rest


def _single_options(command: object) -> dict[str, str]:
    """Each name of an option that takes one value (or is one flag) -> the option's name."""
    names: dict[str, str] = {}
    for param in getattr(command, "params", []):
        if getattr(param, "param_type_name", "") != "option" or getattr(param, "multiple", True):
            continue
        for opt in (*param.opts, *param.secondary_opts):
            names[opt] = param.name
    return names
