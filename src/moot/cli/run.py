"""`moot run`: run one debate, streamed live, saved as a journal, a transcript and a document."""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from moot import history
from moot.api import Debate
from moot.cli.confirm import confirm
from moot.cli.history import Saved, Transcript
from moot.cli.options import (
    AsJson,
    CallTimeout,
    DryRun,
    FormatName,
    GpuLayers,
    Lang,
    Many,
    MaxTokens,
    NCtx,
    Seed,
    format_options,
    run_settings,
)
from moot.cli.root import Console, app, debate_language, err, speak, speak_as_saved
from moot.cli.seat import END, Reader, TerminalSeat
from moot.config import THINK_BUDGET, debates_dir
from moot.debates.runner import DebateRun as Runner
from moot.debates.runner import ReplayReport
from moot.debates.settings import (
    DebateSetup,
    keyed,
    prepare,
    read_defaults,
    settings,
    with_defaults,
)
from moot.errors import UsageError
from moot.formats import NAMES, get_format
from moot.formats.adversarial.text import evidence_prompt
from moot.formats.base import RunOptions
from moot.formats.oxford.flow import EXAMPLE_MOTIONS, label
from moot.inference.human import SeatLeft, is_human_ref
from moot.models.labels import model_labels
from moot.prompts import resolve_language
from moot.render import LiveView, SeatShown, safe, show_document, show_outcome, show_seats
from moot.words import words


def seats_by_format() -> str:
    """Each format's seats as --role names them, made from the formats' casts: "oxford:
    proposition, opposition, …; …" (adversarial's participants are one per --model)."""
    listed = []
    for name in NAMES:
        fmt = get_format(name)
        roles = list(fmt.cast(fmt.params(RunOptions(models=("-", "-")))).roles)
        if "participant_2" in roles:
            roles[roles.index("participant_2")] += ", … (one per --model)"
        listed.append(f"{name}: {', '.join(roles)}")
    return "; ".join(listed)


TimeLimit = Annotated[
    float | None,
    typer.Option(
        min=1.0,
        max=86400.0,
        help="Seconds a person in a seat has for each speech; then it is submitted as it "
        "stands, and marked so.",
    ),
]


@app.command()
@format_options(after="temperature")  # every format's parameters, as each declares them
def run(
    ctx: typer.Context,
    motion: Annotated[str | None, typer.Argument(help="The motion, or a bare topic.")] = None,
    fmt: FormatName = "oxford",
    lang: Lang = "auto",
    model: Annotated[
        Many,
        typer.Option(
            help="Model of every role (catalog id, hf:OWNER/REPO/"
            "FILE.gguf, a .gguf path or a server URL).",
            metavar="REF",
        ),
    ] = None,
    role: Annotated[
        Many,
        typer.Option(
            help=f"Bind one seat to a model, or to `human` to take it yourself (repeatable). "
            f"The seats: {seats_by_format()}.",
            metavar="SEAT=REF",
        ),
    ] = None,
    temperature: Annotated[
        Many, typer.Option(help="Override a seat's temperature (repeatable).", metavar="SEAT=T")
    ] = None,
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
    n_ctx: NCtx = None,
    max_tokens: MaxTokens = None,
    call_timeout: CallTimeout = 240.0,
    think_budget: Annotated[
        int,
        typer.Option(
            help="Tokens a speaker may think before it speaks, beside the speech's own "
            "(0 = thinking off where the model allows it).",
        ),
    ] = THINK_BUDGET,
    hide_reasoning: Annotated[
        bool,
        typer.Option("--hide-reasoning", help="Show nothing of what the speakers think."),
    ] = False,
    no_save: Annotated[
        bool, typer.Option("--no-save", help="Write nothing to disk: the debate is only shown.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option(help="Print only the result and where it is saved.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Ask nothing; accept proposals.")
    ] = False,
    time_limit: TimeLimit = None,
    one_model_at_a_time: Annotated[
        bool,
        typer.Option(
            "--one-model-at-a-time",
            help="Load each model for its turns and unload it after: models that do not fit "
            "in memory together still debate, slower (each speaker's KV snapshot waits on "
            "disk while its model is unloaded).",
        ),
    ] = False,
    dry_run: DryRun = False,
    as_json: AsJson = False,
    **params: Any,
) -> None:
    """Run a debate on MOTION and print its result. `--role ROLE=human` takes a seat
    yourself: you are shown what the seat may see and type its turns."""
    console = Console()
    if motion is not None and motion.strip():  # a wrong setting is said in the debate's language
        speak(debate_language(lang, motion))
    get_format(fmt)  # an unknown format is the first thing to say
    if no_save and out is not None:
        raise UsageError(key="cli.run.no_save_out_contradict_each")
    text = _motion(motion, lang, yes=yes, fmt=fmt)
    speak(debate_language(lang, text))
    if fmt == "oxford" and sys.stdin.isatty() and not yes:  # the motion and options confirmed
        text, params = confirm(
            console,
            get_format(fmt),
            text,
            resolve_language(lang, text),
            params,
            from_command_line=motion is not None,
        )
    chosen = settings(
        hint="see moot run --help",
        options=True,
        motion=text,
        format=fmt,
        models=tuple(model or ()),
        roles=keyed(role, field="roles", option="--role"),
        temperatures={
            k: _temperature(v)
            for k, v in keyed(temperature, field="temperatures", option="--temperature").items()
        },
        lang=lang,
        seed=seed,
        prompts=prompts,
        params=params,
        run=run_settings(
            n_ctx=n_ctx,
            gpu_layers=gpu_layers,
            max_tokens=max_tokens,
            call_timeout_s=call_timeout,
            think_budget=think_budget,
            one_model_at_a_time=one_model_at_a_time,
            dry_run=dry_run,
        ),
    )
    chosen = with_defaults(chosen, read_defaults(), lang_given=_given(ctx, "lang"))
    setup = prepare(chosen)
    speak(setup.language)  # what goes wrong from here is said in the debate's language
    _seat_people(setup, console, time_limit)
    # The CLI places the folder itself: `--out` and `--no-save` are checked before it.
    saves = not no_save and (out is not None or setup.format.saves_by_default)
    folder = history.claim(out, motion=text) if saves else None
    setup.out_dir = folder.path if folder else None
    interactive = sys.stdin.isatty() and not yes
    debate = Debate.from_setup(
        setup, save=folder is not None, ask=_asker(console, setup.language) if interactive else None
    )
    try:
        _run(debate, console, quiet=quiet, hide_reasoning=hide_reasoning, as_json=as_json)
    except BaseException:
        if folder:
            folder.release()  # a debate that wrote nothing leaves nothing behind
        raise


def _given(ctx: typer.Context, parameter: str) -> bool:
    """Whether PARAMETER was given on the command line (or by its environment variable),
    not left to its default: a default of the config file's yields to it alone."""
    source = ctx.get_parameter_source(parameter)
    return source is not None and source.name != "DEFAULT"


def _asker(console: Console, language: str) -> Callable[[str], str]:
    def ask(proposal: str) -> str:
        show_document(console, proposal)
        # An adversarial review's evidence request asks for a file, not corrections.
        prompt = evidence_prompt(proposal) or words(language).say("accept")
        return str(typer.prompt(prompt, default=""))

    return ask


def people(setup: DebateSetup) -> set[str]:
    """The roles a person holds."""
    return {role for role, ref in Runner(setup).refs().items() if is_human_ref(ref)}


def _seat_people(setup: DebateSetup, console: Console, time_limit: float | None) -> None:
    """A person's seats are answered here: at this terminal, or from the piped input."""
    if not people(setup):
        if time_limit is not None:
            raise UsageError(key="cli.run.time_limit_applies_seat_person")
        return
    setup.human = TerminalSeat(
        console,
        Reader(sys.stdin),
        interactive=sys.stdin.isatty(),
        time_limit=time_limit,
        folder=lambda: setup.out_dir,
    )


@app.command()
def resume(
    debate: Saved,
    quiet: Annotated[bool, typer.Option(help="Print only the result.")] = False,
    time_limit: TimeLimit = None,
) -> None:
    """Continue an interrupted debate from its journal; finished turns are reused verbatim,
    and a person in a seat is asked again for the turn they were on."""
    saved = history.find(debate)
    folder = saved.path
    if (folder / "transcript.json").exists():
        raise UsageError(key="cli.run.already_finished", id=saved.id)
    console = Console()
    resumed = Debate.resume(folder)
    speak(resumed.setup.language)
    _seat_people(resumed.setup, console, time_limit)
    _run(resumed, console, quiet=quiet)


@app.command()
def replay(
    ref: Transcript,
    quiet: Annotated[bool, typer.Option(help="Print only the verdict.")] = True,
) -> None:
    """Re-run a saved debate offline and report the first turn that differs, if any."""
    from moot.debates.runner import replay as replay_debate

    transcript = history.transcript(ref)
    language, fmt = speak_as_saved(transcript)  # the replay is shown as the debate was
    fmt = fmt if language != "en" else ""  # an English one as it always was
    say = words(language).say
    console = Console()
    view = _view(console, language, fmt, quiet=quiet)
    report = replay_debate(transcript, listeners=[view])
    if report.first_difference is None:
        console.print(say("replay_match", turns=report.turns), highlight=False)
        return
    where = _where(report, language, fmt)
    said = say("replay_differs", turn=report.first_difference, where=safe(where))
    console.print(said, highlight=False)
    console.print(f"  {say('replay_saved')}{report.saved[:200]!r}", highlight=False, markup=False)
    console.print(
        f"  {say('replay_replayed')}{report.replayed[:200]!r}", highlight=False, markup=False
    )
    if report.decoding is None:
        raise typer.Exit(1)
    # Not a failure: the record says it was decoded otherwise than a debate alone.
    d = report.decoding
    key = "replay_batched" if d.batch else "replay_decoding"
    console.print(
        say(key, others=d.parallel - 1, parallel=d.parallel, threads=d.threads),
        highlight=False,
    )


def _where(report: ReplayReport, language: str, fmt: str) -> str:
    """Where a replay first differs, in LANGUAGE: "round 2, opposition/speech"."""
    if language == "en" or not report.role:
        return words(language).shown(report.where)
    said = words(language)
    rnd = report.round
    when = said.say("replay_after") if rnd is None else said.say("replay_round", n=rnd)
    role, step = said.name(report.role, fmt), said.name(report.step, fmt)
    return said.say("replay_where", when=when, role=role, step=step)


def _view(
    console: Console,
    language: str,
    fmt: str,
    *,
    quiet: bool,
    hide_reasoning: bool = False,
    typed_here: Collection[str] = (),
    models: Mapping[str, str] | None = None,
) -> LiveView:
    """The live view of a debate of format FMT in LANGUAGE; MODELS: each role's model as
    the header names it."""
    return LiveView(
        console,
        quiet=quiet,
        models=models,
        round_label=label(language, "round"),
        units="字" if language == "zh" else "words",
        language=language,
        hide_reasoning=hide_reasoning,
        typed_here=typed_here,
        # The Oxford closing is shown under its rulebook's label.
        closing_label=label(language, "closing") if fmt == "oxford" else "",
    )


def _run(
    debate: Debate,
    console: Console,
    *,
    quiet: bool,
    hide_reasoning: bool = False,
    as_json: bool = False,
) -> None:
    if as_json:  # stdout holds the JSON alone; what is said on the way goes to stderr
        console, quiet = err, True
    setup = debate.setup
    seated = people(setup)
    said = words(setup.language)
    runner = Runner(setup)
    refs = runner.refs()
    labels = model_labels(refs.values(), person=said.say("person"))
    models = {role: labels[ref] for role, ref in refs.items()}
    view = _view(
        console,
        setup.language,
        setup.format.name,
        quiet=quiet,
        hide_reasoning=hide_reasoning,
        typed_here=seated if sys.stdin.isatty() else (),
        models=models,
    )
    if not quiet:
        _header(console, setup, runner, models)
    journal = setup.out_dir / "journal.jsonl" if setup.out_dir else None
    where = said.say("interrupted_where", journal=safe(journal)) if journal else ""
    started = time.monotonic()
    try:
        result = debate.run(on_event=view)
    except KeyboardInterrupt:
        # One line the terminal wraps, never broken inside the command or the path.
        console.print(_interrupted(setup, seated=bool(seated)), highlight=False, soft_wrap=True)
        raise typer.Exit(130) from None
    except SeatLeft as left:  # the input ended before a person's turn: the debate waits
        console.print()
        message = safe(said.shown(left.message))
        err.print(f"[bold red]{said.say('error')}[/] {message}{where}", highlight=False)
        hint = (
            said.say("seat_left_resume", name=resume_ref(setup.out_dir))
            if setup.out_dir
            else said.say("seat_left_unsaved", end=repr(END))
        )
        err.print(f"[dim]{said.say('hint')}[/] {safe(hint)}", highlight=False)
        raise typer.Exit(2) from None
    wall = time.monotonic() - started
    if as_json:
        print(json.dumps(_as_json(result, wall), ensure_ascii=False, indent=2))
        return
    show_document(console, result.markdown)
    if result.folder is not None:
        for name in ("transcript.json", setup.format.document):
            saved = view.words.say("saved")
            # Never wrapped: a path cut across lines cannot be copied.
            path = safe(result.folder / name)
            console.print(f"[dim]{saved}[/] {path}", highlight=False, soft_wrap=True)
    else:  # a format whose rulebook keeps it only when asked (decision): say so, and how
        console.print(f"[dim]{view.words.say('not_saved')}[/]", highlight=False)
    if not quiet:
        transcript = result.transcript
        outcome = setup.format.outcome(transcript, models)
        show_outcome(console, said, outcome, transcript.stop_reason, transcript.turns, wall)


def _as_json(result: Any, wall: float) -> dict[str, Any]:
    """`moot run --json`: the transcript as saved, where it is, and the build that ran it."""
    from moot.inference.llama.build import build

    folder = result.folder
    return {
        "transcript": result.transcript.model_dump(mode="json"),
        "saved": str(folder / "transcript.json") if folder is not None else None,
        "wall_s": round(wall, 1),
        "llama_cpp": build().as_dict(),
    }


def _header(
    console: Console, setup: DebateSetup, runner: Runner, models: Mapping[str, str]
) -> None:
    """What is debated, and each seat's model and temperature, before the first turn."""
    said = words(setup.language)
    try:
        subject = said.say(f"subject_{setup.format.name}")
    except KeyError:  # a format moot's words do not know
        subject = said.say("subject_oxford")
    shown = [
        SeatShown(
            seat.label, models[seat.role], None if is_human_ref(seat.ref) else seat.temperature
        )
        for seat in runner.seats()
    ]
    show_seats(console, said, subject, setup.motion, shown)


def resume_ref(folder: Path) -> str:
    """How `moot resume` names the debate in FOLDER: its name, where moot keeps debates;
    else the folder as it was given (quoted for a shell where it must be)."""
    try:
        home = folder.parent.resolve() == debates_dir().resolve()
    except OSError:
        home = False
    return folder.name if home else shlex.quote(str(folder))


def _interrupted(setup: DebateSetup, *, seated: bool) -> str:
    """The line a debate stopped by Ctrl-C ends on, in the debate's language: where its
    finished turns are, and the `moot resume` command that goes on from them (a person in
    a seat is asked again for the turn they were on)."""
    say, line = words(setup.language).say, ""
    journal = setup.out_dir / "journal.jsonl" if setup.out_dir else None
    if setup.out_dir and journal and _journaled(journal):
        line += say("interrupted_where", journal=safe(journal))
        key = "interrupted_again" if seated else "interrupted_resume"
        line += say(key, name=safe(resume_ref(setup.out_dir)))
    return f"\n[yellow]{say('interrupted')}[/]{line}"


def _journaled(journal: Path) -> bool:
    """Has the debate written its journal's header: is there a debate to resume?"""
    try:
        return journal.stat().st_size > 0
    except OSError:
        return False


def _motion(motion: str | None, lang: str, *, yes: bool, fmt: str = "oxford") -> str:
    if motion is not None and motion.strip():
        return motion
    if fmt == "decision":
        return _decision_topic(motion, lang, yes=yes)
    examples = EXAMPLE_MOTIONS["zh" if lang == "zh" else "en"]
    if motion is None and sys.stdin.isatty() and not yes:
        for i, example in enumerate(examples, 1):
            print(f"  {i}. {example}")  # moot's own examples
        choice = typer.prompt(words(lang).say("pick_motion"), default="1")
        if choice.isdigit() and 1 <= int(choice) <= len(examples):
            return examples[int(choice) - 1]
        if choice.strip():
            return choice
    raise UsageError(key="cli.run.motion_empty", examples=examples[0])


def _decision_topic(topic: str | None, lang: str, *, yes: bool) -> str:
    """A decision's topic is a choice between named positions: asked for as one, with
    examples of the kind, and never chosen for the user on Enter."""
    from moot.formats.decision.document import ASK_TOPIC, EXAMPLE_TOPICS

    language = "zh" if lang == "zh" else "en"
    examples = EXAMPLE_TOPICS[language]
    if topic is None and sys.stdin.isatty() and not yes:
        for i, example in enumerate(examples, 1):
            print(f"  {i}. {example}")  # moot's own examples
        choice = str(typer.prompt(ASK_TOPIC[language], default="", show_default=False))
        if choice.strip().isdigit() and 1 <= int(choice) <= len(examples):
            return examples[int(choice) - 1]
        if choice.strip():
            return choice
    raise UsageError(key="cli.run.topic_empty", examples=examples[0])


def _temperature(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise UsageError(key="cli.run.temperature_not_number_from_0", value=value) from None
