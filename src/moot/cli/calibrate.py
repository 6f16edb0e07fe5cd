"""`moot calibrate`: judges measured on control debates whose right verdict is known;
a progress bar, then each judge's accuracy, biases and consistency."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from moot import history
from moot.api.calibration import CalibrationResult, plan_calibration, run_calibration
from moot.api.calibration import Progress as Step
from moot.cli.options import (
    DryRun,
    GpuLayers,
    Lang,
    Many,
    MaxTokens,
    NCtx,
    Seed,
    format_options,
    run_settings,
)
from moot.cli.root import Console, app
from moot.errors import UsageError
from moot.render import safe
from moot.tournaments.calibration import (
    DEFAULT_CONTROLS,
    KIND_NAMES,
    KINDS,
    MAX_CONTROLS,
    Interval,
)
from moot.tournaments.judge import SIDES


@app.command("calibrate")
@format_options(lambda: tuple(SIDES), after="out")  # the two-sided formats' parameters
def calibrate_judges(
    judge: Annotated[
        Many, typer.Option(help="A judge model to calibrate (repeatable).", metavar="REF")
    ] = None,
    motions: Annotated[
        Path | None,
        typer.Option(help="A text file of motions, one a line: two or more."),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="Format of the debates: oxford or challenge.")
    ] = "oxford",
    model: Annotated[
        Many,
        typer.Option(
            help="The model that debates the motions the controls are made from; given "
            "twice, each takes a side, swapped every other debate (default: the default model).",
            metavar="REF",
        ),
    ] = None,
    controls: Annotated[
        int,
        typer.Option(help=f"Controls of each kind, 1-{MAX_CONTROLS}."),
    ] = DEFAULT_CONTROLS,
    lang: Lang = "auto",
    seed: Seed = None,
    out: Annotated[
        Path | None,
        typer.Option(help="The folder for the debates and calibration.json (default: a new one)."),
    ] = None,
    max_tokens: MaxTokens = None,
    n_ctx: NCtx = None,
    gpu_layers: GpuLayers = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    quiet: Annotated[bool, typer.Option(help="No progress bar; only the figures.")] = False,
    dry_run: DryRun = False,
    **params: Any,
) -> None:
    """Measure judges on control debates: one side's speeches from another motion, a silent
    side, the sides swapped, a padded loser, the same debate twice. Each judge's accuracy
    comes with its 95 % interval; one that includes 50 % is no better than chance."""
    if motions is None:
        raise UsageError(key="cli.calibrate.no_motions_file")
    folder = history.out_folder(out) if out is not None else None  # named as the option
    run = run_settings(max_tokens=max_tokens, n_ctx=n_ctx, gpu_layers=gpu_layers, dry_run=dry_run)
    plan = plan_calibration(
        list(judge or ()),
        motions,
        format=fmt,
        model=list(model or ()) or None,
        controls=controls,
        lang=None if lang == "auto" else lang,
        seed=seed,
        out=folder,
        run=run,
        **params,
    )
    console = Console(stderr=as_json)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
    ) as progress:
        bar = progress.add_task("debates", total=None)

        def show(step: Step) -> None:
            what = "debates" if step.what == "debate" else f"judging · {safe(step.judge or '')}"
            progress.update(bar, description=what, completed=step.done, total=step.total)

        result = run_calibration(plan, on_progress=show)
    if as_json:
        print(json.dumps([j.model_dump(mode="json", exclude={"judged"}) for j in result.judges]))
        return
    show_figures(console, result)


def _interval(i: Interval) -> str:
    if i.share is None:
        return "—"
    return f"{i.share:.0%} [{i.low:.0%}–{i.high:.0%}]"


def show_figures(console: Console, result: CalibrationResult) -> None:
    """One table a judge: accuracy on each kind with its interval, the biases, the time."""
    for j in result.judges:
        table = Table(title=f"judge {safe(j.judge)}", title_justify="left")
        table.add_column("control")
        table.add_column("right (95 % interval)")
        table.add_column("n", justify="right")
        table.add_column("")
        for kind in KINDS:
            a = j.accuracy[kind]
            table.add_row(KIND_NAMES[kind], _interval(a), str(a.n), "chance" if a.chance else "")
        console.print(table)
        console.print(
            f"position bias {_interval(j.position_bias)} (verdicts that follow the seat) · "
            f"verbosity bias {_interval(j.verbosity_bias)} (padded side won) · "
            f"consistency {_interval(j.consistency)} · {j.seconds:.0f} s",
            highlight=False,
        )
        chance = [KIND_NAMES[k] for k in ("off_motion", "silent") if j.accuracy[k].chance]
        if chance:
            console.print(
                f"[yellow]no better than chance[/] on {' and '.join(chance)}: its verdicts "
                "there could come from a coin.",
                highlight=False,
            )
    console.print(f"[dim]saved:[/] {safe(result.folder / 'calibration.json')}", highlight=False)
