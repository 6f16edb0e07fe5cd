"""`moot run`: run one debate, streamed live, saved as a journal, a transcript and a brief."""

from __future__ import annotations

import random
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from moot.cli import app
from moot.config import OxfordParams, debates_dir, validate_params
from moot.debate import Debate, DebateSetup
from moot.errors import UsageError
from moot.formats import oxford
from moot.prompts import resolve_language
from moot.render import LiveView, show_document

FORMATS = ("oxford",)

Roles = Annotated[
    list[str] | None,
    typer.Option(
        "--role", help="Bind one role to a model: ROLE=REF (repeatable).", metavar="ROLE=REF"
    ),
]
Temps = Annotated[
    list[str] | None,
    typer.Option(
        "--temperature",
        help="Override a role's temperature: ROLE=T (repeatable).",
        metavar="ROLE=T",
    ),
]


@app.command()
def run(
    motion: Annotated[str | None, typer.Argument(help="The motion, or a bare topic.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Debate format: oxford.")] = "oxford",
    lang: Annotated[
        str, typer.Option(help="Prompt pack: auto (by the motion), en or zh.")
    ] = "auto",
    model: Annotated[
        str | None,
        typer.Option(
            help="Model of every role (catalog id, "
            "hf:OWNER/REPO/FILE.gguf, a .gguf path or a server URL)."
        ),
    ] = None,
    role: Roles = None,
    temperature: Temps = None,
    min_score: Annotated[
        float, typer.Option(help="Completeness score that ends the rounds early (5–10).")
    ] = 7.5,
    max_rounds: Annotated[int, typer.Option(help="Hard cap on rounds (3–8).")] = 5,
    seed: Annotated[int | None, typer.Option(help="Seed for every draw and sample.")] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Write transcript.json and debate.md "
            "here (default: a folder in moot's data directory)."
        ),
    ] = None,
    prompts: Annotated[
        Path | None,
        typer.Option(help="Use your own prompt pack (<dir>/<lang>/<format>/<step>.j2)."),
    ] = None,
    gpu_layers: Annotated[
        int, typer.Option(help="Layers to offload to the GPU (0 = CPU, -1 = all).")
    ] = 0,
    n_ctx: Annotated[int, typer.Option(help="Context window per loaded model.")] = 4096,
    max_tokens: Annotated[
        int | None, typer.Option(help="Cap on tokens per speech (shorter, faster debates).")
    ] = None,
    quiet: Annotated[
        bool, typer.Option(help="Print only the brief and where it is saved.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Ask nothing; accept proposals.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            help="Run with scripted models: checks the "
            "set-up and the prompts without loading a model."
        ),
    ] = False,
) -> None:
    """Run a debate on MOTION and print its brief."""
    console = Console()
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}", hint=f"choose one of: {', '.join(FORMATS)}")
    text = _motion(motion, lang, yes=yes)
    language = resolve_language(lang, text)
    params = validate_params(OxfordParams, min_score=min_score, max_rounds=max_rounds)
    setup = DebateSetup(
        format=fmt,
        motion=oxford.normalise_motion(text, language),
        language=language,
        seed=seed if seed is not None else random.SystemRandom().randrange(2**31),
        params=params,
        default_model=model,
        role_models=_pairs(role or [], "--role", oxford.ROLES),
        temperatures={
            k: _temperature(v)
            for k, v in _pairs(temperature or [], "--temperature", oxford.ROLES).items()
        },
        out_dir=out or _default_out(text),
        prompts_root=prompts,
        gpu_layers=gpu_layers,
        n_ctx=n_ctx,
        max_tokens=max_tokens,
        dry_run=dry_run,
    )
    view = LiveView(console, quiet=quiet, round_label=oxford.label(language, "round"))
    try:
        result = Debate(setup, listeners=[view]).run()
    except KeyboardInterrupt:
        journal = setup.out_dir / "journal.jsonl"
        console.print(f"\n[yellow]interrupted[/]: finished turns are in {journal}")
        raise typer.Exit(130) from None
    show_document(console, result.markdown)
    console.print(f"[dim]saved:[/] {result.out_dir / 'transcript.json'}", highlight=False)
    console.print(f"[dim]saved:[/] {result.out_dir / 'debate.md'}", highlight=False)


def _motion(motion: str | None, lang: str, *, yes: bool) -> str:
    if motion is not None and motion.strip():
        return motion
    examples = oxford.EXAMPLE_MOTIONS["zh" if lang == "zh" else "en"]
    if motion is None and sys.stdin.isatty() and not yes:
        for i, example in enumerate(examples, 1):
            print(f"  {i}. {example}")
        choice = typer.prompt("No motion given; pick one", default="1")
        if choice.isdigit() and 1 <= int(choice) <= len(examples):
            return examples[int(choice) - 1]
        if choice.strip():
            return choice
    raise UsageError(
        "the motion is empty",
        hint=f'give one, e.g. moot run "{examples[0]}"',
    )


def _pairs(items: list[str], option: str, allowed: tuple[str, ...]) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep or not value.strip():
            raise UsageError(f"{option} {item!r} is not KEY=VALUE", hint=f"e.g. {option} judge=…")
        if key not in allowed:
            raise UsageError(
                f"unknown role {key!r} in {option} {item}",
                hint=f"roles are: {', '.join(allowed)}",
            )
        pairs[key] = value.strip()
    return pairs


def _temperature(value: str) -> float:
    try:
        t = float(value)
    except ValueError:
        t = -1.0
    if not 0.0 <= t <= 2.0:
        raise UsageError(f"temperature {value!r} is not a number from 0 to 2", hint="e.g. 0.7")
    return t


def _default_out(motion: str) -> Path:
    slug = re.sub(r"[^\w]+", "-", motion.lower()).strip("-")[:40] or "debate"
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return debates_dir() / f"{stamp}-{slug}"
