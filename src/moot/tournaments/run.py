"""A tournament: every pair of models debates every motion twice, sides swapped, each
debate decided by judges who took no part in it; kept on disk debate by debate, so an
interrupted tournament resumes where it stopped.

Layout of a tournament folder:
    tournament.json            the plan: models, motions, judges, format, every debate
    debates/<id>/              one debate: journal.jsonl, transcript.json, debate.md,
                               and verdict.json, written last: the debate is finished
    ratings.json/.csv/.png     the report (report.build, report.write)
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from moot.config import RunSettings, tournaments_dir
from moot.debates.runner import DebateRun, offload_notice
from moot.debates.settings import DebateSetup, FormatParams, format_params
from moot.errors import MootError, UsageError
from moot.events import Event, Listener, Notice
from moot.formats import get_format
from moot.formats.base import Format
from moot.inference.protocol import ChatModel
from moot.records import files
from moot.records.files import make_private_dir, write_atomic
from moot.records.journal import read_records
from moot.records.transcript import Transcript
from moot.tournaments import adaptive
from moot.tournaments.ballots import check_readable, judge_debate
from moot.tournaments.judge import SIDE_NAMES, Verdict
from moot.tournaments.plan import (
    Motion,
    Pairing,
    TournamentPlan,
    check_plan,
    dry_identity,
    identity,
    make_plan,
    problem,
    two_sided,
    with_controls,
)
from moot.tournaments.settings import BallotSettings

if TYPE_CHECKING:
    from moot.inference.pool import ModelPool

PLAN = "tournament.json"
VERDICT = "verdict.json"
ModelFactory = Callable[[str], ChatModel]
M = TypeVar("M", bound=BaseModel)


def read_record(path: Path, model: type[M], *, what: str, hint: str) -> M:
    """A file moot wrote in a tournament folder, read back as MODEL: only a regular file of
    its own (no symlink, FIFO or folder), bounded, and valid, or a one-line UsageError."""
    text = files.read_text(path, what=what, limit=files.RECORD_LIMIT, follow_symlinks=False)
    try:
        return model.model_validate_json(text, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            detail = str(first.get("ctx", {}).get("error", "")) or "malformed"
            raise UsageError(
                key="tournaments.run.not_valid_json", what=what, path=path, detail=detail, fix=hint
            ) from None
        raise UsageError(
            key="tournaments.run.not_one_moot_wrote",
            what=what,
            path=path,
            exc=problem(exc),
            fix=hint,
        ) from None


# -- events -------------------------------------------------------------------------------


@dataclass(frozen=True)
class DebateBegun:
    pairing: Pairing
    motion: str


@dataclass(frozen=True)
class DebateDone:
    pairing: Pairing
    verdict: Verdict


@dataclass(frozen=True)
class DebateFailed:
    pairing: Pairing
    message: str
    hint: str = ""


@dataclass(frozen=True)
class InDebate:
    """An engine event from inside a running debate (local executor only)."""

    pairing: Pairing
    event: Event


# A Notice of its own: said of the whole tournament, once (not by each debate).
TournamentEvent = DebateBegun | DebateDone | DebateFailed | InDebate | Notice
Emit = Callable[[TournamentEvent], None]


# -- one debate ---------------------------------------------------------------------------


def setup_for(plan: TournamentPlan, pairing: Pairing, folder: Path | None) -> DebateSetup:
    """The debate's setup: the two models in their seats, the first judge in every other."""
    fmt = get_format(plan.format)
    first, second = two_sided(fmt)
    params = fmt.params_type(**plan.params)
    host = pairing.judges[0]
    seats = {first: pairing.proposition, second: pairing.opposition}
    motion = plan.motions[pairing.motion]
    return DebateSetup(
        format=fmt,
        motion=motion.text,
        language=motion.language,
        seed=pairing.seed,
        params=params,
        out_dir=folder,
        role_models={r: seats.get(r, host) for r in fmt.cast(params).roles},
        run=run_settings(plan),
    )


def check_debate_dir(folder: Path) -> None:
    """A debate's folder is the tournament's own: never a symlink to elsewhere."""
    if folder.is_symlink():
        raise UsageError(key="tournaments.run.symlink_moot_does_not_write", folder=folder)


def run_settings(plan: TournamentPlan) -> RunSettings:
    """How each of the plan's debates runs; a plan written before a setting existed gets
    that setting's default."""
    return RunSettings.model_validate(plan.options)


def plan_n_ctx(plan: TournamentPlan) -> int:
    """The context window of the plan's models: its --n-ctx, else what its longest debate
    needs (`formats.base.context_need`, in each motion's language), bounded by the smallest
    trained context of the local models it names."""
    run = run_settings(plan)
    if run.n_ctx:
        return run.n_ctx
    from moot.formats import get_format
    from moot.formats.base import context_need
    from moot.inference.remote import is_remote_ref
    from moot.models import memory, store

    fmt = get_format(plan.format)
    params = fmt.params_type.model_validate(plan.params)
    need = max(context_need(fmt, params, m.language) for m in plan.motions)
    local = {r for r in (*plan.models, *plan.judges) if not is_remote_ref(r)}
    trained = [t for t in (store.resolve(r).context_length for r in sorted(local)) if t > 0]
    return memory.default_n_ctx(need, min(trained) if trained else None)


def play(
    plan: TournamentPlan,
    pairing: Pairing,
    folder: Path,
    *,
    model_for: ModelFactory,
    listeners: list[Listener] | None = None,
) -> Verdict:
    """Run (or finish) one debate in `folder`, have it judged, write its verdict last."""
    check_debate_dir(folder)
    saved = folder / "transcript.json"
    again = "remove it, and --resume runs that debate again"
    if os.path.lexists(saved):  # debated already; only the judging was missing
        transcript = read_record(saved, Transcript, what="transcript", hint=again)
        if (transcript.format, transcript.language) not in SIDE_NAMES or (
            transcript.format != plan.format
        ):
            raise UsageError(
                key="tournaments.run.transcript_not_this_tournament_s", saved=saved, fix=again
            )
    else:
        journal = folder / "journal.jsonl"
        there = os.path.lexists(journal)
        records = read_records(journal) if there else []
        if there and not records:
            journal.unlink()  # torn before its header: start the debate afresh
        setup = setup_for(plan, pairing, folder)
        debate = DebateRun(
            setup, listeners=listeners, model_factory=model_for, replay=records or None
        )
        transcript = debate.run().transcript
    verdict = judge_debate(
        pairing.id,
        transcript,
        pairing.judges,
        self_judged=pairing.self_judged,
        model_for=model_for,
        listeners=listeners,
        ballot=plan.ballot,
        forfeits=True,
        timeout_s=run_settings(plan).call_timeout_s,
    )
    write_atomic(folder / VERDICT, verdict.model_dump_json(indent=2))
    return verdict


# -- the tournament -----------------------------------------------------------------------


class Executor(Protocol):
    """Runs the pending debates of a tournament, emitting an event as each ends."""

    def run(self, tournament: Tournament, pending: list[Pairing], emit: Emit) -> None: ...


class Tournament:
    """A tournament folder: its plan, the debates finished in it, those still to run."""

    def __init__(self, plan: TournamentPlan, folder: Path) -> None:
        self.plan = plan
        self.folder = folder

    @classmethod
    def create(cls, plan: TournamentPlan, folder: Path) -> Tournament:
        if (folder / PLAN).exists():
            raise UsageError(key="tournaments.run.already_holds_tournament", folder=folder)
        try:
            make_private_dir(folder / "debates")
            write_atomic(folder / PLAN, plan.model_dump_json(indent=2))
        except OSError as exc:
            raise UsageError(
                key="tournaments.run.cannot_write", folder=folder, value=exc.strerror or exc
            ) from exc
        return cls(plan, folder)

    @classmethod
    def open(cls, folder: Path) -> Tournament:
        """The tournament in FOLDER, its plan checked; a one-line UsageError for anything
        that is not a plan moot wrote."""
        hint = "pass the folder a tournament was started in"
        if folder.exists() and not folder.is_dir():
            raise UsageError(key="tournaments.run.not_folder", folder=folder, fix=hint)
        path = folder / PLAN
        if not os.path.lexists(path):
            raise UsageError(key="tournaments.run.holds_no", folder=folder, plan=PLAN, fix=hint)
        plan = read_record(path, TournamentPlan, what="tournament plan", hint=hint)
        try:
            check_plan(plan)
        except UsageError as exc:
            raise UsageError(
                key="tournaments.run.plan_does_not_hold_together", path=path, error=exc
            ) from None
        if (folder / "debates").is_symlink():
            raise UsageError(
                key="tournaments.run.symlink_moot_does_not_write_2", value=folder / "debates"
            )
        return cls(plan, folder)

    def debate_dir(self, pairing: Pairing) -> Path:
        return self.folder / "debates" / pairing.id

    def verdicts(self) -> dict[str, Verdict]:
        """The finished debates' verdicts, by debate id; a verdict that is not one moot
        wrote is a UsageError naming it."""
        found = {}
        for p in self.plan.debates:
            folder = self.debate_dir(p)
            check_debate_dir(folder)
            path = folder / VERDICT
            if not os.path.lexists(path):
                continue
            hint = "remove it, and --resume judges that debate again"
            verdict = read_record(path, Verdict, what="verdict", hint=hint)
            if verdict.debate != p.id:
                raise UsageError(
                    key="tournaments.run.verdict_verdict_another_debate", path=path, fix=hint
                )
            found[p.id] = verdict
        return found

    def transcripts(self, verdicts: Mapping[str, Verdict]) -> dict[str, Transcript]:
        """The transcripts of the debates with a verdict among VERDICTS, by debate id; one
        missing, or not one moot wrote, is a UsageError naming it."""
        found = {}
        hint = "remove it and the debate's verdict.json, and --resume runs that debate again"
        for p in self.plan.debates:
            if p.id not in verdicts:
                continue
            path = self.debate_dir(p) / "transcript.json"
            if not os.path.lexists(path):
                raise UsageError(key="tournaments.run.debate_has_verdict_but_no", id=p.id)
            found[p.id] = read_record(path, Transcript, what="transcript", hint=hint)
        return found

    def pending(self) -> list[Pairing]:
        done = self.verdicts()
        return [p for p in self.plan.debates if p.id not in done]

    def run(self, executor: Executor, emit: Emit) -> list[DebateFailed]:
        """Run every debate not finished yet; the failures, which a resume retries. An
        adaptive plan grows as its debates finish (`grow`), and stops at a failure."""
        failed: list[DebateFailed] = []
        queue = self.pending()
        grows = self.plan.schedule == "adaptive"

        ended = 0

        def record(event: TournamentEvent) -> None:
            nonlocal ended
            if isinstance(event, DebateFailed):
                failed.append(event)
            ended += isinstance(event, DebateDone | DebateFailed)
            emit(event)
            # The executor plays `queue` in order: a debate added as the last of them ends
            # (in whatever order they end) is played next, on the models it has loaded.
            if grows and not failed and isinstance(event, DebateDone) and ended == len(queue):
                queue.extend(self.grow())

        if grows and not queue:
            queue.extend(self.grow())
        if queue:
            notice = self._offload_notice()
            if notice is not None:
                emit(notice)
            executor.run(self, queue, record)
        return failed

    def _offload_notice(self) -> Notice | None:
        """That the --gpu-layers asked for does nothing on this build of llama.cpp: said
        once, before the first debate, where a model is loaded here (not a server's, not a
        dry run's), in the motions' language when they share one."""
        from moot.inference.remote import is_remote_ref

        run = run_settings(self.plan)
        refs = [*self.plan.models, *self.plan.judges]
        if not run.gpu_layers or run.dry_run or all(is_remote_ref(r) for r in refs):
            return None
        languages = {m.language for m in self.plan.motions}
        return offload_notice(run.gpu_layers, languages.pop() if len(languages) == 1 else "en")

    def grow(self) -> list[Pairing]:
        """An adaptive plan's next debate, chosen from the finished ones and written into
        the plan on disk before it is played; none once the schedule stops."""
        verdicts = self.verdicts()
        if len(verdicts) < len(self.plan.debates):
            return []
        # An abstention says nothing of who is stronger: the schedule reads the decided.
        decided = {k: v.winner for k, v in verdicts.items() if v.winner != "undecided"}
        chosen = adaptive.next_pairing(self.plan, decided)
        if chosen is None:
            return []
        self.plan = self.plan.model_copy(update={"debates": [*self.plan.debates, chosen]})
        write_atomic(self.folder / PLAN, self.plan.model_dump_json(indent=2))
        return [chosen]


def new_tournament(
    fmt: Format,
    models: Sequence[str],
    motions: list[Motion],
    *,
    given: FormatParams,
    run: RunSettings,
    seed: int | None,
    judges: Sequence[str] = (),
    swaps: int = 1,
    resolve: bool = True,
    out: Path | None = None,
    schedule: str = "round-robin",
    budget: int | None = None,
    controls: int | None = None,
    ballot: BallotSettings | None = None,
) -> Tournament:
    """Plan a tournament and create its folder (OUT, else a fresh one in moot's data
    directory). With `resolve`, models are told apart by their files, resolved offline (on a
    dry run, checked without hashing). CONTROLS: control debates of each kind (None: the
    default, `plan.with_controls`)."""
    adaptive.check_schedule(schedule, budget, len(models))
    plan = make_plan(
        fmt,
        list(models),
        motions,
        params=format_params(fmt, given),
        seed=seed if seed is not None else random.SystemRandom().randrange(2**31),
        judges=list(judges),
        options=run.model_dump(exclude={"decoding"}),  # how it decodes is a run's, not planned
        identify=(dry_identity if run.dry_run else identity) if resolve else str,
        swaps=swaps,
    )
    if schedule == "adaptive":
        plan = adaptive.adapt(plan, budget=budget)
    plan = with_controls(plan, controls)
    if ballot is not None:
        check_readable(ballot.method, list(judges) or list(models))
        plan = plan.model_copy(update={"ballot": ballot})
    folder = out or tournaments_dir() / datetime.now().strftime("%Y%m%d-%H%M%S")
    return Tournament.create(plan, folder)


def echo_models(plan: TournamentPlan) -> ModelFactory | None:
    """Scripted stand-ins for every model on a dry run; None otherwise."""
    if not run_settings(plan).dry_run:
        return None
    from moot.inference.scripted import EchoModel

    return lambda ref: EchoModel(model_id=f"echo:{ref}")


@contextmanager
def local_models(
    tournament: Tournament, model_for: ModelFactory | None = None
) -> Iterator[tuple[ModelFactory, ModelPool | None]]:
    """The models here: MODEL_FOR if given, the dry run's stand-ins, else a pool that
    loads each model once, closed at the end."""
    model_for = model_for or echo_models(tournament.plan)
    if model_for is not None:
        yield model_for, None
        return
    from moot.inference.pool import ModelPool
    from moot.models import store

    run = run_settings(tournament.plan)
    pool = ModelPool(
        resolve=store.resolve, n_gpu_layers=run.gpu_layers, n_ctx=plan_n_ctx(tournament.plan)
    )
    try:
        yield pool.get, pool
    finally:
        pool.close()


def run_one(
    tournament: Tournament,
    pairing: Pairing,
    model_for: ModelFactory,
    emit: Emit,
    *,
    forward: bool,
) -> None:
    """Play one debate in its folder and emit how it ended; a MootError fails only it."""
    emit(DebateBegun(pairing, tournament.plan.motions[pairing.motion].text))
    listeners: list[Listener] = [lambda e: emit(InDebate(pairing, e))] if forward else []
    try:
        verdict = play(
            tournament.plan,
            pairing,
            tournament.debate_dir(pairing),
            model_for=model_for,
            listeners=listeners,
        )
    except MootError as exc:
        emit(DebateFailed(pairing, exc.message, exc.hint))
        return
    emit(DebateDone(pairing, verdict))
