"""Tournaments from Python, with `moot tournament`'s defaults and checks."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot import history
from moot.api.debates import debate_settings, parameters_doc
from moot.api.progress import DebateLines
from moot.config import RunSettings
from moot.errors import MootError, UsageError
from moot.formats import get_format

if TYPE_CHECKING:
    from moot.tournaments.controls import ControlEvent, ControlFailed
    from moot.tournaments.report import Report
    from moot.tournaments.run import DebateFailed, Tournament, TournamentEvent
    from moot.tournaments.settings import BallotSettings


@dataclass(frozen=True)
class TournamentResult:
    """A finished tournament: its ratings report (each model's rating and rule-keeping,
    `report.models[i].rule_keeping`; each judge's figures on the control debates,
    `report.calibration`), its folder, the debates and the judges on controls that failed."""

    report: Report
    folder: Path
    failed: list[DebateFailed]  # retried by `moot.tournament(resume=folder)`
    failed_controls: list[ControlFailed] = field(default_factory=list)  # retried the same way


def tournament(
    models: Sequence[str] = (),
    motions: Sequence[str] | str | Path = (),
    *,
    format: str = "oxford",
    judges: Sequence[str] = (),
    lang: str | None = None,
    seed: int | None = None,
    swaps: int = 1,
    schedule: str = "round-robin",
    budget: int | None = None,
    controls: int | None = None,
    orders: int = 2,
    ballot: str = "pairwise",
    margin: float = 0.1,
    reasons: bool = False,
    out: str | Path | None = None,
    resume: str | Path | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    parallel: int = 1,
    batch: bool = False,
    run: RunSettings | Mapping[str, Any] | None = None,
    bootstrap: int = 1000,
    on_event: Callable[[TournamentEvent | ControlEvent], None] | None = None,
    progress: bool = False,
    **params: Any,
) -> TournamentResult:
    """Every pair of MODELS debates every motion (a list, or a file of one a line) twice,
    sides swapped; judges who took no part decide each debate; the models are rated.

    The defaults are `moot tournament`'s. `resume` finishes the tournament in that folder
    as it was planned: its plan fixes everything but `executor`, `ray_address`, `parallel`,
    `batch`, `bootstrap`, `on_event` and `progress` (a line on stderr as each debate ends;
    off by default), so give nothing else then. `parallel` plays up to
    that many debates at once (local models: each in a worker process of its own, which
    loads them once and decodes on its share of the cores; with `batch=True`, all in this
    process on models loaded once, each step of a model one llama.cpp batch of every
    debate's next tokens; a debate's transcript says which). The report is written into the
    folder.
    `schedule="adaptive"` plays each next debate where the ranking is least certain, until
    adjacent models' intervals separate or `budget` debates are spent. Once every debate
    has finished, `controls` control debates of each kind (default: a tenth of the plan,
    at least 4; 0: none) are made from them and each judge decides them: the report's
    `calibration` gives each judge's accuracy and biases, and whether the ratings are
    validated (a judge beat chance on the controls).
    Each judge's ballot is read as probabilities: `ballot="pairwise"` asks the winner with
    the sides shown in `orders` orders (2: both ways round; a judge whose orders disagree
    abstains), `"pointwise"` asks yes/no questions of each side alone, calibrated on a
    content-free speech, `"blend"` averages the two, and `"likelihood"` scores how much
    likelier the model finds each side's speeches as written for its side of the motion
    (a model moot runs itself; docs: judging); a debate whose P(proposition) is
    within `margin` of even is undecided, which the ratings skip (`report.coverage`: the
    share decided). `reasons=True` asks each judge its reasons after its verdict.
    """
    from moot.tournaments.adaptive import check_executor, check_schedule
    from moot.tournaments.executors import judge_controls, make_executor
    from moot.tournaments.parallel import check_batch, check_parallel
    from moot.tournaments.plan import check_counts
    from moot.tournaments.report import report_of, write
    from moot.tournaments.run import Tournament

    # Everything is checked before anything is written.
    if executor not in ("local", "ray"):
        raise UsageError(key="api.tournaments.unknown_executor", executor=executor)
    if ray_address is not None and executor != "ray":
        raise UsageError(key="api.tournaments.ray_address_applies_only_executor")
    from moot.tournaments.settings import check_ballot

    check_counts(swaps=swaps, bootstrap=bootstrap, seed=seed, controls=controls)
    read = check_ballot(api=True, orders=orders, method=ballot, margin=margin, reasons=reasons)
    check_parallel(parallel, api=True)
    check_batch(batch, parallel, api=True)
    if parallel > 1 and executor != "local":
        raise UsageError(key="api.tournaments.parallel_applies_only_executor_local")
    check_schedule(schedule, None, 0)
    check_executor(schedule, executor, parallel)
    for name, refs in (("models", models), ("judges", judges)):
        if isinstance(refs, str):
            raise UsageError(key="api.tournaments.one_string", name=name, refs=refs)
    if resume is not None:
        planned = {
            "models": bool(models),
            "motions": bool(motions),
            "judges": bool(judges),
            "out": out is not None,
            "format": format != "oxford",
            "lang": lang is not None,
            "seed": seed is not None,
            "swaps": swaps != 1,
            "schedule": schedule != "round-robin",
            "budget": budget is not None,
            "controls": controls is not None,
            "orders": orders != 2,
            "ballot": ballot != "pairwise",
            "margin": margin != 0.1,
            "reasons": reasons,
            "run": run is not None,
            **{name: True for name in params},
        }
        fixed = [name for name, given in planned.items() if given]
        if fixed:
            raise UsageError(
                key="api.tournaments.resume_continues_tournament_as_was", fixed=fixed[0]
            )
        t = Tournament.open(Path(resume).expanduser())
        check_executor(t.plan.schedule, executor, parallel)
        runner = make_executor(executor, ray_address, parallel, batch=batch)
    else:
        runner = make_executor(executor, ray_address, parallel, batch=batch)
        t = plan_tournament(
            models,
            motions,
            format=format,
            judges=judges,
            lang=lang,
            seed=seed,
            swaps=swaps,
            schedule=schedule,
            budget=budget,
            controls=controls,
            ballot=read,
            out=out,
            run=run,
            resolve=not (executor == "ray" and bool(ray_address)),
            **params,
        )
    tell = _teller(on_event, t.plan.motions[0].language if progress else None)
    failed = t.run(runner, tell)
    if not t.verdicts():
        raise MootError(key="api.tournaments.no_debate_tournament_finished", folder=str(t.folder))
    failed_controls = judge_controls(t, on_event=tell)
    report = report_of(t, samples=bootstrap)
    write(report, t.folder)
    return TournamentResult(report, t.folder, failed, failed_controls)


def plan_tournament(
    models: Sequence[str],
    motions: Sequence[str] | str | Path,
    *,
    format: str = "oxford",
    judges: Sequence[str] = (),
    lang: str | None = None,
    seed: int | None = None,
    swaps: int = 1,
    schedule: str = "round-robin",
    budget: int | None = None,
    controls: int | None = None,
    ballot: BallotSettings | None = None,
    out: str | Path | None = None,
    run: RunSettings | Mapping[str, Any] | None = None,
    resolve: bool = True,
    **params: Any,
) -> Tournament:
    """A new tournament checked and planned, its folder created with nothing played yet:
    `tournament(resume=t.folder)` plays it. What `tournament` checks of the models, motions,
    format and settings is checked here; a mistake is a UsageError before anything is
    written."""
    from moot.tournaments.adaptive import check_schedule
    from moot.tournaments.plan import read_motions, word_motions
    from moot.tournaments.run import new_tournament

    for name, refs in (("models", models), ("judges", judges)):
        if isinstance(refs, str):
            raise UsageError(key="api.tournaments.one_string", name=name, refs=refs)
    check_schedule(schedule, budget, len(models))
    folder = history.out_folder(out, name="out") if out is not None else None
    chosen = debate_settings("-", format=format, lang=lang, run=run, **params)
    fmt = get_format(format)
    if isinstance(motions, str | Path):
        worded = read_motions(Path(motions).expanduser(), fmt, chosen.lang, what="motions file")
    else:
        worded = word_motions(motions, fmt, chosen.lang)
    return new_tournament(
        fmt,
        models,
        worded,
        given=chosen.params,
        run=chosen.run,
        seed=seed,
        judges=judges,
        swaps=swaps,
        schedule=schedule,
        budget=budget,
        controls=controls,
        ballot=ballot,
        resolve=resolve,
        out=folder,
    )


def _teller(
    on_event: Callable[[TournamentEvent | ControlEvent], None] | None, progress: str | None
) -> Callable[[TournamentEvent | ControlEvent], None]:
    """ON_EVENT, after a line on stderr as each debate ends where PROGRESS names the
    language to write it in."""
    lines = DebateLines(progress) if progress is not None else None

    def tell(event: TournamentEvent | ControlEvent) -> None:
        if lines is not None:
            lines(event)
        if on_event is not None:
            on_event(event)

    return tell


# The format parameters `**params` takes, as `moot.debate` lists them (docs/hooks/parameters.py
# gives the API page the same list).
TOURNAMENT_PARAMETERS = "Each debate takes the format parameters `moot.debate` takes:"
tournament.__doc__ = (
    f"{tournament.__doc__}\n    {TOURNAMENT_PARAMETERS}\n\n"
    f"{textwrap.indent(parameters_doc(), '    ')}\n"
)
