"""A tournament debate decided by reading its judges' probabilities, not by sampling a word.

Pairwise, a judge is asked the winner as `{"winner": "A" | "B" | "draw"}` with the sides
shown one way round and then the other (labels stay in place, speeches swap, the answer is
mapped back); its P(proposition) is the two orders' mean, and a judge whose two orders
name different sides has followed the order, not the speeches: it abstains. Pointwise, a
judge answers yes/no questions of each side alone, each read as P(yes) and divided by the
same question's P(yes) on a content-free speech (contextual calibration), so a judge that
says yes to anything scores nothing for it. A jury pools its judges (`jury.pool`). A side
that said nothing, or never the motion's words, forfeits before any judge is asked.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.engine.rules import content_terms
from moot.engine.turns import Engine, Role, derive_seed
from moot.errors import MootError, UsageError
from moot.events import Listener
from moot.inference.choice import Choice, ChoiceRequest, LikelihoodRequest, choose
from moot.inference.choice import likelihood as likelihood_of
from moot.inference.protocol import ChatModel, Message
from moot.inference.remote import is_remote_ref
from moot.prompts import PromptPack, limited, load_pack
from moot.records.transcript import ModelInfo, Transcript
from moot.tournaments.judge import (
    JUDGE_TEMPERATURE,
    SPEECH_CHARS,
    JudgeBallot,
    Outcome,
    Verdict,
    speeches,
)
from moot.tournaments.jury import Judgement, outcome_of, pool
from moot.tournaments.settings import PAIRWISE_METHODS, BallotSettings

Side = Literal["proposition", "opposition"]
WINNER = "winner"  # the step that asks which side won
QUESTION = "question"  # the step that asks a yes/no question of one side
REASONS = "reasons"  # the step that asks a judge's reasons, after its verdict
SPEECH = "speech"  # the request a side's speeches are scored as the reply to (likelihood)
# Nats of difference between the two sides' likelihood scores that put P(proposition) at
# 0.73 (the logistic of 1): a side's evidence is a sum over its tokens, so a few nats is
# a word or two; ten is a point the motion clearly explains.
LIKELIHOOD_SCALE = 10.0
QUESTIONS = ("argues", "answers")  # of each side: does it argue its side? answer the other?
PROBE = "N/A"  # the content-free speech a question is calibrated on
REASONS_TOKENS = 160
EPSILON = 1e-6
# The words every English motion is worded with, which say nothing of its subject.
FRAME = content_terms("This House Believes That")


class Reasons(BaseModel):
    """A judge's reasons for the verdict it has given."""

    model_config = ConfigDict(extra="forbid")

    reasons: str = Field(min_length=1, max_length=240)


# -- forfeits -----------------------------------------------------------------------------


def forfeit(transcript: Transcript) -> tuple[Side, str] | None:
    """The side that forfeits, and why, as a rulebook would decide it without a judge: its
    speeches are empty, or none of them holds a word of the motion; None where neither or
    both sides do (then the judges decide)."""
    said = speeches(transcript)
    terms = content_terms(transcript.motion) - FRAME
    lost: list[tuple[Side, str]] = []
    for side in ("proposition", "opposition"):
        texts = [s for s in said[side] if s.strip()]
        if not texts:
            lost.append((side, "said nothing"))
        elif terms and not any(content_terms(s) & terms for s in texts):
            lost.append((side, "never touched the motion's words"))
    return lost[0] if len(lost) == 1 else None


# -- reading one judge --------------------------------------------------------------------


def _ask(
    model: ChatModel,
    pack: PromptPack,
    step: str,
    field: str,
    options: tuple[str, ...],
    *,
    seed: int,
    timeout_s: float | None,
    **variables: object,
) -> Choice:
    text = pack.render(step, chars=SPEECH_CHARS, round=0, **variables)
    request = ChoiceRequest(
        messages=(Message(role="user", content=text),),
        field=field,
        options=options,
        seed=seed,
        timeout_s=timeout_s,
    )
    return choose(model, request)


def _sides(said: Mapping[str, list[str]], swapped: bool) -> list[dict[str, object]]:
    """The two sides as shown, A first: the proposition first unless SWAPPED."""
    order: tuple[Side, Side] = (
        ("opposition", "proposition") if swapped else ("proposition", "opposition")
    )
    return [
        {"label": label, "for_motion": side == "proposition", "speeches": said[side]}
        for label, side in zip(("A", "B"), order, strict=True)
    ]


class Reading(BaseModel):
    """One judge's probabilities on one debate, before a verdict is made of them."""

    p_proposition: float
    orders: list[float]
    draw: list[float]
    flipped: bool = False
    scores: dict[str, float] = Field(default_factory=dict)
    methods: list[str]


def pairwise(
    model: ChatModel,
    pack: PromptPack,
    transcript: Transcript,
    *,
    orders: int,
    seed: int,
    timeout_s: float | None = None,
) -> Reading:
    """P(proposition) in each order (the draw mass set aside), their mean, and whether the
    orders named different sides."""
    said = speeches(transcript)
    per_order: list[float] = []
    draws: list[float] = []
    methods: list[str] = []
    for swapped in (False, True)[:orders]:
        choice = _ask(
            model,
            pack,
            WINNER,
            "winner",
            ("A", "B", "draw"),
            seed=derive_seed(seed, "order", int(swapped)),
            timeout_s=timeout_s,
            motion=transcript.motion,
            sides=_sides(said, swapped),
        )
        prop, opp = (choice.p("B"), choice.p("A")) if swapped else (choice.p("A"), choice.p("B"))
        per_order.append(prop / (prop + opp) if prop + opp > 0 else 0.5)
        draws.append(choice.p("draw"))
        methods.append(choice.method)
    named = {("proposition" if p > 0.5 else "opposition") for p in per_order if p != 0.5}
    return Reading(
        p_proposition=sum(per_order) / len(per_order),
        orders=per_order,
        draw=draws,
        flipped=len(named) > 1,
        methods=methods,
    )


def calibrated_yes(real: Choice, probe: Choice) -> float:
    """P(yes) with the label prior the probe shows removed: each answer's probability
    divided by its probability on the content-free speech, renormalised."""
    yes = real.p("yes") / max(probe.p("yes"), EPSILON)
    no = real.p("no") / max(probe.p("no"), EPSILON)
    return yes / (yes + no) if yes + no > 0 else 0.5


def pointwise(
    model: ChatModel,
    pack: PromptPack,
    transcript: Transcript,
    *,
    seed: int,
    timeout_s: float | None = None,
) -> Reading:
    """Each side's score, the mean calibrated P(yes) of its questions, and P(proposition)
    as the proposition's share of the two scores."""
    said = speeches(transcript)
    scores: dict[str, float] = {}
    methods: list[str] = []
    for side, other in (("proposition", "opposition"), ("opposition", "proposition")):
        found = []
        for question in QUESTIONS:
            read = {}
            for shown in ("real", "probe"):
                read[shown] = _ask(
                    model,
                    pack,
                    QUESTION,
                    "answer",
                    ("yes", "no"),
                    seed=derive_seed(seed, side, question, shown),
                    timeout_s=timeout_s,
                    motion=transcript.motion,
                    question=question,
                    for_motion=side == "proposition",
                    speeches=said[side] if shown == "real" else [PROBE],
                    others=said[other],
                )
                methods.append(read[shown].method)
            found.append(calibrated_yes(read["real"], read["probe"]))
        scores[side] = sum(found) / len(found)
    total = scores["proposition"] + scores["opposition"]
    p = scores["proposition"] / total if total > 0 else 0.5
    return Reading(p_proposition=p, orders=[p], draw=[], scores=scores, methods=methods)


def check_readable(method: str, judges: Sequence[str]) -> None:
    """Refuse, before anything runs, a likelihood ballot with a judge on a server: only a
    model moot runs itself scores a speech it is given."""
    if method != "likelihood":
        return
    for ref in judges:
        if is_remote_ref(ref):
            raise UsageError(key="tournaments.ballots.no_likelihood", field="judges", model=ref)


def _logprob(
    model: ChatModel,
    pack: PromptPack,
    motion: str,
    for_motion: bool | None,
    text: str,
    timeout_s: float | None,
) -> float:
    asked = pack.render(SPEECH, chars=SPEECH_CHARS, round=0, motion=motion, for_motion=for_motion)
    read = likelihood_of(
        model,
        LikelihoodRequest(
            messages=(Message(role="user", content=asked),), reply=text, timeout_s=timeout_s
        ),
    )
    if read is None:
        raise MootError(key="tournaments.ballots.no_likelihood", model=model.model_id)
    return read.logprob


def likelihood(
    model: ChatModel,
    pack: PromptPack,
    transcript: Transcript,
    *,
    timeout_s: float | None = None,
) -> Reading:
    """Each side's speeches scored by how much likelier the model finds them as a speech for
    their side of this motion than as a speech on no motion (relevance) and than as one for
    the other side (stance), in nats; P(proposition) the logistic of the two sides'
    difference over LIKELIHOOD_SCALE. A side that said nothing scores 0."""
    said = speeches(transcript)
    scores: dict[str, float] = {}
    for side in ("proposition", "opposition"):
        text = "\n\n".join(limited(s, SPEECH_CHARS) for s in said[side] if s.strip())
        if not text:
            scores[side] = 0.0
            continue
        for_motion = side == "proposition"
        read = {
            stance: _logprob(model, pack, transcript.motion, stance, text, timeout_s)
            for stance in (for_motion, not for_motion, None)
        }
        scores[side] = 2 * read[for_motion] - read[not for_motion] - read[None]
    gap = (scores["proposition"] - scores["opposition"]) / LIKELIHOOD_SCALE
    p = 1 / (1 + math.exp(-max(-50.0, min(50.0, gap))))
    return Reading(p_proposition=p, orders=[p], draw=[], scores=scores, methods=["likelihood"])


def read_judge(
    model: ChatModel,
    pack: PromptPack,
    transcript: Transcript,
    ballot: BallotSettings,
    *,
    seed: int,
    timeout_s: float | None = None,
) -> Reading:
    """The judge's reading by the ballot's method; blend: the mean of both, the flip and
    the orders pairwise's."""
    if ballot.method == "pointwise":
        return pointwise(model, pack, transcript, seed=seed, timeout_s=timeout_s)
    if ballot.method == "likelihood":
        return likelihood(model, pack, transcript, timeout_s=timeout_s)
    pair = pairwise(model, pack, transcript, orders=ballot.orders, seed=seed, timeout_s=timeout_s)
    if ballot.method == "pairwise":
        return pair
    point = pointwise(model, pack, transcript, seed=seed, timeout_s=timeout_s)
    return pair.model_copy(
        update={
            "p_proposition": (pair.p_proposition + point.p_proposition) / 2,
            "scores": point.scores,
            "methods": pair.methods + point.methods,
        }
    )


def judgement_of(reading: Reading, margin: float) -> Judgement:
    """The judge's own say: undecided on a flip or within MARGIN of even; a draw where the
    orders put half their mass or more on it."""
    if reading.flipped:
        outcome: Outcome = "undecided"
    elif reading.draw and sum(reading.draw) / len(reading.draw) >= 0.5:
        outcome = "draw"
    else:
        outcome = outcome_of(reading.p_proposition, margin)
    return Judgement(outcome=outcome, p_proposition=reading.p_proposition, flipped=reading.flipped)


def method_of(methods: Sequence[str]) -> str:
    """How a judge's probabilities were read: one method, or those used, joined."""
    return "+".join(dict.fromkeys(methods))


# -- the debate ---------------------------------------------------------------------------


def judge_debate(
    debate_id: str,
    transcript: Transcript,
    judges: Sequence[str],
    *,
    self_judged: bool,
    model_for: Callable[[str], ChatModel],
    listeners: list[Listener] | None = None,
    ballot: BallotSettings | None = None,
    forfeits: bool = False,
    weights: Mapping[str, float] | None = None,
    timeout_s: float | None = None,
) -> Verdict:
    """The verdict on a finished debate: a forfeit where FORFEITS and one side forfeits,
    else each judge's probabilities read, pooled by the jury (each judge weighted by
    WEIGHTS, 1 where it has none); a judge that fails is left out and named. No judge sees
    who debated."""
    ballot = ballot or BallotSettings()
    common = {
        "debate": debate_id,
        "self_judged": self_judged,
        "ballot_method": ballot.method,
        "orders": ballot.orders if ballot.method in PAIRWISE_METHODS else 1,
    }
    lost = forfeit(transcript) if forfeits else None
    if lost is not None:
        side, why = lost
        winner: Outcome = "opposition" if side == "proposition" else "proposition"
        return Verdict(
            winner=winner,
            margin=None,
            votes={},
            ballots=[],
            turns=[],
            decided_by="forfeit",
            forfeit=f"the {side} {why}",
            **common,  # type: ignore[arg-type]
        )
    pack = load_pack(transcript.language, "tournament")  # type: ignore[arg-type]
    ballots: list[JudgeBallot] = []
    votes: list[tuple[Judgement, float]] = []
    for i, ref in enumerate(judges):
        start = time.perf_counter()
        try:
            reading = read_judge(
                model_for(ref),
                pack,
                transcript,
                ballot,
                seed=derive_seed(transcript.seed, "judge", i),
                timeout_s=timeout_s,
            )
        except MootError as exc:
            ballots.append(JudgeBallot(judge=ref, error=exc.message))
            continue
        judged = judgement_of(reading, ballot.margin)
        votes.append((judged, (weights or {}).get(ref, 1.0)))
        ballots.append(
            JudgeBallot(
                judge=ref,
                outcome=judged.outcome,
                p_proposition=round(reading.p_proposition, 6),
                orders=[round(p, 6) for p in reading.orders],
                draw=[round(p, 6) for p in reading.draw],
                flipped=reading.flipped,
                scores={k: round(v, 6) for k, v in reading.scores.items()},
                method=method_of(reading.methods),
                seconds=round(time.perf_counter() - start, 3),
            )
        )
    if ballots and not votes:  # no judge could judge it: the debate waits for a resume to judge it
        first = next(b for b in ballots if b.error is not None)
        raise MootError(
            key="tournaments.ballots.no_judge_read",
            debate=debate_id,
            judge=first.judge,
            error=first.error,
        )
    jury = pool(votes, ballot.margin)
    outcome = jury.outcome
    said = [b.outcome for b in ballots if b.outcome is not None]
    if said and all(o == "draw" for o in said):
        outcome = "draw"
    verdict = Verdict(
        winner=outcome,
        margin=None,
        votes=dict(Counter(said)),
        ballots=ballots,
        turns=[],
        decided_by="judges",
        p_proposition=None if jury.p_proposition is None else round(jury.p_proposition, 6),
        left_out=[b.judge for b in ballots if b.error is not None],
        **common,  # type: ignore[arg-type]
    )
    if ballot.reasons:
        verdict = with_reasons(verdict, transcript, model_for, pack, listeners)
    return verdict


def with_reasons(
    verdict: Verdict,
    transcript: Transcript,
    model_for: Callable[[str], ChatModel],
    pack: PromptPack,
    listeners: list[Listener] | None,
) -> Verdict:
    """Each judge that decided asked for its reasons, after its verdict and given it: one
    short structured turn each, kept with its ballot and among the verdict's turns."""
    deciding = [(i, b) for i, b in enumerate(verdict.ballots) if b.outcome is not None]
    roles = {
        f"judge{i + 1}": Role(f"judge{i + 1}", model_for(b.judge), JUDGE_TEMPERATURE)
        for i, b in deciding
    }
    record = Transcript(
        format="tournament",
        motion=transcript.motion,
        language=transcript.language,
        seed=transcript.seed,
        models={r: ModelInfo(id=role.model.model_id) for r, role in roles.items()},
        refs={f"judge{i + 1}": b.judge for i, b in deciding},
        sampling={r: JUDGE_TEMPERATURE for r in roles},
        prompt_pack=pack.digest,
    )
    engine = Engine(pack=pack, roles=roles, transcript=record, listeners=listeners)
    ballots = list(verdict.ballots)
    for i, b in deciding:
        name = f"judge{i + 1}"
        reply, _ = engine.structured(
            name,
            REASONS,
            Reasons,
            round=0,
            label=f"{name} ({b.judge})",
            max_tokens=REASONS_TOKENS,
            motion=transcript.motion,
            sides=_sides(speeches(transcript), False),
            chars=SPEECH_CHARS,
            outcome=b.outcome,
        )
        ballots[i] = b.model_copy(update={"reasons": reply.reasons})
    return verdict.model_copy(update={"ballots": ballots, "turns": record.turns})


def sample_variables() -> dict[str, dict[str, object]]:
    """Variables that exercise each ballot step (to check a pack before a tournament)."""
    sides = _sides({"proposition": ["p1", "p2"], "opposition": ["o1"]}, False)
    motion = "This House Believes That tests matter"
    return {
        WINNER: {"motion": motion, "sides": sides, "chars": SPEECH_CHARS, "round": 0},
        QUESTION: {
            "motion": motion,
            "question": "answers",
            "for_motion": True,
            "speeches": ["p1"],
            "others": ["o1"],
            "chars": SPEECH_CHARS,
            "round": 0,
        },
        REASONS: {
            "motion": motion,
            "sides": sides,
            "outcome": "proposition",
            "chars": SPEECH_CHARS,
            "round": 0,
        },
    }
