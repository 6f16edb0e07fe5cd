"""Deciding a tournament debate: a judge or a panel reads both sides' speeches and each
returns a grammar-constrained ballot; the panel's verdict is the plurality of ballots."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.engine.turns import Engine, Role
from moot.events import Listener
from moot.inference.protocol import ChatModel
from moot.prompts import load_pack
from moot.records.transcript import ModelInfo, Transcript, Turn

Winner = Literal["proposition", "opposition", "draw"]
# A verdict that may abstain: "undecided" where the judge's (or the jury's) probability is
# within its margin of even, or the two orders of a ballot disagree (a flip).
Outcome = Literal["proposition", "opposition", "draw", "undecided"]

# The two seats of each two-sided format, in the order (for the motion, against it), and
# the steps of theirs a judge reads (None: every step they spoke).
SIDES: dict[str, tuple[tuple[str, str], tuple[str, ...] | None]] = {
    "oxford": (("proposition", "opposition"), ("speech", "rebuttal")),
    "challenge": (("proposer", "challenger"), None),
}
SIDE_NAMES = {
    ("oxford", "en"): ("Proposition", "Opposition"),
    ("oxford", "zh"): ("正方", "反方"),
    ("challenge", "en"): ("Proposer", "Challenger"),
    ("challenge", "zh"): ("提议方", "挑战方"),
}
JUDGE_TEMPERATURE = 0.2
BALLOT_TOKENS = 260  # the ballot's bounded strings close well within this
SPEECH_CHARS = 700  # each speech as the judge reads it
STEP = "verdict"


class Ballot(BaseModel):
    """One tournament judge's verdict on a whole debate.

    The judge names each side's strongest point and its reasons before it names a
    winner, so the decision comes after reading both sides; the margin is a word, not a
    number a small model would copy from the prompt.
    """

    model_config = ConfigDict(extra="forbid")

    proposition_best: str = Field(min_length=1, max_length=150)
    opposition_best: str = Field(min_length=1, max_length=150)
    reasons: str = Field(min_length=1, max_length=240)
    winner: Literal["proposition", "opposition", "draw"]
    margin: Literal["narrow", "clear", "decisive"]


class JudgeBallot(BaseModel):
    judge: str  # the judge's model reference
    ballot: Ballot


class Verdict(BaseModel):
    """The decision on one debate, with every ballot and the judges' turns for audit."""

    debate: str
    winner: Winner
    margin: str | None  # None for a draw
    votes: dict[str, int]
    self_judged: bool  # no judge outside the debate was available
    ballots: list[JudgeBallot]
    turns: list[Turn]


def decide(ballots: Sequence[Ballot]) -> tuple[Winner, str | None]:
    """The plurality of the ballots (a tie at the top is a draw) and the commonest margin
    among the ballots for the winner, the narrower on a tie."""
    votes = Counter(b.winner for b in ballots)
    ranked = votes.most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return "draw", None
    winner: Winner = ranked[0][0]
    if winner == "draw":
        return "draw", None
    order = ("narrow", "clear", "decisive")
    margins: Counter[str] = Counter(b.margin for b in ballots if b.winner == winner)
    return winner, max(order, key=lambda m: (margins[m], -order.index(m)))


def speeches(transcript: Transcript) -> dict[str, list[str]]:
    """What the judges read: each side's speeches in order, as {proposition, opposition}."""
    (first, second), steps = SIDES[transcript.format]
    picked = [t for t in transcript.turns if steps is None or t.step in steps]
    return {
        "proposition": [t.text for t in picked if t.role == first and t.text],
        "opposition": [t.text for t in picked if t.role == second and t.text],
    }


def judge_debate(
    debate_id: str,
    transcript: Transcript,
    judges: Sequence[str],
    *,
    self_judged: bool,
    model_for: Callable[[str], ChatModel],
    listeners: list[Listener] | None = None,
) -> Verdict:
    """Ask each judge for a ballot on the finished debate; none of them sees who debated."""
    language = transcript.language
    pack = load_pack(language, "tournament")  # type: ignore[arg-type]
    # The ballot's seats are judges, cast by no format: each speaks for no side (`Role.side`).
    roles = {
        f"judge{i + 1}": Role(f"judge{i + 1}", model_for(ref), JUDGE_TEMPERATURE)
        for i, ref in enumerate(judges)
    }
    record = Transcript(
        format="tournament",
        motion=transcript.motion,
        language=language,
        seed=transcript.seed,
        models={r: ModelInfo(id=role.model.model_id) for r, role in roles.items()},
        refs={f"judge{i + 1}": ref for i, ref in enumerate(judges)},
        sampling={r: JUDGE_TEMPERATURE for r in roles},
        prompt_pack=pack.digest,
    )
    engine = Engine(pack=pack, roles=roles, transcript=record, listeners=listeners)
    names = SIDE_NAMES[(transcript.format, language)]
    said = speeches(transcript)
    ballots = []
    for name, ref in zip(roles, judges, strict=True):
        ballot, _ = engine.structured(
            name,
            STEP,
            Ballot,
            round=0,
            label=f"{name} ({ref})",
            max_tokens=BALLOT_TOKENS,
            motion=transcript.motion,
            names={"proposition": names[0], "opposition": names[1]},
            proposition=said["proposition"],
            opposition=said["opposition"],
            chars=SPEECH_CHARS,
        )
        ballots.append(JudgeBallot(judge=ref, ballot=ballot))
    winner, margin = decide([b.ballot for b in ballots])
    return Verdict(
        debate=debate_id,
        winner=winner,
        margin=margin,
        votes=dict(Counter(b.ballot.winner for b in ballots)),
        self_judged=self_judged,
        ballots=ballots,
        turns=record.turns,
    )


def sample_variables() -> dict[str, object]:
    """Variables that exercise the verdict step (used to check a pack before a tournament)."""
    return {
        "motion": "This House Believes That tests matter",
        "round": 0,
        "names": {"proposition": "Proposition", "opposition": "Opposition"},
        "proposition": ["p1", "p2"],
        "opposition": ["o1"],
        "chars": SPEECH_CHARS,
    }
