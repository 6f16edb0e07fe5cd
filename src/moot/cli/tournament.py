"""`moot tournament`: rank models as debaters; a progress bar, then the ratings table."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.console import Console as RichConsole
from rich.padding import Padding
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
from rich.text import Text

from moot import history
from moot.cli import fit
from moot.cli.ballot import DEFAULT, Ballot, Margin, Orders, Reasons
from moot.cli.options import (
    Batch,
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
from moot.cli.root import Console, app, err, speak
from moot.config import MAX_PARALLEL
from moot.errors import MootError, UsageError
from moot.events import Notice, TurnStarted
from moot.formats import NAMES as FORMATS
from moot.formats import get_format
from moot.render import safe
from moot.tournaments.adaptive import check_executor, check_schedule
from moot.tournaments.calibration import MAX_CONTROLS, Interval, JudgeFigures
from moot.tournaments.controls import ControlEvent, ControlFailed, ControlJudged
from moot.tournaments.executors import judge_controls, make_executor
from moot.tournaments.judge import SIDES
from moot.tournaments.parallel import check_batch, check_parallel
from moot.tournaments.plan import (
    MAX_BOOTSTRAP,
    MAX_DEBATES,
    MAX_MODELS,
    MAX_MOTION_CHARS,
    MAX_MOTIONS,
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
from moot.tournaments.settings import MAX_SWAPS, PAIRWISE_METHODS, check_ballot
from moot.words import Words, words

if TYPE_CHECKING:
    from moot.tournaments.judge import Verdict
    from moot.tournaments.plan import Pairing
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
    "orders",
    "ballot",
    "margin",
    "reasons",
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
            help=f"Swap pairs per pair of models and motion (1–{MAX_SWAPS}): each is two "
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
            help=f"Control debates of each kind (0–{MAX_CONTROLS}; 0: none), made from the "
            "finished debates, with a known right verdict: each judge's accuracy and biases "
            "on them go into the report. Default: a tenth of the plan's debates, at least 4.",
            metavar="N",
        ),
    ] = None,
    orders: Orders = DEFAULT.orders,
    ballot: Ballot = DEFAULT.method,
    margin: Margin = DEFAULT.margin,
    reasons: Reasons = DEFAULT.reasons,
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
            help=f"Debates played at once (1–{MAX_PARALLEL}; 1: one after another). Local "
            "models load once in each of N worker processes, each decoding on its share of "
            "the cores; on servers, N requests in flight.",
            metavar="N",
        ),
    ] = 1,
    batch: Batch = False,
    resume: Annotated[
        Path | None,
        typer.Option(
            help="Finish the tournament in this folder; finished debates are kept. Its plan "
            "fixes the models, motions, judges, format and every debate's settings: only "
            "--executor, --ray-address, --parallel, --batch, --bootstrap and --quiet go with it."
        ),
    ] = None,
    max_tokens: MaxTokens = None,
    n_ctx: NCtx = None,
    gpu_layers: GpuLayers = 0,
    call_timeout: CallTimeout = 240.0,
    bootstrap: Annotated[
        int,
        typer.Option(
            help=f"Bootstrap samples for the rating intervals (0–{MAX_BOOTSTRAP}; 0: none)."
        ),
    ] = 1000,
    quiet: Annotated[
        bool,
        typer.Option(
            help="Only the report and where it is saved: no progress bar, no line for each "
            "debate, no notices (a failure is said on stderr)."
        ),
    ] = False,
    dry_run: DryRun = False,
    **params: Any,
) -> None:
    """Every pair of models debates every motion twice, sides swapped; judges decide each
    debate; the models are ranked by Bradley-Terry strength."""
    # Everything is checked before anything is printed or written.
    if executor not in ("local", "ray"):
        raise UsageError(key="cli.tournament.unknown_executor", executor=executor)
    if ray_address is not None and executor != "ray":
        raise UsageError(key="cli.tournament.ray_address_applies_only_executor")
    check_counts(swaps=swaps, bootstrap=bootstrap, seed=seed, controls=controls)
    read = check_ballot(orders=orders, method=ballot, margin=margin, reasons=reasons)
    check_parallel(parallel)
    check_batch(batch, parallel)
    if parallel > 1 and executor != "local":
        raise UsageError(key="cli.tournament.parallel_applies_only_executor_local")
    check_schedule(schedule, None, 0)
    check_executor(schedule, executor, parallel)
    if resume is not None:
        fixed = _given(ctx, (*PLANNED, *params))
        if fixed:
            raise UsageError(
                key="cli.tournament.resume_continues_tournament_as_was", fixed=fixed[0]
            )
        t = Tournament.open(resume)
        check_executor(t.plan.schedule, executor, parallel)
        runner = make_executor(executor, ray_address, parallel, batch=batch)
    else:
        if motions is None:
            raise UsageError(key="cli.tournament.no_motions_file")
        folder = history.out_folder(out) if out is not None else None
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
        runner = make_executor(executor, ray_address, parallel, batch=batch)
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
            ballot=read,
            # Models resolve offline here (a dry run checks them without hashing), unless
            # they live on a cluster's workers only.
            resolve=not remote_cluster,
            out=folder,
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


def language_of(t: Tournament) -> str:
    """The language the tournament is shown in: its motions', when they share one."""
    languages = {m.language for m in t.plan.motions}
    return languages.pop() if len(languages) == 1 else "en"


def _run(t: Tournament, executor: Executor, *, quiet: bool, samples: int) -> None:
    console = Console()
    language = language_of(t)
    speak(language)
    said = words(language)
    say = said.say
    total = t.plan.budget or len(t.plan.debates)
    done = total - len(t.pending())
    if done and not quiet:
        console.print(say("tour_already", done=done, total=total), highlight=False)
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
        bar = progress.add_task(say("tour_debates"), total=total, completed=done)
        names = fit.labels([*t.plan.models, *t.plan.judges])
        show = _Shower(progress, bar, said, quiet=quiet, names=names)
        try:
            failed = t.run(executor, show)
            # An adaptive schedule may stop before its budget: the bar ends at what it played.
            progress.update(bar, description=say("tour_debates"), total=len(t.plan.debates))
            shower = _ControlShower(progress, said, quiet=quiet, names=names)
            failed_controls = judge_controls(t, on_event=shower)
        except KeyboardInterrupt:
            progress.stop()
            said_so = say("tour_interrupted", folder=safe(t.folder))
            console.print(said_so, highlight=False, soft_wrap=True)
            raise typer.Exit(130) from None
    from moot.tournaments.report import report_of, write  # numpy and matplotlib: only now

    if not t.verdicts():
        raise MootError(key="cli.tournament.no_debate_tournament_finished", folder=t.folder)
    report = report_of(t, samples=samples)
    paths = write(report, t.folder)
    show_report(console, report, language)
    for path in paths:
        console.print(f"[dim]{say('saved')}[/] {safe(path)}", highlight=False, soft_wrap=True)
    if failed or failed_controls:
        what = [say("tour_failed_debates", n=len(failed))] if failed else []
        if failed_controls:
            what += [say("tour_failed_judges", n=len(failed_controls))]
        said_what = say("tour_and").join(what)
        failure = say("tour_failed", what=said_what, folder=safe(t.folder))
        (err if quiet else console).print(failure, highlight=False)
        raise typer.Exit(1)


class _ControlShower:
    """The control debates as a bar of their own, one a judge, and a line for a judge that
    failed on them (with --quiet, on stderr: the report alone is printed)."""

    def __init__(
        self,
        progress: Progress,
        said: Words | None = None,
        *,
        quiet: bool = False,
        names: Mapping[str, str] | None = None,
    ):
        self.progress = progress
        self.said = said or words("en")
        self.quiet = quiet
        self.names = names or {}  # each judge's label (markup)
        self.bars: dict[str, TaskID] = {}

    def __call__(self, event: ControlEvent) -> None:
        p, said = self.progress, self.said
        if isinstance(event, ControlJudged):
            if event.judge not in self.bars:
                judge = self.names.get(event.judge) or safe(event.judge)
                name = said.say("tour_controls", judge=judge)
                self.bars[event.judge] = p.add_task(name, total=event.total)
            p.update(self.bars[event.judge], completed=event.done)
        elif isinstance(event, ControlFailed):
            hint = f" [dim]({safe(said.shown(event.hint))})[/]" if event.hint else ""
            message = safe(said.shown(event.message))
            judge = self.names.get(event.judge) or safe(event.judge)
            line = said.say("tour_control_failed", judge=judge, message=message)
            (err if self.quiet else p.console).print(
                f"[bold red]✗[/] {line}{hint}", highlight=False
            )


class _Shower:
    """Turns tournament events into the progress bar and one line per finished debate.
    With --quiet only a debate that failed, and a notice of the tournament's own, are said,
    on stderr: no line for a debate that finished, no debate's notices."""

    def __init__(
        self,
        progress: Progress,
        bar: TaskID,
        said: Words | None = None,
        *,
        quiet: bool = False,
        names: Mapping[str, str] | None = None,
    ) -> None:
        self.progress = progress
        self.bar = bar
        self.said = said or words("en")
        self.quiet = quiet
        self.names = names or {}  # each model's label (markup); the full reference is saved
        self.current = ""
        self.running: dict[str, str] = {}  # debate id → "A vs B", as they began

    def _name(self, ref: str) -> str:
        return self.names.get(ref) or safe(ref)

    def _describe(self) -> None:
        """The debate running, or how many run at once (--parallel)."""
        names, say = list(self.running.values()), self.said.say
        self.current = names[0] if len(names) == 1 else say("tour_at_once", n=len(names))
        self.progress.update(self.bar, description=self.current if names else say("tour_debates"))

    def __call__(self, event: TournamentEvent) -> None:
        p, said = self.progress, self.said
        if isinstance(event, Notice):  # the tournament's own, once (with --quiet, on stderr)
            (err if self.quiet else p.console).print(
                f"[yellow]{safe(event.message)}[/]", highlight=False
            )
            return
        # Every name and message comes from outside (a model, a file): shown as text.
        if isinstance(event, DebateBegun):
            pair = event.pairing
            vs = said.say("tour_vs", a=self._name(pair.proposition), b=self._name(pair.opposition))
            self.running[pair.id] = vs
            self._describe()
        elif isinstance(event, DebateDone | DebateFailed):
            self.running.pop(event.pairing.id, None)
            self._describe()
        if isinstance(event, InDebate):
            if isinstance(event.event, TurnStarted) and len(self.running) == 1:
                where = f"{self.current} · {safe(event.event.label)}"
                p.update(self.bar, description=where)
            elif isinstance(event.event, Notice) and event.event.level != "info" and not self.quiet:
                p.console.print(f"[yellow]{safe(event.event.message)}[/]", highlight=False)
        elif isinstance(event, DebateDone):
            v, pair = event.verdict, event.pairing
            outcome = read_outcome(v, pair, said, names=self.names)
            if not outcome and v.winner == "draw":
                outcome = said.say("tour_draw")
            elif not outcome:
                side = pair.proposition if v.winner == "proposition" else pair.opposition
                outcome = said.say(
                    "tour_wins",
                    model=self._name(side),
                    side=said.name(v.winner),
                    margin=said.shown(str(v.margin)),
                )
            if not self.quiet:
                _debate_line(p.console, f"[green]✓[/] {safe(pair.id)}:", outcome)
            p.advance(self.bar)
        elif isinstance(event, DebateFailed):
            hint = f" [dim]({safe(said.shown(event.hint))})[/]" if event.hint else ""
            message = f"{safe(said.shown(event.message))}{hint}"
            _debate_line(
                err if self.quiet else p.console,
                f"[bold red]✗[/] {safe(event.pairing.id)}:",
                message,
            )
            p.advance(self.bar)


def _debate_line(console: RichConsole, head: str, said: str) -> None:
    """A finished debate's line: HEAD (its id) and what it came to, on one line where they
    fit; else the id alone, never wrapped (it is copied), and the rest below it."""
    line = f"{head} {said}"
    if Text.from_markup(line).cell_len <= console.width:
        console.print(line, highlight=False)
        return
    console.print(head, highlight=False, soft_wrap=True)
    console.print(Padding(said, (0, 0, 0, 2)), highlight=False)


def read_outcome(
    v: Verdict, pair: Pairing, said: Words, *, names: Mapping[str, str] | None = None
) -> str:
    """A debate's line where its verdict was read as probabilities or by a forfeit; "" for
    a draw and for a sampled ballot's verdict, said as before. NAMES: each model's label."""
    ref = pair.proposition if v.winner == "proposition" else pair.opposition
    winner = (names or {}).get(ref) or safe(ref)
    p = "—" if v.p_proposition is None else f"{v.p_proposition:.2f}"
    if v.decided_by == "forfeit":
        key = "tour_forfeit_silent" if "said nothing" in (v.forfeit or "") else "tour_forfeit_off"
        return said.say(key, model=winner)
    if v.winner == "undecided":
        return said.say("tour_undecided", p=p)
    if v.decided_by == "judges" and v.winner != "draw":
        return said.say("tour_read_wins", model=winner, side=said.name(v.winner), p=p)
    return ""


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _within(r: RuleKeeping) -> str:
    if not r.limited:
        return "—"
    return f"{r.within_limit}/{r.limited} ({100 * r.within_limit / r.limited:.0f} %)"


def _rules_table(report: Report, say: Any, names: fit.Names) -> Table:
    """Each model's rule-keeping, in the ranking's order, then the judges not ranked: a
    table of its own beside the ranking, so that both fit a terminal's width."""
    table = Table(title=say("tour_rules_title"))
    table.add_column("#", justify="right", no_wrap=True)
    if names.shown is not None:
        fit.name_column(table, say("tour_model"))
    table.add_column(say("tour_turns"), justify="right")
    table.add_column(say("tour_within"), justify="right")
    for key in ("tour_cut", "tour_flagged", "tour_failed_column"):
        table.add_column(say(key), justify="right")
    rows = [(str(r.rank), r.model, r.rule_keeping) for r in report.models]
    rows += [(say("tour_judge"), j.model, j.rule_keeping) for j in report.judges]
    for rank, model, kept in rows:
        table.add_row(
            *names.cells(model, rank),
            str(kept.turns),
            _within(kept),
            str(kept.cut),
            str(kept.flagged),
            str(kept.failed),
        )
    return fit.keep_words(table)


def _short(i: Interval) -> str:
    """A share with its interval, narrow enough for a table of six: `75% (41–93)`."""
    if i.share is None:
        return "—"
    return f"{i.share:.0%} ({100 * i.low:.0f}–{100 * i.high:.0f})"


def _judges_table(report: Report, said: Words, names: fit.Names) -> Table | None:
    """Each judge on the control debates: its accuracy where the winner is known, its
    biases and consistency, each with its 95 % interval (None: no judge was measured)."""
    say = said.say
    figure = report.calibration
    if figure is None or not figure.judges:
        return None
    # No column rules: six figures and a name fit a terminal of 80 columns, each figure's
    # interval below its share where the columns are narrow.
    table = Table(title=say("tour_judges_title", n=figure.made), box=box.SIMPLE_HEAD)
    if names.shown is not None:
        fit.name_column(table, say("tour_judge"))
    else:
        table.add_column("#", justify="right", no_wrap=True)
    keys = ("off_motion", "silent", "position_bias", "verbosity_bias", "consistency")
    for name in (say(f"tour_{n}") for n in keys):
        table.add_column(name, justify="right")
    table.add_column(say("tour_beats_chance"), min_width=6)

    def figures(j: JudgeFigures) -> list[str]:
        return [
            _short(j.accuracy["off_motion"]),
            _short(j.accuracy["silent"]),
            _short(j.position_bias),
            _short(j.verbosity_bias),
            _short(j.consistency),
            say("tour_yes") if j.beats_chance else f"[yellow]{say('tour_no')}[/]",
        ]

    for j in figure.judges:
        table.add_row(*names.cells(j.judge), *figures(j))
    if figure.jury is not None:  # several judges: their pooled verdicts, scored the same way
        table.add_row(say("tour_jury"), *figures(figure.jury))
    return fit.keep_words(table)


def _judges_note(console: Console, report: Report, said: Words) -> None:
    """Why no judge was measured on controls, or that their measure is not whole."""
    figure = report.calibration
    if figure is None:
        return
    if not figure.judges:
        note = said.shown(figure.note)
        console.print(said.say("tour_controls_note", note=note), highlight=False)
    elif figure.status != "judged":
        note = said.shown(figure.note)
        console.print(f"[yellow]{said.say('tour_controls_word')}[/]: {note}", highlight=False)


def show_coverage(console: Console, report: Report, language: str = "en") -> None:
    """How the ballots were read, and the share of judged debates that were decided."""
    say = words(language).say
    if report.ballot:
        b = report.ballot
        orders = b.get("orders") if b.get("method") in PAIRWISE_METHODS else 1
        method = say(f"tour_method_{b.get('method')}")
        line = say("tour_ballot", method=method, orders=orders, margin=b.get("margin"))
        console.print(line, highlight=False)
    judged = report.debates_decided
    console.print(
        say(
            "tour_coverage",
            decided=judged - report.debates_undecided,
            judged=judged,
            share=_pct(report.coverage),
            undecided=report.debates_undecided,
            forfeits=report.forfeits,
        ),
        highlight=False,
    )


def _names(report: Report) -> fit.Names:
    """The report's models and judges by their labels; by key, a ranked model's rank and
    another judge's J1, J2…"""
    refs = [r.model for r in report.models] + [j.model for j in report.judges]
    refs += [j.judge for j in report.calibration.judges] if report.calibration else []
    keys = {r.model: str(r.rank) for r in report.models}
    for ref in dict.fromkeys(refs):
        keys.setdefault(ref, f"J{len(keys) - len(report.models) + 1}")
    return fit.Names(fit.labels(refs), keys)


def _ratings_table(report: Report, say: Any, names: fit.Names) -> Table:
    """The ranking: each model's strength, its interval, its length-controlled strength and
    its record (marked not validated where no judge beat chance on the controls)."""
    unchecked = report.calibration is not None and report.calibration.validated is False
    fmt = say(f"format_{report.format}") if report.format in FORMATS else report.format
    title = say("tour_title", format=safe(fmt), n=report.debates_decided)
    table = Table(title=title + (say("tour_title_unchecked") if unchecked else ""))
    table.add_column("#", justify="right", no_wrap=True)
    if names.shown is not None:
        fit.name_column(table, say("tour_model"))
    table.add_column(say("tour_strength"), justify="right", no_wrap=True)
    interval = say("tour_interval", level=f"{report.interval:.0%}")
    table.add_column(interval, justify="center", no_wrap=True)
    table.add_column(say("tour_length_controlled"), justify="right", no_wrap=True)
    for name in ("W", "L", "D"):
        table.add_column(say(f"tour_{name}"), justify="right", no_wrap=True)
    for r in report.models:
        table.add_row(
            *names.cells(r.model, str(r.rank)),
            f"{r.strength:+.2f}",
            f"[{r.ci_low:+.2f}, {r.ci_high:+.2f}]",
            "—" if r.length_controlled is None else f"{r.length_controlled:+.2f}",
            str(r.wins),
            str(r.losses),
            str(r.draws),
        )
    return fit.keep_words(table)


def show_report(console: Console, report: Report, language: str = "en") -> None:
    """The ranking table (marked not validated where no judge beat chance on the controls)
    and the rule-keeping table, then the side-bias and judge-agreement figures, then the
    judges on the controls, in LANGUAGE (the motions')."""
    said = words(language)
    say = said.say
    unchecked = report.calibration is not None and report.calibration.validated is False
    names = _names(report)
    tables = [_ratings_table(report, say, names), _rules_table(report, say, names)]
    judged = _judges_table(report, said, names)
    if not fit.fits(console, *tables, *([judged] if judged else [])):
        # Too narrow for the labels beside the figures: each once, above, by its key.
        names = names.keyed()
        names.print_legend(console)
        tables = [_ratings_table(report, say, names), _rules_table(report, say, names)]
        judged = _judges_table(report, said, names)
    console.print(tables[0])
    if unchecked:
        console.print(say("tour_not_validated"), highlight=False)
    if report.length_effect is not None:
        e = report.length_effect
        shown = {"effect": f"{e.effect:+.2f}", "low": f"{e.low:+.2f}", "high": f"{e.high:+.2f}"}
        console.print(say("tour_length_effect", **shown), highlight=False)
    console.print(tables[1])
    b = report.side_bias
    console.print(
        say(
            "tour_side_bias",
            both=b.same_side_both,
            pairs=b.swap_pairs,
            rate=_pct(b.rate),
            wins=b.proposition_wins,
            decided=b.decided,
            share=_pct(b.proposition_share),
        ),
        highlight=False,
    )
    a = report.judge_agreement
    if a.panels:
        console.print(
            say(
                "tour_agreement",
                agreeing=a.agreeing_pairs,
                pairs=a.judge_pairs,
                pairwise=_pct(a.pairwise),
                unanimous=a.unanimous,
                panels=a.panels,
                unanimity=_pct(a.unanimity),
            ),
            highlight=False,
        )
    else:
        console.print(say("tour_single_judge"), highlight=False)
    if report.self_judged:
        console.print(say("tour_self_judged", n=report.self_judged), highlight=False)
    show_coverage(console, report, language)
    if report.budget is not None:
        if report.debates_planned >= report.budget:
            why = say("tour_budget_spent")
        elif report.debates_decided < report.debates_planned:
            why = say("tour_budget_failed")
        else:
            why = say("tour_budget_separated")
        console.print(
            say("tour_adaptive", planned=report.debates_planned, budget=report.budget, why=why),
            highlight=False,
        )
    missing = report.debates_planned - report.debates_decided
    if missing:
        console.print(say("tour_missing", n=missing), highlight=False)
    if judged is not None:
        console.print(judged)
    _judges_note(console, report, said)
