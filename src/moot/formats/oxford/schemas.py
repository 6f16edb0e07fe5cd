"""The Oxford rulebook's parameters and the structured replies of its judge and its brief."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from moot.formats.base import Documents, documents_param, keep_sources_param, param

# How the Completeness Judge answers: the rulebook's score, or a checklist code scores.
JudgeRubric = Literal["checklist", "score"]


class OxfordParams(BaseModel):
    """The Oxford rulebook's parameters; out-of-range values are refused, never clamped.
    What a caller sets is what a debate keeps: these are its options and its params."""

    model_config = ConfigDict(extra="forbid")

    min_score: float = param(
        7.5,
        "completeness score that ends the rounds early (5–10; 7.5)",
        ge=5,
        le=10,
        label={"en": "Completeness score that ends the rounds", "zh": "结束各轮的完整性分数"},
    )
    max_rounds: int = param(
        5, "hard cap on rounds (3–8; 5)", ge=3, le=8, label={"en": "Most rounds", "zh": "最多轮数"}
    )
    # The checklist by default: a tiny model's bare number is noise (docs/formats/oxford.md).
    judge_rubric: JudgeRubric = param(
        "checklist",
        "how the Completeness Judge answers: checklist (true/false questions, scored by code; "
        "the default) or score (the rulebook's 0–10 score)",
        label={"en": "How the Completeness Judge answers", "zh": "完整性裁判的作答方式"},
    )
    evidence: Documents = documents_param()
    keep_sources: bool = keep_sources_param()


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
    """What the rulebook asks the judge for: a score 0–10 and its reasoning.

    Read as probabilities (`method`: how), `score` is the expected score: under the judge's
    distribution over 0–10 (`distribution`), or by the checklist with each item weighed by
    its P(yes) (`rubric`). A debate saved before kept the items as true/false, and no
    method: its reply's own values decided."""

    score: float = Field(ge=0, le=10)
    reasoning: str
    rubric: dict[str, float | bool] = Field(default_factory=dict)
    checks: dict[str, bool] = Field(default_factory=dict)
    distribution: dict[str, float] = Field(default_factory=dict)
    method: str | None = None


class Brief(BaseModel):
    """The debate brief: five strings, rendered into the six-section document."""

    model_config = ConfigDict(extra="forbid")

    # Bounded so a grammar-constrained reply always closes within its token budget.
    pro: str = Field(min_length=1, max_length=600)
    con: str = Field(min_length=1, max_length=600)
    rebuttals: str = Field(min_length=1, max_length=400)
    attacks: str = Field(min_length=1, max_length=600)
    balance: str = Field(min_length=1, max_length=500)
