"""Challenge: a proposer and a challenger argue over 1–5 rounds, evidence required, and a
judge's synthesis must pick a side; a JSON state file follows every exchange.

How it keeps its rulebook, and where it departs: docs/formats/challenge.md. Every step
below is one step of that rulebook.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_args

from pydantic import BaseModel

from moot.engine.turns import Decide, Engine
from moot.errors import MootError
from moot.formats.base import Cast, Format, Judging, reply_field
from moot.formats.challenge import text
from moot.formats.challenge.schemas import (
    DEFAULT_EFFORT,
    SUMMARY_WORDS,
    TURN_WORDS,
    VERDICT_TOKENS,
    ChallengeOptions,
    ChallengeParams,
    Winner,
    make_params,
    verdict_schema,
)
from moot.formats.challenge.state import DebateState, Exchange, MootRecord, Side, StateVerdict
from moot.formats.failures import attempt
from moot.records.transcript import Turn

WINNERS: tuple[str, ...] = get_args(Winner)  # the sides the synthesis judge may pick

ROLES = ("proposer", "challenger", "summariser", "judge")
SIDES = ("proposer", "challenger")
# What each side's seat is called in the third person; the summariser and the judge speak
# for no side.
SIDE_NAMES = {"proposer": ("proposer", "提议方"), "challenger": ("challenger", "挑战方")}
TEMPERATURES = {"proposer": 0.4, "challenger": 0.4, "summariser": 0.2, "judge": 0.2}
# Every step's prompt opens with the same record (record.j2): the topic, the summary, then
# the exchanges shown in full, under the same labels. A later step sees what an earlier one
# saw plus what was said since, so its prompt extends the earlier prompt's record and the
# model evaluates only the new exchanges; the step's own instructions come after it.
STEPS = ("record", "opening", "response", "defence", "follow_up", "summary", "verdict")


def make_cast(params: ChallengeParams) -> Cast:
    models: dict[str, str] = {}
    if params.effort_model:
        models = dict.fromkeys(ROLES, params.effort_model)
    if params.proposer_model and params.challenger_model:
        models = {"proposer": params.proposer_model, "challenger": params.challenger_model}
    return Cast(roles=ROLES, temperatures=TEMPERATURES, models=models, sides=SIDE_NAMES)


def backend_of(model: object) -> str:
    """The backend a model runs on (llama.cpp, openai-compatible, scripted), for the
    document's header and the state file's `moot` record."""
    named = getattr(model, "backend", None)
    if isinstance(named, str):
        return named
    kinds = {"ScriptedModel": "scripted", "EchoModel": "scripted", "HumanSeat": "human"}
    return kinds.get(type(model).__name__, type(model).__name__)


def side_of(engine: Engine, role: str) -> Side:
    """The rulebook's {tool, model} of a seat: the tool is the model reference the seat was
    given (a server's URL without its `#name`), the model the GGUF file it runs or the
    server's model name (else the model's id)."""
    model = engine.roles[role].model
    ref = engine.transcript.refs.get(role) or model.model_id
    tool = ref.partition("#")[0] if ref.startswith(("http://", "https://")) else ref
    # file_name first: a model loaded one at a time answers it unloaded, and would load
    # to answer anything it does not know.
    named = getattr(model, "file_name", None) or getattr(model, "model_name", None)
    return Side(tool=tool, model=named if isinstance(named, str) else model.model_id)


@dataclass
class _Failure:
    round: int | None  # None: after the rounds (the synthesis)
    role: str
    error: str
    timed_out: bool = False


@dataclass
class _Debate:
    """One challenge debate in progress: its exchanges, summary, failures and state file."""

    engine: Engine
    topic: str
    params: ChallengeParams
    state: DebateState
    turn_words: int  # a proposer's or challenger's turn, by the effort
    exchanges: list[Exchange] = field(default_factory=list)
    models: list[str] = field(default_factory=list)  # each exchange's model id, for its label
    failures: list[_Failure] = field(default_factory=list)
    calls: int = 0
    summary: str | None = None
    summary_upto: int = 0  # the summary covers rounds 1 … summary_upto

    @property
    def lang(self) -> str:
        return self.engine.language

    def model_of(self, role: str) -> str:
        return self.engine.roles[role].model.model_id

    # -- calls and their failures -------------------------------------------------------

    def _call(
        self,
        rnd: int | None,
        role: str,
        call: Callable[[], Turn],
        schema: type[BaseModel] | None = None,
    ) -> Turn | None:
        """One turn, counted; its failure is recorded and the turn comes back as None."""
        self.calls += 1
        outcome = attempt(call, schema)
        if outcome.error is not None:
            self.failures.append(_Failure(rnd, role, outcome.error, outcome.timed_out))
        if outcome.timed_out:
            self.engine.timed_out(self.engine.labels.get(role, role))
        return outcome.turn

    # -- rounds -------------------------------------------------------------------------

    def exchange(self, rnd: int, role: str) -> str | None:
        """The proposer's or the challenger's turn, shown what the rulebook's context says."""
        step = {
            ("proposer", True): "opening",
            ("challenger", True): "response",
            ("proposer", False): "defence",
            ("challenger", False): "follow_up",
        }[(role, rnd == 1)]
        start = time.monotonic()
        turn = self._call(
            rnd,
            role,
            lambda: self.engine.speak(
                role,
                step,
                round=rnd,
                label=text.speaker(self.lang, role, self.model_of(role)),
                limit=self.turn_words,
                **self.context(upto=rnd),
                **self.common(),
            ),
        )
        if turn is not None:
            self.exchanges.append(
                Exchange(
                    round=rnd,
                    role=role,
                    tool=getattr(self.state, role).tool,
                    response=turn.text,
                    # A turn replayed by `moot resume` keeps the time it first took.
                    duration_ms=turn.duration_ms or round((time.monotonic() - start) * 1000),
                )
            )
            self.models.append(turn.model)
        self.save()
        return turn.text if turn else None

    def common(self) -> dict[str, Any]:
        words = SUMMARY_WORDS.get(self.lang, SUMMARY_WORDS["en"])
        limits = {"turn": self.turn_words, "summary_min": words[0], "summary": words[1]}
        return {"topic": self.topic, "language": self.lang, "limits": limits}

    def context(self, *, upto: int) -> dict[str, Any]:
        """What a speaker of round `upto` sees: the summary, then every later exchange in full.

        Finished rounds are those before `upto`; exchanges of round `upto` itself (the
        proposer's turn, for the challenger) are shown too.
        """
        shown = [
            (x, model)
            for x, model in zip(self.exchanges, self.models, strict=True)
            if self.summary_upto < x.round <= upto
        ]
        history = "\n\n".join(
            f"{text.exchange(self.lang, x.round, x.role, model)}\n{x.response}"
            for x, model in shown
        )
        return {
            "summary": self.summary,
            "summary_rounds": text.span(self.lang, self.summary_upto),
            "history": history,
        }

    def summarise(self, rnd: int | None, *, upto: int) -> None:
        """Fold rounds up to `upto` into the summary (rulebook: from round 3 on); RND None:
        the fold of the synthesis, after the rounds."""
        if self.summary_upto >= upto:
            return
        turn = self._call(
            rnd,
            "summariser",
            lambda: self.engine.speak(
                "summariser",
                "summary",
                round=rnd,
                label=text.label(self.lang, "summary"),
                limit=SUMMARY_WORDS.get(self.lang, SUMMARY_WORDS["en"])[1],
                covers=text.span(self.lang, upto),
                **self.context(upto=upto),
                **self.common(),
            ),
        )
        if turn is None:
            # Not silent: the speakers then see those rounds in full, as in rounds 1–2.
            self.engine.notice(text.summary_failed(self.lang, self.failures[-1].error), "warn")
            return
        self.summary, self.summary_upto = turn.text, upto

    @property
    def saved(self) -> bool:
        """Whether this debate is kept on disk: with nothing saved (`--no-save`,
        `save=False`), no state file is written either."""
        return self.engine.journal is not None

    def save(self) -> None:
        if not self.saved:
            return
        self.state.exchanges = list(self.exchanges)
        spoke = [{x.round for x in self.exchanges if x.role == side} for side in SIDES]
        both = spoke[0] & spoke[1]
        # Rounds are held in order and stop at the first failure: complete ones are 1 … k.
        self.state.rounds_completed = max(both, default=0)
        if self.state.claimed:
            self.state.save()
            return
        # The id its file was claimed under is journaled: a resumed debate goes on writing
        # that file, instead of claiming a second one and leaving the first "running".
        kept = self.engine.keep("state_id", lambda: str(self.state.save().stem))
        if kept != self.state.id:
            self.state.adopt(kept)
            self.state.save()

    # -- synthesis ----------------------------------------------------------------------

    def verdict(self, completed: int) -> dict[str, Any] | None:
        """The judge's verdict on the completed rounds; None (and a failure) if it fails.
        The synthesis comes after the rounds: its steps carry no round number."""
        if completed >= 2:  # the synthesis comes third: rounds 1 … N−1 are summarised
            self.summarise(None, upto=completed - 1)
        schema = verdict_schema(self.lang)
        turn = self._call(
            None,
            "judge",
            lambda: self.engine.structured(
                "judge",
                "verdict",
                schema,
                round=None,
                label=text.label(self.lang, "verdict"),
                max_tokens=VERDICT_TOKENS.get(self.lang, VERDICT_TOKENS["en"]),
                # The winner is read as the judge's probability of each side, first.
                decide={"winner": Decide(WINNERS)},
                proposer=self.model_of("proposer"),
                challenger=self.model_of("challenger"),
                rounds_completed=completed,
                **self.context(upto=completed),
                **self.common(),
            )[1],
            schema,
        )
        return turn.data if turn else None


def run(engine: Engine, topic: str, params: ChallengeParams) -> dict[str, Any]:
    """The whole debate: rounds until the last or a failure, then the synthesis."""
    effort = params.effort or DEFAULT_EFFORT
    state = DebateState(
        topic=topic,
        proposer=side_of(engine, "proposer"),
        challenger=side_of(engine, "challenger"),
        effort=effort,
        max_rounds=params.rounds,
        moot=MootRecord(
            language=engine.language,
            backends={r: backend_of(engine.roles[r].model) for r in SIDES},
        ),
    )
    if engine.rehearsal:  # a dry run's echoes never replace the last real debate's file
        state.rehearse()
    debate = _Debate(engine, topic, params, state, TURN_WORDS[effort])
    completed = _rounds(debate)
    if not debate.exchanges:
        _abort(debate)
    if completed == 0:  # the proposer spoke, the challenger failed
        engine.notice(text.UNCONTESTED[debate.lang], "warn")
        verdict, state.status = None, "uncontested"
    else:
        if completed < params.rounds:
            last = debate.failures[-1]  # the side's, in the round after the completed ones
            note = text.incomplete(debate.lang, completed + 1, last.role, last.error)
            engine.notice(note, "warn")
        verdict = debate.verdict(completed)
        done = completed == params.rounds and verdict is not None
        state.status = "completed" if done else "incomplete"
    state.verdict = _state_verdict(verdict, state)
    state.moot.verdict = verdict
    debate.save()
    # Why the rounds ended: every one held, whatever became of the verdict after them (a
    # judge that failed is said on its own: "No verdict: the judge failed (…)").
    engine.stop("completed" if completed == params.rounds else "incomplete")
    return _result(debate, verdict, completed)


def _rounds(debate: _Debate) -> int:
    """Run the rounds; the number of rounds in which both sides spoke."""
    for rnd in range(1, debate.params.rounds + 1):
        if rnd >= 3:
            debate.summarise(rnd, upto=rnd - 2)
        if debate.exchange(rnd, "proposer") is None or debate.exchange(rnd, "challenger") is None:
            return rnd - 1
    return debate.params.rounds


def _abort(debate: _Debate) -> None:
    """No opening position, no debate: the state says failed and the run ends in an error."""
    debate.state.status = "failed"
    debate.save()
    debate.engine.stop("failed")
    first = debate.failures[0]
    timed_out = all(f.timed_out for f in debate.failures) and len(debate.failures) == debate.calls
    if timed_out:  # the words of text.ALL_TIMED_OUT and text.NO_EXCHANGES
        raise MootError(key="formats.challenge.flow.all_timed_out", error=first.error)
    raise MootError(key="formats.challenge.flow.no_exchanges", error=first.error)


def _state_verdict(verdict: dict[str, Any] | None, state: DebateState) -> StateVerdict | None:
    """The judge's verdict in the rulebook's shape: the winner named by its tool, each
    agreement and disagreement as the line the document shows."""
    if verdict is None:
        return None
    lang = state.moot.language
    return StateVerdict(
        winner=getattr(state, verdict["winner"]).tool,
        reasoning=verdict["reasoning"],
        agreements=[text.agreement(lang, a) for a in verdict["agreements"]],
        disagreements=[text.disagreement(lang, d) for d in verdict["disagreements"]],
        recommendation=verdict["recommendation"],
    )


def _result(debate: _Debate, verdict: dict[str, Any] | None, completed: int) -> dict[str, Any]:
    state = debate.state
    incomplete = completed + 1 if completed < debate.params.rounds else None
    return {
        "id": state.id,
        "state_file": str(state.path) if debate.saved else None,
        "topic": debate.topic,
        "status": state.status,
        "effort": state.effort,
        **{
            side: {**getattr(state, side).model_dump(), "backend": state.moot.backends[side]}
            for side in SIDES
        },
        "rounds_completed": completed,
        "max_rounds": debate.params.rounds,
        "incomplete_round": incomplete,
        "failures": [vars(f) for f in debate.failures],
        "verdict": verdict,
    }


def sample_variables() -> dict[str, dict[str, Any]]:
    """Variables that exercise every step of the pack (used to validate a user's pack)."""
    base = {
        "topic": "Should we rewrite the billing service in Rust?",
        "language": "en",
        "limits": {"turn": 200, "summary_min": 350, "summary": 550},
        "summary": "s",
        "summary_rounds": "round 1",
        "history": "Round 1 - Proposer (m):\np",
        "round": 3,
    }
    return {
        "record": base,
        "opening": {**base, "round": 1, "summary": None, "history": ""},
        "response": {**base, "round": 1, "summary": None},
        "defence": base,
        "follow_up": base,
        "summary": {**base, "covers": "rounds 1–2"},
        "verdict": {
            **base,
            "round": None,  # after the rounds
            "proposer": "a",
            "challenger": "b",
            "rounds_completed": 2,
        },
    }


def quoted_words(params: ChallengeParams) -> int:
    """The most one prompt quotes: every exchange of every round, and the summary."""
    turn = TURN_WORDS[params.effort or DEFAULT_EFFORT]
    return params.rounds * 2 * turn + max(most for _, most in SUMMARY_WORDS.values())


FORMAT = Format(
    name="challenge",
    steps=STEPS,
    params_type=ChallengeParams,
    options=ChallengeOptions,
    make_params=make_params,
    cast=make_cast,
    run=run,
    render=text.render,
    sample_variables=sample_variables,
    quoted_words=lambda params: quoted_words(params),
    judging=Judging(("verdict",), verdict=reply_field("winner")),
    seat_labels=text.seat_labels,
    outcome=text.outcome,
)
