"""The `moot` command itself: the Typer app every subcommand registers on, and the console
errors go to. A leaf of the cli package, so that the commands never import the package
that imports them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import rich.console
import typer

from moot._version import __version__
from moot.cli.helpview import App

EXIT_CODES = (
    "Exit status: 0 done; 1 the debate or a check failed (a model error, a replay that "
    "differs, a model that fails verification); 2 the input was wrong (usage, a value out of "
    "range, a file that is not what it should be); 130 interrupted."
)


app = App(
    name="moot",
    help="Structured debates between local language models, fully offline.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    epilog=EXIT_CODES,
)


class Console(rich.console.Console):
    """rich's console, reading no `:name:` in what it prints as an emoji code: a model
    reference (`ollama:a:b`), a path or a speech is shown as written."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("emoji", False)
        super().__init__(**kwargs)


err = Console(stderr=True, soft_wrap=True)


class _Speaking:
    """The language errors are shown in: a debate's, once the command knows it (`speak`)."""

    language = "en"


speaking = _Speaking()


def speak(language: str) -> None:
    """From here on the command's errors are shown in LANGUAGE (its debate's)."""
    speaking.language = language


def debate_language(lang: str, motion: str) -> str:
    """The language of a debate on MOTION: --lang's, or the motion's where --lang names none
    (an unknown --lang is refused later, in the motion's language)."""
    from moot.prompts import LANGUAGES, resolve_language

    return resolve_language(lang if lang in LANGUAGES else "auto", motion)


def speak_as_saved(path: Path) -> tuple[str, str]:
    """Speak the language of the debate saved at PATH (a transcript.json); its language and
    format. A file that does not read as one, or names a language moot has no pack for, is
    the command's to refuse, in English."""
    from moot.errors import MootError
    from moot.prompts import LANGUAGES
    from moot.records.journal import load

    try:
        saved = load(path)[0] if path.is_file() else None
    except (MootError, OSError):
        saved = None
    known = saved is not None and saved.language in LANGUAGES
    language, fmt = (saved.language, saved.format) if saved and known else ("en", "")
    speak(language)
    return language, fmt


def _version(value: bool) -> None:
    if value:
        print(f"moot {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Structured debates between local language models, fully offline."""
