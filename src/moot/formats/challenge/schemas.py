"""The challenge format's parameters, effort and verdict schema (the state file: state.py)."""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    ValidationInfo,
    create_model,
    model_validator,
)

from moot.config import validate_params
from moot.errors import UsageError
from moot.formats.base import Documents, RunOptions, documents_param, keep_sources_param, param
from moot.records.transcript import reading_saved

Effort = Literal["low", "medium", "high", "max"]
Rounds = Annotated[int, Field(ge=1, le=5)]
Rating = Literal["high", "medium", "low"]
Winner = Literal["proposer", "challenger"]


class ChallengeOptions(BaseModel):
    """The parameters a caller sets; out-of-range values are refused, never clamped."""

    model_config = ConfigDict(extra="forbid")

    rounds: Rounds = param(2, "number of rounds", label={"en": "Rounds", "zh": "轮数"})
    effort: Effort | None = param(
        None, "low, medium, high or max", label={"en": "Effort", "zh": "力度"}
    )
    evidence: Documents = documents_param()
    keep_sources: bool = keep_sources_param()


class ChallengeParams(BaseModel):
    """The rulebook's parameters: the options, and the models they seat."""

    model_config = ConfigDict(extra="forbid")

    rounds: Rounds = 2
    effort: Effort | None = None
    proposer_model: str | None = None  # a first --model
    challenger_model: str | None = None  # a second --model
    effort_model: str | None = None  # the installed model that --effort picked, if any
    evidence: Documents = ()  # the documents given: the engine reads them, not the format
    keep_sources: bool = False  # their whole text kept in the debate's folder (the engine's)


# -- effort: model choice and the words of a turn -----------------------------------------

# The words (字) a proposer's or challenger's turn may take at each effort: the turn's token
# budget comes from it, as every limited step's does.
TURN_WORDS = {"low": 120, "medium": 200, "high": 320, "max": 480}
DEFAULT_EFFORT = "medium"
# The rulebook's summary target is 500–800 tokens: about 350–550 words, 500–800 字.
SUMMARY_WORDS = {"en": (350, 550), "zh": (500, 800)}
_EFFORT_SHARE = {"low": 0.0, "medium": 1 / 3, "high": 2 / 3, "max": 1.0}


def effort_model(installed: tuple[tuple[str, int], ...], effort: str | None) -> str | None:
    """low: the smallest installed model; max: the largest; medium and high in between."""
    if effort is None or not installed:
        return None
    ordered = sorted(installed, key=lambda m: (m[1], m[0]))
    index = int(_EFFORT_SHARE[effort] * (len(ordered) - 1) + 0.5)
    return ordered[index][0]


def make_params(given: ChallengeOptions, options: RunOptions) -> ChallengeParams:
    """Rounds and effort as given; two --model name the two sides."""
    models = options.models
    if len(models) > 2:
        raise UsageError(
            key="formats.challenge.schemas.challenge_format_takes_at_most",
            field="models.2",
            n_models=len(models),
        )
    if len(models) == 2 and models[0] == models[1] and len(options.installed) > 1:
        raise UsageError(
            key="formats.challenge.schemas.proposer_challenger_must_different_models",
            field="models.1",
            models=models[0],
        )
    return validate_params(
        ChallengeParams,
        rounds=given.rounds,
        effort=given.effort,
        proposer_model=models[0] if len(models) == 2 else None,
        challenger_model=models[1] if len(models) == 2 else None,
        # An explicit --model wins over the model that effort would choose.
        effort_model=None if models else effort_model(options.installed, given.effort),
        evidence=given.evidence,
        keep_sources=given.keep_sources,
    )


# -- the verdict ------------------------------------------------------------------------

# Strings are bounded so a grammar-constrained reply always closes within its token
# budget. A Chinese character carries about what an English word of four letters does,
# and small tokenizers spend about a token per character: Chinese bounds are shorter.
_BOUNDS = {
    "en": {"reasoning": 300, "item": 120, "point": 60, "recommendation": 200},
    "zh": {"reasoning": 120, "item": 48, "point": 24, "recommendation": 80},
}
VERDICT_TOKENS = {"en": 1000, "zh": 1200}
MAX_ITEMS = 3


def _text(n: int) -> Any:
    return (str, Field(min_length=1, max_length=n))


def _items(kind: Any) -> Any:
    # Required, not defaulted: a grammar may let a model skip an optional key.
    return (list[kind], Field(max_length=MAX_ITEMS))


class _Disagreement(BaseModel):
    """A key disagreement. One saved before disagreements named their point (by moot before
    commit 8183a08: tests/fixtures/challenge-pre-point) is read back with an empty point."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="wrap")
    @classmethod
    def _saved_without_point(
        cls, data: Any, handler: ModelWrapValidatorHandler[Self], info: ValidationInfo
    ) -> Self:
        if not (reading_saved(info.context) and isinstance(data, dict) and "point" not in data):
            return handler(data)
        # Its sides are held to today's bounds; the point it never had is left empty (the
        # document words such a disagreement without one), never made up.
        return handler({**data, "point": "-"}).model_copy(update={"point": ""})


@cache
def verdict_schema(language: str) -> type[BaseModel]:
    """The synthesis judge's reply: the winner is an enum, so the grammar must pick a side.

    The lists and ratings come before the reasoning and the winner, so a model writes
    down what the debate showed before it decides who argued it better.
    """
    b = _BOUNDS.get(language, _BOUNDS["en"])
    config = ConfigDict(extra="forbid")
    agreement = create_model(
        "Agreement", __config__=config, point=_text(b["item"]), evidence=_text(b["item"])
    )
    # A disagreement names its point first: "{point}: {proposer} argues X, {challenger}
    # argues Y", as the rulebook's summary lists them.
    disagreement = create_model(
        "Disagreement",
        __base__=_Disagreement,
        point=_text(b["point"]),
        proposer=_text(b["item"]),
        challenger=_text(b["item"]),
    )
    question = Annotated[str, Field(min_length=1, max_length=b["item"])]
    model: type[BaseModel] = create_model(
        "ChallengeVerdict",
        __config__=config,
        agreements=_items(agreement),
        disagreements=_items(disagreement),
        unresolved=_items(question),
        genuine_disagreement=(Rating, ...),
        evidence_quality=(Rating, ...),
        challenge_depth=(Rating, ...),
        reasoning=_text(b["reasoning"]),
        winner=(Winner, ...),
        recommendation=_text(b["recommendation"]),
    )
    return model
