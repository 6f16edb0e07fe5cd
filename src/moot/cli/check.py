"""`moot check`: does a saved debate keep the rulebook's limits? One line per limited turn."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from moot.checks import check_debate
from moot.cli import app
from moot.render import safe
from moot.transcript import load

_STYLE = {"ok": "green", "cut": "yellow", "over": "bold red"}


@app.command()
def check(
    transcript: Annotated[Path, typer.Argument(help="A saved transcript.json.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON, for scripts.")] = False,
) -> None:
    """Check a saved debate against its limits: each limited turn's length, its limit, and
    whether it was within it, cut to fit by the engine, or over. Exits 1 if a rule is broken."""
    saved, _ = load(transcript)
    report = check_debate(saved)
    if as_json:
        turns = [asdict(t) for t in report.turns]
        print(json.dumps({"turns": turns, "summary": report.summary()}, ensure_ascii=False))
    else:
        unit = "字" if saved.language == "zh" else "words"
        table = Table("#", "turn", unit, "limit", "", "flags", box=None)
        for t in report.turns:
            style = _STYLE[t.status]
            table.add_row(
                str(t.index),
                safe(f"{t.role}/{t.step}"),
                str(t.length),
                str(t.limit),
                f"[{style}]{t.status}[/]",
                safe("; ".join(t.flags)),
            )
        console = Console()
        console.print(table)
        s = report.summary()
        console.print(
            f"{s['limited_turns']} limited turns: {s['within_limit']} within their limit "
            f"({s['cut_to_fit']} cut to fit), {s['over_limit']} over; {s['flagged']} flagged"
            + (
                f"; {s['no_limit_recorded']} with no limit recorded"
                if s["no_limit_recorded"]
                else ""
            ),
            highlight=False,
        )
    if report.broken:
        raise typer.Exit(1)
