"""One speaker turn at a time: role → model and sampling → rendered step → streamed text or JSON.

Formats say *what* happens (rounds, speakers, the stop rule); the engine owns *how* a
speaker is called: seeds, sampling, grammar, re-asks, streaming events and the journal.
Library code never prints: it emits events that the live view and tests consume.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from moot.config import THINK_BUDGET
from moot.engine import evidence as documents
from moot.engine.evidence import Documents
from moot.engine.rules import (
    QUESTION_MARKS,
    QUESTION_TOKENS_PER_UNIT,
    hollow,
    length_units,
    question_grammar,
    shared_text,
    voice_for,
)
from moot.engine.stream import Reply, Stream, token_budget
from moot.errors import (
    CallTimeoutError,
    DegenerateReplyError,
    MootError,
    ReasoningOnlyError,
    StructuredReplyError,
)
from moot.events import Event, Listener, Notice, Scored, Stopped, Token, TurnFinished, TurnStarted
from moot.inference.choice import Choice, ChoiceRequest, Value
from moot.inference.human import HumanSeat, is_human
from moot.inference.protocol import (
    ChatModel,
    ChatRequest,
    Completion,
    Generated,
    Message,
    Sampling,
    chat_structured,
    held_budget,
    parse_error,
    sanitize,
)
from moot.inference.protocol import degeneracy as find_degeneracy
from moot.prompts import REDRAW, PromptPack, engine_pack
from moot.records.journal import Journal
from moot.records.transcript import (
    KeptRecord,
    Record,
    ScoreRecord,
    StopReason,
    StopRecord,
    Transcript,
    Turn,
    TurnRecord,
    saved_reply,
)
from moot.words import words

if TYPE_CHECKING:
    from moot.evidence import Passage

T = TypeVar("T", bound=BaseModel)

# Free speech is sampled with llama.cpp's DRY sampler and a light repeat penalty: measured
# on SmolLM2-135M, without them a speaker shown the other side's speech often copies it
# word for word; a repeat penalty of 1.1 instead drove it off the topic altogether.
SPEECH_DRY = 1.0
SPEECH_REPEAT_PENALTY = 1.03
# Structured replies get DRY on their own text only: a SmolLM2 judge otherwise filled its
# reasoning with "no, no, no, …" up to the length the schema allows.
JSON_DRY = 1.0


@dataclass
class Role:
    """A seat in the debate: its model, temperature, persona and side. A model that is a
    `HumanSeat` is a person: their turns are never cut, drawn again or cleaned."""

    name: str
    model: ChatModel
    temperature: float
    persona: str | None = None  # the step rendered as its system prompt; None: no system prompt
    # What the seat is called in the third person when it speaks for a side (its format's
    # `Cast.sides`), held to the voice rules of a side; empty: it speaks for no side.
    side: tuple[str, ...] = ()


@dataclass(frozen=True)
class Decide:
    """A field of a judging step's reply whose value is read as a probability over OPTIONS
    before the reply is asked (`Engine.structured`'s DECIDE): the reply then holds the most
    probable option, as WRITTEN spells it in the reply (the options themselves where None),
    or with EXPECTED the mean of the numeric options (a score's expected value)."""

    options: tuple[Value, ...]
    written: tuple[Any, ...] | None = None
    expected: bool = False

    def settle(self, choice: Choice) -> Any:
        """The value the reply holds for CHOICE."""
        if self.expected:
            return round(choice.expected(), 2)
        best = [str(o) for o in self.options].index(choice.best())
        return (self.written or self.options)[best]


def choice_record(choice: Choice) -> dict[str, Any]:
    """What a turn keeps of a value read as a probability (`Turn.choices`)."""
    return choice.model_dump(include={"probabilities", "method", "samples", "duration_ms"})


# What a draw that was not kept cost, kept beside its turn (`Turn.discarded`).
DRAW_COSTS = ("prompt_tokens", "cached_tokens", "completion_tokens", "duration_ms", "ttft_ms")

FAILED = "failed: "  # the note of a structured turn whose seat gave no valid reply


def is_failed(turn: Turn) -> bool:
    """A judging turn whose seat failed: no reply, and a note that says why."""
    return turn.data == {} and (turn.note or "").startswith(FAILED)


def _all_reasoning(completion: Completion) -> bool:
    return not completion.text.strip() and bool(completion.reasoning.strip())


def derive_seed(seed: int, *parts: object) -> int:
    """A 31-bit seed from the debate seed and a position: stable across runs and machines."""
    key = ":".join(str(p) for p in (seed, *parts)).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:4], "big") & 0x7FFFFFFF


class Engine:
    """Runs turns for a format and keeps the transcript and journal in step with them."""

    def __init__(
        self,
        *,
        pack: PromptPack,
        roles: dict[str, Role],
        transcript: Transcript,
        journal: Journal | None = None,
        listeners: list[Listener] | None = None,
        max_tokens_cap: int | None = None,
        call_timeout_s: float | None = None,
        think_budget: int = THINK_BUDGET,
        ask: Callable[[str], str] | None = None,
        replay: list[Record] | None = None,
        rehearsal: bool = False,
        documents: Documents | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> None:
        self.pack = pack
        # The debate's documents (--evidence): passages shown to each speech, its citations
        # checked, a judge told what the checks found. None: no documents were given.
        self.documents = documents
        self.labels = dict(labels or {})  # each seat's name in the debate's language
        self.roles = roles
        # A dry run: no model spoke, so a format leaves what lives outside the debate's own
        # folder (the challenge state file other tools read) as the last real debate left it.
        self.rehearsal = rehearsal
        self.transcript = transcript
        self.journal = journal
        self.listeners = listeners or []
        self.max_tokens_cap = max_tokens_cap
        self.call_timeout_s = call_timeout_s
        # Tokens a speech may think beside its own budget (0: thinking off); structured
        # replies never think: their grammar holds them to JSON from the first token.
        self.think_budget = think_budget
        self._ask = ask
        # Resuming: the journal's records. Finished turns are reused verbatim, never
        # regenerated, and nothing already in the journal is written to it again.
        records = replay or []
        self._replay = [r.turn() for r in records if isinstance(r, TurnRecord)]
        self._journaled_scores = {r.round for r in records if isinstance(r, ScoreRecord)}
        self._journaled_stop = any(isinstance(r, StopRecord) for r in records)
        self._kept = {r.key: r.value for r in records if isinstance(r, KeptRecord)}
        self.seed = transcript.seed
        self.language = transcript.language
        self._engine_pack: PromptPack | None = None  # loaded at the first redraw
        self._asked: dict[int, tuple[Message, ...]] = {}  # each turn's prompt, by index

    # -- events and records -------------------------------------------------------------

    def emit(self, event: Event) -> None:
        for listener in self.listeners:
            listener(event)

    def notice(self, message: str, level: str = "info") -> None:
        self.emit(Notice(level, message))

    def _say(self, key: str, label: str, **recorded: str) -> str:
        """Notice KEY about the turn LABEL in the debate's language: the RECORDED flags and
        notes it quotes (English, as the turn keeps them) shown in that language too."""
        said = words(self.language)
        return said.say(key, label=label, **{k: said.shown(v) for k, v in recorded.items()})

    def _record(self, turn: Turn, label: str) -> Turn:
        self.transcript.turns.append(turn)
        if self.journal:  # with the passages it cited: what a debate that stops here shows
            self.journal.append(TurnRecord.of(turn, self._passages_of(turn, shown=False)))
        self.emit(TurnFinished(turn, label, self._passages_of(turn)))
        return turn

    def _passages_of(self, turn: Turn, *, shown: bool = True) -> dict[str, str]:
        """The text of each passage TURN was shown (SHOWN) or cited, from the debate's
        ledger."""
        if self.documents is None or turn.evidence is None:
            return {}
        kept = self.documents.record.passages
        cited = [c.id for c in turn.evidence.citations if c.id]
        ids = [*(turn.evidence.shown if shown else ()), *cited]
        return {i: kept[i] for i in dict.fromkeys(ids) if i in kept}

    def record_score(self, rnd: int, record: dict[str, Any], threshold: float) -> None:
        """Round RND's score RECORD (the format's), which ends the rounds at THRESHOLD: kept
        in the transcript, journaled, and emitted as the very record the journal wrote."""
        score = Scored(round=rnd, threshold=threshold, **record)
        self.transcript.scores[str(rnd)] = record
        if self.journal and rnd not in self._journaled_scores:
            self.journal.append(score)
        self.emit(score)

    def stop(self, reason: StopReason) -> None:
        """The rounds end for REASON: journaled once, and emitted as the journal's record."""
        stop = Stopped(reason=reason)
        self.transcript.stop_reason = reason
        if self.journal and not self._journaled_stop:
            self.journal.append(stop)
        self.emit(stop)

    def keep(self, key: str, decide: Callable[[], Any]) -> Any:
        """A choice a format makes outside any turn (the plan a user confirmed): decided once
        and journaled as JSON; on resume the journaled value, so the debate goes on as it began."""
        if key not in self._kept:
            value = decide()
            if self.journal:
                self.journal.append(KeptRecord(key=key, value=value))
            self._kept[key] = value
        return self._kept[key]

    def ask(self, proposal: str) -> str:
        """Show the user a proposal; their corrections, or "" to accept (always "" unattended)."""
        return self._ask(proposal) if self._ask else ""

    # -- chance -------------------------------------------------------------------------

    def draw(self, p: float, *parts: object) -> bool:
        """A reproducible coin: True with probability p, from the debate seed and `parts`."""
        return random.Random(derive_seed(self.seed, "draw", *parts)).random() < p

    def is_human(self, role_name: str) -> bool:
        """Whether a person holds the seat ROLE_NAME."""
        return is_human(self.roles[role_name].model)

    def decide(self, role_name: str, question: Turn, p: float, *parts: object, label: str) -> bool:
        """Whether ROLE_NAME takes the point of information QUESTION (a finished turn): a
        person is asked, once (journaled, so a resumed debate keeps the answer); a model's
        answer is the seeded draw, True with probability P. It is kept on the question's
        turn, where a saved debate replayed finds it."""
        if question.accepted is not None:
            return question.accepted
        seat = self.roles[role_name].model
        if isinstance(seat, HumanSeat):
            key = ":".join(str(part) for part in ("decide", *parts))
            ask = lambda: seat.decide(  # noqa: E731
                question.text,
                role=role_name,
                label=label,
                language=self.language,
                turn=question.index,
            )
            accepted = bool(self.keep(key, ask))
        else:
            accepted = self.draw(p, *parts)
        question.accepted = accepted
        return accepted

    # -- turns --------------------------------------------------------------------------

    def _messages(
        self, role: Role, user: str, variables: dict[str, Any], follows: Turn | None
    ) -> tuple[Message, ...]:
        if follows is not None:
            return (*self._line(follows), Message(role="user", content=user))
        msgs: list[Message] = []
        if role.persona:
            msgs.append(Message(role="system", content=self.pack.render(role.persona, **variables)))
        msgs.append(Message(role="user", content=user))
        return tuple(msgs)

    def _line(self, turn: Turn) -> tuple[Message, ...]:
        """The conversation a step that follows TURN continues: TURN's own prompt, and its
        reply as the assistant's, with the tokens its model generated for it, so that a
        model in this process reuses what generating it computed."""
        generated = Generated(**turn.generated) if turn.generated else None
        reply = Message(role="assistant", content=turn.text, generated=generated)
        return (*self._asked[turn.index], reply)

    def _request(
        self,
        role: Role,
        step: str,
        variables: dict[str, Any],
        max_tokens: int,
        attempt: int,
        *,
        structured: type[BaseModel] | bool = False,
        think_budget: int | None = None,
        grammar: str | None = None,
        closer: str | None = None,
        reminder: str | None = None,
        follows: Turn | None = None,
        appendix: str | None = None,
    ) -> ChatRequest:
        """The request of one step. STRUCTURED: its reply's schema (or True where the caller
        holds it), which --max-tokens holds too: its prose shorter and its budget within the
        cap where it can be, never cut into invalid JSON (`protocol.held_budget`)."""
        index = len(self.transcript.turns)
        free = structured is False
        prose = None
        capped = self.max_tokens_cap if not isinstance(role.model, HumanSeat) else None
        if isinstance(structured, type) and capped:
            max_tokens, prose = held_budget(structured, max_tokens, capped)
        sampling = Sampling(
            temperature=role.temperature,
            max_tokens=max_tokens,
            seed=derive_seed(self.seed, "turn", index, attempt),
            dry=SPEECH_DRY if free else JSON_DRY,
            repeat_penalty=SPEECH_REPEAT_PENALTY if free else 1.0,
        )
        user = self.pack.render(step, **variables)
        if appendix:  # the passages of the debate's documents, or what their checks found
            user = f"{user}\n\n{appendix}"
        if reminder:  # a draw again: what the first draw did that this one must not
            user = f"{user}\n\n{reminder}"
        return ChatRequest(
            messages=self._messages(role, user, variables, follows),
            sampling=sampling,
            session=role.name,
            timeout_s=self.call_timeout_s,
            think_budget=0 if structured else think_budget,
            grammar=grammar,
            closer=closer,
            prose=prose,
        )

    def speak(
        self,
        role_name: str,
        step: str,
        *,
        round: int | None,
        label: str,
        max_tokens: int | None = None,
        limit: int | None = None,
        one_question: bool = False,
        accepted: bool | None = None,
        follows: Turn | None = None,
        **variables: Any,
    ) -> Turn:
        """One free-text turn: streamed, journaled before returning. With a LIMIT (words, or
        字 in Chinese) the turn is never longer: generation stops once it is passed, the text
        ends on the last complete sentence within it, and the token budget comes from it.
        ONE_QUESTION (a point of information): the first question asked within the limit.
        A person's turn is theirs: kept as they submitted it, flagged when over the limit.
        FOLLOWS: an earlier turn whose conversation this step's prompt goes on (its prompt
        and reply, then this step's), instead of opening one of its own. MAX_TOKENS: the
        budget of a turn without a limit; a limited turn's comes from its limit alone."""
        role = self.roles[role_name]
        grammar = closer = None
        if limit is None:
            if max_tokens is None:
                raise ValueError(f"{step}: a turn without a limit needs its token budget")
        else:
            if max_tokens is not None:
                raise ValueError(f"{step}: a limited turn's budget comes from its limit alone")
            max_tokens = token_budget(role.model, limit, self.language)
            if one_question:
                # Held to one question within the limit where the backend takes a grammar;
                # its words may be rarer ones, and generation ends at the question mark.
                grammar = question_grammar(limit, self.language)
                closer = QUESTION_MARKS[self.language]
                max_tokens = max(max_tokens, QUESTION_TOKENS_PER_UNIT * limit)
        if self.max_tokens_cap:
            max_tokens = min(max_tokens, self.max_tokens_cap)
        index = len(self.transcript.turns)
        self.emit(TurnStarted(index, round, role_name, step, label, True))
        variables["round"] = round
        prior = self._replayed(index, role_name, step)
        shown = self._shown(
            role, step, variables, max_tokens, follows, prior, one_question=one_question
        )
        # A side's speech is shown passages; a seat of no side (a chair, a summariser) what
        # checking the citations so far found.
        appendix = self._passages_text(shown) if role.side else self._checks_text(role)
        if prior is not None:
            # What it was asked, for a later step that goes on its conversation.
            reminder = self._reminder(prior.redraw, limit)
            request = self._request(
                role, step, variables, max_tokens, 0, reminder=reminder, follows=follows,
                appendix=appendix,
            )  # fmt: skip
            self._asked[index] = request.messages
            if self.documents is not None and prior.evidence is not None:
                self.documents.remember(prior.evidence)
            if prior.reasoning:
                self.emit(Token(role_name, prior.reasoning, reasoning=True))
            self.emit(Token(role_name, prior.text))
            return self._reuse(prior, label)
        if isinstance(role.model, HumanSeat):
            request = self._request(
                role, step, variables, max_tokens, 0, think_budget=0, follows=follows,
                appendix=appendix,
            )  # fmt: skip
            turn = self._human_speech(index, round, role, step, request, label, limit, accepted)
            return self._record(self._cited(turn, shown, label), label)
        others = [t.text for t in self.transcript.turns if t.role != role_name and t.data is None]
        shared = shared_text(self.transcript.motion, variables.get("evidence"))
        if shown:  # a passage quoted, or its id cited, is the documents' words, nobody's
            shared = "\n".join([shared, *(f"[{p.id}] {p.text}" for p in shown)])
        voice = voice_for(role.side, self.language, others, shared)
        # One draw again for a reply that opens wrongly or is degenerate; one with thinking
        # off for a reply that is all reasoning. The attempt numbers the seed.
        think, attempt = self.think_budget, 0
        redrawn = rethought = False
        reminder = kind = None
        discarded: list[Completion] = []  # the draws not kept: what they cost is recorded
        while True:
            request = self._request(
                role, step, variables, max_tokens, attempt,
                think_budget=think, grammar=grammar, closer=closer, reminder=reminder,
                follows=follows, appendix=appendix,
            )  # fmt: skip
            show = lambda text: self.emit(Token(role.name, text))  # noqa: E731
            stream = Stream(show, limit, one_question, vet=not redrawn, voice=voice)
            completion, note = self._call_free(role, request, Reply(role.name, self.emit, stream))
            problem = note or stream.rejected or stream.asked_nothing(completion)
            if problem is None:
                break
            attempt += 1
            if _all_reasoning(completion):
                if rethought:
                    break
                think, rethought = 0, True
                discarded.append(completion)
                self.notice(self._say("asking_again_unthinking", label, problem=problem), "warn")
            elif not redrawn:
                redrawn = True
                discarded.append(completion)
                kind = None if note else stream.rejected_kind or "question"
                reminder = self._reminder(kind, limit)
                self.notice(self._say("asking_again", label, problem=problem), "warn")
            else:
                break
        if note:
            self.notice(self._say("kept_as_is", label, note=note), "warn")
        turn = self._turn(index, round, role, step, request, completion, accepted, note)
        turn.redraw = kind if reminder else None
        if discarded:
            turn.discarded = {key: sum(getattr(c, key) for c in discarded) for key in DRAW_COSTS}
        fitted, cleaned = stream.finish(completion)
        if limit is not None:
            turn.text, turn.limit, turn.length, turn.cut = (
                fitted.text,
                limit,
                fitted.length,
                fitted.cut,
            )
            for flag in (*cleaned, *([fitted.flag] if fitted.flag else [])):
                turn.flags.append(flag)
                self.notice(self._say("flagged", label, flag=flag), "warn")
        return self._record(self._cited(turn, shown, label), label)

    # -- the debate's documents -----------------------------------------------------------

    def _engine_words(self) -> PromptPack:
        if self._engine_pack is None:
            self._engine_pack = engine_pack(self.pack.language, root=self.pack.root)
        return self._engine_pack

    def _shown(
        self,
        role: Role,
        step: str,
        variables: dict[str, Any],
        max_tokens: int,
        follows: Turn | None,
        prior: Turn | None,
        *,
        one_question: bool = False,
    ) -> list[Passage]:
        """The passages a speech of ROLE is shown: none without documents or for a seat
        that speaks for no side; a saved turn's, as it was shown them; else those that
        best match the motion and what the other side just claimed, within the debate's
        budget and what the model's context leaves beside the prompt and the reply."""
        docs = self.documents
        if docs is None or not role.side or one_question:  # a question cites nothing
            return []
        if prior is not None:
            return docs.again(prior.evidence.shown if prior.evidence else [])
        claimed = next(
            (
                t.text
                for t in reversed(self.transcript.turns)
                if t.data is None and t.role != role.name and self._side_of(t.role) != role.side
                and self._side_of(t.role)
            ),
            None,
        )  # fmt: skip
        room = docs.budget
        n_ctx = getattr(role.model, "n_ctx", None)
        if isinstance(n_ctx, int) and n_ctx > 0:
            request = self._request(role, step, variables, max_tokens, 0, follows=follows)
            asked = sum(docs.tokens(m.content) for m in request.messages)
            room = n_ctx - asked - max_tokens - documents.MARGIN_TOKENS
        return docs.passages(docs.query(self.transcript.motion, claimed), room)

    def _side_of(self, role_name: str) -> tuple[str, ...]:
        role = self.roles.get(role_name)
        return role.side if role is not None else ()

    def _passages_text(self, shown: list[Passage]) -> str | None:
        if not shown:
            return None
        text = self._engine_words().render(documents.EVIDENCE_STEP, **documents.variables(shown))
        return text or None

    def _checks_text(self, role: Role) -> str | None:
        """What a seat that speaks for no side (a judge, a chair) is told of the citations
        made so far; nothing where none was made."""
        if self.documents is None or role.side:
            return None
        found = documents.checked_variables(self.transcript.turns, self.labels)
        if not found["speeches"]:
            return None
        return self._engine_words().render(documents.CHECKED_STEP, **found) or None

    def _cited(self, turn: Turn, shown: list[Passage], label: str) -> Turn:
        """TURN with its ledger: the passages it was shown, each citation checked; a notice
        for each that does not hold."""
        if self.documents is None:
            return turn
        turn.evidence = self.documents.ledger(shown, turn.text)
        for c in turn.evidence.citations if turn.evidence else ():
            if c.check != "ok":
                said = self._say(f"citation_{c.check}", label, cited=c.cited)
                self.notice(said, "warn")
        return turn

    def _reminder(self, kind: str | None, limit: int | None) -> str | None:
        """What a turn drawn again is told, for the KIND of problem its first draw had (the
        engine pack's `redraw` step); nothing for a degenerate draw, which a seed mends."""
        if kind is None:
            return None
        return self._engine_words().render(REDRAW, kind=kind, limit=limit or 0) or None

    def _human_speech(
        self,
        index: int,
        rnd: int | None,
        role: Role,
        step: str,
        request: ChatRequest,
        label: str,
        limit: int | None,
        accepted: bool | None,
    ) -> Turn:
        """A person's turn: shown what a model in the seat is sent, and kept as submitted.
        Past the limit, or submitted by the time limit, it is flagged, never cut."""
        seat = role.model
        assert isinstance(seat, HumanSeat)
        said = seat.speak(
            request, role=role.name, label=label, limit=limit, language=self.language, turn=index
        )
        completion = Completion(text=said.text.strip(), duration_ms=said.duration_ms)
        if completion.text:
            self.emit(Token(role.name, completion.text))
        turn = self._turn(index, rnd, role, step, request, completion, accepted, None)
        flags = []
        if limit is not None:
            turn.limit, turn.length = limit, length_units(turn.text)
            if turn.length > limit:
                units = "字" if self.language == "zh" else "words"
                flags.append(
                    f"over the limit: {turn.length} of {limit} {units}, kept as the speaker's"
                )
        if said.timed_out:
            flags.append("time ran out: submitted as it stood")
        for flag in flags:
            turn.flags.append(flag)
            self.notice(self._say("flagged", label, flag=flag), "warn")
        return turn

    def _call_free(
        self, role: Role, request: ChatRequest, on_text: Callable[[str], bool]
    ) -> tuple[Completion, str | None]:
        """The reply, and what makes it degenerate (empty, repeated, all reasoning) if so."""
        try:
            completion = role.model.chat(request, on_text=on_text)
        except DegenerateReplyError as exc:
            spent = exc.completion if isinstance(exc.completion, Completion) else None
            return spent or Completion(text=exc.raw), f"degenerate reply: {exc.message}"
        if _all_reasoning(completion):
            only = ReasoningOnlyError(reasoning=completion.reasoning)
            return completion, f"degenerate reply: {only.message}"
        reason = find_degeneracy(completion.text)
        return completion, (f"degenerate reply: {reason}" if reason else None)

    def structured(
        self,
        role_name: str,
        step: str,
        schema: type[T],
        *,
        round: int | None,
        label: str,
        max_tokens: int,
        follows: Turn | None = None,
        decide: Mapping[str, Decide] | None = None,
        **variables: Any,
    ) -> tuple[T, Turn]:
        """One structured turn: a reply constrained to `schema`, validated, journaled
        (FOLLOWS: as for `speak`). DECIDE: the fields whose values are read first, as the
        model's probability over their options (`inference.choice`), each on the step's
        prompt rendered with `reading` (the field); the reply is then asked on the prompt
        rendered with `decided` (the values read), holds those values whatever it wrote,
        and the turn keeps the probabilities (`Turn.choices`). A backend that reads no
        probabilities, and a person, decide by the reply as before: one sample, no
        `choices` (no draws beside it: a dry run, a scripted test, a CPU stay as fast)."""
        role = self.roles[role_name]
        index = len(self.transcript.turns)
        self.emit(TurnStarted(index, round, role_name, step, label, False))
        variables["round"] = round
        prior = self._replayed(index, role_name, step)
        if prior is not None:
            return saved_reply(prior, schema), self._reuse(prior, label)
        appendix = self._checks_text(role)
        read: dict[str, Choice] = {}
        if decide and not isinstance(role.model, HumanSeat):
            read = self._read(role, step, variables, decide, index, follows, appendix)
        decided = {field: decide[field].settle(c) for field, c in read.items()} if decide else {}
        request = self._request(
            role, step, {**variables, "decided": decided or None}, max_tokens, 0,
            structured=schema, follows=follows, appendix=appendix,
        )  # fmt: skip
        if isinstance(role.model, HumanSeat):
            parsed, took = role.model.fill(
                request, schema, role=role_name, label=label, language=self.language, turn=index
            )
            completion = Completion(text=parsed.model_dump_json(), duration_ms=took)
        else:
            parsed, completion = chat_structured(role.model, request, schema, check=hollow)
        if decided:  # the values read decide, whatever the reply wrote beside its reasons
            parsed = schema.model_validate({**parsed.model_dump(), **decided})
        turn = self._turn(index, round, role, step, request, completion, None, None)
        turn.data = parsed.model_dump()
        if read:
            turn.choices = {field: choice_record(c) for field, c in read.items()}
        problem = hollow(parsed)  # asked again already: the seat is degraded, visibly
        if problem:
            turn.flags.append(f"hollow reply: {problem}")
            asked = "kept_persons" if isinstance(role.model, HumanSeat) else "asked_twice"
            said = self._say("hollow_notice", label, problem=problem, asked=self._say(asked, label))
            self.notice(said, "warn")
        return parsed, self._record(turn, label)

    def _read(
        self,
        role: Role,
        step: str,
        variables: dict[str, Any],
        decide: Mapping[str, Decide],
        index: int,
        follows: Turn | None,
        appendix: str | None = None,
    ) -> dict[str, Choice]:
        """Each field of DECIDE read as the model's probability over its options; nothing
        where the backend reads no probabilities (its reply then decides)."""
        own = getattr(role.model, "choose", None)
        if not callable(own):
            return {}
        read: dict[str, Choice] = {}
        for field, d in decide.items():
            user = self.pack.render(step, **{**variables, "reading": field, "decided": None})
            if appendix:
                user = f"{user}\n\n{appendix}"
            request = ChoiceRequest(
                messages=self._messages(role, user, variables, follows),
                field=field,
                options=d.options,
                session=role.name,
                seed=derive_seed(self.seed, "choose", index, field),
                timeout_s=self.call_timeout_s,
            )
            choice = own(request)
            if not isinstance(choice, Choice):
                return {}
            read[field] = choice
        return read

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
        """`structured`, where a reply that stays invalid after its re-ask, or none within the
        call time limit (said with how to give it longer), is that seat's failure, not the
        debate's: it is journaled as a turn with no reply (`data` empty) and a
        `failed: …` note that every document built on it names, and a resumed debate reads
        it back as the same failure."""
        index = len(self.transcript.turns)
        prior = self._replayed(index, role_name, step)
        if prior is not None and is_failed(prior):
            return None, self._reuse_failed(prior, index, round, label)
        try:
            return self.structured(
                role_name, step, schema, round=round, label=label, max_tokens=max_tokens,
                decide=decide, **variables,
            )  # fmt: skip
        except StructuredReplyError as exc:
            role, request = self.roles[role_name], exc.request
            assert isinstance(request, ChatRequest)  # chat_structured names what it asked
            why = f"{FAILED}{parse_error(exc, exc.raw, schema)}"
            self.notice(self._say("seat_failed", label, message=exc.message), "warn")
        except CallTimeoutError as exc:
            role = self.roles[role_name]
            shown = {**variables, "round": round, "decided": None}
            request = self._request(role, step, shown, max_tokens, 0, structured=schema)
            why = sanitize(f"{FAILED}timeout: {exc.message}")
            self.timed_out(label)
        turn = self._turn(index, round, role, step, request, Completion(text=""), None, why)
        turn.data = {}
        return None, self._record(turn, label)

    def timed_out(self, label: str) -> None:
        """Say that the seat LABEL gave no reply within the call time limit, and how to give
        it longer: `--call-timeout` (the turn, or the format's result, records the failure)."""
        seconds = f"{self.call_timeout_s:g}" if self.call_timeout_s else "?"
        self.notice(self._say("timed_out", label, seconds=seconds), "warn")

    def _reuse_failed(self, prior: Turn, index: int, round: int | None, label: str) -> Turn:
        """A saved failed seat, shown and recorded again as it was."""
        self.emit(TurnStarted(index, round, prior.role, prior.step, label, False))
        return self._reuse(prior, label)

    def _replayed(self, index: int, role_name: str, step: str) -> Turn | None:
        if index >= len(self._replay):
            return None
        prior = self._replay[index]
        if (prior.role, prior.step) != (role_name, step):
            raise MootError(
                key="engine.turns.journal_does_not_match_this",
                index=index,
                role=prior.role,
                step=prior.step,
                role_name=role_name,
                step2=step,
            )
        return prior

    def _reuse(self, turn: Turn, label: str) -> Turn:
        self.transcript.turns.append(turn)
        self.emit(TurnFinished(turn, label, self._passages_of(turn)))
        return turn

    def _turn(
        self,
        index: int,
        rnd: int | None,
        role: Role,
        step: str,
        request: ChatRequest,
        completion: Completion,
        accepted: bool | None,
        note: str | None,
    ) -> Turn:
        self._asked[index] = request.messages
        generated = completion.generated.model_dump() if completion.generated else None
        return Turn(
            index=index,
            round=rnd,
            role=role.name,
            step=step,
            model=role.model.model_id,
            temperature=role.temperature,
            seed=request.sampling.seed,
            text=completion.text.strip(),
            reasoning=completion.reasoning.strip() or None,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            cached_tokens=completion.cached_tokens,
            duration_ms=completion.duration_ms,
            ttft_ms=completion.ttft_ms,
            finish_reason=completion.finish_reason,
            accepted=accepted,
            note=note,
            generated=generated,
        )
