"""`moot calibrate`: judges measured on control debates whose right verdict is known, or
on a file of debates the user labelled; a progress bar, then each judge's figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from moot import history
from moot.api.calibration import (
    LABELLED_FILE,
    CalibrationPlan,
    CalibrationResult,
    LabelledResult,
    plan_calibration,
    plan_labelled,
    run_calibration,
    run_labelled,
    shown_ballot,
)
from moot.api.calibration import Progress as Step
from moot.cli import fit
from moot.cli.ballot import DEFAULT, Ballot, Margin, Orders
from moot.cli.options import (
    AsJson,
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
from moot.cli.root import Console, app, speak
from moot.errors import UsageError
from moot.prompts import resolve_language
from moot.render import safe
from moot.tournaments.calibration import (
    DEFAULT_CONTROLS,
    KINDS,
    MAX_CONTROLS,
    Interval,
)
from moot.tournaments.judge import SIDES
from moot.tournaments.labelled import Figure
from moot.tournaments.settings import BallotSettings, check_ballot
from moot.words import Words, words


@app.command("calibrate")
@format_options(lambda: tuple(SIDES), after="out")  # the two-sided formats' parameters
def calibrate_judges(
    judge: Annotated[
        Many, typer.Option(help="A judge model to calibrate (repeatable).", metavar="REF")
    ] = None,
    motions: Annotated[
        Path | None,
        typer.Option(
            help="A text file of motions, one a line (English or Chinese; two or more, at "
            "most 1000, each at most 1000 characters)."
        ),
    ] = None,
    labelled: Annotated[
        Path | None,
        typer.Option(
            help="A JSON Lines file of debates whose winner is known, one a line: the judges "
            "are measured on them instead of on control debates.",
            metavar="FILE",
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="Format: oxford or challenge (the two-sided ones).")
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
        typer.Option(help=f"Controls of each kind (1–{MAX_CONTROLS})."),
    ] = DEFAULT_CONTROLS,
    ballot: Ballot = DEFAULT.method,
    orders: Orders = DEFAULT.orders,
    margin: Margin = DEFAULT.margin,
    lang: Lang = "auto",
    seed: Seed = None,
    out: Annotated[
        Path | None,
        typer.Option(help="The folder for the debates and calibration.json (default: a new one)."),
    ] = None,
    max_tokens: MaxTokens = None,
    n_ctx: NCtx = None,
    gpu_layers: GpuLayers = 0,
    as_json: AsJson = False,
    quiet: Annotated[bool, typer.Option(help="No progress bar; only the figures.")] = False,
    dry_run: DryRun = False,
    **params: Any,
) -> None:
    """Measure judges on control debates: one side's speeches from another motion, a silent
    side, the sides swapped, a padded loser, the same debate twice. Each judge's accuracy
    comes with its 95 % interval; one that includes 50 % is no better than chance. With
    --labelled FILE, measure them (and their jury) on debates whose winner you know.
    --ballot, --orders and --margin read each judge's ballot as moot tournament does."""
    read = check_ballot(orders=orders, method=ballot, margin=margin)
    if labelled is not None:
        if model:
            raise UsageError(key="cli.calibrate.labelled_and_model")
        _labelled(
            list(judge or ()),
            labelled,
            motions=motions,
            lang=lang,
            seed=seed,
            out=out,
            run=run_settings(
                max_tokens=max_tokens, n_ctx=n_ctx, gpu_layers=gpu_layers, dry_run=dry_run
            ),
            as_json=as_json,
            quiet=quiet,
            ballot=read,
        )
        return
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
        ballot=read.method,
        orders=read.orders,
        margin=read.margin,
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
            what = "debates" if step.what == "debate" else f"judging · {_label(step.judge)}"
            progress.update(bar, description=what, completed=step.done, total=step.total)

        result = run_calibration(plan, on_progress=show)
    if as_json:
        judges = [j.model_dump(mode="json", exclude={"judged"}) for j in result.judges]
        jury = result.jury and result.jury.model_dump(mode="json", exclude={"judged"})
        print(json.dumps({"ballot": shown_ballot(result.ballot), "judges": judges, "jury": jury}))
        return
    language = language_of(plan)
    speak(language)
    show_figures(console, result, words(language))


def _labelled(
    judges: list[str],
    path: Path,
    *,
    motions: Path | None,
    lang: str,
    seed: int | None,
    out: Path | None,
    run: Any,
    as_json: bool,
    quiet: bool,
    ballot: BallotSettings,
) -> None:
    """Each judge, and the jury, on a labelled set: progress, then the figures."""
    if motions is not None:
        raise UsageError(key="cli.calibrate.labelled_and_motions")
    if lang not in ("auto", "en", "zh"):
        raise UsageError(key="cli.calibrate.unknown_lang", lang=lang)
    if lang != "auto":
        speak(lang)
    folder = history.out_folder(out) if out is not None else None
    plan = plan_labelled(
        judges,
        path,
        seed=seed,
        out=folder,
        run=run,
        ballot=ballot.method,
        orders=ballot.orders,
        margin=ballot.margin,
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
        bar = progress.add_task("", total=len(plan.debates))

        def show(step: Step) -> None:
            progress.update(bar, description=_label(step.judge), completed=step.done)

        result = run_labelled(plan, on_progress=show)
    if as_json:
        shown = {"ballot": shown_ballot(result.ballot), **result.report.model_dump(mode="json")}
        for row in [*shown["judges"], *([shown["jury"]] if shown["jury"] else [])]:
            del row["verdicts"]  # each debate's verdict is in labelled.json
        print(json.dumps(shown, ensure_ascii=False))
        return
    language = lang if lang != "auto" else result.language
    show_labelled(console, result, words(language))


def _label(judge: str | None) -> str:
    """A judge's short label on the progress bar (markup)."""
    return fit.labels([judge])[judge] if judge else ""


def _short(f: Figure, *, signed: bool = False) -> str:
    """A share with its interval, narrow enough for a table: `75% (41–93)`."""
    if f.share is None:
        return "—"
    if signed:
        return f"{f.share:+.0%} ({100 * f.low:+.0f}…{100 * f.high:+.0f})"
    return f"{f.share:.0%} ({100 * f.low:.0f}–{100 * f.high:.0f})"


def show_labelled(console: Console, result: LabelledResult, said: Words) -> None:
    """The judges and the jury on the labelled set: overall accuracy, coverage and position
    bias, then accuracy per kind and per language; each with its 95 % interval. Each judge
    by its label; by a key listed above the tables where the labels do not fit."""
    say = said.say
    judges = [j.judge for j in result.report.judges]
    names = fit.Names(fit.labels(judges), {ref: str(i) for i, ref in enumerate(judges, 1)})
    tables = _labelled_tables(result, said, names)
    if not fit.fits(console, *tables):
        names = names.keyed()
        names.print_legend(console)
        tables = _labelled_tables(result, said, names)
    for table in tables:
        console.print(table)
    console.print(ballot_line(result.ballot, said), highlight=False)
    console.print(say("cal_legend"), highlight=False)
    saved = safe(result.folder / LABELLED_FILE)
    console.print(f"[dim]{say('saved')}[/] {saved}", highlight=False, soft_wrap=True)


def _labelled_tables(result: LabelledResult, said: Words, names: fit.Names) -> list[Table]:
    say = said.say
    jury = result.report.jury
    rows = [*result.report.judges, *([jury] if jury else [])]
    first = rows[0]

    def name(row: Any) -> str:
        return say("cal_jury") if row is jury else names.cells(row.judge)[0]

    n = first.coverage.n
    table = Table(title=say("cal_title", n=n), box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column(say("cal_judge") if names.shown is not None else "#", no_wrap=True)
    for key in ("cal_accuracy", "cal_decided", "cal_coverage", "cal_position_bias"):
        table.add_column(say(key), justify="right")
    for row in rows:
        table.add_row(
            name(row),
            _short(row.accuracy["all"]),
            str(row.accuracy["all"].n),
            _short(row.coverage),
            _short(row.position_bias, signed=True),
        )
    tables = [fit.keep_words(table)]
    groups = [g for g in first.accuracy if g != "all"]
    if groups:
        by = Table(title=say("cal_by_group"), box=box.SIMPLE_HEAD, title_justify="left")
        by.add_column(say("cal_group"))
        by.add_column("n", justify="right")
        for row in rows:
            by.add_column(name(row), justify="right", no_wrap=True)
        for g in groups:
            shown = say(f"cal_lang_{g}") if g in ("en", "zh") else kind_name(said, g)
            size = str(result.report.debates.get(g, 0))
            by.add_row(shown, size, *(_short(row.accuracy[g]) for row in rows))
        tables.append(fit.keep_words(by))
    return tables


def ballot_line(ballot: BallotSettings, said: Words) -> str:
    """How the judges' ballots were read, as the tournament's report says it."""
    shown = shown_ballot(ballot)
    method = said.say(f"tour_method_{ballot.method}")
    return said.say("tour_ballot", method=method, orders=shown["orders"], margin=ballot.margin)


def _interval(i: Interval) -> str:
    if i.share is None:
        return "—"
    return f"{i.share:.0%} [{i.low:.0%}–{i.high:.0%}]"


def kind_name(said: Words, kind: str) -> str:
    """A kind of debate in words (markup): a control's, or a labelled set's that moot knows;
    a kind of the user's own as given, shown as text."""
    key = f"cal_kind_{kind}"
    return said.say(key) if said.knows(key) else safe(kind)


def language_of(plan: CalibrationPlan) -> str:
    """The language a calibration is shown in: --lang's, else its motions' where they share
    one."""
    if plan.language is not None:
        return plan.language
    languages = {resolve_language("auto", motion) for motion in plan.motions}
    return languages.pop() if len(languages) == 1 else "en"


def show_figures(console: Console, result: CalibrationResult, said: Words) -> None:
    """How the ballots were read, then one table a judge, under its label: accuracy on
    each kind with its interval, the biases, the time (calibration.json names each judge
    in full)."""
    say = said.say
    console.print(ballot_line(result.ballot, said), highlight=False)
    shown = fit.labels(j.judge for j in result.judges)
    for j in [*result.judges, *([result.jury] if result.jury else [])]:
        # The judge by its label, on a line of its own: a table's title wraps anywhere.
        heading = (
            say("cal_jury_heading")
            if j is result.jury
            else say("cal_judge_heading", judge=shown[j.judge])
        )
        console.print(f"[italic]{heading}[/]", highlight=False, soft_wrap=True)
        table = Table()
        table.add_column(say("cal_control"))
        table.add_column(say("cal_right"))
        table.add_column("n", justify="right")
        table.add_column("")
        for kind in KINDS:
            a = j.accuracy[kind]
            chance = say("cal_chance") if a.chance else ""
            table.add_row(kind_name(said, kind), _interval(a), str(a.n), chance)
        console.print(table)
        figures = say(
            "cal_figures",
            position=_interval(j.position_bias),
            verbosity=_interval(j.verbosity_bias),
            consistency=_interval(j.consistency),
            coverage=_interval(j.coverage) if j.coverage else "—",
            seconds=f"{j.seconds:.0f}",
        )
        console.print(figures, highlight=False)
        weak = [kind_name(said, k) for k in ("off_motion", "silent") if j.accuracy[k].chance]
        if weak:
            console.print(say("cal_no_better", kinds=say("cal_and").join(weak)), highlight=False)
    saved = safe(result.folder / "calibration.json")
    console.print(f"[dim]{say('saved')}[/] {saved}", highlight=False, soft_wrap=True)
