"""`moot judge`: a saved debate re-judged by other judge models, every speech reused."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from moot import history
from moot.cli import fit
from moot.cli.history import Transcript
from moot.cli.options import AsJson, DryRun
from moot.cli.root import Console, app, speak_as_saved
from moot.formats import NAMES as FORMATS
from moot.render import safe
from moot.words import words


@app.command("judge")
def judge_command(
    ref: Transcript,
    judges: Annotated[
        list[str],
        typer.Option(
            "--judge",
            help="A judge model (repeatable): catalog id, hf:OWNER/REPO/FILE.gguf, a .gguf "
            "path or a server URL.",
            metavar="REF",
        ),
    ],
    as_json: AsJson = False,
    dry_run: DryRun = False,
) -> None:
    """Re-judge a saved debate with other judge models; no speech is generated.

    Each judging step (oxford's completeness rubric, challenge's verdict, decision's
    verdict, adversarial's audit) is asked again of each judge, with the prompt the original
    judge saw. Its replies, beside the original ones with their agreement, go to
    judged/<judge>.json beside the transcript.
    """
    from moot.debates.rejudge import rejudge

    transcript = history.transcript(ref)
    say = words(speak_as_saved(transcript)[0]).say  # shown in the debate's language
    with Console(stderr=True).status(say("rejudging")):
        results = rejudge(transcript, judges, dry_run=dry_run)
    if as_json:
        print(json.dumps([r.model_dump(mode="json") for r in results], ensure_ascii=False))
        return
    refs = [r.model for r in results]
    names = fit.Names(fit.labels(refs), {ref: str(i) for i, ref in enumerate(refs, 1)})
    console = Console()
    table = _table(results, say, names)
    if not fit.fits(console, table):  # each judge by its label, listed above its key
        names = names.keyed()
        table = _table(results, say, names)
    first = results[0]
    fmt = say(f"format_{first.format}") if first.format in FORMATS else first.format
    console.print(
        say(
            "judged_by",
            transcript=safe(first.transcript),
            format=safe(fmt),
            model=fit.labels([first.original_model])[first.original_model],
        ),
        highlight=False,
        soft_wrap=True,  # the transcript's path, whole: it is copied
    )
    if names.by_key:
        names.print_legend(console)
    console.print(table)
    for r in results:
        if r.file:
            console.print(f"[dim]{say('saved')}[/] {safe(r.file)}", highlight=False, soft_wrap=True)
    if not first.same_prompts:
        Console(stderr=True).print(say("judged_new_prompts"), highlight=False)


def _table(results: list[Any], say: Any, names: fit.Names) -> Table:
    """A judge a row: how often it agreed with the original judge, in how many turns."""
    scored = any(r.score_difference is not None for r in results)
    columns = ["agreement", "same_verdict", *(["score_diff"] if scored else [])]
    table = Table(box=None)
    table.add_column(say("judged_judge") if names.shown is not None else "#", no_wrap=True)
    for column in [*columns, "answered", "time"]:
        table.add_column(say(f"judged_{column}"))
    for r in results:
        answered = sum(t.new is not None for t in r.turns)
        table.add_row(
            *names.cells(r.model),
            _share(r.agreement),
            _share(r.same_verdict),
            *([_number(r.score_difference)] if scored else []),
            f"{answered}/{len(r.turns)}",
            say("seconds", seconds=f"{r.duration_ms / 1000:.1f}"),
        )
    return fit.keep_words(table)


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"
