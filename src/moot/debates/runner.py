"""One debate wired end to end: models resolved and loaded, pack checked, run, files saved."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from moot import speeches
from moot.config import SESSION_CACHE_MB, THINK_BUDGET, Decoding, RunSettings, Seed
from moot.debates import sources
from moot.debates.settings import DebateSetup, Temperature
from moot.engine.evidence import EVIDENCE_TOKENS, Documents, check_pack
from moot.engine.turns import Engine, Role
from moot.errors import MootError, UsageError
from moot.events import Listener, Notice
from moot.formats.base import MAX_MOTION, Cast
from moot.inference.human import HUMAN, Ask, HumanSeat, Said, is_human_ref
from moot.inference.pool import ModelPool
from moot.inference.protocol import ChatModel, ResolvedModel
from moot.inference.scripted import ECHO_FORM, EchoModel
from moot.models import store
from moot.models.catalog import default_model_id
from moot.prompts import (
    Language,
    PromptPack,
    check_engine_pack,
    engine_pack,
    load_pack,
)
from moot.records.files import make_private_dir, write_atomic
from moot.records.journal import (
    JOURNAL_FILE,
    Held,
    Journal,
    check_version,
    hold,
    load,
    validate,
)
from moot.records.transcript import (
    DebateEvidence,
    DebateRecord,
    ModelInfo,
    Record,
    Transcript,
    Turn,
    citation_summary,
)


@dataclass(frozen=True)
class Seat:
    """One seat as a front end shows it before the first turn: its role, what the debate
    calls it, the model reference it runs (`human`: a person's) and its temperature."""

    role: str
    label: str
    ref: str
    temperature: float


@dataclass
class DebateResult:
    transcript: Transcript
    out_dir: Path | None
    markdown: str


class DebateRun:
    """Resolves models offline, checks the pack, runs the format, writes the files.

    Models come from `model_factory` when given (scripted models, a caller's pool, a
    tournament's), else from a pool of this debate's own, closed when the debate ends.
    """

    def __init__(
        self,
        setup: DebateSetup,
        *,
        listeners: list[Listener] | None = None,
        model_factory: Callable[[str], ChatModel] | None = None,
        ask: Callable[[str], str] | None = None,
        replay: list[Record] | None = None,
        advise: bool = True,
    ) -> None:
        self.setup = setup
        # Whether to say, before the first turn, which of its models the catalog says were
        # not made for its language (a resumed debate said it when it began; a replay, never).
        self.advise = advise and not replay
        self.ask = ask
        self.replay = replay
        self.listeners = listeners or []
        self._factory = model_factory
        self._pool: ModelPool | None = None
        self._held: Held | None = None  # the folder, held while the debate runs
        self.cast: Cast = setup.format.cast(setup.params)
        # The context window of the models this debate loads: --n-ctx, else what it needs.
        self.n_ctx: int | None = setup.run.n_ctx

    def refs(self) -> dict[str, str]:
        """Each role's model reference: --role, else the format's seat, else --model/default."""
        default = self.setup.default_model or default_model_id()
        return {
            r: self.setup.role_models.get(r) or self.cast.models.get(r) or default
            for r in self.cast.roles
        }

    def temperatures(self) -> dict[str, float]:
        """Each role's temperature: --temperature, else the format's for the seat."""
        chosen = self.setup.temperatures
        return {r: chosen.get(r, t) for r, t in self.cast.temperatures.items()}

    def seats(self) -> list[Seat]:
        """The seats that speak, in order, each with its label in the debate's language, its
        model reference and its temperature: what a front end shows before the first turn."""
        s = self.setup
        refs, temps = self.refs(), self.temperatures()
        labels = s.format.seats(s.params, s.language)
        return [Seat(r, label, refs[r], temps[r]) for r, label in labels.items() if r in refs]

    def _models(self, refs: dict[str, str]) -> tuple[dict[str, ChatModel], dict[str, ModelInfo]]:
        """Each role's model and what the transcript records of it; a seat a person holds is
        theirs, in a dry run too."""
        people = [r for r, ref in refs.items() if is_human_ref(ref)]
        seat = self._human_seat(people) if people else None  # before any model loads
        models, infos = self._machines({r: ref for r, ref in refs.items() if r not in people})
        if seat is not None:
            for r in people:
                models[r], infos[r] = seat, ModelInfo(id=HUMAN)
        return {r: models[r] for r in refs}, {r: infos[r] for r in refs}

    def _human_seat(self, roles: list[str]) -> HumanSeat:
        console = self.setup.human
        if console is None:
            raise UsageError(key="debates.runner.person_holds_seat_there_no", roles=roles[0])
        return HumanSeat(console)

    def _machines(self, refs: dict[str, str]) -> tuple[dict[str, ChatModel], dict[str, ModelInfo]]:
        """The models of the seats no person holds: scripted, a caller's, or loaded here."""
        if not refs:
            return {}, {}
        if self.setup.run.dry_run or self._factory:
            form = self.setup.echo
            make = self._factory or (lambda ref: EchoModel(model_id=f"echo:{ref}", form=form))
            models = {r: make(ref) for r, ref in refs.items()}
            return models, {r: ModelInfo(id=m.model_id) for r, m in models.items()}
        from moot.inference.remote import is_remote_ref

        infos, local = {}, {}
        for r, ref in refs.items():  # resolve every model first: a missing one fails fast
            if is_remote_ref(ref):
                infos[r] = ModelInfo(id=ref)
            else:
                resolved = local[ref] = store.resolve(ref)
                infos[r] = ModelInfo(id=resolved.id, sha256=resolved.sha256)
        run = self.setup.run
        if local and run.gpu_layers:
            self._say_offload(run.gpu_layers)
        budgets: dict[str, int] = {}
        if local:  # before the first loads: do the debate's models fit in memory together?
            seated = [local[ref] for ref in refs.values() if not is_remote_ref(ref)]
            budgets = self._plan_memory(seated)
        pool = self._pool = ModelPool(
            resolve=store.resolve,
            n_gpu_layers=run.gpu_layers,
            n_ctx=self.n_ctx,
            one_at_a_time=run.one_model_at_a_time,
            # A debate decoded side by side with others (a replay of one, too): its threads.
            n_threads=run.decoding.threads if run.decoding else None,
            snapshot_budgets=budgets,
        )
        return {r: pool.get(ref) for r, ref in refs.items()}, infos

    def _say_offload(self, layers: int) -> None:
        """Say, once before the first turn, that --gpu-layers is ignored by a build of
        llama.cpp that cannot offload: every layer then runs on the CPU."""
        notice = offload_notice(layers, self.setup.language)
        if notice is not None:
            self._tell(notice)

    def _plan_memory(self, seated: list[ResolvedModel]) -> dict[str, int]:
        """Refuse a debate whose models do not fit in the memory free; return each model's
        memory for its speakers' KV snapshots (by file), sized to what is free."""
        from moot.models import memory

        run = self.setup.run
        distinct = {m.id: m for m in seated}.values()
        self.n_ctx = run.n_ctx or self._needed_ctx([m.context_length for m in distinct])
        # A KV snapshot per seat on a local model, in the cache of each loaded model
        # (with one at a time, an unloaded model's wait on disk).
        loaded = 1 if run.one_model_at_a_time else len(distinct)
        planned = memory.plan(
            [(m.id, m.files or m.path) for m in distinct],
            self.n_ctx,
            gpu_layers=run.gpu_layers,
            one_at_a_time=run.one_model_at_a_time,
            snapshots=len(seated),
        )
        free = memory.free_memory(gpu=planned.gpu > 0)
        fallback = loaded * SESSION_CACHE_MB * 2**20
        budget = memory.snapshot_budget(planned, free.ram, fallback=fallback)
        memory.check_fits(replace(planned, snapshot_budget=budget), free)
        if run.one_model_at_a_time:  # one model in memory at a time: each has all of it
            return {str(m.path): budget for m in distinct}
        seats: dict[str, int] = {}
        for m in seated:
            seats[str(m.path)] = seats.get(str(m.path), 0) + 1
        return memory.shares(budget, seats)

    def _advise(self) -> None:
        """A notice for each model the catalog says was not made for the debate's language,
        naming one that was: the debate goes on (a dry run too: only the catalog is read)."""
        from moot.models import languages

        for line in languages.notices(self.refs().values(), self.setup.language):
            notice = Notice("info", line)
            for listener in self.listeners:
                listener(notice)

    def _needed_ctx(self, trained: list[int]) -> int:
        """The context this debate's rulebook needs, bounded by its models' trained ones."""
        from moot.formats.base import context_need
        from moot.models import memory

        s = self.setup
        need = context_need(s.format, s.params, s.language)
        if s.evidence:  # room for the passages a speech is shown
            need += EVIDENCE_TOKENS
        known = [t for t in trained if t and t > 0]
        return memory.default_n_ctx(need, min(known) if known else None)

    def pack(self) -> PromptPack:
        fmt = self.setup.format
        pack = load_pack(self.setup.language, fmt.name, root=self.setup.prompts_root)
        pack.validate(fmt.steps, fmt.sample_variables())
        check_engine_pack(engine_pack(self.setup.language, root=self.setup.prompts_root))
        return pack

    def _transcript(self, pack: PromptPack, infos: dict[str, ModelInfo]) -> Transcript:
        s = self.setup
        temps = self.temperatures()
        params: dict[str, Any] = {
            **s.params.model_dump(mode="json"),
            "gpu_layers": s.run.gpu_layers,
            "prompts_root": str(s.prompts_root) if s.prompts_root else None,
            "dry_run": s.run.dry_run,
            # The form of a dry run's scripted replies, where not the first (which records
            # none): a replay or a resume speaks as the debate did.
            **({"echo": s.echo} if s.run.dry_run and s.echo != 1 else {}),
        }
        return Transcript(
            format=s.format.name,
            motion=s.motion,
            language=s.language,
            seed=s.seed,
            models=infos,
            refs=self.refs(),
            sampling=temps,
            prompt_pack=pack.digest,
            # A resumed debate began the day its record says; a record without one, today.
            began=s.began or date.today().isoformat(),
            params={
                **params,
                "max_tokens": s.run.max_tokens,
                "n_ctx": self.n_ctx,
                "think_budget": s.run.think_budget,
                "call_timeout_s": s.run.call_timeout_s,
                "one_model_at_a_time": s.run.one_model_at_a_time,
                # Only where the debate was not decoded alone: a sequential record is as before.
                **(
                    {"decoding": s.run.decoding.model_dump(exclude_defaults=True)}
                    if s.run.decoding
                    else {}
                ),
            },
        )

    def _open_journal(self, transcript: Transcript) -> Journal:
        """Create the output folder and journal now, so a bad --out fails before any turn."""
        out = self.setup.out_dir
        assert out is not None
        try:
            make_private_dir(out)
            journal = Journal(out / JOURNAL_FILE)
            if self._held is None:  # a folder no front end claimed: held from its journal on
                try:
                    self._held = hold(out)
                except UsageError:
                    journal.close()
                    raise
            if not self.replay:
                journal.append(transcript.header())
        except OSError as exc:
            raise UsageError(
                key="debates.runner.cannot_write", out=out, value=exc.strerror or exc
            ) from exc
        return journal

    def documents(self) -> Documents | None:
        """The documents given (--evidence) read into passages and indexed, before any
        model loads: cached in the debate's folder (`evidence/`), where a resumed debate
        finds them, a changed file read again. A file left out is a notice."""
        s = self.setup
        if not s.evidence:
            return None
        from moot.evidence import open_library
        from moot.words import words

        paths = list(s.evidence)
        # The adversarial format shows a file of another kind named on its own whole: only
        # it, never read for passages.
        if s.format.name == "adversarial":
            paths = [p for p in paths if p.is_dir() or p.suffix.lower() in _read_kinds()]
            if not paths:
                return None
        # The cache holds each document's whole extracted text: in the debate's folder only
        # where the caller chose to keep it (--keep-sources); else nothing of the documents
        # is written but the passages the transcript keeps.
        cache = None
        if s.out_dir is not None and s.keep_sources:
            make_private_dir(s.out_dir)
            cache = s.out_dir / EVIDENCE_CACHE
        fresh = cache is not None and not os.path.lexists(cache)
        try:
            library = open_library(paths, cache=cache)
        except BaseException:
            if fresh and cache is not None:  # nothing to read: no cache left behind
                shutil.rmtree(cache, ignore_errors=True)
            raise
        said = words(s.language)
        for skipped in library.skipped:
            shown = said.error(skipped.reason)
            self._tell(Notice("warn", f"{shown['message']} ({shown['hint']})"))
        record = DebateEvidence(
            paths=[str(p) for p in s.evidence],
            files=library.files,
            skipped=[str(k) for k in library.skipped],
            keep_sources=s.keep_sources,
        )
        return Documents(library, record)

    def _tell(self, event: Notice) -> None:
        for listener in self.listeners:
            listener(event)

    def run(self) -> DebateResult:
        """The debate to its end. While it runs it holds its folder (`journal.hold`): the
        history shows it running, and no other process resumes it."""
        out = self.setup.out_dir
        self._held = hold(out) if out is not None and os.path.lexists(out / JOURNAL_FILE) else None
        try:
            return self._run()
        finally:
            if self._held is not None:
                self._held.release()
                self._held = None

    def _run(self) -> DebateResult:
        s = self.setup
        pack = self.pack()
        documents = self.documents()
        if documents is not None:
            check_pack(engine_pack(s.language, root=s.prompts_root))
        models, infos = self._models(self.refs())
        if self.advise:
            self._advise()
        transcript = self._transcript(pack, infos)
        transcript.evidence = documents.record if documents else None
        c = self.cast
        roles = {
            r: Role(
                r,
                models[r],
                transcript.sampling[r],
                persona=c.personas.get(r),
                side=c.sides.get(r, ()),
            )
            for r in c.roles
        }
        journal = self._open_journal(transcript) if s.out_dir is not None else None
        engine = Engine(
            pack=pack,
            roles=roles,
            transcript=transcript,
            journal=journal,
            listeners=self.listeners,
            max_tokens_cap=s.run.max_tokens,
            call_timeout_s=s.run.call_timeout_s,
            think_budget=s.run.think_budget,
            ask=self.ask,
            replay=self.replay,
            rehearsal=s.run.dry_run,
            documents=documents,
            labels=s.format.seats(s.params, s.language),
        )
        try:
            transcript.result = s.format.run(engine, s.motion, s.params)
        except MootError:  # a call timeout is a TimeoutError, an OSError too: not a write
            raise
        except OSError as exc:  # a full disk or a folder gone mid-debate
            raise _write_error(exc, s.out_dir, journal) from exc
        finally:
            if journal:
                journal.close()
            if self._pool is not None:  # the models this debate loaded for itself
                self._pool.close()
                self._pool = None
        if transcript.evidence is not None:
            transcript.evidence.summary = citation_summary(transcript.turns)
        markdown = s.format.render(transcript)
        if transcript.evidence is not None:  # the passages cited and supported, by document
            markdown = f"{markdown.rstrip()}\n\n{sources.section(transcript.turns, s.language)}"
        if s.out_dir is not None:
            write_atomic(
                s.out_dir / "transcript.json", transcript.model_dump_json(indent=2, by_alias=True)
            )
            # The brief first, as the format wrote it, then every speech in order.
            every = speeches.markdown(
                transcript.turns, fmt=transcript.format, language=transcript.language
            )
            write_atomic(s.out_dir / s.format.document, f"{markdown.rstrip()}\n\n{every}")
        return DebateResult(transcript, s.out_dir, markdown)


# The evidence cache's folder in a debate's (moot.evidence.open_library's `cache`).
EVIDENCE_CACHE = "evidence"


def offload_notice(layers: int, language: str) -> Notice | None:
    """What a debate or a tournament says, once before its first turn, when asked for
    --gpu-layers LAYERS on a build of llama.cpp that cannot offload (every layer then runs
    on the CPU), in LANGUAGE; None where the build can, or where no layer was asked for."""
    from moot.inference.llama.build import build
    from moot.words import words

    built = build()
    if not layers or built.gpu_offload:
        return None
    said = words(language).say("no_gpu_offload", layers=layers, backend=built.backend)
    return Notice("warn", said)


def _read_kinds() -> frozenset[str]:
    from moot.evidence import KINDS

    return frozenset(KINDS)


def _write_error(exc: OSError, out: Path | None, journal: Journal | None) -> MootError:
    """What a failed write mid-debate means for the turns already finished."""
    where = exc.filename or out
    what = f"could not write {where}" if where else "could not write the debate"
    if journal is not None:
        hint = (
            f"the turns finished so far are in {journal.path}; free some space and "
            f"continue with `moot resume {out}`"
        )
    else:
        hint = "nothing was saved, so it cannot be resumed; free some space and run it again"
    return MootError(key="debates.runner.error", what=what, value=exc.strerror or exc, fix=hint)


def resume_setup(folder: Path) -> tuple[DebateSetup, list[Record]]:
    """Rebuild an interrupted debate's setup from its journal, with the records to reuse.
    Only the files moot wrote in FOLDER are read: a symlink in their place is refused."""
    from moot.records.journal import read_records

    journal = folder / "journal.jsonl"
    if not os.path.lexists(journal):
        raise UsageError(key="debates.runner.holds_no_journal_jsonl", folder=folder)
    if (folder / "transcript.json").is_symlink():
        raise UsageError(
            key="debates.runner.symlink_moot_does_not_follow", value=folder / "transcript.json"
        )
    records = read_records(journal)
    line, header = next(
        ((n, r) for n, r in enumerate(records, start=1) if isinstance(r, DebateRecord)), (0, None)
    )
    if header is None:
        raise UsageError(key="debates.runner.has_no_debate_header", journal=journal)
    hint = "the journal is damaged; start the debate again"
    source = f"{journal}: line {line}"  # each record is a line of its own
    recorded = header.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return setup_from_record(recorded, out_dir=folder, source=source, hint=hint), records


class _SavedRun(BaseModel):
    """How the recorded debate ran, as its params record it: JSON types exactly, no
    conversion (a "yes" is not true). `dry_run` is required: a record without it must not
    switch a scripted debate to real models."""

    model_config = ConfigDict(strict=True)

    n_ctx: int | None = None
    gpu_layers: int | None = None
    max_tokens: int | None = None
    prompts_root: str | None = None
    dry_run: bool
    think_budget: int | None = None  # older records: the default
    call_timeout_s: float | int | None = None  # older records: none
    one_model_at_a_time: bool = False
    decoding: dict[str, int | bool] | None = None  # config.Decoding, when not decoded alone
    echo: int = Field(default=1, ge=1, le=ECHO_FORM)  # a dry run's replies: older records, 1


class _Header(BaseModel):
    """The fields of a journal header or a transcript that rebuild a debate's setup."""

    model_config = ConfigDict(strict=True)

    format: str
    motion: str = Field(max_length=2 * MAX_MOTION)  # as the format words it
    language: Language
    seed: Seed
    refs: dict[str, str] = Field(default_factory=dict)
    sampling: dict[str, Temperature] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    began: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    evidence: DebateEvidence | None = None


_RUN_FIELDS = tuple(_SavedRun.model_fields)


def setup_from_record(
    header: dict[str, Any],
    *,
    out_dir: Path | None,
    source: str = "the record",
    hint: str = "is it a file moot wrote?",
) -> DebateSetup:
    """The setup a journal header or a transcript records: format, motion, seed, params,
    models. Checked strictly, as a file from anywhere: each mistake is one line naming
    SOURCE and the field."""
    from moot.formats import NAMES, get_format

    check_version(header, name=source, hint=hint)
    h = validate(_Header, header, name=source, hint=hint)
    if h.format not in NAMES:
        raise UsageError(
            key="debates.runner.format_unknown_format", source=source, format=h.format, fix=hint
        )
    fmt = get_format(h.format)
    saved = dict(h.params)
    extra = {k: saved.pop(k) for k in _RUN_FIELDS if k in saved}
    ran = validate(_SavedRun, extra, name=source, hint=hint, prefix="params")
    run = validate(
        RunSettings,
        {
            "n_ctx": ran.n_ctx or RunSettings().n_ctx,
            "gpu_layers": ran.gpu_layers or 0,
            "max_tokens": ran.max_tokens,
            "call_timeout_s": ran.call_timeout_s,
            "think_budget": THINK_BUDGET if ran.think_budget is None else ran.think_budget,
            "one_model_at_a_time": ran.one_model_at_a_time,
            "dry_run": ran.dry_run,
            "decoding": ran.decoding,
        },
        name=source,
        hint=hint,
        prefix="params",
    )
    return DebateSetup(
        format=fmt,
        motion=h.motion,
        language=h.language,
        seed=h.seed,
        params=validate(fmt.params_type, saved, name=source, hint=hint, prefix="params"),
        out_dir=out_dir,
        role_models=dict(h.refs),
        temperatures=dict(h.sampling),
        prompts_root=Path(ran.prompts_root) if ran.prompts_root else None,
        run=run,
        began=h.began,
        echo=ran.echo,
        evidence=tuple(Path(p) for p in h.evidence.paths) if h.evidence else (),
        keep_sources=h.evidence.keep_sources if h.evidence else False,
    )


def saved_sides(
    header: dict[str, Any],
    *,
    source: str = "the record",
    hint: str = "is it a file moot wrote?",
) -> Mapping[str, tuple[str, ...]]:
    """The seats of a saved debate that speak for a side, and what each is called: its
    format's cast for its params (`Cast.sides`), the record checked as `setup_from_record`
    checks it."""
    setup = setup_from_record(header, out_dir=None, source=source, hint=hint)
    return setup.format.cast(setup.params).sides


@dataclass(frozen=True)
class ReplayReport:
    """How a re-run compared with a saved transcript: None when every turn matched."""

    turns: int  # turns compared
    first_difference: int | None = None
    saved: str = ""
    replayed: str = ""
    where: str = ""  # "round N, role/step" of the first difference
    # The first turn that differs, as the re-run gave it (a front end words `where` anew).
    round: int | None = None
    role: str = ""
    step: str = ""
    # How the saved debate was decoded, where not alone (config.Decoding): the replay
    # decodes on as many threads, but beside no other debate.
    decoding: Decoding | None = None


class _Diverged(Exception):
    def __init__(self, report: ReplayReport) -> None:
        super().__init__(report.where)
        self.report = report


def replay(path: Path, *, listeners: list[Listener] | None = None) -> ReplayReport:
    """Run a saved transcript's debate again, offline, writing nothing; stop at the first
    turn whose text differs from the saved one."""
    from moot.events import Event, TurnFinished

    transcript, data = load(path)
    saved = transcript.turns
    hint = "pass the transcript.json of a debate moot saved"
    setup = setup_from_record(data, out_dir=None, source=str(path), hint=hint)
    setup.human = _Recorded(transcript)  # a person's turns are theirs: replayed as saved

    def compare(event: Event) -> None:
        if not isinstance(event, TurnFinished):
            return
        turn = event.turn
        old = saved[turn.index] if turn.index < len(saved) else None
        if old is None or (old.role, old.step, old.text) != (turn.role, turn.step, turn.text):
            when = "after the rounds" if turn.round is None else f"round {turn.round}"
            where = f"{when}, {turn.role}/{turn.step}"
            raise _Diverged(
                ReplayReport(
                    turn.index + 1,
                    turn.index,
                    old.text if old else "",
                    turn.text,
                    where,
                    round=turn.round,
                    role=turn.role,
                    step=turn.step,
                )
            )

    decoding = setup.run.decoding
    try:
        result = DebateRun(setup, listeners=[*(listeners or []), compare], advise=False).run()
    except _Diverged as diverged:
        return replace(diverged.report, decoding=decoding)
    if len(result.transcript.turns) != len(saved):
        n = len(result.transcript.turns)
        where = "the re-run ended after a different number of turns"
        return ReplayReport(n, n, where=where, decoding=decoding)
    return ReplayReport(len(saved), decoding=decoding)


class _Recorded:
    """A person's seat in a replay: each turn they were asked for is the one they gave, by
    its place in the saved debate (a decision: the saved question's)."""

    def __init__(self, transcript: Transcript) -> None:
        self._turns = transcript.turns

    def _saved(self, ask: Ask) -> Turn:
        if ask.turn is None or not 0 <= ask.turn < len(self._turns):
            raise MootError(key="debates.runner.replay_asks_person_turn_saved", label=ask.label)
        return self._turns[ask.turn]

    def speech(self, ask: Ask) -> Said:
        return Said(self._saved(ask).text)

    def decision(self, ask: Ask) -> bool:
        return bool(self._saved(ask).accepted)

    def form(self, ask: Ask) -> dict[str, Any]:
        return dict(self._saved(ask).data or {})
