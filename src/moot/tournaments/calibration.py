"""Control debates: debates whose right verdict is known without a model that can argue,
made from real debates, and each judge's accuracy, biases and consistency measured on them.

A judge that always names the first seat agrees with itself and shows no side bias in a
swap pair that the first seat happened to win; only debates with a known answer tell a
judge that reads the speeches from one that does not.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.errors import UsageError
from moot.inference.protocol import ChatModel
from moot.records.transcript import ModelInfo, Transcript, Turn
from moot.tournaments.ballots import judge_debate
from moot.tournaments.judge import SIDES, Winner, speeches
from moot.tournaments.jury import Judgement, pool, weight
from moot.tournaments.settings import BallotSettings

Side = Literal["proposition", "opposition"]
Kind = Literal["off_motion", "silent", "swap", "padded", "twice"]
KINDS: tuple[Kind, ...] = ("off_motion", "silent", "swap", "padded", "twice")
# A side with nothing to say, as one empty sentence in the debate's language.
SILENT = {"en": "I have nothing to add.", "zh": "我没有什么要补充的。"}
# Filler that names the motion and argues nothing: what a verbose loser adds.
FILLER = {
    "en": "The motion before the House today is that {motion}. That is the motion we debate.",
    "zh": "今天本院辩论的辩题是：{motion}。这就是我们辩论的辩题。",
}
DEFAULT_CONTROLS = 8
MAX_CONTROLS = 64  # of each kind: 5 × 64 controls, about 400 ballots a judge
# A judge on a kind whose 95 % interval holds this share is no better than a coin.
CHANCE = 0.5

# One judge's verdict on a transcript, with the sampling seed it is to use: a side, or a
# Judgement where the judge's P(proposition) was read (an undecided one is kept as a draw).
JudgeFn = Callable[[Transcript, int], Winner | Judgement]
KNOWN = ("off_motion", "silent")  # the kinds whose winner is known
JURY = "jury"  # the name the jury's figures go by


class Control(BaseModel):
    """One control: what the judge reads (one transcript, or two for a swap pair and for
    the same debate judged twice) and what a judge that reads the speeches must answer."""

    model_config = ConfigDict(extra="forbid")

    id: str
    kind: Kind
    sources: list[str]  # the debates it was made from, by their id
    shown: list[Transcript]
    seeds: list[int]  # the judge's sampling seed for each transcript shown
    # The side that must win (off_motion, silent, padded); None where the answer is the
    # agreement of the two verdicts (swap: mirrored; twice: the same).
    expected: Side | None = None


class Judged(BaseModel):
    """One judge's verdicts on one control, and whether they are right."""

    control: str
    kind: Kind
    verdicts: list[Winner]
    correct: bool
    follows_seat: bool = False  # swap pair: the same seat won both times
    for_padded: bool = False  # padded loser: the padded side won
    seconds: float = 0.0
    # P(proposition) each verdict was read with, in the order shown (None: a judge whose
    # two orders disagreed); empty where the verdicts were sampled, not read.
    chances: list[float | None] = Field(default_factory=list)


class Interval(BaseModel):
    share: float | None  # None: no control of the kind was judged
    low: float
    high: float
    n: int
    chance: bool  # the interval holds 50 %: no better than chance here


class JudgeFigures(BaseModel):
    """A judge's figures on the controls."""

    judge: str
    accuracy: dict[str, Interval]  # kind → share right with its Wilson 95 % interval
    position_bias: Interval  # share of swap pairs whose verdicts follow the seat
    verbosity_bias: Interval  # share of padded controls won by the padded side
    consistency: Interval  # share of twice-judged debates given the same verdict
    seconds: float
    beats_chance: bool  # on the off-the-motion and silent-side controls together
    # Share of its verdicts that named a side (a draw, or an undecided ballot, names none);
    # None in a report made before it was.
    coverage: Interval | None = None


class JudgeCalibration(JudgeFigures):
    """A judge's figures on the controls, and its verdicts on each."""

    judged: list[Judged]


def wilson(k: int, n: int, z: float = 1.96) -> Interval:
    """The Wilson score interval of k successes in n: sound at the small n a local judge
    can afford, where the normal approximation runs past 0 and 1."""
    if n == 0:
        return Interval(share=None, low=0.0, high=1.0, n=0, chance=True)
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    chance = low <= CHANCE <= high
    return Interval(share=round(p, 4), low=round(low, 4), high=round(high, 4), n=n, chance=chance)


def _turns(fmt: str, first: Sequence[str], second: Sequence[str]) -> list[Turn]:
    """Turns a judge reads as the two sides' speeches, alternating as a debate would."""
    (prop, opp), steps = SIDES[fmt]
    step = steps[0] if steps else "speech"
    turns: list[Turn] = []
    for i in range(max(len(first), len(second))):
        for role, said in ((prop, first), (opp, second)):
            if i < len(said):
                turns.append(
                    Turn(
                        index=len(turns),
                        round=i + 1,
                        role=role,
                        step=step,
                        model="control",
                        temperature=0.0,
                        text=said[i],
                    )
                )
    return turns


def _shown(source: Transcript, first: Sequence[str], second: Sequence[str]) -> Transcript:
    (prop, opp), _ = SIDES[source.format]
    return Transcript(
        format=source.format,
        motion=source.motion,
        language=source.language,
        seed=source.seed,
        models={prop: ModelInfo(id="control"), opp: ModelInfo(id="control")},
        turns=_turns(source.format, first, second),
    )


def _padded(said: list[str], motion: str, language: str) -> list[str]:
    """The speeches with on-motion filler appended until they are twice as long."""
    filler = FILLER.get(language, FILLER["en"]).format(motion=motion)
    target = 2 * sum(len(s) for s in said)
    out = list(said) or [""]
    i = 0
    while sum(len(s) for s in out) < target:
        out[i % len(out)] = f"{out[i % len(out)]} {filler}".strip()
        i += 1
    return out


def check_sources(debates: dict[str, Transcript]) -> None:
    """Controls need debates of one two-sided format and language on two motions or more."""
    formats = {t.format for t in debates.values()}
    if not formats <= set(SIDES):
        raise UsageError(
            key="tournaments.calibration.controls_are_made_from_debates",
            sides=" or ".join(SIDES),
            formats=", ".join(formats),
        )
    if len(formats) > 1 or len({t.language for t in debates.values()}) > 1:
        raise UsageError(key="tournaments.calibration.controls_are_made_from_debates_2")
    if len({t.motion for t in debates.values()}) < 2:
        raise UsageError(key="tournaments.calibration.off_motion_control_needs_debates")


def _split(debates: dict[str, Transcript]) -> tuple[list[str], list[str]]:
    """The debates shown whole (swap, twice) and those the changed controls are made from:
    apart where there are four or more and the changed ones keep two motions to mix."""
    ids = sorted(debates)
    whole = ids[1::2] if len(ids) >= 4 else ids
    changed = [i for i in ids if i not in whole] if len(ids) >= 4 else ids
    if len({debates[i].motion for i in changed}) < 2:
        changed = ids
    return whole, changed


def keeps_apart(debates: dict[str, Transcript]) -> bool:
    """Whether controls made from DEBATES show no judge a debate whole beside a control
    made from it: the debates shown whole and those changed are different ones."""
    whole, changed = _split(debates)
    return not set(whole) & set(changed)


def build_controls(debates: dict[str, Transcript], n: int, *, seed: int) -> list[Control]:
    """N controls of each kind from the debates, the side that must win balanced between
    the seats. The debates whose speeches are shown whole (swap, twice) are never the ones
    the changed controls were made from, so a judge is never shown a control beside the
    debate it was made from — where there are debates enough to keep them apart."""
    check_sources(debates)
    if n < 0:
        raise UsageError(key="tournaments.calibration.controls_negative", n=n)
    rng = random.Random(seed)
    ids = sorted(debates)
    whole, changed = _split(debates)
    said = {i: speeches(debates[i]) for i in ids}
    controls: list[Control] = []

    def add(
        kind: Kind, k: int, sources: list[str], shown: list[Transcript], expected: Side | None
    ) -> None:
        seeds = [rng.randrange(2**31) for _ in shown]
        controls.append(
            Control(
                id=f"{kind}-{k + 1}",
                kind=kind,
                sources=sources,
                shown=shown,
                seeds=seeds,
                expected=expected,
            )
        )

    for k in range(n):
        on = changed[k % len(changed)]
        others = [i for i in changed if debates[i].motion != debates[on].motion]
        off = others[(k // len(changed)) % len(others)]
        side: Side = "proposition" if k % 2 == 0 else "opposition"
        other: Side = "opposition" if side == "proposition" else "proposition"
        mine, theirs = said[on][side], said[off][other]
        pair = (mine, theirs) if side == "proposition" else (theirs, mine)
        add("off_motion", k, [on, off], [_shown(debates[on], *pair)], side)
        padded = _padded(theirs, debates[on].motion, debates[on].language)
        pair = (mine, padded) if side == "proposition" else (padded, mine)
        add("padded", k, [on, off], [_shown(debates[on], *pair)], side)
        silent = [SILENT.get(debates[on].language, SILENT["en"])]
        pair = (mine, silent) if side == "proposition" else (silent, mine)
        add("silent", k, [on], [_shown(debates[on], *pair)], side)
        src = whole[k % len(whole)]
        p, o = said[src]["proposition"], said[src]["opposition"]
        add("swap", k, [src], [_shown(debates[src], p, o), _shown(debates[src], o, p)], None)
        add("twice", k, [src], [_shown(debates[src], p, o)] * 2, None)
    return controls


def judge_control(control: Control, judge: JudgeFn) -> Judged:
    """The judge's verdicts on one control, scored against what it must answer, with the
    probabilities they were read with where the judge gives them."""
    said = [judge(t, s) for t, s in zip(control.shown, control.seeds, strict=True)]
    row = score(control, [_side(x) for x in said])
    if any(isinstance(x, Judgement) for x in said):
        row.chances = [_chance(x) for x in said]
    return row


def _side(said: Winner | Judgement) -> Winner:
    if not isinstance(said, Judgement):
        return said
    return "draw" if said.outcome == "undecided" else said.outcome


def _chance(said: Winner | Judgement) -> float | None:
    if not isinstance(said, Judgement) or said.flipped or said.p_proposition is None:
        return None
    return round(said.p_proposition, 6)


def score(control: Control, verdicts: list[Winner]) -> Judged:
    """VERDICTS on one control (one for each transcript shown), scored against what a
    judge that reads the speeches must answer."""
    follows_seat = for_padded = False
    if control.kind == "swap":
        first, second = verdicts
        mirror = {"proposition": "opposition", "opposition": "proposition", "draw": "draw"}
        correct = first != "draw" and second == mirror[first]
        follows_seat = first != "draw" and first == second
    elif control.kind == "twice":
        correct = verdicts[0] == verdicts[1]
    else:
        correct = verdicts[0] == control.expected
        for_padded = control.kind == "padded" and verdicts[0] not in (control.expected, "draw")
    return Judged(
        control=control.id,
        kind=control.kind,
        verdicts=verdicts,
        correct=correct,
        follows_seat=follows_seat,
        for_padded=for_padded,
    )


def summarise(judge: str, judged: Sequence[Judged]) -> JudgeCalibration:
    """A judge's accuracy per kind, its biases and consistency, each with its interval."""

    def share(rows: Sequence[Judged], hit: Callable[[Judged], bool]) -> Interval:
        return wilson(sum(1 for r in rows if hit(r)), len(rows))

    by_kind = {k: [j for j in judged if j.kind == k] for k in KINDS}
    accuracy: dict[str, Interval] = {k: share(by_kind[k], lambda r: r.correct) for k in KINDS}
    known = by_kind["off_motion"] + by_kind["silent"]
    overall = share(known, lambda r: r.correct)
    return JudgeCalibration(
        judge=judge,
        accuracy=accuracy,
        position_bias=share(by_kind["swap"], lambda r: r.follows_seat),
        verbosity_bias=share(by_kind["padded"], lambda r: r.for_padded),
        consistency=accuracy["twice"],
        seconds=round(sum(j.seconds for j in judged), 3),
        beats_chance=overall.n > 0 and overall.low > CHANCE,
        coverage=wilson(
            sum(v != "draw" for j in judged for v in j.verdicts),
            sum(len(j.verdicts) for j in judged),
        ),
        judged=list(judged),
    )


def calibrate_judge(
    name: str,
    controls: Sequence[Control],
    judge: JudgeFn,
    *,
    clock: Callable[[], float],
    on_judged: Callable[[Judged], None] | None = None,
    done: Sequence[Judged] = (),
) -> JudgeCalibration:
    """Every control judged by one judge, timed, then summarised; a control among DONE
    (judged before, by its id) is not asked again."""
    before = {row.control: row for row in done}
    judged = []
    for control in controls:
        if control.id in before:
            judged.append(before[control.id])
            continue
        start = clock()
        row = judge_control(control, judge)
        row.seconds = round(clock() - start, 3)
        judged.append(row)
        if on_judged is not None:
            on_judged(row)
    return summarise(name, judged)


def ballot_judge(
    ref: str, model_for: Callable[[str], ChatModel], ballot: BallotSettings | None = None
) -> JudgeFn:
    """A judge model as a JudgeFn: the tournament's own ballot (BALLOT: how it is read),
    asked of that one model, at the control's sampling seed; no forfeit is looked for. Its
    Judgement keeps the probability read, so a jury pools probabilities, not sides."""

    def judge(shown: Transcript, seed: int) -> Judgement:
        verdict = judge_debate(
            "control",
            shown.model_copy(update={"seed": seed}),
            [ref],
            self_judged=False,
            model_for=model_for,
            ballot=ballot,
        )
        (read,) = verdict.ballots
        return Judgement(
            outcome=verdict.winner,
            p_proposition=read.p_proposition,
            flipped=read.flipped,
        )

    return judge


def jury_on(
    controls: Sequence[Control], judged: Mapping[str, Sequence[Judged]], margin: float
) -> list[Judged]:
    """The jury's verdicts on the controls, scored as a judge's are: on each transcript
    shown, the judges' probabilities pooled by `jury.pool` (a verdict kept without one
    counts as certain of its side; a draw, or a judge whose orders disagreed, is no vote),
    each judge weighted by its accuracy on the other controls with a known winner
    (leave-one-out, so no control's answer weighs the votes on itself); undecided within
    MARGIN of even, kept as a draw."""
    by_id = {ref: {row.control: row for row in rows} for ref, rows in judged.items()}
    right = {
        ref: [row.correct for row in rows.values() if row.kind in KNOWN]
        for ref, rows in by_id.items()
    }
    out = []
    for control in controls:
        deciding = [(ref, rows[control.id]) for ref, rows in by_id.items() if control.id in rows]
        if not deciding:
            continue
        verdicts: list[Winner] = []
        chances: list[float | None] = []
        for i in range(len(control.shown)):
            votes = []
            for ref, row in deciding:
                k, n = sum(right[ref]), len(right[ref])
                if control.kind in KNOWN:
                    k, n = k - row.correct, n - 1
                votes.append((_vote(row, i), weight(k / n if n else None)))
            said = pool(votes, margin)
            verdicts.append(_side(said))
            chances.append(_chance(said))
        row = score(control, verdicts)
        row.chances = chances
        out.append(row)
    return out


def _vote(row: Judged, i: int) -> Judgement:
    """A judge's I-th verdict as a vote: the probability it was read with; a side kept
    without one, as certain of that side; none for a draw kept without one."""
    said = row.verdicts[i]
    if row.chances:
        p = row.chances[i]
        return Judgement(outcome=said, p_proposition=p, flipped=p is None)
    if said == "draw":
        return Judgement(outcome="undecided")
    return Judgement(outcome=said, p_proposition=1.0 if said == "proposition" else 0.0)
