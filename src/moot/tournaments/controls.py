"""A tournament's control debates: made from its own debates once every one has finished,
decided by each of its judges, and kept in controls.json, so that a resume asks only for
the verdicts still missing; each judge's figures for the report.

The controls and the figures are calibration.py's, as `moot calibrate` makes them: the
debates shown whole (swap, twice) are never those the changed controls (off the motion,
silent side, padded loser) were made from, so no judge is shown a debate whole and a
control made from it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.engine.turns import derive_seed
from moot.errors import MootError, UsageError
from moot.records.files import write_atomic
from moot.records.transcript import Transcript
from moot.tournaments.calibration import (
    JURY,
    Control,
    Judged,
    JudgeFigures,
    ballot_judge,
    build_controls,
    calibrate_judge,
    jury_on,
    keeps_apart,
    summarise,
)
from moot.tournaments.plan import TournamentPlan, control_languages
from moot.tournaments.run import ModelFactory, Tournament, read_record

FILE = "controls.json"
SCHEMA = 1
AGAIN = "remove it, and --resume makes the controls again"


class ControlsRecord(BaseModel):
    """controls.json: the controls made from the tournament's debates, and each judge's
    verdicts on those it has decided so far, by the judge's reference."""

    model_config = ConfigDict(extra="forbid")

    version: int = SCHEMA
    per_kind: int = Field(ge=1)
    seed: int
    controls: list[Control]
    judged: dict[str, list[Judged]] = Field(default_factory=dict)


Status = Literal["off", "waiting", "unusable", "judged", "incomplete"]
# What the report says of the controls, after "controls: ".
NOTES: dict[Status, str] = {
    "off": "off, so no judge was checked on debates with a known winner",
    "waiting": "not made yet: they are made once every debate has finished; finish the "
    "tournament with --resume",
    "unusable": "none: the finished debates cannot make them (they need two motions or more "
    "in one language, two debates on each)",
    "judged": "every judge decided every control",
    "incomplete": "some judges did not decide every control; --resume asks for the rest",
}


class ControlsFigure(BaseModel):
    """The report's account of the controls: each judge's accuracy on each kind with its
    95 % interval, its position and verbosity bias, its consistency; `validated` is
    whether any judge beat chance on the controls with a known winner (None: none judged)."""

    per_kind: int  # planned of each kind; 0: off
    made: int
    status: Status
    note: str
    judges: list[JudgeFigures]
    validated: bool | None
    # The judges pooled as the tournament's juries pool them (None: one judge, or none).
    jury: JudgeFigures | None = None


@dataclass(frozen=True)
class ControlJudged:
    judge: str
    done: int
    total: int


@dataclass(frozen=True)
class ControlFailed:
    judge: str
    message: str
    hint: str = ""


ControlEvent = ControlJudged | ControlFailed


def judges_of(plan: TournamentPlan) -> list[str]:
    """Every judge of the tournament's debates, in the plan's order."""
    return list(dict.fromkeys(ref for p in plan.debates for ref in p.judges))


def load(t: Tournament) -> ControlsRecord | None:
    """The tournament's controls.json, checked against its plan; None if there is none."""
    path = t.folder / FILE
    if not os.path.lexists(path):
        return None
    record = read_record(path, ControlsRecord, what="controls file", hint=AGAIN)
    ids = {p.id for p in t.plan.debates}
    made = {c.id for c in record.controls}
    if (
        record.version != SCHEMA
        or record.per_kind != t.plan.controls
        or any(not set(c.sources) <= ids for c in record.controls)
    ):
        raise UsageError(key="tournaments.controls.controls_file_not_this_tournament", path=path)
    if any(row.control not in made for rows in record.judged.values() for row in rows):
        raise UsageError(key="tournaments.controls.controls_file_judges_control_does", path=path)
    return record


def prepare(t: Tournament) -> ControlsRecord | None:
    """The tournament's controls: those in controls.json, else made from its debates and
    saved there once every debate has finished; None while some have not, or where the
    finished ones cannot make controls, or where the plan asks for none."""
    if t.plan.controls == 0:
        return None
    record = load(t)
    if record is not None or t.pending():
        return record
    verdicts = t.verdicts()
    made = _make(t.plan, t.transcripts(verdicts))
    if not made:
        return None
    record = ControlsRecord(
        per_kind=t.plan.controls, seed=derive_seed(t.plan.seed, "controls"), controls=made
    )
    save(t, record)
    return record


def _make(plan: TournamentPlan, debates: Mapping[str, Transcript]) -> list[Control]:
    """PER_KIND controls of each kind, shared among the languages that can make them: those
    with two motions or more, and debates enough to keep their sources apart."""
    groups = []
    for language in control_languages(plan.motions):
        group = {k: t for k, t in debates.items() if t.language == language}
        if len({t.motion for t in group.values()}) >= 2 and keeps_apart(group):
            groups.append((language, group))
    made: list[Control] = []
    for i, (language, group) in enumerate(groups):
        n = plan.controls // len(groups) + (i < plan.controls % len(groups))
        seed = derive_seed(plan.seed, "controls", language)
        for c in build_controls(group, n, seed=seed) if n else []:
            made.append(c.model_copy(update={"id": f"{language}-{c.id}"}) if len(groups) > 1 else c)
    return made


def save(t: Tournament, record: ControlsRecord) -> None:
    write_atomic(t.folder / FILE, record.model_dump_json(indent=2))


def remaining(plan: TournamentPlan, record: ControlsRecord) -> int:
    """The controls still to be decided, over every judge."""
    return sum(len(record.controls) - len(record.judged.get(ref, [])) for ref in judges_of(plan))


def play(
    t: Tournament,
    record: ControlsRecord,
    model_for: ModelFactory,
    *,
    on_event: Callable[[ControlEvent], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[ControlFailed]:
    """Each judge decides each control it has not decided yet; every verdict is saved as it
    comes. A judge that gives no valid ballot stops there (what it decided is kept); the
    failures, which a resume retries."""
    tell = on_event or (lambda e: None)
    failed = []
    for ref in judges_of(t.plan):
        rows = record.judged.setdefault(ref, [])

        def judged(row: Judged, rows: list[Judged] = rows, ref: str = ref) -> None:
            rows.append(row)
            save(t, record)
            tell(ControlJudged(ref, len(rows), len(record.controls)))

        try:
            calibrate_judge(
                ref,
                record.controls,
                ballot_judge(ref, model_for, t.plan.ballot),
                clock=clock,
                on_judged=judged,
                done=list(rows),
            )
        except MootError as exc:
            failed.append(ControlFailed(ref, exc.message, exc.hint))
            tell(failed[-1])
    return failed


def figures(t: Tournament) -> ControlsFigure:
    """What the report says of the controls: their state and each judge's figures."""
    record = load(t) if t.plan.controls else None
    status: Status
    if t.plan.controls == 0:
        status = "off"
    elif record is None:
        status = "waiting" if t.pending() else "unusable"
    else:
        status = "incomplete" if remaining(t.plan, record) else "judged"
    note = NOTES[status]
    if status == "off" and not control_languages(t.plan.motions):
        note += " (they need two motions or more in one language)"
    judged = {
        ref: rows
        for ref in judges_of(t.plan)
        if record is not None and (rows := record.judged.get(ref))
    }
    shown = [_figures(summarise(ref, rows)) for ref, rows in judged.items()]
    pooled = None
    if record is not None and len(judged) > 1:
        pooled = _figures(summarise(JURY, jury_on(record.controls, judged, t.plan.ballot.margin)))
    return ControlsFigure(
        per_kind=t.plan.controls,
        made=len(record.controls) if record else 0,
        status=status,
        note=note,
        judges=shown,
        validated=any(j.beats_chance for j in shown) if shown else None,
        jury=pooled,
    )


def _figures(judge: JudgeFigures) -> JudgeFigures:
    return JudgeFigures.model_validate(judge.model_dump(exclude={"judged"}))
