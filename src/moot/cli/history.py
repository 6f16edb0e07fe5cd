"""`moot history …`: see and delete saved debates and their journals."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from moot import history
from moot.cli import app
from moot.errors import UsageError

history_app = typer.Typer(help="See and delete saved debates.", no_args_is_help=True)
app.add_typer(history_app, name="history")


@history_app.command("list")
def list_() -> None:
    """List saved debates, oldest first."""
    table = Table("id", "format", "turns", "status", "motion")
    for d in history.list_debates():
        status = "finished" if d.finished else "interrupted"
        table.add_row(d.id, d.format, str(d.turns), status, d.motion)
    Console().print(table)


@history_app.command()
def show(ref: Annotated[str, typer.Argument(help="A debate id (or prefix) or folder.")]) -> None:
    """Show a saved debate's document, or its journal if it did not finish."""
    d = history.find(ref)
    console = Console()
    docs = sorted(d.path.glob("*.md"))
    if docs:
        console.print(Markdown(docs[0].read_text(encoding="utf-8")))
        return
    from moot.transcript import read_journal

    for record in read_journal(d.path / "journal.jsonl"):
        if record.get("type") == "turn":
            console.print(f"[bold]{record['role']} · {record['step']}[/]", highlight=False)
            console.print(record["text"], highlight=False, markup=False)


@history_app.command()
def rm(
    ref: Annotated[str | None, typer.Argument(help="A debate id (or prefix).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Delete every saved debate.")] = False,
) -> None:
    """Delete a saved debate (its transcript, document and journal), or all of them."""
    if all_:
        gone = history.remove_all()
        print(f"deleted {len(gone)} debate(s)")
        return
    if not ref:
        raise UsageError("name a debate to delete", hint="moot history rm ID, or --all")
    d = history.remove(ref)
    print(f"deleted {d.id}")
