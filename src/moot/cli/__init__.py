"""The command-line interface: parses, wires and prints; the one error boundary."""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from moot import __version__
from moot.errors import MootError

app = typer.Typer(
    name="moot",
    help="Structured debates between local language models, fully offline.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

err = Console(stderr=True, soft_wrap=True)


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


def _register() -> None:
    from moot.cli import history, models, run, tournament  # noqa: F401  (commands register themselves on import)


def main() -> None:
    """Entry point: run the app; known errors become one line plus a hint."""
    _register()
    debug = "--debug" in sys.argv
    if debug:
        sys.argv.remove("--debug")
    try:
        # Without standalone mode click returns typer.Exit's code instead of exiting.
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except MootError as exc:
        if debug:
            raise
        err.print(f"[bold red]error:[/] {exc.message}", highlight=False)
        if exc.hint:
            err.print(f"[dim]hint:[/] {exc.hint}", highlight=False)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]")
        sys.exit(130)
    except Exception as exc:  # click's own usage errors and aborts
        import click

        if isinstance(exc, click.exceptions.Exit):
            sys.exit(exc.exit_code)
        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            err.print("[yellow]aborted[/]")
            sys.exit(130)
        if debug:
            raise
        err.print(f"[bold red]error:[/] unexpected {type(exc).__name__}: {exc}", highlight=False)
        err.print(
            "[dim]hint:[/] rerun with --debug for the traceback, and report it", highlight=False
        )
        sys.exit(1)
