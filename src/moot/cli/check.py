"""`moot check`: does a saved debate keep the rulebook's rules? One line per turn that has a
limit or a problem, and a summary."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated

import typer
from rich.table import Table

from moot import history
from moot.cli.history import Transcript
from moot.cli.options import AsJson
from moot.cli.root import Console, app
from moot.debates.runner import saved_sides
from moot.engine.audit import DebateCheck, check_debate
from moot.formats.base import SAVED_HINT
from moot.records.journal import load
from moot.render import safe
from moot.words import words

_STYLE = {"ok": "green", "cut": "yellow", "over": "bold red", "theirs": "yellow", "": ""}


@app.command()
def check(
    ref: Transcript,
    as_json: AsJson = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 on flagged turns too, not only on hidden ones.")
    ] = False,
) -> None:
    """Check a saved debate against its rulebook's limits and voice rules.

    Each limited turn's length is held against its limit (within it, cut to fit by the
    engine, or over), and every turn against what the rules forbid: a chatbot's preamble,
    echoed labels, placeholders, narration, the other side's words, another language, a
    structured reply's empty reasons. Exits 1 when a limit is broken or a problem is not
    declared by the debate's own flags (--strict: any problem)."""
    transcript = history.transcript(ref)
    saved, data = load(transcript)
    # Which seats speak for a side is the format's to say, for the params the debate ran with.
    sides = saved_sides(data, source=str(transcript), hint=SAVED_HINT)
    report = check_debate(saved, sides)
    summary = report.summary()
    if as_json:
        turns = [asdict(t) for t in report.turns]
        print(json.dumps({"turns": turns, "summary": summary}, ensure_ascii=False))
    else:
        _print(report, saved.language, saved.format, summary)
    if report.broken or (strict and summary["with_problems"]):
        raise typer.Exit(1)


def _print(report: DebateCheck, language: str, fmt: str, summary: dict[str, int]) -> None:
    """The table and the summary line, in the debate's language: each problem and flag as
    that language shows it, each turn by its role and step."""
    said = words(language)
    say, shown = said.say, said.shown
    table = Table(
        "#", say("check_turn"), say("units"), say("check_limit"), "", say("check_notes"), box=None
    )
    for t in report.turns:
        if t.limit is None and not t.problems and not t.flags:
            continue
        notes = [*(f"[bold red]{safe(shown(p))}[/]" for p in t.undeclared)]
        notes += [safe(shown(p)) for p in t.problems if p not in t.undeclared]
        notes += [f"[dim]{safe(shown(f))}[/]" for f in t.flags]
        style = _STYLE[t.status]
        table.add_row(
            str(t.index),
            safe(f"{said.name(t.role, fmt)}/{said.name(t.step, fmt)}"),
            "" if t.length is None else str(t.length),
            "" if t.limit is None else str(t.limit),
            f"[{style}]{say('status_' + t.status)}[/]" if style else "",
            say("and").join(notes),
        )
    console = Console()
    console.print(table)
    line = say("check_summary", **summary)
    if summary["no_limit_recorded"]:
        line += say("check_unlimited", **summary)
    console.print(line, highlight=False)
