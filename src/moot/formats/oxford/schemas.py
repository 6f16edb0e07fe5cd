"""The Oxford rulebook's parameters and the structured replies of its judge and its brief."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# How the Completeness Judge answers: the rulebook's score, or a checklist code scores.
JudgeRubric = Literal["checklist", "score"]


class OxfordParams(BaseModel):
    """The Oxford rulebook's parameters; out-of-range values are refused, never clamped."""

    model_config = ConfigDict(extra="forbid")

    min_score: float = Field(default=7.5, ge=5, le=10)
    max_rounds: int = Field(default=5, ge=3, le=8)
    # The checklist by default: a tiny model's bare number is noise (docs/formats/oxford.md).
    judge_rubric: JudgeRubric = "checklist"


class CompletenessReply(BaseModel):
    """The Completeness Judge's reply as the rulebook asks for it: a score and its reasoning.

    The reasoning is bounded so that a grammar-constrained reply always closes within its
    token budget."""

    model_config = ConfigDict(extra="forbid")

    score: float = Field(ge=0, le=10)
    reasoning: str = Field(min_length=1, max_length=300)


class CompletenessRubric(BaseModel):
    """The Completeness Judge's checklist; code turns it and the speeches into the score.

    A tiny model follows a checklist far better than it invents a number, and a prompt
    with an example number gets that number copied back. So the judge answers yes/no
    questions about the round and code derives `score`.
    """

    model_config = ConfigDict(extra="forbid")

    proposition_argued_for_motion: bool
    opposition_argued_against_motion: bool
    proposition_gave_evidence: bool
    opposition_gave_evidence: bool
    key_objections_answered: bool
    reasoning: str = Field(min_length=1, max_length=300)


class CompletenessScore(BaseModel):
    """What the rulebook asks the judge for: a score 0–10 and its reasoning."""

    score: float = Field(ge=0, le=10)
    reasoning: str
    rubric: dict[str, bool] = Field(default_factory=dict)
    checks: dict[str, bool] = Field(default_factory=dict)


class Brief(BaseModel):
    """The debate brief: five strings, rendered into the six-section document."""

    model_config = ConfigDict(extra="forbid")

    # Bounded so a grammar-constrained reply always closes within its token budget.
    pro: str = Field(min_length=1, max_length=600)
    con: str = Field(min_length=1, max_length=600)
    rebuttals: str = Field(min_length=1, max_length=400)
    attacks: str = Field(min_length=1, max_length=600)
    balance: str = Field(min_length=1, max_length=500)
