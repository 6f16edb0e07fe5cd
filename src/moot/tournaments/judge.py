"""A tournament debate's verdict as it is kept: each judge's ballot (read as probabilities,
ballots.py; or, in a tournament judged before those, a sampled ballot, whose verdict was the
plurality of ballots), and what the sides said, as the judges read it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.records.transcript import Transcript, Turn

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
SPEECH_CHARS = 700  # each speech as the judge reads it


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
    """One judge's say on a debate: read as probabilities (`p_proposition`, each order's,
    the flip), or, in a tournament judged before ballots were read, its sampled `ballot`."""

    judge: str  # the judge's model reference
    ballot: Ballot | None = None  # a sampled ballot (tournaments judged before probabilities)
    outcome: Outcome | None = None  # None: a sampled ballot's, or a judge that errored
    # P(the Proposition wins against the Opposition), the orders averaged; None: not read.
    p_proposition: float | None = Field(default=None, ge=0.0, le=1.0)
    orders: list[float] = Field(default_factory=list)  # P(proposition), order by order
    draw: list[float] = Field(default_factory=list)  # the mass on "draw", order by order
    flipped: bool = False  # the two orders named different sides: an abstention
    # Pointwise: each side's score, the mean calibrated P(yes) of its questions.
    scores: dict[str, float] = Field(default_factory=dict)
    method: str | None = None  # how the probabilities were read: logits, logprobs, samples
    reasons: str | None = None  # asked after the verdict, where reasons are kept
    error: str | None = None  # the judge failed: left out of the vote
    seconds: float = 0.0

    @property
    def said(self) -> str:
        """What this judge decided: its outcome, or its sampled ballot's winner."""
        if self.outcome is not None:
            return self.outcome
        return self.ballot.winner if self.ballot is not None else "undecided"


class Verdict(BaseModel):
    """The decision on one debate, with every ballot and the judges' turns for audit."""

    debate: str
    winner: Outcome  # "undecided": the jury abstained
    margin: str | None  # a sampled ballot's word for it; None for a draw and a read ballot
    votes: dict[str, int]
    self_judged: bool  # no judge outside the debate was available
    ballots: list[JudgeBallot]
    turns: list[Turn]
    # How it was decided: by the judges' read probabilities; by a forfeit found in code (a
    # side that said nothing, or never the motion's words), which counts for no judge's
    # accuracy; or, in a tournament judged before probabilities were read, sampled ballots.
    decided_by: Literal["judges", "forfeit", "sampled"] = "sampled"
    forfeit: str | None = None  # why, where decided_by is "forfeit"
    p_proposition: float | None = Field(default=None, ge=0.0, le=1.0)  # the jury's pooled P
    ballot_method: str | None = None  # pairwise, pointwise, blend or likelihood; None: sampled
    orders: int | None = None  # the orders each judge read the sides in
    left_out: list[str] = Field(default_factory=list)  # judges that failed to judge it


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
