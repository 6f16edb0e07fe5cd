"""What every debate format gives the engine and the front ends: one description each."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from moot.engine import Engine
from moot.transcript import Transcript


@dataclass(frozen=True)
class RunOptions:
    """The format parameters a front end collects; each format reads and validates its own."""

    min_score: float | None = None  # None: the format's default
    max_rounds: int | None = None
    judge_rubric: str | None = None  # how a judge answers: "checklist" or "score"
    rounds: int | None = None
    preset: str | None = None
    positions: tuple[str, ...] = ()
    out_of_scope: tuple[str, ...] = ()
    effort: str | None = None
    continue_from: Path | None = None  # a saved transcript to follow up on
    evidence: tuple[Path, ...] = ()  # text files every seat is shown as shared evidence
    models: tuple[str, ...] = ()  # every --model given, in order
    installed: tuple[tuple[str, int], ...] = ()  # (model id, size in bytes) installed here


# The options a caller sets by name; `models` and `installed` are filled in by moot.
PARAMETERS = tuple(f.name for f in fields(RunOptions) if f.name not in ("models", "installed"))


@dataclass(frozen=True)
class Cast:
    """The seats of one debate: roles, default temperatures, personas, models."""

    roles: tuple[str, ...]
    temperatures: Mapping[str, float]
    personas: Mapping[str, str] = field(default_factory=dict)
    # A role's model when the user binds none with --role; None: the --model / default one.
    models: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """One judge's reply at one judging step, with what that step was asked about."""

    reply: BaseModel
    variables: dict[str, Any]  # the step's template variables
    params: BaseModel  # the debate's format parameters


def no_choices(saved: Transcript) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Judging:
    """What `moot judge` asks again of a format: the judge seat's steps whose replies are
    verdicts, the value of a reply that decides (who won, whether the rounds stop), a number
    code derives from it, and the choices the format keeps outside any turn, read back from
    the saved result (under the keys `Engine.keep` kept them by)."""

    steps: tuple[str, ...]
    verdict: Callable[[Reading], object]
    score: Callable[[Reading], float] | None = None
    kept: Callable[[Transcript], dict[str, Any]] = no_choices
    role: str = "judge"


def reply_field(name: str) -> Callable[[Reading], object]:
    """A verdict that is one field of the judge's reply."""
    return lambda r: getattr(r.reply, name)


SAVED_HINT = "pass the transcript.json of a debate moot saved"


def plain_motion(text: str, language: str) -> str:
    """The motion as given, its whitespace collapsed."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Format:
    """A debate format: its rulebook's parameters, seats, steps, run and rendered result."""

    name: str
    steps: tuple[str, ...]
    params_type: type[BaseModel]  # how a saved debate's params are rebuilt
    reads: frozenset[str]  # the RunOptions parameters this format takes (see PARAMETERS)
    params: Callable[[RunOptions], BaseModel]  # validated; a UsageError names the option
    cast: Callable[[Any], Cast]  # the seats for these params
    run: Callable[[Engine, str, Any], dict[str, Any]]
    render: Callable[[Transcript], str]
    sample_variables: Callable[[], dict[str, dict[str, Any]]]
    motion: Callable[[str, str], str] = plain_motion  # the motion as the format words it
    document: str = "debate.md"  # file name of the rendered result
    saves_by_default: bool = True  # the decision format is ephemeral unless --out is given
    # The most words (字) of the debate that one prompt can quote, by the rulebook's limits:
    # what sizes the context window when --n-ctx is not given (`context_need`).
    quoted_words: Callable[[Any], int] = lambda params: 2000
    judging: Judging | None = None  # what `moot judge` asks again; None: nothing to re-judge


# Tokens a word (字) takes at most in the tiny models' tokenizers, with room to spare.
TOKENS_PER_UNIT = {"en": 2.0, "zh": 2.6}
SCAFFOLD_TOKENS = 1536  # a step's own instructions, personas and the record's labels
REPLY_TOKENS = 1800  # the longest reply a step asks for (the Oxford brief's grammar bound)


def context_need(fmt: Format, params: Any, language: str) -> int:
    """The context, in tokens, a debate of FMT with PARAMS in LANGUAGE needs at most: the
    words one prompt can quote, the step's scaffolding and the longest reply."""
    per_unit = TOKENS_PER_UNIT.get(language, TOKENS_PER_UNIT["en"])
    return round(fmt.quoted_words(params) * per_unit) + SCAFFOLD_TOKENS + REPLY_TOKENS
