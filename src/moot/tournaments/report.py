"""A tournament's report: ratings (raw, and controlled for the speeches' length), side
bias and judge agreement from its verdicts, each model's rule-keeping from its debates'
turns, each judge's figures on the control debates, written as ratings.json, ratings.csv,
judges.csv and a chart, ratings.png."""

from __future__ import annotations

import csv
import io
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, Field

from moot.engine.rules import length_units
from moot.models.labels import model_labels
from moot.records.files import write_atomic
from moot.records.transcript import Transcript, Turn
from moot.tournaments import ratings
from moot.tournaments.calibration import KINDS, Interval, JudgeFigures
from moot.tournaments.controls import ControlsFigure, figures
from moot.tournaments.judge import SIDES, Outcome, Verdict, speeches
from moot.tournaments.jury import Judgement, pool, weight
from moot.tournaments.plan import Pairing, TournamentPlan
from moot.tournaments.rules import RuleKeeping, debate_turns, rule_keeping
from moot.tournaments.run import Tournament

LEVEL = 0.95


class ModelRating(BaseModel):
    rank: int
    model: str
    strength: float  # log Bradley-Terry strength, mean 0 over the models
    ci_low: float
    ci_high: float
    wins: int
    losses: int
    draws: int
    debates: int
    # The length-controlled rating: the strength with the speeches' length difference
    # fitted beside it (None: a report made before it was).
    length_controlled: float | None = None
    lc_low: float | None = None
    lc_high: float | None = None
    rule_keeping: RuleKeeping = Field(default_factory=RuleKeeping)


class LengthEffect(BaseModel):
    """How much a side's longer speeches moved the verdicts, fitted with the strengths:
    log-odds of winning for speaking all the words (length difference 1), interval."""

    effect: float
    low: float
    high: float


class JudgeRuleKeeping(BaseModel):
    """A judge that is not among the ranked models: its turns as a judge."""

    model: str
    rule_keeping: RuleKeeping


class SideBiasFigure(BaseModel):
    swap_pairs: int  # swap pairs with a winner in both debates
    same_side_both: int
    rate: float | None  # same_side_both / swap_pairs
    proposition_wins: int
    decided: int
    proposition_share: float | None


class AgreementFigure(BaseModel):
    panels: int  # debates judged by two or more
    judge_pairs: int
    agreeing_pairs: int
    pairwise: float | None
    unanimous: int
    unanimity: float | None


class Report(BaseModel):
    format: str
    models: list[ModelRating]
    debates_planned: int
    debates_decided: int
    self_judged: int  # decided by judges who had debated in them (no other judge left)
    side_bias: SideBiasFigure
    judge_agreement: AgreementFigure
    judges: list[JudgeRuleKeeping] = Field(default_factory=list)  # those not ranked
    bootstrap_samples: int
    interval: float = LEVEL
    seed: int
    schedule: str = "round-robin"
    budget: int | None = None  # adaptive: the most debates it could have played
    # The judges on the control debates (None: not asked for, as by a caller of `build`).
    calibration: ControlsFigure | None = None
    # Abstentions: debates whose jury was undecided (a flip, or within the margin of even),
    # which the ratings skip; coverage is the share of judged debates that were decided.
    debates_undecided: int = 0
    coverage: float | None = None
    forfeits: int = 0  # decided by a forfeit found in code, not by the judges
    ballot: dict[str, object] = Field(default_factory=dict)  # how ballots were read
    # Each judge's weight in its juries, from its accuracy on the controls (1: unmeasured).
    weights: dict[str, float] = Field(default_factory=dict)
    length_effect: LengthEffect | None = None


def judge_weights(calibration: ControlsFigure | None) -> dict[str, float]:
    """Each judge measured on the controls with a known winner (off the motion, silent
    side): `jury.weight` of its accuracy on them together."""
    found = {}
    for j in calibration.judges if calibration is not None else []:
        known = [j.accuracy[k] for k in ("off_motion", "silent") if k in j.accuracy]
        n = sum(i.n for i in known)
        if n:
            right = sum((i.share or 0.0) * i.n for i in known)
            found[j.judge] = round(weight(right / n), 4)
    return found


def outcome(verdict: Verdict, weights: Mapping[str, float], margin: float) -> Outcome:
    """The verdict's outcome, its jury pooled again with WEIGHTS where there are any: a
    judge's weight is known only once the controls are judged, after every debate."""
    read = [b for b in verdict.ballots if b.outcome is not None]
    if verdict.decided_by != "judges" or not weights or not read or verdict.winner == "draw":
        return verdict.winner
    votes = [
        (
            Judgement(outcome=b.outcome, p_proposition=b.p_proposition, flipped=b.flipped),
            weights.get(b.judge, 1.0),
        )
        for b in read
        if b.outcome is not None
    ]
    return pool(votes, margin).outcome


def _length(transcript: Transcript | None) -> float:
    """The Proposition's words minus the Opposition's, over both, in what the judges read."""
    if transcript is None or transcript.format not in SIDES:
        return 0.0
    said = speeches(transcript)
    words = [sum(length_units(t) for t in said[side]) for side in ("proposition", "opposition")]
    return ratings.length_difference(*words)


def build(
    plan: TournamentPlan,
    verdicts: Mapping[str, Verdict],
    *,
    samples: int,
    transcripts: Mapping[str, Transcript],
    calibration: ControlsFigure | None = None,
) -> Report:
    """The report over the finished debates (those without a verdict are left out);
    TRANSCRIPTS: theirs, by debate id, for the rule-keeping; CALIBRATION: the judges'
    figures on the controls (`controls.figures`)."""
    decided = [(p, verdicts[p.id]) for p in plan.debates if p.id in verdicts]
    kept = rules_of(decided, transcripts)
    weights = judge_weights(calibration)
    said = {p.id: outcome(v, weights, plan.ballot.margin) for p, v in decided}
    # An undecided debate is skipped by the ratings, not counted as half a win each.
    games = [
        ratings.Game(p.proposition, p.opposition, said[p.id], _length(transcripts.get(p.id)))
        for p, _ in decided
        if said[p.id] != "undecided"
    ]
    rated = ratings.rate(plan.models, games, samples=samples, seed=plan.seed, level=LEVEL)
    lc = ratings.rate_length_controlled(
        plan.models, games, samples=samples, seed=plan.seed, level=LEVEL
    )
    swaps: dict[str, list[str]] = {}
    for p, _ in decided:  # an abstention names no side: as a draw, no pair's winner
        swaps.setdefault(p.swap, []).append(said[p.id].replace("undecided", "draw"))
    bias = ratings.side_bias([(w[0], w[1]) for w in swaps.values() if len(w) == 2])
    agree = ratings.agreement([[b.said for b in v.ballots if b.error is None] for _, v in decided])
    undecided = sum(o == "undecided" for o in said.values())
    return Report(
        format=plan.format,
        models=[
            ModelRating(
                rank=i + 1,
                model=r.model,
                strength=round(r.strength, 4),
                ci_low=round(r.low, 4),
                ci_high=round(r.high, 4),
                wins=r.wins,
                losses=r.losses,
                draws=r.draws,
                debates=r.debates,
                length_controlled=round(lc.strength[r.model][0], 4),
                lc_low=round(lc.strength[r.model][1], 4),
                lc_high=round(lc.strength[r.model][2], 4),
                rule_keeping=kept.get(r.model, RuleKeeping()),
            )
            for i, r in enumerate(rated)
        ],
        debates_planned=len(plan.debates),
        debates_decided=len(decided),
        self_judged=sum(v.self_judged for _, v in decided),
        side_bias=SideBiasFigure(
            swap_pairs=bias.pairs,
            same_side_both=bias.same_side,
            rate=bias.rate,
            proposition_wins=bias.proposition_wins,
            decided=bias.decided,
            proposition_share=bias.proposition_share,
        ),
        judge_agreement=AgreementFigure(
            panels=agree.debates,
            judge_pairs=agree.judge_pairs,
            agreeing_pairs=agree.agreeing_pairs,
            pairwise=agree.pairwise,
            unanimous=agree.unanimous,
            unanimity=agree.unanimity,
        ),
        judges=[
            JudgeRuleKeeping(model=j, rule_keeping=kept.get(j, RuleKeeping()))
            for j in dict.fromkeys(plan.judges)
            if j not in plan.models
        ],
        bootstrap_samples=samples,
        seed=plan.seed,
        schedule=plan.schedule,
        budget=plan.budget,
        calibration=calibration,
        debates_undecided=undecided,
        coverage=round((len(decided) - undecided) / len(decided), 4) if decided else None,
        forfeits=sum(v.decided_by == "forfeit" for _, v in decided),
        ballot=plan.ballot.model_dump(),
        weights=weights,
        length_effect=LengthEffect(
            effect=round(lc.effect[0], 4), low=round(lc.effect[1], 4), high=round(lc.effect[2], 4)
        ),
    )


def report_of(t: Tournament, *, samples: int) -> Report:
    """The report of the tournament in its folder: its finished debates and its controls."""
    verdicts = t.verdicts()
    return build(
        t.plan,
        verdicts,
        samples=samples,
        transcripts=t.transcripts(verdicts),
        calibration=figures(t),
    )


def rules_of(
    decided: list[tuple[Pairing, Verdict]], transcripts: Mapping[str, Transcript]
) -> dict[str, RuleKeeping]:
    """Every model's rule-keeping over the decided debates, the turns of each seat it held
    (judges' ballots included), by its reference in the plan."""
    turns: list[Turn] = []
    failed: list[str] = []
    for p, v in decided:
        spoken, lost = debate_turns(transcripts[p.id], v)
        turns += spoken
        failed += lost
    return rule_keeping(turns, failed)


def write(report: Report, folder: Path) -> list[Path]:
    """ratings.json, ratings.csv and ratings.png in `folder`, and judges.csv where judges
    were measured on controls; their paths."""
    paths = [folder / "ratings.json", folder / "ratings.csv", folder / "ratings.png"]
    write_atomic(paths[0], report.model_dump_json(indent=2))
    write_atomic(paths[1], to_csv(report))
    draw(report, paths[2])
    if report.calibration is not None and report.calibration.judges:
        paths.append(folder / "judges.csv")
        write_atomic(paths[-1], judges_csv(report.calibration.judges))
    return paths


def _rows(fields: list[str], rows: list[dict[str, object]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def to_csv(report: Report) -> str:
    """One row per ranked model: its rating, then its rule-keeping, then `validated`:
    whether a judge beat chance on the controls (empty: none were judged)."""
    rating = [f for f in ModelRating.model_fields if f != "rule_keeping"]
    kept = [*RuleKeeping.model_fields, *RuleKeeping.model_computed_fields]
    figure = report.calibration
    validated = "" if figure is None or figure.validated is None else figure.validated
    rows = []
    for row in report.models:
        data = row.model_dump()
        rows.append(
            {**{f: data[f] for f in rating}, **data["rule_keeping"], "validated": validated}
        )
    return _rows([*rating, *kept, "validated"], rows)


def judges_csv(judges: list[JudgeFigures]) -> str:
    """One row per judge: its accuracy on each kind of control, its position and verbosity
    bias and its consistency, each as share, low, high and n (its 95 % interval)."""
    figures = [f"accuracy_{k}" for k in KINDS] + ["position_bias", "verbosity_bias", "consistency"]
    parts = ("share", "low", "high", "n")
    rows = []
    for j in judges:
        found: dict[str, Interval] = {
            **{f"accuracy_{k}": a for k, a in j.accuracy.items()},
            "position_bias": j.position_bias,
            "verbosity_bias": j.verbosity_bias,
            "consistency": j.consistency,
        }
        row: dict[str, object] = {"judge": j.judge, "beats_chance": j.beats_chance}
        for name in figures:
            row |= {f"{name}_{part}": getattr(found[name], part) for part in parts}
        rows.append(row | {"seconds": j.seconds})
    fields = ["judge", "beats_chance", *(f"{f}_{p}" for f in figures for p in parts), "seconds"]
    return _rows(fields, rows)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def label(name: str) -> str:
    """A model's name as the chart shows it: control characters escaped (`\\x1b`), a `$`
    as itself, not the start of a formula (a stray one would stop the drawing)."""
    shown = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", name)
    return shown.replace("$", r"\$")


def draw(report: Report, path: Path) -> None:
    """Each model's strength as a dot with its interval as a bar, strongest on top; each
    model named by its short label."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, no GUI toolkit
    import matplotlib.pyplot as plt

    rows = list(reversed(report.models))
    # Each model by its short label (a path's file name), as the terminal shows it: a long
    # path would squeeze the chart; ratings.json keeps the full reference.
    short = model_labels(r.model for r in rows)
    names = [label(short[r.model]) for r in rows]
    ys = range(len(rows))
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.5 * len(rows)))
    try:
        # A percentile interval of few debates need not hold the estimate: drawn as it is.
        ax.hlines(ys, [r.ci_low for r in rows], [r.ci_high for r in rows], linewidth=1.5)
        ax.plot([r.strength for r in rows], ys, "o")
        ax.axvline(0, color="grey", linewidth=0.8, linestyle="--")
        ax.set_yticks(range(len(rows)), names)
        ax.set_ylim(-0.6, len(rows) - 0.4)
        ax.set_xlabel(f"Bradley-Terry strength (log), {report.interval:.0%} bootstrap interval")
        decided = f"{report.debates_decided} debates"
        ax.set_title(f"moot tournament · {report.format} · {decided}")
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=120)
    finally:
        plt.close(fig)
    # A fresh temp file (never one planted there, nor a symlink), then renamed into place.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(buffer.getvalue())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
