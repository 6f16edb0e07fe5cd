"""Options shared by `moot run` and `moot tournament`, each defined once."""

from __future__ import annotations

from typing import Annotated

import typer

from moot.config import RunSettings, validate_params
from moot.formats import NAMES

Many = list[str] | None

FormatName = Annotated[str, typer.Option("--format", help=f"Format: {', '.join(NAMES)}.")]
Lang = Annotated[str, typer.Option(help="Prompt pack: auto (by the motion), en or zh.")]
MinScore = Annotated[
    float | None,
    typer.Option(help="oxford: completeness score that ends the rounds early (5–10; 7.5)."),
]
MaxRounds = Annotated[int | None, typer.Option(help="oxford: hard cap on rounds (3–8; 5).")]
JudgeRubric = Annotated[
    str | None,
    typer.Option(
        help="oxford: how the Completeness Judge answers: checklist (true/false "
        "questions, scored by code; the default) or score (the rulebook's 0–10 score).",
    ),
]
Seed = Annotated[int | None, typer.Option(help="Seed for every draw and sample (0 to 4294967295).")]
GpuLayers = Annotated[int, typer.Option(help="Layers to offload to the GPU (0 = CPU, -1 = all).")]
NCtx = Annotated[
    int | None,
    typer.Option(
        help="Context window per loaded model (default: what the debate's rulebook needs, "
        "up to the model's trained context)."
    ),
]
MaxTokens = Annotated[
    int | None, typer.Option(help="Cap on tokens per speech (shorter, faster debates).")
]
Rounds = Annotated[
    int | None, typer.Option(help="decision, challenge, adversarial: number of rounds.")
]
Effort = Annotated[str | None, typer.Option(help="challenge: low, medium, high or max.")]
CallTimeout = Annotated[float, typer.Option(help="Seconds one model call may take.")]
DryRun = Annotated[
    bool,
    typer.Option(
        help="Run with scripted models: checks the set-up and the prompts without loading a model."
    ),
]


def run_settings(**values: object) -> RunSettings:
    """The run settings from their options; a bad value is named by its option."""
    return validate_params(RunSettings, **values)
