"""Pydantic models of the decision format: its parameters and the judge's structured replies.

The judge's replies are bounded everywhere (string lengths, list sizes, enums) so that a
grammar-constrained reply from a tiny model always closes within its token budget, and
so that code, not the model, renders them into YAML and Markdown that always parse.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model

from moot.formats.base import Documents, documents_param, keep_sources_param, param

PRESETS = ("quick", "standard", "deep")
PRESET_ROUNDS = {"quick": 0, "standard": 1, "deep": 2}
MAX_ROUNDS = 6
MIN_POSITIONS, MAX_POSITIONS = 2, 4
TIE = "none"  # the recommendation of a genuine tie: "no clear winner on axis X"
CONFIDENCE = ("low", "medium", "high")
POSITION_CHARS = 80
SCOPE_CHARS = 120

# Longest strings the judge may write, per language: a Chinese character carries about
# as much as an English word, so the Chinese bounds are about half the English ones.
LENGTHS: dict[str, dict[str, int]] = {
    "en": {"axis": 40, "decision": 160, "reason": 120, "item": 100, "change": 160, "dissent": 240},
    "zh": {"axis": 20, "decision": 80, "reason": 60, "item": 50, "change": 80, "dissent": 120},
}
# A token per character: a tiny model's junk ("1.1.1.1…") is about that dense, and a reply
# cut off by max_tokens is invalid however good its start. One Chinese character is about
# one token for a model with a CJK vocabulary (Gemma, Qwen).
CHARS_PER_TOKEN = 1.0


Rounds = Annotated[int, Field(ge=0, le=MAX_ROUNDS)]  # rebuttal rounds; 0 is quick
Short = Annotated[str, Field(max_length=500)]  # as a user types it, before it is cleaned


class DecisionOptions(BaseModel):
    """The parameters a caller sets. Which of --preset and --rounds were given decides the
    rounds (`framing.plan_rounds`): the defaults here are what neither gives."""

    model_config = ConfigDict(extra="forbid")

    rounds: Rounds = param(1, "number of rounds", label={"en": "Rounds", "zh": "轮数"})
    preset: Literal["quick", "standard", "deep"] = param(
        "standard", "quick, standard or deep", label={"en": "Preset", "zh": "预设"}
    )
    positions: tuple[Short, ...] = param(
        (),
        "a position to debate",
        max_length=16,  # the format takes 2–4: more is refused before any is read
        label={"en": "Positions, one a line", "zh": "立场，每行一个"},
    )
    out_of_scope: tuple[Short, ...] = param(
        (),
        "a topic not to drift into",
        max_length=32,
        label={"en": "Out of scope, one a line", "zh": "不讨论的话题，每行一个"},
    )
    evidence: Documents = documents_param()
    keep_sources: bool = keep_sources_param()


class DecisionParams(BaseModel):
    """The decision rulebook's parameters; out-of-range values are refused, never clamped."""

    model_config = ConfigDict(extra="forbid")

    preset: Literal["quick", "standard", "deep", "custom"] = "standard"
    rounds: Rounds = 1
    positions: tuple[str, ...] = ()  # given with --positions; empty: inferred in Phase 0
    out_of_scope: tuple[str, ...] = ()
    evidence: Documents = ()  # the documents given: the engine reads them, not the format
    keep_sources: bool = False  # their whole text kept in the debate's folder (the engine's)


# A model's framing is kept shorter than what a user may type: a position is a few words.
Option = Annotated[str, StringConstraints(min_length=1, max_length=40)]
ScopeItem = Annotated[str, StringConstraints(min_length=1, max_length=60)]


class Framing(BaseModel):
    """Phase 0 from a model: is the topic a contested choice, between which options."""

    model_config = ConfigDict(extra="forbid")

    contested: bool
    positions: list[Option] = Field(min_length=MIN_POSITIONS, max_length=MAX_POSITIONS)
    out_of_scope: list[ScopeItem] = Field(max_length=3)


def _text(n: int) -> Any:
    return (str, Field(min_length=1, max_length=n))


def _choice(values: tuple[str, ...]) -> Any:
    # A Literal built at run time from the debate's positions: the grammar then lets the
    # judge write only one of them, so "recommendation ∈ positions" holds by construction.
    return (cast(Any, Literal)[values], ...)


@lru_cache(maxsize=32)
def verdict_schema(positions: tuple[str, ...], language: str) -> type[BaseModel]:
    """The judge's first reply: recommendation (a position or the tie marker) and confidence."""
    n = LENGTHS[language]
    model: type[BaseModel] = create_model(
        "Verdict",
        __config__=ConfigDict(extra="forbid"),
        recommendation=_choice((*positions, TIE)),
        axis=_text(n["axis"]),
        decision=_text(n["decision"]),
        confidence=_choice(CONFIDENCE),
        confidence_reason=_text(n["reason"]),
    )
    return model


@lru_cache(maxsize=32)
def sections_schema(dissenters: tuple[str, ...], language: str) -> type[BaseModel]:
    """The judge's second reply: the bullets and paragraphs of the decision document."""
    n = LENGTHS[language]
    item = Annotated[str, StringConstraints(min_length=1, max_length=n["item"])]
    model: type[BaseModel] = create_model(
        "DecisionSections",
        __config__=ConfigDict(extra="forbid"),
        key_reasoning=(list[item], Field(min_length=3, max_length=5)),
        trade_offs=(list[item], Field(min_length=2, max_length=4)),
        what_would_change=_text(n["change"]),
        dissent_position=_choice(dissenters),
        dissent=_text(n["dissent"]),
    )
    return model


def token_budget(schema: type[BaseModel]) -> int:
    """max_tokens that lets the longest valid reply of `schema` close, with some slack."""
    js = schema.model_json_schema()
    chars = _chars(js, js.get("$defs", {}))
    return int(chars / CHARS_PER_TOKEN) + 48


def _chars(node: dict[str, Any], defs: dict[str, Any]) -> int:
    if "$ref" in node:
        return _chars(defs[node["$ref"].split("/")[-1]], defs)
    if "enum" in node or "const" in node:
        values = node.get("enum", [node.get("const")])
        return max(len(str(v)) for v in values) + 2
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties", {})
        return sum(len(k) + 4 + _chars(v, defs) for k, v in props.items()) + 2
    if kind == "array":
        return int(node.get("maxItems", 4)) * (_chars(node["items"], defs) + 2) + 2
    if kind == "string":
        return int(node.get("maxLength", 200)) + 2
    return 6
