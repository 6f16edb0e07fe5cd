"""Judges calibrated from Python, with `moot calibrate`'s defaults and checks: real debates
are generated, control debates with known answers are made from them, and each judge's
accuracy, biases and consistency are measured and saved as calibration.json."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from moot import history
from moot._version import __version__
from moot.api.debates import Debate, ModelSource, debate_settings
from moot.config import RunSettings, data_dir
from moot.errors import UsageError
from moot.formats import get_format
from moot.inference.protocol import ChatModel
from moot.records import files
from moot.records.transcript import Transcript
from moot.tournaments.ballots import check_readable
from moot.tournaments.calibration import (
    DEFAULT_CONTROLS,
    JURY,
    MAX_CONTROLS,
    JudgeCalibration,
    Judged,
    ballot_judge,
    build_controls,
    calibrate_judge,
    jury_on,
    summarise,
)
from moot.tournaments.judge import SIDES
from moot.tournaments.labelled import (
    LabelledDebate,
    LabelledReport,
    ballot_judgement,
    measure,
    read_labelled,
)
from moot.tournaments.plan import read_motions, two_sided, word_motions
from moot.tournaments.settings import PAIRWISE_METHODS, BallotSettings, check_ballot

MAX_JUDGES = 8
DEBATES_PER_MOTION = 2  # one to make changed controls from, one to show whole
FILE = "calibration.json"
LABELLED_FILE = "labelled.json"
SCHEMA = 1


@dataclass(frozen=True)
class CalibrationResult:
    """Each judge's figures, the folder that holds the debates and calibration.json, how
    the judges' ballots were read, and the jury's figures (its judges' probabilities pooled
    as a tournament pools them; None with one judge)."""

    judges: list[JudgeCalibration]
    folder: Path
    ballot: BallotSettings = field(default_factory=BallotSettings)
    jury: JudgeCalibration | None = None


@dataclass(frozen=True)
class Progress:
    """What a front end shows while a calibration runs: a debate or a control judged."""

    what: str  # "debate" or "control"
    done: int
    total: int
    judge: str | None = None
    row: Judged | None = None


def check_calibration(judges: Sequence[str], controls: int, fmt: str) -> None:
    """The counts a calibration takes, checked before anything runs."""
    if isinstance(judges, str):
        raise UsageError(key="api.calibration.judges_one_string", judges=judges)
    if not judges:
        raise UsageError(key="api.calibration.no_judge_calibrate")
    if len(judges) > MAX_JUDGES:
        raise UsageError(key="api.calibration.judges", n_judges=len(judges), max_judges=MAX_JUDGES)
    if not 1 <= controls <= MAX_CONTROLS:
        raise UsageError(
            key="api.calibration.controls_out_range", controls=controls, max_controls=MAX_CONTROLS
        )
    if fmt not in SIDES:
        raise UsageError(key="api.calibration.controls_are_made_from_two", fmt=fmt)


@dataclass(frozen=True)
class CalibrationPlan:
    """A calibration's inputs, checked: nothing has run and nothing is written yet."""

    judges: tuple[str, ...]
    motions: tuple[str, ...]
    format: str
    language: str | None
    models: tuple[str, ...]  # none: the default model; two: one a side, swapped each debate
    controls: int
    seed: int
    folder: Path
    run: RunSettings
    params: Mapping[str, Any]
    ballot: BallotSettings = field(default_factory=BallotSettings)


def plan_calibration(
    judges: Sequence[str],
    motions: Sequence[str] | str | Path,
    *,
    format: str = "oxford",
    model: str | Sequence[str] | None = None,
    controls: int = DEFAULT_CONTROLS,
    lang: str | None = None,
    seed: int | None = None,
    out: str | Path | None = None,
    run: RunSettings | Mapping[str, Any] | None = None,
    ballot: str = "pairwise",
    orders: int = 2,
    margin: float = 0.1,
    **params: Any,
) -> CalibrationPlan:
    """Everything `calibrate` takes, checked before a model loads; a MootError names the
    first bad one."""
    check_calibration(judges, controls, format)
    read = ballot_of(ballot, orders, margin)
    folder = history.out_folder(out, name="out") if out is not None else _fresh_folder()
    chosen = debate_settings("-", format=format, lang=lang, run=run, **params)
    fmt = get_format(format)
    if isinstance(motions, str | Path):
        worded = read_motions(Path(motions).expanduser(), fmt, chosen.lang, what="motions file")
    else:
        worded = word_motions(motions, fmt, chosen.lang)
    texts = tuple(dict.fromkeys(m.text for m in worded))
    models = (model,) if isinstance(model, str) else tuple(model or ())
    if len(models) > 2:
        raise UsageError(
            key="api.calibration.calibration_debates_seat_one_two",
            field="model",
            n_models=len(models),
        )
    if len(texts) < 2:
        raise UsageError(key="api.calibration.calibration_needs_two_motions_more")
    return CalibrationPlan(
        judges=tuple(judges),
        motions=texts,
        format=format,
        language=chosen.lang if chosen.lang != "auto" else None,
        models=models,
        controls=controls,
        seed=seed if seed is not None else random.SystemRandom().randrange(2**31),
        folder=folder,
        run=chosen.run,
        params=params,
        ballot=read,
    )


def ballot_of(method: str, orders: int, margin: float) -> BallotSettings:
    """How the judges' ballots are read, checked as `moot.tournament` checks them (a
    calibration asks no reasons: they change no verdict)."""
    return check_ballot(api=True, method=method, orders=orders, margin=margin)


def calibrate(
    judges: Sequence[str],
    motions: Sequence[str] | str | Path | None = None,
    *,
    labelled: str | Path | None = None,
    format: str = "oxford",
    model: str | Sequence[str] | None = None,
    controls: int = DEFAULT_CONTROLS,
    lang: str | None = None,
    seed: int | None = None,
    out: str | Path | None = None,
    run: RunSettings | Mapping[str, Any] | None = None,
    ballot: str = "pairwise",
    orders: int = 2,
    margin: float = 0.1,
    pool: ModelSource | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    **params: Any,
) -> CalibrationResult | LabelledResult:
    """Debate each motion twice on MODEL (the default model if none), make CONTROLS
    control debates of each kind from those debates, have each judge decide every control,
    and save each judge's figures in the folder's calibration.json.

    `motions` is a list or a file of one a line, two motions or more (an off-the-motion
    control takes one side's speeches from a debate on another motion). Format parameters
    and `run` are the debates' own, as for `moot.debate`.

    With `labelled` (a JSON Lines file of debates whose winner is known, one a line; see
    the judging page), no debate is generated: each judge decides every labelled debate,
    and its accuracy, coverage and position bias, and the jury's, are saved as
    labelled.json and returned as a `LabelledResult`.

    `ballot`, `orders` and `margin` read each judge's ballot as `moot.tournament` reads
    it (`"pairwise"` in both orders, `"pointwise"`, `"blend"` or `"likelihood"`; undecided
    within `margin` of even, the jury too), so a judge is measured as a tournament with the
    same settings uses it; the result's `ballot` (and the saved file) says how.
    """

    check_readable(ballot, judges)
    if labelled is not None:
        if motions is not None:
            raise UsageError(key="api.calibration.motions_and_labelled", field="labelled")
        plan_l = plan_labelled(
            judges,
            labelled,
            seed=seed,
            out=out,
            run=run,
            ballot=ballot,
            orders=orders,
            margin=margin,
        )
        return run_labelled(plan_l, pool=pool, on_progress=on_progress)
    if motions is None:
        raise UsageError(key="api.calibration.no_motions_no_labelled", field="motions")
    plan = plan_calibration(
        judges,
        motions,
        format=format,
        model=model,
        controls=controls,
        lang=lang,
        seed=seed,
        out=out,
        run=run,
        ballot=ballot,
        orders=orders,
        margin=margin,
        **params,
    )
    return run_calibration(plan, pool=pool, on_progress=on_progress)


def _seats(plan: CalibrationPlan, i: int) -> dict[str, Any]:
    """The models of debate I: one for every seat, or two taking a side each, on the other
    side in every other debate (so the controls made from them show each on both sides)."""
    if len(plan.models) < 2:
        return {"model": plan.models[0] if plan.models else None}
    first, second = plan.models if i % 2 == 0 else plan.models[::-1]
    sides = two_sided(get_format(plan.format))
    return {"model": first, "roles": {sides[0]: first, sides[1]: second}}


def run_calibration(
    plan: CalibrationPlan,
    *,
    pool: ModelSource | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> CalibrationResult:
    """The planned calibration run: its debates, its controls, every judge on them."""
    files.make_private_dir(plan.folder)
    tell = on_progress or (lambda p: None)
    own = None
    if pool is None and not plan.run.dry_run:
        from moot.api.debates import ModelPool

        own = pool = ModelPool(n_ctx=plan.run.n_ctx or 4096, gpu_layers=plan.run.gpu_layers)
    try:
        debates = {}
        total = DEBATES_PER_MOTION * len(plan.motions)
        for i in range(total):
            one = Debate(
                plan.motions[i % len(plan.motions)],
                format=plan.format,
                **_seats(plan, i),
                lang=plan.language,
                seed=plan.seed + i,
                out=plan.folder / "debates" / f"d{i + 1}",
                run=plan.run,
                pool=pool,
                **plan.params,
            )
            one.listed = False  # the calibration's own: not `moot history`'s to list
            result = one.run()
            debates[f"d{i + 1}"] = result.transcript
            tell(Progress("debate", i + 1, total))
        made = build_controls(debates, plan.controls, seed=plan.seed)
        model_for = _judges(pool)
        figures = []
        for ref in plan.judges:
            done = 0

            def judged(row: Judged, ref: str = ref) -> None:
                nonlocal done
                done += 1
                tell(Progress("control", done, len(made), judge=ref, row=row))

            figures.append(
                calibrate_judge(
                    ref,
                    made,
                    ballot_judge(ref, model_for, plan.ballot),
                    clock=time.monotonic,
                    on_judged=judged,
                )
            )
    finally:
        if own is not None:
            own.close()
    jury = None
    if len(figures) > 1:
        rows = {f.judge: f.judged for f in figures}
        jury = summarise(JURY, jury_on(made, rows, plan.ballot.margin))
    _save(plan, figures, jury, debates)
    return CalibrationResult(figures, plan.folder, plan.ballot, jury)


def _judges(pool: ModelSource | None) -> Callable[[str], ChatModel]:
    if pool is not None:
        return pool.get
    from moot.inference.scripted import ScriptedModel

    # A dry run's judge gives the minimal valid ballot: always the first seat.
    return lambda ref: ScriptedModel(model_id=f"scripted:{ref}")


@dataclass(frozen=True)
class LabelledResult:
    """Each judge's figures on a labelled set, the jury's, and the folder of labelled.json."""

    report: LabelledReport
    folder: Path
    language: str  # the set's, where it has one; else "en"
    ballot: BallotSettings = field(default_factory=BallotSettings)


@dataclass(frozen=True)
class LabelledPlan:
    """A calibration on labelled debates, checked: nothing has run and nothing is written."""

    judges: tuple[str, ...]
    debates: tuple[LabelledDebate, ...]
    source: Path
    seed: int
    folder: Path
    run: RunSettings
    ballot: BallotSettings = field(default_factory=BallotSettings)


def plan_labelled(
    judges: Sequence[str],
    labelled: str | Path,
    *,
    seed: int | None = None,
    out: str | Path | None = None,
    run: RunSettings | Mapping[str, Any] | None = None,
    ballot: str = "pairwise",
    orders: int = 2,
    margin: float = 0.1,
) -> LabelledPlan:
    """The judges, the labelled file and how ballots are read, checked before a model
    loads."""
    check_calibration(judges, 1, "oxford")
    read = ballot_of(ballot, orders, margin)
    path = Path(labelled).expanduser()
    debates = read_labelled(path)
    chosen = debate_settings("-", run=run)
    folder = history.out_folder(out, name="out") if out is not None else _fresh_folder()
    return LabelledPlan(
        judges=tuple(judges),
        debates=tuple(debates),
        source=path,
        seed=seed if seed is not None else random.SystemRandom().randrange(2**31),
        folder=folder,
        run=chosen.run,
        ballot=read,
    )


def run_labelled(
    plan: LabelledPlan,
    *,
    pool: ModelSource | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> LabelledResult:
    """Every judge on every labelled debate; the figures saved as labelled.json."""
    files.make_private_dir(plan.folder)
    tell = on_progress or (lambda p: None)
    own = None
    if pool is None and not plan.run.dry_run:
        from moot.api.debates import ModelPool

        own = pool = ModelPool(n_ctx=plan.run.n_ctx or 4096, gpu_layers=plan.run.gpu_layers)
    total = len(plan.debates)
    try:
        model_for = _judges(pool)
        report = measure(
            plan.debates,
            {ref: ballot_judgement(ref, model_for, plan.ballot) for ref in plan.judges},
            seed=plan.seed,
            margin=plan.ballot.margin,
            on_judged=lambda ref, done: tell(Progress("labelled", done, total, judge=ref)),
        )
    finally:
        if own is not None:
            own.close()
    languages = {d.lang for d in plan.debates}
    record = {
        "schema": SCHEMA,
        "moot_version": __version__,
        "labelled": str(plan.source),
        "seed": plan.seed,
        "ballot": shown_ballot(plan.ballot),
        **report.model_dump(mode="json"),
    }
    text = json.dumps(record, ensure_ascii=False, indent=2) + "\n"
    files.write_atomic(plan.folder / LABELLED_FILE, text)
    language = languages.pop() if len(languages) == 1 else "en"
    return LabelledResult(report, plan.folder, language, plan.ballot)


def shown_ballot(ballot: BallotSettings) -> dict[str, object]:
    """How the ballots were read, as calibration.json, labelled.json and `--json` say it:
    the method, the orders (1 for pointwise and likelihood, which read each side alone) and
    the margin."""
    orders = ballot.orders if ballot.method in PAIRWISE_METHODS else 1
    return {"method": ballot.method, "orders": orders, "margin": ballot.margin}


def _fresh_folder() -> Path:
    return data_dir() / "calibrations" / datetime.now().strftime("%Y%m%d-%H%M%S-%f")


def _save(
    plan: CalibrationPlan,
    figures: Sequence[JudgeCalibration],
    jury: JudgeCalibration | None,
    debates: Mapping[str, Transcript],
) -> None:
    record = {
        "schema": SCHEMA,
        "moot_version": __version__,
        "format": plan.format,
        "seed": plan.seed,
        "controls": plan.controls,
        "ballot": shown_ballot(plan.ballot),
        "debates": {k: {"motion": t.motion, "language": t.language} for k, t in debates.items()},
        "judges": [f.model_dump(mode="json") for f in figures],
        "jury": None if jury is None else jury.model_dump(mode="json"),
    }
    files.write_atomic(plan.folder / FILE, json.dumps(record, ensure_ascii=False, indent=2) + "\n")
