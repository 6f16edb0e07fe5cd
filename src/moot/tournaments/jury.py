"""Pooling judges' probabilities into one verdict that may abstain.

A judge's say on a debate is the probability it gives the Proposition (read from the model,
both orders averaged), not a sampled word. A jury pools its judges' probabilities, each
weighted by how far its measured accuracy is above a coin (a judge at chance weighs
nothing), and abstains — "undecided" — where the pooled probability is within `margin` of
even or a judge's two orders disagree on its own vote (that judge's vote is then left out).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from moot.tournaments.judge import Outcome

MARGIN = 0.1  # pooled P(proposition) within this of ½ is undecided
# The most a judge weighs, as log-odds of its accuracy: a judge measured right on every
# control (often a small sample) does not drown the others.
MOST_WEIGHT = math.log(0.95 / 0.05)


class Judgement(BaseModel):
    """One judge's (or the jury's) say on one debate."""

    model_config = ConfigDict(frozen=True)

    outcome: Outcome
    # P(the Proposition wins) against the Opposition, both orders averaged where both were
    # asked; None where the verdict was sampled, not read.
    p_proposition: float | None = Field(default=None, ge=0.0, le=1.0)
    flipped: bool = False  # the two orders named different sides


def weight(accuracy: float | None) -> float:
    """A judge's weight from its accuracy on known debates: the log-odds above a coin, 0
    at or below chance; 1 where nothing was measured."""
    if accuracy is None:
        return 1.0
    p = min(max(accuracy, 1e-6), 1 - 1e-6)
    return min(max(math.log(p / (1 - p)), 0.0), MOST_WEIGHT)


def outcome_of(p_proposition: float, margin: float = MARGIN) -> Outcome:
    """The side P names, or undecided within MARGIN of even."""
    if abs(p_proposition - 0.5) <= margin:
        return "undecided"
    return "proposition" if p_proposition > 0.5 else "opposition"


def pool(votes: Sequence[tuple[Judgement, float]], margin: float = MARGIN) -> Judgement:
    """The jury's judgement from (judgement, weight) pairs: the weighted mean of the read
    probabilities of the judges that did not flip; undecided where none is left, where they
    weigh nothing, or where the mean is within MARGIN of even."""
    kept = [(j.p_proposition, w) for j, w in votes if j.p_proposition is not None and not j.flipped]
    total = sum(w for _, w in kept)
    if not kept or total <= 0:
        return Judgement(outcome="undecided")
    p = sum(p * w for p, w in kept) / total
    return Judgement(outcome=outcome_of(p, margin), p_proposition=p)
