"""`moot run`: run one debate, streamed live, saved as a journal, a transcript and a document."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from moot import history
from moot.cli import app
from moot.cli.options import (
    CallTimeout,
    DryRun,
    Effort,
    FormatName,
    GpuLayers,
    Lang,
    Many,
    MaxRounds,
    MaxTokens,
    MinScore,
    NCtx,
    Rounds,
    Seed,
    installed,
)
from moot.errors import UsageError
from moot.formats import get_format
from moot.formats.base import RunOptions
from moot.formats.oxford.flow import EXAMPLE_MOTIONS, label
from moot.prompts import resolve_language
from moot.render import LiveView, show_document
from moot.runner import Debate, DebateSetup


@app.command()
def run(
    motion: Annotated[str | None, typer.Argument(help="The motion, or a bare topic.")] = None,
    fmt: FormatName = "oxford",
    lang: Lang = "auto",
    model: Annotated[
        Many,
        typer.Option(
            help="Model of every role (catalog id, hf:OWNER/REPO/"
            "FILE.gguf, a .gguf path or a server URL)."
        ),
    ] = None,
    role: Annotated[
        Many, typer.Option(help="Bind one role to a model (repeatable).", metavar="ROLE=REF")
    ] = None,
    temperature: Annotated[
        Many, typer.Option(help="Override a role's temperature (repeatable).", metavar="ROLE=T")
    ] = None,
    min_score: MinScore = 7.5,
    max_rounds: MaxRounds = 5,
    seed: Seed = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Write the transcript and the document "
            "here (default: a folder in moot's data directory)."
        ),
    ] = None,
    prompts: Annotated[
        Path | None,
        typer.Option(help="Use your own prompt pack (<dir>/<lang>/<format>/<step>.j2)."),
    ] = None,
    gpu_layers: GpuLayers = 0,
    n_ctx: NCtx = 4096,
    max_tokens: MaxTokens = None,
    rounds: Rounds = None,
    preset: Annotated[str | None, typer.Option(help="decision: quick, standard or deep.")] = None,
    positions: Annotated[
        Many, typer.Option("--positions", help="decision: a position to debate (repeatable).")
    ] = None,
    out_of_scope: Annotated[
        Many, typer.Option("--out-of-scope", help="decision: a topic not to drift into.")
    ] = None,
    effort: Effort = None,
    continue_from: Annotated[
        Path | None,
        typer.Option("--continue", help="adversarial: follow up on a saved transcript."),
    ] = None,
    call_timeout: CallTimeout = 240.0,
    no_save: Annotated[
        bool, typer.Option("--no-save", help="Write nothing to disk: the debate is only shown.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option(help="Print only the result and where it is saved.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Ask nothing; accept proposals.")
    ] = False,
    dry_run: DryRun = False,
) -> None:
    """Run a debate on MOTION and print its result."""
    console = Console()
    debate_format = get_format(fmt)
    text = _motion(motion, lang, yes=yes)
    language = resolve_language(lang, text)
    models = tuple(model or ())
    options = RunOptions(
        min_score=min_score,
        max_rounds=max_rounds,
        rounds=rounds,
        preset=preset,
        positions=tuple(positions or ()),
        out_of_scope=tuple(out_of_scope or ()),
        effort=effort,
        models=models,
        installed=installed(),
        yes=yes,
        interactive=sys.stdin.isatty() and not yes,
        call_timeout_s=call_timeout,
        continue_from=continue_from,
    )
    if no_save and out is not None:
        raise UsageError("--no-save and --out contradict each other", hint="choose one")
    if call_timeout <= 0:
        raise UsageError(f"--call-timeout {call_timeout:g} must be positive", hint="e.g. 240")
    params = debate_format.params(options)
    cast = debate_format.cast(params)
    if len(models) > 1 and not cast.models:
        raise UsageError(
            f"the {fmt} format takes one --model", hint="bind roles with --role ROLE=REF"
        )
    setup = DebateSetup(
        format=debate_format,
        motion=debate_format.motion(text, language),
        language=language,
        seed=seed if seed is not None else random.SystemRandom().randrange(2**31),
        params=params,
        default_model=models[0] if models else None,
        role_models=_pairs(role or [], "--role", cast.roles),
        temperatures={
            k: _temperature(v)
            for k, v in _pairs(temperature or [], "--temperature", cast.roles).items()
        },
        out_dir=None,
        prompts_root=prompts,
        gpu_layers=gpu_layers,
        n_ctx=n_ctx,
        max_tokens=max_tokens,
        call_timeout_s=call_timeout,
        dry_run=dry_run,
    )
    saves = not no_save and (out is not None or debate_format.saves_by_default)
    folder = history.claim(out, motion=text) if saves else None
    setup.out_dir = folder.path if folder else None
    try:
        _run(setup, console, quiet=quiet, ask=_asker(console) if options.interactive else None)
    except BaseException:
        if folder:
            folder.release()  # a debate that wrote nothing leaves nothing behind
        raise


def _asker(console: Console) -> Callable[[str], str]:
    def ask(proposal: str) -> str:
        show_document(console, proposal)
        return str(typer.prompt("Press Enter to accept, or type corrections", default=""))

    return ask


@app.command()
def resume(
    debate: Annotated[str, typer.Argument(help="A saved debate's id (or prefix) or folder.")],
    quiet: Annotated[bool, typer.Option(help="Print only the result.")] = False,
) -> None:
    """Continue an interrupted debate from its journal; finished turns are reused verbatim."""
    from moot.runner import resume_setup

    folder = history.find(debate).path
    if (folder / "transcript.json").exists():
        raise UsageError(f"{folder.name} already finished", hint=f"moot history show {folder.name}")
    setup, records = resume_setup(folder)
    _run(setup, Console(), quiet=quiet, ask=None, replay=records)


@app.command()
def replay(
    transcript: Annotated[Path, typer.Argument(help="A saved transcript.json.")],
    quiet: Annotated[bool, typer.Option(help="Print only the verdict.")] = True,
) -> None:
    """Re-run a saved debate offline and report the first turn that differs, if any."""
    from moot.runner import replay as replay_debate

    console = Console()
    view = LiveView(console, quiet=quiet)
    report = replay_debate(transcript, listeners=[view])
    if report.first_difference is None:
        console.print(f"all {report.turns} turns match", highlight=False)
        return
    console.print(f"turn {report.first_difference} differs ({report.where})", highlight=False)
    console.print(f"  saved:    {report.saved[:200]!r}", highlight=False, markup=False)
    console.print(f"  replayed: {report.replayed[:200]!r}", highlight=False, markup=False)
    raise typer.Exit(1)


def _run(
    setup: DebateSetup,
    console: Console,
    *,
    quiet: bool,
    ask: Callable[[str], str] | None,
    replay: list[dict[str, Any]] | None = None,
) -> None:
    view = LiveView(console, quiet=quiet, round_label=label(setup.language, "round"))
    try:
        result = Debate(setup, listeners=[view], ask=ask, replay=replay).run()
    except KeyboardInterrupt:
        where = (
            f": finished turns are in {setup.out_dir / 'journal.jsonl'}" if setup.out_dir else ""
        )
        console.print(f"\n[yellow]interrupted[/]{where}", highlight=False)
        raise typer.Exit(130) from None
    show_document(console, result.markdown)
    if result.out_dir is not None:
        for name in ("transcript.json", setup.format.document):
            console.print(f"[dim]saved:[/] {result.out_dir / name}", highlight=False)


def _motion(motion: str | None, lang: str, *, yes: bool) -> str:
    if motion is not None and motion.strip():
        return motion
    examples = EXAMPLE_MOTIONS["zh" if lang == "zh" else "en"]
    if motion is None and sys.stdin.isatty() and not yes:
        for i, example in enumerate(examples, 1):
            print(f"  {i}. {example}")
        choice = typer.prompt("No motion given; pick one", default="1")
        if choice.isdigit() and 1 <= int(choice) <= len(examples):
            return examples[int(choice) - 1]
        if choice.strip():
            return choice
    raise UsageError("the motion is empty", hint=f'give one, e.g. moot run "{examples[0]}"')


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
