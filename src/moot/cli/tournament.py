"""`moot tournament`: rank models as debaters; a progress bar, then the ratings table."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from moot.cli.options import (
    CallTimeout,
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
from moot.cli.root import app
from moot.config import MAX_PARALLEL
from moot.engine import Notice, TurnStarted
from moot.errors import MootError, UsageError
from moot.formats import get_format
from moot.render import safe
from moot.tournaments.adaptive import check_executor, check_schedule
from moot.tournaments.calibration import MAX_CONTROLS, Interval
from moot.tournaments.controls import ControlEvent, ControlFailed, ControlJudged
from moot.tournaments.executors import judge_controls, make_executor
from moot.tournaments.parallel import check_parallel
from moot.tournaments.plan import (
    MAX_BOOTSTRAP,
    MAX_DEBATES,
    MAX_MODELS,
    MAX_MOTION_CHARS,
    MAX_MOTIONS,
    MAX_SWAPS,
    SIDES,
    check_counts,
    check_size,
    read_motions,
    two_sided,
)
from moot.tournaments.run import (
    DebateBegun,
    DebateDone,
    DebateFailed,
    Executor,
    InDebate,
    Tournament,
    TournamentEvent,
    new_tournament,
)

if TYPE_CHECKING:
    from moot.tournaments.report import Report
    from moot.tournaments.rules import RuleKeeping


# What a resumed tournament's plan fixes: given with --resume, each is refused (and every
# format parameter).
PLANNED = (
    "model",
    "motions",
    "fmt",
    "lang",
    "judge",
    "swaps",
    "schedule",
    "budget",
    "controls",
    "seed",
    "out",
    "max_tokens",
    "n_ctx",
    "gpu_layers",
    "call_timeout",
    "dry_run",
)


@app.command()
@format_options(lambda: tuple(SIDES), after="resume")  # the two-sided formats' parameters
def tournament(
    ctx: typer.Context,
    model: Annotated[
        Many,
        typer.Option(
            help=f"A model to rank (repeatable; two or more, at most {MAX_MODELS}).",
            metavar="REF",
        ),
    ] = None,
    motions: Annotated[
        Path | None,
        typer.Option(
            help=f"A text file of motions, one a line (English or Chinese; at most "
            f"{MAX_MOTIONS}, each at most {MAX_MOTION_CHARS} characters)."
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="Format: oxford or challenge (the two-sided ones).")
    ] = "oxford",
    lang: Lang = "auto",
    judge: Annotated[
        Many,
        typer.Option(
            help="A judge model (repeatable). Default: the ranked models, each judging only "
            "debates it took no part in while another judge is left.",
            metavar="REF",
        ),
    ] = None,
    swaps: Annotated[
        int,
        typer.Option(
            help=f"Swap pairs per pair of models and motion (1-{MAX_SWAPS}): each is two "
            f"debates, the same seed, sides swapped. A plan holds at most {MAX_DEBATES:,} "
            "debates."
        ),
    ] = 1,
    schedule: Annotated[
        str,
        typer.Option(
            help="round-robin: every pair on every motion, both sides. adaptive: each next "
            "debate where the ranking is least certain, until adjacent models' intervals "
            "separate or --budget debates are spent.",
        ),
    ] = "round-robin",
    budget: Annotated[
        int | None,
        typer.Option(
            help="With --schedule adaptive: at most this many debates, at least one per model "
            "(default: as many as the round-robin would play).",
            metavar="N",
        ),
    ] = None,
    controls: Annotated[
        int | None,
        typer.Option(
            help=f"Control debates of each kind (0-{MAX_CONTROLS}; 0: none), made from the "
            "finished debates, with a known right verdict: each judge's accuracy and biases "
            "on them go into the report. Default: a tenth of the plan's debates, at least 4.",
            metavar="N",
        ),
    ] = None,
    seed: Seed = None,
    out: Annotated[
        Path | None,
        typer.Option(help="The tournament folder (default: one in moot's data directory)."),
    ] = None,
    executor: Annotated[
        str, typer.Option(help="local: one debate after another here; ray: each a Ray task.")
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="With --executor ray: an existing Ray cluster, HOST:PORT (default "
            "$RAY_ADDRESS, else a local Ray)."
        ),
    ] = None,
    parallel: Annotated[
        int,
        typer.Option(
            help=f"Debates played at once (1-{MAX_PARALLEL}; 1: one after another). Local "
            "models load once in each of N worker processes, each decoding on its share of "
            "the cores; on servers, N requests in flight.",
            metavar="N",
        ),
    ] = 1,
    resume: Annotated[
        Path | None,
        typer.Option(
            help="Finish the tournament in this folder; finished debates are kept. Its plan "
            "fixes the models, motions, judges, format and every debate's settings: only "
            "--executor, --ray-address, --parallel, --bootstrap and --quiet go with it."
        ),
    ] = None,
    max_tokens: MaxTokens = None,
    n_ctx: NCtx = None,
    gpu_layers: GpuLayers = 0,
    call_timeout: CallTimeout = 240.0,
    bootstrap: Annotated[
        int,
        typer.Option(
            help=f"Bootstrap samples for the rating intervals (0-{MAX_BOOTSTRAP}; 0: none)."
        ),
    ] = 1000,
    quiet: Annotated[bool, typer.Option(help="No progress bar; only the report.")] = False,
    dry_run: DryRun = False,
    **params: Any,
) -> None:
    """Every pair of models debates every motion twice, sides swapped; judges decide each
    debate; the models are ranked by Bradley-Terry strength."""
    # Everything is checked before anything is printed or written.
    if executor not in ("local", "ray"):
        raise UsageError(f"unknown executor {executor!r}", hint="use --executor local or ray")
    if ray_address is not None and executor != "ray":
        raise UsageError(
            "--ray-address applies only to --executor ray",
            hint="add --executor ray, or drop --ray-address",
        )
    check_counts(swaps=swaps, bootstrap=bootstrap, seed=seed, controls=controls)
    check_parallel(parallel)
    if parallel > 1 and executor != "local":
        raise UsageError(
            "--parallel applies only to --executor local",
            hint="Ray runs as many debates at once as its cluster has cores: drop --parallel",
        )
    check_schedule(schedule, None, 0)
    check_executor(schedule, executor, parallel)
    if resume is not None:
        fixed = _given(ctx, (*PLANNED, *params))
        if fixed:
            raise UsageError(
                f"--resume continues a tournament as it was planned: its plan fixes {fixed[0]}",
                hint="give --resume DIR with only --executor, --ray-address, --parallel, "
                "--bootstrap or --quiet",
            )
        t = Tournament.open(resume)
        check_executor(t.plan.schedule, executor, parallel)
        runner = make_executor(executor, ray_address, parallel)
    else:
        if motions is None:
            raise UsageError("no --motions file", hint="--motions FILE: one motion a line")
        run = run_settings(
            max_tokens=max_tokens,
            n_ctx=n_ctx,
            gpu_layers=gpu_layers,
            call_timeout_s=call_timeout,
            dry_run=dry_run,
        )
        debate_format = get_format(fmt)
        two_sided(debate_format)
        check_size(list(model or ()), list(judge or ()), 0, swaps)
        check_schedule(schedule, budget, len(model or ()))
        worded = read_motions(motions, debate_format, lang)
        remote_cluster = executor == "ray" and bool(ray_address or os.environ.get("RAY_ADDRESS"))
        runner = make_executor(executor, ray_address, parallel)
        t = new_tournament(
            debate_format,
            list(model or ()),
            worded,
            given=params,  # only what was given: a parameter the format does not read is refused
            run=run,
            seed=seed,
            judges=list(judge or ()),
            swaps=swaps,
            schedule=schedule,
            budget=budget,
            controls=controls,
            # Models resolve offline here (a dry run checks them without hashing), unless
            # they live on a cluster's workers only.
            resolve=not remote_cluster,
            out=out,
        )
    _run(t, runner, quiet=quiet, samples=bootstrap)


def _given(ctx: typer.Context, names: tuple[str, ...]) -> list[str]:
    """The options among NAMES given on the command line, as they are spelled there."""
    found = []
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name in names else None
        if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            found.append(max(param.opts, key=len))
    return found


def _run(t: Tournament, executor: Executor, *, quiet: bool, samples: int) -> None:
    console = Console()
    total = t.plan.budget or len(t.plan.debates)
    done = total - len(t.pending())
    if done:
        console.print(f"[dim]{done} of {total} debates already finished[/]", highlight=False)
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    ) as progress:
        bar = progress.add_task("debates", total=total, completed=done)
        show = _Shower(progress, bar)
        try:
            failed = t.run(executor, show)
            # An adaptive schedule may stop before its budget: the bar ends at what it played.
            progress.update(bar, description="debates", total=len(t.plan.debates))
            failed_controls = judge_controls(t, on_event=_ControlShower(progress))
        except KeyboardInterrupt:
            progress.stop()
            console.print(
                f"\n[yellow]interrupted[/]: finished debates and judged controls are kept; "
                f"continue with moot tournament --resume {safe(t.folder)}",
                highlight=False,
            )
            raise typer.Exit(130) from None
    from moot.tournaments.report import report_of, write  # numpy and matplotlib: only now

    if not t.verdicts():
        raise MootError(
            "no debate of the tournament finished",
            hint=f"see the errors above; retry with moot tournament --resume {t.folder}",
        )
    report = report_of(t, samples=samples)
    paths = write(report, t.folder)
    show_report(console, report)
    for path in paths:
        console.print(f"[dim]saved:[/] {safe(path)}", highlight=False)
    if failed or failed_controls:
        what = [f"{len(failed)} debate(s)"] if failed else []
        what += [f"{len(failed_controls)} judge(s) on the controls"] if failed_controls else []
        console.print(
            f"[yellow]{' and '.join(what)} failed[/]; retry with "
            f"moot tournament --resume {safe(t.folder)}",
            highlight=False,
        )
        raise typer.Exit(1)


class _ControlShower:
    """The control debates as a bar of their own, one a judge, and a line for a judge that
    failed on them."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.bars: dict[str, TaskID] = {}

    def __call__(self, event: ControlEvent) -> None:
        p = self.progress
        if isinstance(event, ControlJudged):
            if event.judge not in self.bars:
                name = f"controls · {safe(event.judge)}"
                self.bars[event.judge] = p.add_task(name, total=event.total)
            p.update(self.bars[event.judge], completed=event.done)
        elif isinstance(event, ControlFailed):
            hint = f" [dim]({safe(event.hint)})[/]" if event.hint else ""
            p.console.print(
                f"[bold red]✗[/] controls, judge {safe(event.judge)}: {safe(event.message)}{hint}",
                highlight=False,
            )


class _Shower:
    """Turns tournament events into the progress bar and one line per finished debate."""

    def __init__(self, progress: Progress, bar: TaskID) -> None:
        self.progress = progress
        self.bar = bar
        self.current = ""
        self.running: dict[str, str] = {}  # debate id → "A vs B", as they began

    def _describe(self) -> None:
        """The debate running, or how many run at once (--parallel)."""
        names = list(self.running.values())
        self.current = names[0] if len(names) == 1 else f"{len(names)} debates at once"
        self.progress.update(self.bar, description=self.current if names else "debates")

    def __call__(self, event: TournamentEvent) -> None:
        p = self.progress
        # Every name and message comes from outside (a model, a file): shown as text.
        if isinstance(event, DebateBegun):
            pair = event.pairing
            self.running[pair.id] = f"{safe(pair.proposition)} vs {safe(pair.opposition)}"
            self._describe()
        elif isinstance(event, DebateDone | DebateFailed):
            self.running.pop(event.pairing.id, None)
            self._describe()
        if isinstance(event, InDebate):
            if isinstance(event.event, TurnStarted) and len(self.running) == 1:
                where = f"{self.current} · {safe(event.event.label)}"
                p.update(self.bar, description=where)
            elif isinstance(event.event, Notice) and event.event.level != "info":
                p.console.print(f"[yellow]{safe(event.event.message)}[/]", highlight=False)
        elif isinstance(event, DebateDone):
            v, pair = event.verdict, event.pairing
            if v.winner == "draw":
                outcome = "draw"
            else:
                side = pair.proposition if v.winner == "proposition" else pair.opposition
                outcome = f"{safe(side)} wins ({v.winner}, {v.margin})"
            p.console.print(f"[green]✓[/] {safe(pair.id)}: {outcome}", highlight=False)
            p.advance(self.bar)
        elif isinstance(event, DebateFailed):
            hint = f" [dim]({safe(event.hint)})[/]" if event.hint else ""
            p.console.print(
                f"[bold red]✗[/] {safe(event.pairing.id)}: {safe(event.message)}{hint}",
                highlight=False,
            )
            p.advance(self.bar)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _within(r: RuleKeeping) -> str:
    if not r.limited:
        return "—"
    return f"{r.within_limit}/{r.limited} ({100 * r.within_limit / r.limited:.0f} %)"


def show_rule_keeping(console: Console, report: Report) -> None:
    """Each model's rule-keeping, in the ranking's order, then the judges not ranked: a
    table of its own beside the ranking, so that both fit a terminal's width."""
    table = Table(title="Rule-keeping (every turn, in every seat)")
    table.add_column("#", justify="right")
    table.add_column("model")
    table.add_column("turns", justify="right")
    table.add_column("within limit", justify="right")
    for name in ("cut", "flagged", "failed"):
        table.add_column(name, justify="right")
    rows = [(str(r.rank), r.model, r.rule_keeping) for r in report.models]
    rows += [("judge", j.model, j.rule_keeping) for j in report.judges]
    for rank, model, kept in rows:
        table.add_row(
            rank,
            safe(model),
            str(kept.turns),
            _within(kept),
            str(kept.cut),
            str(kept.flagged),
            str(kept.failed),
        )
    console.print(table)


NOT_VALIDATED = (
    "[yellow]not validated[/]: no judge beat chance on the control debates (debates whose "
    "winner is known), so these ratings may follow the judges' biases, such as the seat or "
    "the length of a side's speeches, rather than how well the models argued"
)


def _short(i: Interval) -> str:
    """A share with its interval, narrow enough for a table of six: `75% (41–93)`."""
    if i.share is None:
        return "—"
    return f"{i.share:.0%} ({100 * i.low:.0f}–{100 * i.high:.0f})"


def show_judges(console: Console, report: Report) -> None:
    """Each judge on the control debates: its accuracy where the winner is known, its
    biases and consistency, each with its 95 % interval; or why there are none."""
    figure = report.calibration
    if figure is None:
        return
    if not figure.judges:
        console.print(f"controls: {figure.note}", highlight=False)
        return
    # No column rules: six figures and a name fit a terminal of 80 columns.
    table = Table(
        title=f"Judges on {figure.made} control debates (95 % intervals)", box=box.SIMPLE_HEAD
    )
    table.add_column("judge")
    names = ("off motion", "silent side", "position bias", "verbosity bias", "consistency")
    for name in names:
        table.add_column(name, justify="right", min_width=max(map(len, name.split())))
    table.add_column("beats chance", min_width=6)
    for j in figure.judges:
        table.add_row(
            safe(j.judge),
            _short(j.accuracy["off_motion"]),
            _short(j.accuracy["silent"]),
            _short(j.position_bias),
            _short(j.verbosity_bias),
            _short(j.consistency),
            "yes" if j.beats_chance else "[yellow]no[/]",
        )
    console.print(table)
    if figure.status != "judged":
        console.print(f"[yellow]controls[/]: {figure.note}", highlight=False)


def show_report(console: Console, report: Report) -> None:
    """The ranking table (marked not validated where no judge beat chance on the controls)
    and the rule-keeping table, then the side-bias and judge-agreement figures, then the
    judges on the controls."""
    unchecked = report.calibration is not None and report.calibration.validated is False
    title = f"Tournament ({safe(report.format)}, {report.debates_decided} debates)"
    table = Table(title=title + (" · not validated" if unchecked else ""))
    table.add_column("#", justify="right")
    table.add_column("model")
    table.add_column("strength", justify="right")
    table.add_column(f"{report.interval:.0%} interval", justify="center")
    for name in ("W", "L", "D"):
        table.add_column(name, justify="right")
    for r in report.models:
        table.add_row(
            str(r.rank),
            safe(r.model),
            f"{r.strength:+.2f}",
            f"[{r.ci_low:+.2f}, {r.ci_high:+.2f}]",
            str(r.wins),
            str(r.losses),
            str(r.draws),
        )
    console.print(table)
    if unchecked:
        console.print(NOT_VALIDATED, highlight=False)
    show_rule_keeping(console, report)
    b = report.side_bias
    console.print(
        f"side bias: the same side won both debates of {b.same_side_both} of {b.swap_pairs} "
        f"swap pairs ({_pct(b.rate)}); the proposition won {b.proposition_wins} of "
        f"{b.decided} decided debates ({_pct(b.proposition_share)})",
        highlight=False,
    )
    a = report.judge_agreement
    if a.panels:
        console.print(
            f"judge agreement: {a.agreeing_pairs} of {a.judge_pairs} judge pairs agreed "
            f"({_pct(a.pairwise)}); {a.unanimous} of {a.panels} panels unanimous "
            f"({_pct(a.unanimity)})",
            highlight=False,
        )
    else:
        console.print("judge agreement: every debate had a single judge", highlight=False)
    if report.self_judged:
        console.print(
            f"[yellow]{report.self_judged} debate(s) were judged by their own debaters[/]: "
            "no other judge was available (add one with --judge)",
            highlight=False,
        )
    if report.budget is not None:
        if report.debates_planned >= report.budget:
            why = "it stopped where the budget is spent"
        elif report.debates_decided < report.debates_planned:
            why = "it stopped at a debate that failed"
        else:
            why = "it stopped where adjacent models' intervals separated"
        console.print(
            f"adaptive schedule: {report.debates_planned} of at most {report.budget} debates; "
            f"{why}",
            highlight=False,
        )
    missing = report.debates_planned - report.debates_decided
    if missing:
        console.print(f"[yellow]{missing} planned debate(s) not decided[/]", highlight=False)
    show_judges(console, report)
