"""Re-judging a saved debate: its turns replayed through the format's own flow, every judging
step asked again of another judge model, the new replies set beside the original ones.

No speech is generated: each is the saved one. At a judging step the new judge gets the
request the engine builds from the flow's state there, the prompt the original judge saw,
and its reply is validated by the same schema; the flow is handed the original reply, so it
follows the saved debate exactly to its end.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from moot._version import __version__
from moot.config import RunSettings
from moot.debates.runner import DebateRun, setup_from_record
from moot.debates.settings import check_model_ref
from moot.engine import evidence
from moot.engine.rules import hollow
from moot.engine.turns import Decide, Engine, Role, choice_record, is_failed
from moot.errors import MootError, StructuredReplyError, UsageError
from moot.formats import NAMES, get_format
from moot.formats.base import SAVED_HINT, Judging, Reading
from moot.inference.human import is_human_ref
from moot.inference.protocol import (
    ChatModel,
    ChatRequest,
    Completion,
    OnText,
    chat_structured,
    parse_error,
    sanitize,
)
from moot.records.files import make_private_dir, write_atomic
from moot.records.journal import field_error, load
from moot.records.transcript import KeptRecord, Record, Turn, TurnRecord, saved_reply

T = TypeVar("T", bound=BaseModel)
HINT = SAVED_HINT


# -- the record of a re-judged debate --------------------------------------------------------


class Agreement(BaseModel):
    """How far a new reply agrees with the original one at one judging step."""

    fields: dict[str, bool]  # each yes/no or choice field: the same in both replies
    share: float  # the share of those fields that agree; 0 when the new judge failed
    same_verdict: bool
    verdict: tuple[Any, Any]  # the deciding value: original, new (None: no reply)
    score: tuple[float, float | None] | None = None  # what code derives: original, new
    score_difference: float | None = None  # new minus original


class JudgedTurn(BaseModel):
    """One judging step: the original reply, the new one (or why there is none), agreement."""

    index: int  # the turn's place in the saved debate
    round: int | None
    role: str
    step: str
    original: dict[str, Any] | None  # None: the original judge failed here
    new: dict[str, Any] | None  # None: the new judge failed (`error` says why)
    error: str | None = None
    flags: list[str] = Field(default_factory=list)
    agreement: Agreement | None = None  # None: no original reply to compare with
    seed: int | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    duration_ms: int = 0
    # The new judge's decisions read as probabilities (as a debate's judging step reads
    # them: `Turn.choices`); None where its backend reads none and its reply decided.
    choices: dict[str, dict[str, Any]] | None = None


class Rejudged(BaseModel):
    """A saved debate re-judged by one judge model: every judging turn, and overall figures."""

    moot_version: str = __version__
    transcript: str
    format: str
    judge: str  # the reference as given
    model: str  # the judge model's id
    sha256: str | None = None
    original_model: str
    same_prompts: bool  # False: the prompt pack changed since the debate was saved
    duration_ms: int
    agreement: float | None  # mean share of agreeing fields over the turns with an original
    same_verdict: float | None  # share of those turns with the same deciding value
    score_difference: float | None = None  # mean absolute difference of the derived score
    turns: list[JudgedTurn]
    file: str | None = None  # where it was written; not part of the file


# -- the engine that replays --------------------------------------------------------------


class _Broken(Exception):
    """The saved debate does not replay. Not a MootError, so that no format's failure
    handling takes it for a failed turn."""

    def __init__(self, error: MootError) -> None:
        super().__init__(error.message)
        self.error = error


class _Lost(MootError):
    """A turn the saved debate lost to a failure: the format handles it now as it did then."""


class _Seat:
    """A seat's model as the saved debate knew it: its id and context size. Never called."""

    def __init__(self, model_id: str, n_ctx: int | None) -> None:
        self._id = model_id
        if n_ctx is not None:
            self.n_ctx = n_ctx  # what the decision format reads to fit the judge's record

    @property
    def model_id(self) -> str:
        return self._id

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        raise _Broken(MootError(key="debates.rejudge.was_asked_turn_saved_debate", id=self._id))


class RejudgeEngine(Engine):
    """Reuses every saved turn; asks JUDGE at each judging step and keeps its reply aside."""

    def __init__(
        self,
        *,
        judging: Judging,
        judge: ChatModel,
        params: BaseModel,
        losses: int,
        **engine: Any,
    ) -> None:
        super().__init__(**engine)
        self.judging = judging
        self.judge_model = judge
        self.params = params
        self.judged: list[JudgedTurn] = []
        self._losses = losses  # turns the saved debate's result records as failed
        self._gaps = 0

    def _saved(self, role_name: str, step: str) -> Turn | None:
        """The saved turn at this point of the flow; None where the saved debate lost one."""
        index = len(self.transcript.turns)
        prior = self._replay[index] if index < len(self._replay) else None
        if prior is not None and (prior.role, prior.step) == (role_name, step):
            return prior
        self._gaps += 1
        if self._gaps > self._losses:  # more turns missing than the debate lost: it diverged
            held = f"it holds {prior.role}/{prior.step}" if prior else "it ends there"
            raise _Broken(
                MootError(
                    key="debates.rejudge.saved_debate_does_not_replay_2",
                    index=index,
                    role_name=role_name,
                    step=step,
                    held=held,
                )
            )
        return None

    def speak(
        self,
        role_name: str,
        step: str,
        *,
        round: int | None,
        label: str,
        **kw: Any,
    ) -> Turn:
        if self._saved(role_name, step) is None:
            raise _Lost(key="debates.rejudge.failed_saved_debate", role_name=role_name, step=step)
        return super().speak(role_name, step, round=round, label=label, **kw)

    def structured_or_fail(
        self,
        role_name: str,
        step: str,
        schema: type[T],
        *,
        round: int | None,
        label: str,
        max_tokens: int,
        decide: Mapping[str, Decide] | None = None,
        **variables: Any,
    ) -> tuple[T | None, Turn]:
        index = len(self.transcript.turns)
        prior = self._replay[index] if index < len(self._replay) else None
        if prior is None or (prior.role, prior.step) != (role_name, step) or not is_failed(prior):
            return self.structured(
                role_name, step, schema, round=round, label=label, max_tokens=max_tokens,
                decide=decide, **variables,
            )  # fmt: skip
        # The saved seat failed: the new judge is asked all the same, with nothing to agree with.
        if role_name == self.judging.role and step in self.judging.steps:
            self._ask_judge(role_name, step, schema, None, round, max_tokens, variables, decide)
        return None, self._reuse_failed(prior, index, round, label)

    def structured(
        self,
        role_name: str,
        step: str,
        schema: type[T],
        *,
        round: int | None,
        label: str,
        max_tokens: int,
        decide: Mapping[str, Decide] | None = None,
        **variables: Any,
    ) -> tuple[T, Turn]:
        prior = self._saved(role_name, step)
        original = None if prior is None else _original(prior, schema)
        if role_name == self.judging.role and step in self.judging.steps:
            self._ask_judge(role_name, step, schema, original, round, max_tokens, variables, decide)
        if prior is None:
            raise _Lost(key="debates.rejudge.failed_saved_debate_2", role_name=role_name, step=step)
        return super().structured(
            role_name, step, schema, round=round, label=label, max_tokens=max_tokens,
            decide=decide, **variables,
        )  # fmt: skip

    def _ask_judge(
        self,
        role_name: str,
        step: str,
        schema: type[BaseModel],
        original: BaseModel | None,
        rnd: int | None,
        max_tokens: int,
        variables: dict[str, Any],
        decide: Mapping[str, Decide] | None = None,
    ) -> None:
        """The new judge's reply to the request the original judge was sent, recorded; its
        decisions (DECIDE) read as probabilities first where its backend reads them, as a
        debate's judging step reads them."""
        seat = self.roles[role_name]
        role = replace(seat, model=self.judge_model)  # the seat as it was, another model
        shown = {**variables, "round": rnd}
        follows = shown.pop("follows", None)  # a step that goes on a saved turn's conversation
        index = len(self.transcript.turns)
        told = self._checks_text(role)  # what the citations' checks found, as then
        read = self._read(role, step, shown, decide, index, follows, told) if decide else {}
        decided = {field: decide[field].settle(c) for field, c in read.items()} if decide else {}
        shown["decided"] = decided or None
        request = self._request(
            role, step, shown, max_tokens, 0, structured=schema, follows=follows, appendix=told
        )
        judged = JudgedTurn(
            index=len(self.transcript.turns),
            round=rnd,
            role=role_name,
            step=step,
            original=original.model_dump(mode="json") if original is not None else None,
            new=None,
            seed=request.sampling.seed,
        )
        if read:
            judged.choices = {field: choice_record(c) for field, c in read.items()}
        reply: BaseModel | None = None
        start = time.monotonic()
        try:
            reply, completion = chat_structured(self.judge_model, request, schema, check=hollow)
            if decided:  # the values read decide, whatever the reply wrote beside its reasons
                reply = schema.model_validate({**reply.model_dump(), **decided})
        except StructuredReplyError as exc:
            judged.error = parse_error(exc, exc.raw, schema)
        except MootError as exc:  # a timeout, a server's error, a prompt too long for it
            judged.error = sanitize(f"{type(exc).__name__}: {exc.message}")
        judged.duration_ms = round((time.monotonic() - start) * 1000)
        if reply is not None:
            judged.new = reply.model_dump(mode="json")
            judged.prompt_tokens = completion.prompt_tokens
            judged.completion_tokens = completion.completion_tokens
            problem = hollow(reply)
            if problem:
                judged.flags.append(f"hollow reply: {problem}")
        if original is not None:
            judged.agreement = agreement(self.judging, schema, original, reply, shown, self.params)
        self.judged.append(judged)


def _original(prior: Turn, schema: type[T]) -> T:
    try:
        return saved_reply(prior, schema)
    except ValidationError as exc:
        raise _Broken(
            UsageError(
                key="debates.rejudge.turn_saved_reply_does_not",
                index=prior.index,
                role=prior.role,
                step=prior.step,
                name=schema.__name__,
                exc=field_error(exc),
            )
        ) from None


# -- agreement ------------------------------------------------------------------------------


def compared_fields(schema: type[BaseModel]) -> tuple[str, ...]:
    """The fields of a reply that agree or not: yes/no answers and choices among named
    values (a winner, a rating). Prose and lists are not compared."""
    props = schema.model_json_schema().get("properties", {})
    return tuple(
        name
        for name, node in props.items()
        if node.get("type") == "boolean" or "enum" in node or "const" in node
    )


def agreement(
    judging: Judging,
    schema: type[BaseModel],
    original: BaseModel,
    new: BaseModel | None,
    variables: dict[str, Any],
    params: BaseModel,
) -> Agreement:
    """How NEW agrees with ORIGINAL; a judge that gave no valid reply agrees with nothing."""
    old = Reading(original, variables, params)
    verdict = judging.verdict(old)
    score = judging.score(old) if judging.score else None
    if new is None:
        return Agreement(
            fields={},
            share=0.0,
            same_verdict=False,
            verdict=(verdict, None),
            score=None if score is None else (score, None),
        )
    a, b = original.model_dump(mode="json"), new.model_dump(mode="json")
    fields = {name: a[name] == b[name] for name in compared_fields(schema)}
    reading = Reading(new, variables, params)
    new_verdict = judging.verdict(reading)
    new_score = judging.score(reading) if judging.score else None
    same = verdict == new_verdict
    return Agreement(
        fields=fields,
        share=sum(fields.values()) / len(fields) if fields else float(same),
        same_verdict=same,
        verdict=(verdict, new_verdict),
        score=None if score is None else (score, new_score),
        score_difference=None if score is None or new_score is None else new_score - score,
    )


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


# -- a saved debate, re-judged --------------------------------------------------------------


class Rejudging:
    """A saved debate read and checked once, then re-judged by one judge after another."""

    def __init__(
        self,
        path: Path,
        *,
        dry_run: bool = False,
        model_factory: Callable[[str], ChatModel] | None = None,
    ) -> None:
        if path.is_dir():
            inside = path / "transcript.json"
            if inside.is_file():
                raise UsageError(key="debates.rejudge.folder_pass_inside", path=path, inside=inside)
            raise UsageError(key="debates.rejudge.folder_not_transcript", path=path)
        self.path = path
        self.saved, data = load(path)
        setup = setup_from_record(data, out_dir=None, source=str(path), hint=HINT)
        judging = setup.format.judging
        if judging is None:
            judged = [name for name in NAMES if get_format(name).judging is not None]
            raise UsageError(
                key="debates.rejudge.format_has_no_judging_do",
                name=setup.format.name,
                judged=", ".join(judged),
            )
        self.judging = judging
        first = next((t for t in self.saved.turns if self._judges(t)), None)
        if first is None:
            raise UsageError(
                key="debates.rejudge.holds_no_judge_s_turn",
                path=path,
                steps=", ".join(judging.steps),
            )
        self.original_model = first.model
        kept = judging.kept(self.saved).items()
        turns: list[Record] = [TurnRecord.of(t) for t in self.saved.turns]
        self.records = [*turns, *(KeptRecord(key=k, value=v) for k, v in kept)]
        failures = (self.saved.result or {}).get("failures")
        self.losses = len(failures) if isinstance(failures, list) else 0
        # A saved debate records no call time limit: the new judges get moot run's.
        limit = RunSettings.model_fields["call_timeout_s"].default
        setup.run = setup.run.model_copy(update={"dry_run": dry_run, "call_timeout_s": limit})
        self.setup = setup
        self.runner = DebateRun(setup, model_factory=model_factory)
        self.pack = self.runner.pack()
        self._names: set[str] = set()

    def _judges(self, turn: Turn) -> bool:
        return turn.role == self.judging.role and turn.step in self.judging.steps

    def judge(self, ref: str) -> Rejudged:
        """Replay the debate with REF judging; the model is loaded for it and closed after."""
        start = time.monotonic()
        models, infos = self.runner._models({self.judging.role: ref})
        try:
            engine = self._engine(models[self.judging.role])
            try:
                self.setup.format.run(engine, self.setup.motion, self.setup.params)
            except _Broken as broken:
                raise broken.error from None
        finally:
            pool = self.runner._pool  # the model this judge loaded for itself
            if pool is not None:
                pool.close()
                self.runner._pool = None
        if len(engine.transcript.turns) != len(self.saved.turns):
            raise MootError(
                key="debates.rejudge.saved_debate_does_not_replay",
                n_turns=len(engine.transcript.turns),
                n_turns2=len(self.saved.turns),
            )
        return self._result(ref, engine, infos[self.judging.role].sha256, start)

    def _engine(self, judge: ChatModel) -> RejudgeEngine:
        saved, setup = self.saved, self.setup
        cast = self.runner.cast
        spoke = {t.role: t.model for t in reversed(saved.turns)}
        n_ctx = None if saved.params.get("dry_run") else setup.run.n_ctx
        roles = {}
        for r in cast.roles:
            model_id = spoke.get(r) or (saved.models[r].id if r in saved.models else r)
            remote = model_id.startswith(("http://", "https://"))
            roles[r] = Role(
                r,
                _Seat(model_id, None if remote else n_ctx),
                saved.sampling.get(r, cast.temperatures[r]),
                persona=cast.personas.get(r),
                side=cast.sides.get(r, ()),
            )
        blank = saved.model_copy(
            update={"turns": [], "scores": {}, "stop_reason": None, "result": None}, deep=True
        )
        return RejudgeEngine(
            judging=self.judging,
            judge=judge,
            params=setup.params,
            losses=self.losses,
            pack=self.pack,
            roles=roles,
            transcript=blank,
            call_timeout_s=setup.run.call_timeout_s,
            replay=self.records,
            # The passages each speech was shown and what its citations' checks found, as
            # the original judge was told them.
            documents=evidence.kept(saved.evidence) if saved.evidence else None,
            labels=setup.format.seats(setup.params, setup.language),
        )

    def _result(
        self, ref: str, engine: RejudgeEngine, sha256: str | None, start: float
    ) -> Rejudged:
        compared = [t.agreement for t in engine.judged if t.agreement is not None]
        differences = [abs(a.score_difference) for a in compared if a.score_difference is not None]
        return Rejudged(
            transcript=str(self.path),
            format=self.setup.format.name,
            judge=ref,
            model=engine.judge_model.model_id,
            sha256=sha256,
            original_model=self.original_model,
            same_prompts=self.pack.digest == self.saved.prompt_pack,
            duration_ms=round((time.monotonic() - start) * 1000),
            agreement=_mean([a.share for a in compared]),
            same_verdict=_mean([float(a.same_verdict) for a in compared]),
            score_difference=_mean(differences),
            turns=engine.judged,
        )

    def save(self, result: Rejudged) -> Path:
        """`judged/<judge>.json` beside the transcript, written atomically: a later re-judging
        by the same judge replaces it; two judges of one model in one run get -2, -3."""
        folder = self.path.parent / "judged"
        if folder.is_symlink():
            raise UsageError(key="debates.rejudge.symlink_moot_does_not_follow", folder=folder)
        base = name = file_name(result.model)
        n = 1
        while name in self._names:
            n += 1
            name = f"{base}-{n}"
        target = folder / f"{name}.json"
        try:
            make_private_dir(folder)
            write_atomic(target, result.model_dump_json(indent=2, exclude={"file"}))
        except OSError as exc:
            raise UsageError(
                key="debates.rejudge.cannot_write", target=target, value=exc.strerror or exc
            ) from None
        self._names.add(name)
        result.file = str(target)
        return target


def file_name(model_id: str) -> str:
    """A judge's file name from its model's id: a .gguf path by its file's stem (a dry run's
    `echo:` kept), anything but letters, digits, `.`, `_` and `-` made `_`."""
    short = re.sub(r"[^:#]*/(?=[^/]*$)", "", model_id) if model_id.endswith(".gguf") else model_id
    short = short.removesuffix(".gguf")
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", short).strip("._-")[:100]
    return name or "judge"


def check_judges(judges: Sequence[str]) -> tuple[str, ...]:
    """The judges' references, each named once and checked as a dry run checks a model (its
    header read, no weights loaded; a server URL parsed, not called)."""
    refs = tuple(judges)
    if not refs:
        raise UsageError(key="debates.rejudge.no_judge_given")
    for i, ref in enumerate(refs):
        if ref in refs[:i]:
            raise UsageError(key="debates.rejudge.judge_named_twice", ref=ref)
        if is_human_ref(ref):
            raise UsageError(key="debates.rejudge.person_cannot_re_judge_saved")
        check_model_ref(ref)
    return refs


def rejudge(
    path: Path,
    judges: Sequence[str],
    *,
    dry_run: bool = False,
    save: bool = True,
    model_factory: Callable[[str], ChatModel] | None = None,
) -> list[Rejudged]:
    """The saved debate at PATH re-judged by each of JUDGES in turn, each result written to
    `judged/<judge>.json` beside it unless SAVE is False."""
    session = Rejudging(path, dry_run=dry_run, model_factory=model_factory)
    refs = check_judges(judges)
    results = []
    for ref in refs:
        result = session.judge(ref)
        if save:
            session.save(result)
        results.append(result)
    return results
