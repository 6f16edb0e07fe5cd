"""Debates from Python, with `moot run`'s defaults and checks.

Everything a caller passes is validated before any model loads; a mistake raises a
`MootError` naming the setting. Models a debate loads for itself are released when it
ends; a `ModelPool` holds them across debates instead.
"""

from __future__ import annotations

import queue
import textwrap
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from moot import history
from moot.api.progress import TurnLines
from moot.config import RunSettings
from moot.debates.runner import DebateRun as _Runner
from moot.debates.runner import resume_setup
from moot.debates.settings import (
    DebateSettings,
    DebateSetup,
    keyed,
    prepare,
    read_defaults,
    refuse_unknown,
    settings,
    with_defaults,
)
from moot.errors import MootError, UsageError
from moot.events import Event, Listener
from moot.formats import NAMES, get_format, parameters
from moot.inference import pool as _pool
from moot.inference.human import HumanConsole
from moot.inference.protocol import ChatModel
from moot.models import store
from moot.prompts import LANGUAGES, resolve_language
from moot.records.journal import running_elsewhere
from moot.records.transcript import Record, Transcript, Turn
from moot.words import words

Models = str | Sequence[str] | None


class ModelSource(Protocol):
    """Where a debate gets its models: a `ModelPool`, or anything with the same `get`."""

    def get(self, ref: str) -> ChatModel: ...


class ModelPool(_pool.ModelPool):
    """Models loaded once, on first use, and held across debates until the pool is closed.

    >>> with moot.ModelPool() as pool:
    ...     moot.debate("…", pool=pool)
    ...     moot.debate("…", pool=pool)  # the same models, not loaded again
    """

    def __init__(self, *, n_ctx: int = 4096, gpu_layers: int = 0, n_threads: int | None = None):
        super().__init__(
            resolve=store.resolve, n_gpu_layers=gpu_layers, n_ctx=n_ctx, n_threads=n_threads
        )


class DebateStopped(MootError):
    """A debate stopped by `Debate.stop()` before its end; its finished turns are journaled."""


@dataclass(frozen=True)
class Result:
    """A finished debate: its transcript, its rendered document, where it was saved."""

    transcript: Transcript
    markdown: str  # the brief or decision document, as Markdown
    folder: Path | None  # None: the debate was not saved

    @property
    def turns(self) -> list[Turn]:
        return self.transcript.turns

    def __repr__(self) -> str:
        """One line: the format, the motion, the outcome, the turns, the folder; the
        transcript is in `.transcript`, the document in `.markdown`."""
        t = self.transcript
        outcome = get_format(t.format).outcome(t, {}) if t.format in NAMES else ""
        folder = str(self.folder) if self.folder is not None else None
        return (
            f"Result(format={t.format!r}, motion={_cut(t.motion)!r}, "
            f"outcome={_cut(outcome)!r}, turns={len(t.turns)}, folder={folder!r})"
        )

    @property
    def stop_reason(self) -> str | None:
        """Why the rounds ended, in the format's words (e.g. "converged", "hard_cap")."""
        return self.transcript.stop_reason

    @property
    def document(self) -> dict[str, Any]:
        """The format's structured result: the brief, the decision, the verdict, the answer."""
        return self.transcript.result or {}


def _cut(text: str, limit: int = 60) -> str:
    """TEXT on one line, at most LIMIT characters (cut with `…`)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass
class _Failed:
    error: BaseException


class _StopRequested(BaseException):
    """Raised inside the debate's thread at its next event; not an Exception, so no
    format's failure handling mistakes it for a failed turn."""


_DONE = object()


class Debate:
    """One debate under the caller's control: iterate its events, stop it, resume it.

    >>> d = moot.Debate("This House Believes That cities should ban cars", seed=7)
    >>> for event in d:            # runs in a worker thread; each event as it happens
    ...     ...
    >>> d.result.markdown

    `run()` runs it in this thread instead. `stop()` ends it at its next event; the
    finished turns are in its folder's journal, and `Debate.resume(folder)` goes on.
    """

    setup: DebateSetup  # what runs: format, validated params, seats, folder
    result: Result | None  # set once the debate has finished
    # A debate saved in `out`, outside moot's data directory, is listed by `moot history`
    # (its index); a caller that keeps its own record of its debates sets this False first.
    listed: bool

    def __init__(
        self,
        motion: str,
        *,
        format: str = "oxford",
        model: Models = None,
        roles: Mapping[str, str] | None = None,
        temperatures: Mapping[str, float] | None = None,
        lang: str | None = None,
        seed: int | None = None,
        out: str | Path | None = None,
        save: bool = True,
        prompts: str | Path | None = None,
        run: RunSettings | Mapping[str, Any] | None = None,
        pool: ModelSource | None = None,
        human: HumanConsole | None = None,
        **params: Any,
    ) -> None:
        try:
            chosen = debate_settings(
                motion,
                format=format,
                model=model,
                roles=roles,
                temperatures=temperatures,
                lang=lang,
                seed=seed,
                prompts=prompts,
                run=run,
                **params,
            )
            # The data directory's config.toml fills in what the caller left out.
            chosen = with_defaults(chosen, read_defaults(), lang_given=lang is not None)
            setup = prepare(chosen)
        except MootError as exc:
            raise in_language(exc, language_of(motion, lang)) from exc.__cause__
        setup.human = human  # who answers for a seat a person holds (--role ROLE=human)
        self._init(setup, save=save, out=out, pool=pool)

    def _init(
        self,
        setup: DebateSetup,
        *,
        save: bool,
        out: str | Path | None,
        pool: ModelSource | None,
        replay: list[Record] | None = None,
        ask: Callable[[str], str] | None = None,
    ) -> None:
        if not save and out is not None:
            raise UsageError(key="api.debates.save_false_out_contradict_each")
        self.setup, self.save, self.pool, self.ask = setup, save, pool, ask
        self.result = None
        self.listed = True
        self._replay = replay
        self._out = history.out_folder(out, name="out") if out is not None else None
        self._stop = threading.Event()

    @classmethod
    def from_setup(
        cls,
        setup: DebateSetup,
        *,
        save: bool = True,
        out: str | Path | None = None,
        pool: ModelSource | None = None,
        ask: Callable[[str], str] | None = None,
    ) -> Debate:
        """A debate from a setup already prepared (the CLI's way in)."""
        debate = cls.__new__(cls)
        debate._init(setup, save=save, out=out, pool=pool, ask=ask)
        return debate

    @classmethod
    def resume(
        cls,
        folder: str | Path,
        *,
        pool: ModelSource | None = None,
        human: HumanConsole | None = None,
    ) -> Debate:
        """The interrupted debate saved in FOLDER; finished turns are reused verbatim (a
        person's seat is asked again, through HUMAN, for the turn it was on)."""
        path = Path(folder).expanduser()
        if (path / "transcript.json").exists():
            raise UsageError(key="api.debates.holds_finished_debate", path=path)
        if running_elsewhere(path):  # two processes must never write one journal
            raise UsageError(key="records.journal.running", field="debate", folder=path)
        setup, records = resume_setup(path)
        setup.human = human
        debate = cls.__new__(cls)
        debate._init(setup, save=True, out=None, pool=pool, replay=records)
        return debate

    @property
    def folder(self) -> Path | None:
        """Where the debate is written (known once it starts); None when it is not saved."""
        return self.setup.out_dir

    def stop(self) -> None:
        """End the debate at its next event (a token, a turn); safe from any thread."""
        self._stop.set()

    def run(self, on_event: Listener | None = None) -> Result:
        """Run the debate to its end in this thread, calling ON_EVENT with each event."""
        claim = self._claim()
        listeners: list[Listener] = [self._check_stop, *([on_event] if on_event else [])]
        # A dry run never loads a model: a pool that loads them is left aside (its models are
        # scripted); a source of scripted models of the caller's own (the page's paced ones)
        # still serves.
        loads = isinstance(self.pool, _pool.ModelPool) and self.setup.run.dry_run
        factory = self.pool.get if self.pool is not None and not loads else None
        runner = _Runner(
            self.setup,
            listeners=listeners,
            model_factory=factory,
            ask=self.ask,
            replay=self._replay,
        )
        try:
            done = runner.run()
        except _StopRequested:
            if self.folder is None:
                raise DebateStopped(key="api.debates.stopped_unsaved") from None
            raise DebateStopped(
                key="api.debates.stopped", folder=str(self.folder), again=repr(str(self.folder))
            ) from None
        except BaseException:
            if claim is not None:
                claim.release()  # a debate that wrote nothing leaves nothing behind
            raise
        self.result = Result(done.transcript, done.markdown, done.out_dir)
        return self.result

    def __iter__(self) -> Iterator[Event]:
        return self.events()

    def events(self) -> Iterator[Event]:
        """Run the debate in a worker thread and yield its events as they happen; leaving
        the loop early stops the debate. The debate's own error is raised here."""
        events: queue.Queue[object] = queue.Queue()

        def work() -> None:
            try:
                self.run(on_event=events.put)
            except DebateStopped:
                pass
            except BaseException as exc:  # handed to the caller's thread
                events.put(_Failed(exc))
            finally:
                events.put(_DONE)

        worker = threading.Thread(target=work, name="moot-debate", daemon=True)
        worker.start()
        try:
            while (item := events.get()) is not _DONE:
                if isinstance(item, _Failed):
                    raise item.error
                yield item  # type: ignore[misc]
        finally:
            if worker.is_alive():  # the caller left the loop early
                self.stop()
            worker.join()

    def _check_stop(self, event: Event) -> None:
        if self._stop.is_set():
            raise _StopRequested

    def _claim(self) -> history.Claim | None:
        if self._replay is not None or self.setup.out_dir is not None:
            return None  # resumed, or already placed
        if not self.save or (self._out is None and not self.setup.format.saves_by_default):
            return None
        # Named after the motion as it was given, as the terminal and the page name theirs.
        claim = history.claim(self._out, motion=self.setup.asked, listed=self.listed)
        self.setup.out_dir = claim.path
        return claim


def language_of(motion: object, lang: str | None) -> str:
    """The language a debate's errors are said in: LANG's, else its motion's script's."""
    if lang in LANGUAGES:
        return str(lang)
    return resolve_language("auto", motion) if isinstance(motion, str) else "en"


def in_language(error: MootError, language: str) -> MootError:
    """ERROR as a debate in LANGUAGE says it: its message and hint in that language's words
    (the name the user likely meant leading the hint), so that `str(error)` reads as `moot`
    prints it."""
    said = words(language)
    shown = said.error(error)
    return error.worded(shown["message"], shown["hint"], label=said.say("hint"))


def debate_settings(
    motion: str,
    *,
    format: str = "oxford",
    model: Models = None,
    roles: Mapping[str, str] | None = None,
    temperatures: Mapping[str, float] | None = None,
    lang: str | None = None,
    seed: int | None = None,
    prompts: str | Path | None = None,
    run: RunSettings | Mapping[str, Any] | None = None,
    **params: Any,
) -> DebateSettings:
    """The validated settings of a debate; a MootError names the first bad one."""
    fmt = get_format(format)
    refuse_unknown(params)
    for name in params:
        if name not in fmt.reads:
            raise UsageError(
                key="api.debates.format_has_no_parameter",
                field=f"params.{name}",
                name=fmt.name,
                name2=name,
                reads=", ".join(sorted(fmt.reads)),
            )
    return settings(
        motion=motion,
        format=format,
        models=(model,) if isinstance(model, str) else tuple(model or ()),
        roles=keyed(roles, field="roles"),
        temperatures=keyed(temperatures, field="temperatures"),
        lang=lang or "auto",
        seed=seed,
        prompts=Path(prompts).expanduser() if prompts is not None else None,
        params=params,
        run=run if run is not None else RunSettings(),
    )


def debate(
    motion: str,
    *,
    format: str = "oxford",
    model: Models = None,
    roles: Mapping[str, str] | None = None,
    temperatures: Mapping[str, float] | None = None,
    lang: str | None = None,
    seed: int | None = None,
    out: str | Path | None = None,
    on_event: Listener | None = None,
    save: bool = True,
    prompts: str | Path | None = None,
    run: RunSettings | Mapping[str, Any] | None = None,
    pool: ModelSource | None = None,
    human: HumanConsole | None = None,
    progress: bool = False,
    **params: Any,
) -> Result:
    """Run one debate on MOTION to its end and return its result.

    The defaults are `moot run`'s: the Oxford format on the default model, the language
    of the motion, a fresh seed, saved in a folder of moot's data directory (`out` names
    another, which `moot history` lists too; `save=False` writes nothing). `model` is one
    reference or several (the formats with one seat per model); `roles` binds a role to a
    model; `temperatures` overrides a role's. `run` holds the context size, GPU layers,
    token cap, call time limit and `dry_run` (scripted models, nothing loads).
    `human` answers for a seat a person holds (`roles={"opposition": "human"}`): a console
    of `moot.inference.human`, e.g. `ScriptedConsole([...])`. `progress=True` writes a
    line on stderr as each turn ends (off by default: nothing is printed). What is left out
    is taken from the data directory's `config.toml` where it sets it (`moot config show`).

    The format's parameters are keywords, each taken by the formats named (several values
    as a list or tuple); a parameter the format does not take is refused:
    """
    d = Debate(
        motion,
        format=format,
        model=model,
        roles=roles,
        temperatures=temperatures,
        lang=lang,
        seed=seed,
        out=out,
        save=save,
        prompts=prompts,
        run=run,
        pool=pool,
        human=human,
        **params,
    )
    try:
        return d.run(_with_progress(on_event, d.setup.language) if progress else on_event)
    except MootError as exc:
        raise in_language(exc, d.setup.language) from exc.__cause__


def _with_progress(on_event: Listener | None, language: str) -> Listener:
    """ON_EVENT, after a line on stderr as each turn ends."""
    lines = TurnLines(language)
    if on_event is None:
        return lines
    told = on_event

    def both(event: Event) -> None:
        lines(event)
        told(event)

    return both


def parameters_doc(width: int = 88) -> str:
    """The format parameters as `moot.debate`'s docstring lists them, from their declarations:
    one item each, with the formats that take it and what it does."""
    items = []
    for name, shared in parameters().items():
        groups = shared.groups()
        several = ", a list" if shared.first.repeatable else ""
        if len(groups) == 1:
            formats, text = groups[0]
            item = f"- `{name}` ({', '.join(formats)}{several}): {text}."
        else:
            item = f"- `{name}`{several}: {shared.help()}."
        items.append(textwrap.fill(item, width, subsequent_indent="  "))
    return "\n".join(items)


debate.__doc__ = f"{debate.__doc__}\n{textwrap.indent(parameters_doc(), '    ')}\n"
