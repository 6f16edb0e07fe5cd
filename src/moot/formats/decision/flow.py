"""The decision format: pinned debaters argue 2–4 named positions through blind openings,
rebuttal rounds and a steelman swap; a neutral judge writes a decision document.

How it keeps its rulebook, and where it departs: docs/formats/decision.md. Each method of
`_Run` is one phase of that rulebook. Each debater is one persistent speaker, as the
rulebook's are: its rebuttals and its steelman go on the conversation of its own last usable
speech (`follows`), so it remembers its opening and its earlier rebuttals, and each new
prompt adds only what is new to it. The judge sees the whole record in one prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import BaseModel, ConfigDict

from moot.config import validate_params
from moot.engine.rules import length_units
from moot.engine.turns import Decide, Engine
from moot.errors import MootError, UsageError, concerning
from moot.formats.base import SAVED_HINT, Cast, Format, Judging, RunOptions, reply_field
from moot.formats.decision.document import (
    CONFIDENCE_WORDS,
    JUDGE_STEPS,
    SEAT_MARKS,
    label,
    render_document,
)
from moot.formats.decision.framing import (
    SLOTS,
    Plan,
    Seat,
    clean,
    count_problem,
    frame,
    plan_rounds,
    seats,
)
from moot.formats.decision.schemas import (
    MAX_POSITIONS,
    SCOPE_CHARS,
    TIE,
    DecisionOptions,
    DecisionParams,
    sections_schema,
    token_budget,
    verdict_schema,
)
from moot.formats.failures import degraded
from moot.records.journal import validate
from moot.records.transcript import Transcript, Turn
from moot.words import words

ROLES = ("debater_a", "debater_b", "debater_c", "debater_d", "judge")
DEBATERS = ROLES[:4]
TEMPERATURES = {**dict.fromkeys(DEBATERS, 0.5), "judge": 0.2}
PERSONAS = dict.fromkeys(DEBATERS, "persona_debater")
# Every debater speaks for a side (its position), called by its slot in the third person as
# the packs call it ("Debater A", "辩手A"); the judge speaks for none.
SIDES = {r: (r.replace("_", " "), "辩手" + r.rsplit("_", 1)[-1].upper()) for r in DEBATERS}
STEPS = (
    "persona_debater",
    "framing",
    "opening",
    "rebut",
    "steelman",
    "judge_decision",
    "judge_document",
)
# Length limits (words; 字 in Chinese): each sets its step's token budget.
LIMITS = {"opening": 200, "rebut": 200, "steelman": 150}
STEP_WORDS = 100  # a debater step's own instructions, in words: its share of a conversation
# The judge reads every speech verbatim unless the record would not fit the judge model's
# context beside its prompt and its longest reply; then each speech is shortened, with a
# notice. Debate text is counted on the low side: English ~4 characters a token, Chinese ~1.
TEXT_CHARS_PER_TOKEN = {"en": 3.0, "zh": 0.9}
PROMPT_TOKENS, SPEECH_TOKENS = 400, 20  # the judge prompt's own text; each speech's heading
DEFAULT_CTX = 4096  # a model that does not say (a remote server)


@dataclass
class Speech:
    """One debater's output in one phase, or why the slot produced nothing usable."""

    seat: Seat
    position: str  # what it argued: its own position, or the one it steelmanned
    text: str = ""
    failed: str | None = None

    def shown(self, language: str) -> dict[str, Any]:
        """How another speaker or the judge sees this speech: verbatim, or as a failure."""
        return {
            "slot": self.seat.slot,
            "speaker": label(language, "debater", slot=self.seat.slot),
            "position": self.position,
            "text": self.text,
            "failed": self.failed,
        }


@dataclass
class Stage:
    title: str
    speeches: list[Speech] = field(default_factory=list)


class _Run:
    """One decision debate after Phase 0: the seats, what each phase said, what failed."""

    def __init__(self, engine: Engine, plan: Plan) -> None:
        self.engine = engine
        self.plan = plan
        self.lang = engine.language
        self.team = seats(plan, self.lang)
        self.common: dict[str, Any] = {
            "topic": plan.topic,
            "out_of_scope": list(plan.out_of_scope),
            "language": self.lang,
            "limits": LIMITS,
        }
        self.dropped: dict[str, str] = {}  # role → why it left the debate
        self.failures: list[dict[str, str]] = []
        self.stages: list[Stage] = []
        # role → its last usable speech: the conversation its next speech goes on. A failed
        # speech is not in it (a degenerate reply fed back breeds more of the same).
        self.own: dict[str, Turn] = {}

    def speak(self, seat: Seat, step: str, *, rnd: int, phase: str, **variables: Any) -> Speech:
        """One debater turn; an error, a timeout or an unusable reply fails only this slot."""
        position = variables.get("target_position", seat.position)
        if seat.role in self.dropped:
            return Speech(seat, position, failed=self.dropped[seat.role])
        earlier = self.own.get(seat.role)
        try:
            turn = self.engine.speak(
                seat.role,
                step,
                round=rnd,
                label=f"{phase} · {seat.name(self.lang)}",
                limit=LIMITS[step],
                slot=seat.slot,
                position=seat.position,
                pragmatist=seat.pragmatist,
                follows=earlier,
                continued=earlier is not None,  # its own earlier speeches are above
                **self.common,
                **variables,
            )
        except MootError as exc:
            # A model that errors or times out is not asked again: the debate goes on without it.
            self.dropped[seat.role] = exc.message
            return self._fail(seat, position, phase, exc.message)
        if turn.note:
            return self._fail(seat, position, phase, turn.note)
        if length_units(turn.text) < 3:
            return self._fail(seat, position, phase, "the reply is too short to be a speech")
        self.own[seat.role] = turn
        return Speech(seat, position, turn.text)

    def _fail(self, seat: Seat, position: str, phase: str, reason: str) -> Speech:
        speaker = label(self.lang, "debater", slot=seat.slot)
        why = words(self.lang).shown(reason)  # recorded in English, said in the debate's
        message = label(self.lang, "failed", speaker=speaker, phase=phase, reason=why)
        self.engine.notice(message, "warn")
        self.failures.append(
            {"slot": seat.slot, "phase": phase, "reason": reason, "message": message}
        )
        return Speech(seat, position, failed=reason)

    def openings(self) -> Stage:
        """Phase 1: each debater sees only the topic, its own position and the scope."""
        phase = label(self.lang, "opening")
        stage = Stage(label(self.lang, "openings"))
        stage.speeches = [self.speak(s, "opening", rnd=1, phase=phase) for s in self.team]
        if all(s.failed for s in stage.speeches):
            raise MootError(key="formats.decision.flow.no_debater_gave_usable_opening")
        self.stages.append(stage)
        return stage

    def rebuttal(self, k: int, previous: Stage) -> Stage:
        """Phase 2, round k: each debater answers the others' round k−1 outputs, verbatim."""
        phase = label(self.lang, "rebut", n=k)
        stage = Stage(label(self.lang, "rebuttals", n=k))
        for seat in self.team:
            others = [s.shown(self.lang) for s in previous.speeches if s.seat != seat]
            stage.speeches.append(
                self.speak(seat, "rebut", rnd=1 + k, phase=phase, rebuttal_round=k, others=others)
            )
        self.stages.append(stage)
        return stage

    def steelman(self, rnd: int) -> Stage:
        """Phase 3: each debater still in the debate argues the side rotation assigns it."""
        phase = label(self.lang, "steelman")
        stage = Stage(label(self.lang, "steelmen"))
        live = [s for s in self.team if s.role not in self.dropped]
        for seat, target in rotation(live):
            speech = self.speak(
                seat,
                "steelman",
                rnd=rnd,
                phase=phase,
                target_slot=target.slot,
                target_position=target.position,
            )
            speech.position = label(self.lang, "steelman_of", position=target.position)
            stage.speeches.append(speech)
        self.stages.append(stage)
        return stage

    def judge(self) -> dict[str, Any]:
        """Phase 4, after the rounds: the verdict, then the sections, each a bounded
        grammar-constrained reply. A judge that gives none (a timeout, a reply still invalid
        when asked again) fails its seat, not the debate: the document keeps what it did
        give, says what is missing, and the debate ends unjudged."""
        plan, lang = self.plan, self.lang
        context = {
            **self.common,
            "positions": list(plan.positions),
            "preset": plan.preset,
            "rounds": plan.rounds,
            "record": [
                {"title": st.title, "speeches": [s.shown(lang) for s in st.speeches]}
                for st in self.stages
            ],
            "clip": self._clip(),
        }
        schema = verdict_schema(plan.positions, lang)
        verdict, _ = self.engine.structured_or_fail(
            "judge",
            "judge_decision",
            schema,
            round=None,
            label=label(lang, "judge_decision"),
            max_tokens=token_budget(schema),
            # The recommendation is read as the judge's probability of each option, first.
            decide={"recommendation": Decide((*plan.positions, TIE))},
            **context,
        )
        if verdict is None:  # no verdict: no sections to write on it
            return self._result(None, None, None)
        v = verdict.model_dump()
        rec = v["recommendation"]
        if rec == TIE:
            headline = label(lang, "tie", axis=v["axis"])
        else:
            headline = label(lang, "recommend", position=rec)
        # The dissent comes from a losing side; in a tie, from any side.
        dissenters = tuple(p for p in plan.positions if p != rec)
        schema = sections_schema(dissenters, lang)
        sections, _ = self.engine.structured_or_fail(
            "judge",
            "judge_document",
            schema,
            round=None,
            label=label(lang, "judge_document"),
            max_tokens=token_budget(schema),
            headline=headline,
            decision=v["decision"],
            confidence=v["confidence"],
            **context,
        )
        return self._result(v, sections.model_dump() if sections else None, headline)

    def _result(
        self, v: dict[str, Any] | None, s: dict[str, Any] | None, headline: str | None
    ) -> dict[str, Any]:
        """The transcript's result: the document's front matter and its six sections, those
        of a judge's reply that never came (V, the verdict; S, the sections) left out."""
        plan = self.plan
        rec = v["recommendation"] if v else None
        result: dict[str, Any] = {
            "frontmatter": {
                "topic": plan.topic,
                # The day the debate began: a debate resumed later is dated as it began.
                "date": self.engine.transcript.began or date.today().isoformat(),
                "positions": list(plan.positions),
                "out_of_scope": list(plan.out_of_scope),
                "recommendation": rec,
                "tied_on_axis": v["axis"] if v and rec == TIE else None,
                "confidence": v["confidence"] if v else None,
                "rounds": plan.rounds,
                "preset": plan.preset,
            },
        }
        if v:
            result["decision"] = {"headline": headline, "text": v["decision"], "axis": v["axis"]}
            result["confidence"] = {"level": v["confidence"], "reason": v["confidence_reason"]}
        if s:
            result |= {
                "key_reasoning": s["key_reasoning"],
                "trade_offs": s["trade_offs"],
                "what_would_change": s["what_would_change"],
                "dissent": {"position": s["dissent_position"], "text": s["dissent"]},
            }
        result["seats"] = {t.slot: t.position for t in self.team}
        result["failures"] = self.failures
        return result

    def _clip(self) -> int:
        """Characters shown per speech to the judge: all of them, unless the record is too long."""
        texts = [s.text for st in self.stages for s in st.speeches]
        reply = token_budget(sections_schema(self.plan.positions, self.lang)) + 80
        n_ctx = getattr(self.engine.roles["judge"].model, "n_ctx", None) or DEFAULT_CTX
        room = int(n_ctx) - reply - PROMPT_TOKENS - SPEECH_TOKENS * len(texts)
        budget = max(len(texts) * 80, int(room * TEXT_CHARS_PER_TOKEN[self.lang]))
        total = sum(map(len, texts))
        if total <= budget:
            return max(total, 1)
        clip = budget // max(1, len(texts))
        self.engine.notice(label(self.lang, "record_long", clip=clip))
        return clip


def rotation(team: list[Seat]) -> list[tuple[Seat, Seat]]:
    """Rotate once: A→B, B→C, C→A (A→B→C→D→A for four; A↔B for two; nothing for one)."""
    if len(team) < 2:
        return []
    return [(seat, team[(i + 1) % len(team)]) for i, seat in enumerate(team)]


def run(engine: Engine, topic: str, params: DecisionParams) -> dict[str, Any]:
    """Phase 0 to Phase 4: framing, openings, N rebuttal rounds, the steelman swap, the judge."""
    debate = _Run(engine, frame(engine, topic, params))
    stage = debate.openings()
    rounds = debate.plan.rounds
    for k in range(1, rounds + 1):
        stage = debate.rebuttal(k, stage)
    if rounds:
        debate.steelman(rounds + 2)
    result = debate.judge()
    engine.stop("completed")
    return result


def sample_variables() -> dict[str, dict[str, Any]]:
    """Variables that exercise every step of the pack (used to validate a user's pack)."""
    base = {
        "topic": "Postgres vs MySQL for a small analytics app",
        "out_of_scope": ["hosting costs"],
        "language": "en",
        "limits": LIMITS,
        "round": 2,
    }
    seat = {**base, "slot": "A", "position": "Postgres", "pragmatist": False, "continued": False}
    other = {"slot": "B", "speaker": "Debater B", "position": "MySQL", "text": "t", "failed": None}
    failed = {**other, "slot": "C", "text": "", "failed": "timed out"}
    record = [{"title": "Openings", "speeches": [other, failed]}]
    judged = {**base, "positions": ["Postgres", "MySQL"], "preset": "standard", "rounds": 1}
    judged |= {"record": record, "clip": 100}
    return {
        "persona_debater": {**seat, "pragmatist": True},
        "framing": base,
        "opening": seat,
        # A rebuttal or a steelman goes on the debater's own conversation: `continued`.
        "rebut": {**seat, "rebuttal_round": 2, "others": [other, failed], "continued": True},
        "steelman": {**seat, "target_slot": "B", "target_position": "MySQL", "continued": True},
        # The judge comes after the rounds: its steps carry no round number.
        "judge_decision": {**judged, "round": None},
        "judge_document": {
            **judged,
            "round": None,
            "headline": "h",
            "decision": "d",
            "confidence": "low",
        },
    }


def make_params(given: DecisionOptions, options: RunOptions) -> DecisionParams:
    chosen = given.model_fields_set  # --preset and --rounds given, or either, or neither
    preset, rounds = plan_rounds(
        given.preset if "preset" in chosen else None, given.rounds if "rounds" in chosen else None
    )
    positions, scope = clean(given.positions), clean(given.out_of_scope)
    problem = count_problem(positions) if positions else None
    if problem:
        with concerning("params.positions"):
            raise UsageError(key="formats.decision.flow.positions_refused", problem=problem)
    if any(len(s) > SCOPE_CHARS for s in scope):
        raise UsageError(
            key="formats.decision.flow.out_scope_item_longer_than",
            field="params.out_of_scope",
            scope_chars=SCOPE_CHARS,
        )
    return validate_params(
        DecisionParams, preset=preset, rounds=rounds, positions=positions, out_of_scope=scope,
        evidence=given.evidence,
        keep_sources=given.keep_sources,
    )  # fmt: skip


def render(transcript: Transcript) -> str:
    if not transcript.result:
        return f"# {label(transcript.language, 'title', topic=transcript.motion)}\n"
    rounds = int(transcript.result["frontmatter"]["rounds"])
    last = rounds + 2 if rounds else 1  # the steelman swap, or the openings
    found = degraded(transcript.turns, closing=JUDGE_STEPS, last=last)
    return render_document(transcript.result, transcript.language, degraded=found)


def seat_labels(params: DecisionParams, language: str) -> dict[str, str]:
    """The debaters as the debate calls them, with their positions where --positions gave
    them (then only the seats those positions fill), and the judge."""
    if params.positions:
        plan = Plan("", params.positions, (), params.preset, params.rounds)
        team = {seat.role: seat.name(language) for seat in seats(plan, language)}
    else:  # the framing picks the positions, and so how many seats speak
        team = {f"debater_{s.lower()}": _slot(language, s) for s in SLOTS}
    return {**team, "judge": f"⚖️ {label(language, 'judge')}"}


def _slot(language: str, slot: str) -> str:
    return f"{SEAT_MARKS[slot]} {label(language, 'debater', slot=slot)}"


def outcome(transcript: Transcript, models: Mapping[str, str]) -> str:
    """The judge's recommendation, the seat and model that argued it, and the confidence."""
    result, lang = transcript.result or {}, transcript.language
    decision, confidence = result.get("decision"), result.get("confidence")
    if not isinstance(decision, dict) or not isinstance(confidence, dict):
        return ""
    rec = (result.get("frontmatter") or {}).get("recommendation")
    slot = next((s for s, p in (result.get("seats") or {}).items() if p == rec), None)
    model = models.get(f"debater_{slot.lower()}") if slot is not None else None
    headline = str(decision.get("headline", ""))
    if slot and model:
        headline = label(lang, "recommend_by", position=rec, seat=_slot(lang, slot), model=model)
    level = str(confidence.get("level", ""))
    level = CONFIDENCE_WORDS.get(lang, {}).get(level, level)
    space = "" if lang == "zh" else " "
    return headline + space + label(lang, "confidence_is", level=level)


def quoted_words(params: DecisionParams) -> int:
    """The most one prompt quotes: the judge's record of every seat's opening, each rebuttal
    round and its steelman (the most positions when the framing picks them; two positions
    have the Pragmatist as a third seat), or a debater's own conversation by its steelman —
    its opening and rebuttals, the others' openings and rebuttals it answered, and each
    step's own instructions — whichever is longer."""
    positions = len(params.positions) or MAX_POSITIONS
    speakers = positions + (positions == 2)
    n = params.rounds
    per_seat = LIMITS["opening"] + n * LIMITS["rebut"]
    judge = speakers * (per_seat + LIMITS["steelman"])
    others = (speakers - 1) * (LIMITS["opening"] + max(0, n - 1) * LIMITS["rebut"])
    debater = per_seat + others + (n + 2) * STEP_WORDS
    return max(judge, debater)


class _Plan(BaseModel):
    model_config = ConfigDict(strict=True)

    topic: str
    positions: list[str]
    out_of_scope: list[str]
    preset: str
    rounds: int


def confirmed_plan(saved: Transcript) -> dict[str, Any]:
    """The plan the user confirmed (or corrected) in Phase 0, as the saved document records
    it: a new judge (`moot judge`) judges the debate that plan ran."""
    front = (saved.result or {}).get("frontmatter")
    if not isinstance(front, dict):
        return {}
    keys = _Plan.model_fields
    plan = validate(
        _Plan, {k: front.get(k) for k in keys}, name="result.frontmatter", hint=SAVED_HINT
    )
    return {"decision_plan": plan.model_dump()}


FORMAT = Format(
    name="decision",
    steps=STEPS,
    params_type=DecisionParams,
    options=DecisionOptions,
    make_params=make_params,
    cast=lambda params: Cast(
        roles=ROLES, temperatures=TEMPERATURES, personas=PERSONAS, sides=SIDES
    ),
    run=run,
    render=render,
    sample_variables=sample_variables,
    document="decision.md",
    saves_by_default=False,  # ephemeral: printed, and saved only with --out
    quoted_words=lambda params: quoted_words(params),
    judging=Judging(
        ("judge_decision",),
        verdict=reply_field("recommendation"),
        kept=confirmed_plan,
        documents=("judge_document",),
    ),
    seat_labels=seat_labels,
    outcome=outcome,
)
