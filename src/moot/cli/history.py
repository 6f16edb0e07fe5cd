"""`moot history …`: see and delete saved debates and their journals.

Everything shown here comes from files on disk: motions, ids (folder names), turns and
documents are printed as text, never obeyed (no escape sequences, markup or hyperlinks).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from moot import history
from moot.cli.helpview import App
from moot.cli.root import Console, app, err, speak
from moot.errors import MootError, UsageError
from moot.records.transcript import CitationTally
from moot.render import printable, safe, show_document
from moot.words import Words, words

history_app = App(help="See and delete saved debates.", no_args_is_help=True)
app.add_typer(history_app, name="history")

Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
# How every command names a saved debate (history.find reads it).
SAVED = "A saved debate: its id, a unique prefix of one, its folder, or last (the most recent)."
Saved = Annotated[str, typer.Argument(help=SAVED, metavar="DEBATE", show_default=False)]
# check, replay and judge read a transcript: a transcript.json's path is taken as well.
Transcript = Annotated[
    str,
    typer.Argument(
        help=f"{SAVED[:-1]}; or a transcript.json.", metavar="DEBATE", show_default=False
    ),
]


@history_app.command("list")
def list_() -> None:
    """List saved debates, oldest first: those in moot's data directory, and those saved
    elsewhere with --out (their folder is shown)."""
    saved = history.list_debates(elsewhere=True)
    if not saved:
        print(history.NONE_SAVED)
        return
    console = Console()
    table = Table()
    table.add_column("id", no_wrap=True)  # whole, to be typed back
    for column in ("format", "turns", "status", "motion"):
        table.add_column(column)
    elsewhere = any(d.entry is not None for d in saved)
    if elsewhere:
        table.add_column("folder", no_wrap=True)
    for d in saved:
        row = [safe(d.id), safe(d.format), str(d.turns), _status(d), safe(d.motion)]
        table.add_row(*row, *([safe(str(d.path)) if d.entry else ""] if elsewhere else []))
    wide = console.options.update_width(10**6)
    if console.measure(table, options=wide).minimum <= console.width:
        console.print(table)
    else:  # too narrow for the ids and folders whole: each debate in lines of its own
        _listed(console, saved)
    broken = [d for d in saved if d.problem is not None]
    for d in broken:
        err.print(f"[yellow]warning:[/] {safe(d.problem)}", highlight=False)
    if broken:
        err.print("[dim]hint:[/] `moot history rm ID` deletes a debate", highlight=False)


# A status in the words the table shows, where its name alone would not say it.
_SHOWN = {"unjudged": "finished, the judge did not answer"}


def _status(d: history.SavedDebate) -> str:
    """Its status, and that its words are scripted where it was a dry run."""
    status = _SHOWN.get(d.status, d.status)
    return f"{status}, dry run" if d.dry_run else status


def _listed(console: Console, saved: list[history.SavedDebate]) -> None:
    """Each debate as a few lines: its id and its folder each on one line, never wrapped
    (they are typed back and copied), then what it is."""
    for d in saved:
        console.print(f"[bold]{safe(d.id)}[/]", highlight=False, soft_wrap=True)
        what = f"{safe(d.format)} · {d.turns} turns · {_status(d)} · {safe(d.motion)}"
        console.print(Padding(what, (0, 0, 0, 2)), highlight=False)
        if d.entry is not None:
            console.print(f"  [dim]{safe(str(d.path))}[/]", highlight=False, soft_wrap=True)


@history_app.command()
def show(
    ref: Saved,
    full: Annotated[
        bool, typer.Option("--full", help="Every speech too, in order, after the brief.")
    ] = False,
) -> None:
    """Show a saved debate's document, or its journal if it did not finish."""
    d = history.find(ref)
    console = Console()
    if full:
        # Each speech's model by its label: a path would break across lines; `moot history
        # export` writes the full reference.
        show_document(console, history.full_markdown(d, labelled=True))
        return
    document = history.document(d)
    if document is not None:
        show_document(console, document)
        _show_citations(console, d)
        return
    turns = history.turns(d)
    said = words(d.language)  # an unfinished debate's turns, headed in its language
    if d.running:  # not interrupted: it goes on elsewhere, and is not to be resumed
        console.print(said.say("running_now", id=safe(d.id)), highlight=False)
    if not turns:
        console.print(said.say("no_turns_yet", id=safe(d.id)), highlight=False)
    kept = history.passages(d)
    for turn in turns:
        role, step = (safe(said.name(str(turn.get(k, "?")), d.format)) for k in ("role", "step"))
        console.print(f"[bold]{role} · {step}[/]", highlight=False)
        console.print(printable(str(turn.get("text", ""))), highlight=False, markup=False)
        _show_cited(console, said, turn, kept)
    _show_citations(console, d)


def _show_cited(console: Console, said: Words, turn: dict[str, Any], kept: dict[str, str]) -> None:
    """Each citation of an unfinished debate's TURN, with what its check found and the text
    of the passage it names, from the passages its journal KEPT."""
    ledger = turn.get("evidence") or {}
    for c in ledger.get("citations") or ():
        check = c.get("check") if c.get("check") in _CHECKS else "unknown_id"
        cited = c.get("id") or c.get("cited") or ""
        line = said.say(f"cited_{check}", id=printable(str(cited)))
        console.print(Padding(Text(line), (0, 0, 0, 2), expand=False), highlight=False)
        if c.get("id") is None:
            continue
        text = kept.get(c["id"])
        shown = printable(text) if text is not None else said.say("cited_not_kept")
        console.print(Padding(Text(shown), (0, 0, 0, 4), expand=False), highlight=False)


_CHECKS = ("ok", "unknown_id", "quote_not_found")


def _show_citations(console: Console, d: history.SavedDebate) -> None:
    """Each seat's and each model's citations of the debate's documents and what checking
    them found: how many held (supported), how many did not and why."""
    summary = history.citations(d)
    if summary is None:
        return
    said = words(d.language)
    console.print(f"[bold]{said.say('citations_heading')}[/]", highlight=False)
    for role, tally in summary.seats.items():
        seat = _capital(said.name(role, d.format).replace("_", " "))
        console.print(f"  {_tallied(said, seat, tally)}", highlight=False)
    console.print(f"[bold]{said.say('citations_by_model')}[/]", highlight=False)
    labels = history.model_labels(summary.models)
    for model, tally in summary.models.items():
        console.print(f"  {_tallied(said, labels[model], tally)}", highlight=False)


def _tallied(said: Words, who: str, tally: CitationTally) -> str:
    return said.say(
        "citations_of_seat",
        seat=safe(who),
        total=tally.cited,
        held=tally.supported,
        unsupported=tally.unsupported,
        unknown=tally.unknown_id,
        misquoted=tally.quote_not_found,
    )


def _capital(name: str) -> str:
    return name[:1].upper() + name[1:]


@history_app.command()
def export(
    ref: Saved,
    html: Annotated[
        bool,
        typer.Option(
            "--html",
            help="One self-contained HTML page (no outside files, scripts or fonts); "
            "without it, Markdown.",
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Write to this file (not one that exists); without it, stdout."
        ),
    ] = None,
) -> None:
    """Export a saved debate whole: its brief and every speech, with each speaker, model
    and step, in the debate's language."""
    d = history.find(ref)
    text = history.html_page(d) if html else history.full_markdown(d)
    if out is None:
        sys.stdout.write(text)
        return
    history.write_export(out, text)
    print(f"wrote {printable(str(out))}")


@history_app.command()
def rm(
    ref: Annotated[
        str | None, typer.Argument(help=SAVED, metavar="DEBATE", show_default=False)
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Delete every saved debate.")] = False,
    yes: Yes = False,
) -> None:
    """Delete a saved debate (its transcript, document and journal), or all of them. A
    debate saved elsewhere with --out is deleted only while its folder holds nothing but
    what moot wrote there. A debate that is running is refused; --all deletes every other
    and names those it left."""
    if all_:
        if ref is not None:
            raise UsageError(key="cli.history.name_one_debate_give_all")
        count = len(history.list_debates(elsewhere=True))
        if not count:
            print(history.NONE_SAVED)
            return
        _confirm(f"Delete all {count} saved debate(s)?", yes=yes, what="every saved debate")
        cleared = history.remove_all(elsewhere=True)
        print(f"deleted {len(cleared.gone)} debate(s)")
        for _, why in cleared.failed:  # one line each; the others were deleted all the same
            err.print(f"[red]failed:[/] {safe(why.message)}", highlight=False)
        if cleared.failed:
            raise MootError(
                key="cli.history.saved_debate_s_could_not", n_failed=len(cleared.failed)
            ).hinted(cleared.failed[0][1])
        if cleared.running:  # left as they are, each named: the others are deleted
            ids = ", ".join(printable(d.id) for d in cleared.running)
            raise UsageError(key="cli.history.running_left", n=len(cleared.running), ids=ids)
        return
    if not ref:
        raise UsageError(key="cli.history.name_debate_delete")
    d = history.deletable(ref)
    speak(d.language)  # a refusal (a running debate) is said in the debate's language
    _confirm(f"Delete {printable(d.id)}?", yes=yes, what=f"debate {printable(d.id)}")
    history.remove(d)
    print(f"deleted {printable(d.id)}")


def _can_ask() -> bool:
    return sys.stdin.isatty()


def _confirm(question: str, *, yes: bool, what: str) -> None:
    """Go on if the user says so (or gave --yes); refuse when there is no one to ask."""
    if yes:
        return
    refusal = UsageError(key="cli.history.not_deleting_without_confirmation", what=what)
    if not _can_ask():
        raise refusal
    import click

    try:
        answer = typer.confirm(question)
    except (typer.Abort, click.exceptions.Abort) as exc:
        if isinstance(exc.__context__, KeyboardInterrupt):
            raise KeyboardInterrupt from None
        raise refusal from None  # the end of input: no answer
    if not answer:
        raise typer.Abort()
