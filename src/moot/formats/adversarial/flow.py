"""Adversarial review: several models answer one question, revise against each other, a judge
audits their claims after every round until resolved or the cap, a synthesizer writes one answer.

How it keeps its rulebook, and where it departs: docs/formats/adversarial.md. Every step
below is one step of that rulebook.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from moot.engine.rules import length_units
from moot.engine.turns import Decide, Engine
from moot.errors import MootError
from moot.formats.adversarial import evidence, text
from moot.formats.adversarial.schemas import (
    JUDGE_TOKENS,
    LIMITS,
    SUPPLEMENT_UNITS,
    AdversarialOptions,
    AdversarialParams,
    Ballot,
    judge_schema,
    make_params,
    read_request,
    read_vote,
)
from moot.formats.base import Cast, Format, Judging, reply_field
from moot.formats.failures import attempt
from moot.records.transcript import StopReason, Turn

# Every step's prompt opens with the same record (record.j2): the question, the latest
# round's answers as the judge saw them, the judge's conflicts, then the earlier rounds. The
# judge's prompt is the start of every revision's, and the revisions differ only in whose
# answer is whose, so a model evaluates the answers once for all of them.
STEPS = ("record", "answer", "revise", "judge", "synthesis")
TEMPERATURES = {"participant": 0.3, "judge": 0.2, "synthesizer": 0.3}
TRAJECTORY_CHARS = 300  # an answer from two or more rounds back is shown this long


def participant_roles(n: int) -> tuple[str, ...]:
    return tuple(f"participant_{i}" for i in range(1, n + 1))


def make_cast(params: AdversarialParams) -> Cast:
    """One seat per --model, each bound to its model; the judge and synthesizer after them.
    Each participant speaks for its own answer ("participant 1" in the third person: the
    packs call it by its model's name, which no rule can know beforehand); the judge and
    the synthesizer speak for none."""
    seats = participant_roles(len(params.participants))
    temps = {r: TEMPERATURES["participant"] for r in seats}
    return Cast(
        roles=(*seats, "judge", "synthesizer"),
        temperatures={**temps, "judge": TEMPERATURES["judge"], "synthesizer": 0.3},
        models=dict(zip(seats, params.participants, strict=True)),
        sides={r: (r.replace("_", " "),) for r in seats},
    )


def participant_names(engine: Engine, roles: tuple[str, ...]) -> dict[str, str]:
    """Each participant's name is its model's; a model the user gave twice gets "#2" after."""
    names: dict[str, str] = {}
    for role in roles:
        base = engine.roles[role].model.model_id
        name, n = base, 1
        while name in names.values():
            n += 1
            name = f"{base} #{n}"
        names[role] = name
    return names


@dataclass
class _Answer:
    text: str | None  # None: this participant failed this round
    ballot: Ballot | None = None  # rounds ≥ 2: its vote on the shared conclusion
    request: str | None = None  # the supplemental evidence it asks for, if any


@dataclass
class _Review:
    """One review in progress: every round's answers, the judge's verdicts, the failures."""

    engine: Engine
    question: str
    params: AdversarialParams
    names: dict[str, str]  # role → participant name
    schema: type[BaseModel]
    latest: dict[str, str] = field(default_factory=dict)  # role → last answer that succeeded
    history: list[dict[str, _Answer]] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    supplied: list[dict[str, Any]] = field(default_factory=list)  # evidence given when asked

    @property
    def lang(self) -> str:
        return self.engine.language

    def attempt(self, rnd: int | None, role: str, call: Callable[[], Turn]) -> Turn | None:
        """One turn; its failure is recorded, announced, and the turn comes back as None."""
        outcome = attempt(call, self.schema)
        if outcome.error is not None:
            self.failures.append({"round": rnd, "role": role, "error": outcome.error})
            self.engine.notice(text.failed(self.lang, role, self.names, outcome.error), "warn")
        if outcome.timed_out:
            self.engine.timed_out(self.engine.labels.get(role, role))
        return outcome.turn

    def common(self) -> dict[str, Any]:
        shared = evidence.shown(self.params.evidence, self.supplied)
        return {
            "question": self.question,
            "language": self.lang,
            "limits": LIMITS,
            "evidence": shared,
        }

    # -- participants -------------------------------------------------------------------

    def answer(self, rnd: int, role: str) -> _Answer:
        """Round 1: an independent answer. Later: a revision against every peer's answer."""
        me = self.names[role]
        if rnd == 1:
            step = "answer"
            shown: dict[str, Any] = {"earlier": [e.model_dump() for e in self.params.earlier]}
        else:
            step, shown = "revise", self.revision_context(rnd, role)
        turn = self.attempt(
            rnd,
            role,
            lambda: self.engine.speak(
                role,
                step,
                round=rnd,
                label=text.participant(self.lang, role, me),
                limit=LIMITS["answer"],
                me=me,
                **shown,
                **self.common(),
            ),
        )
        if turn is None:
            return _Answer(None)
        request = read_request(turn.text)
        if request:
            self.engine.notice(text.requested(self.lang, role, self.names, request), "info")
        return _Answer(turn.text, read_vote(turn.text) if rnd >= 2 else None, request)

    def answer_round(self, rnd: int) -> dict[str, _Answer]:
        """Every participant in turn; each sees only what the others said in earlier rounds."""
        answers = {role: self.answer(rnd, role) for role in self.names}
        self.latest.update({r: a.text for r, a in answers.items() if a.text is not None})
        self.history.append(answers)
        return answers

    def revision_context(self, rnd: int, role: str) -> dict[str, Any]:
        """Every previous answer as the judge saw it (its own and each peer's, by name), the
        judge's conflicts, the trajectory."""
        last = self.rounds[-1]["verdict"] if self.rounds else None
        return {
            **self.shown(rnd - 1, self.history[-1]),
            "own": self.latest.get(role),
            "conflicts": text.conflicts(self.lang, last),
            "trajectory": text.trajectory(
                self.lang, self.history[:-1], self.rounds[:-1], self.names, TRAJECTORY_CHARS
            ),
        }

    # -- the judge ----------------------------------------------------------------------

    def shown(self, rnd: int, answers: dict[str, _Answer]) -> dict[str, Any]:
        """A round's answers as the record shows them: a participant that failed by its
        last answer, and from round 2 on each with its vote."""
        shown = [
            {
                "name": self.names[r],
                "text": a.text if a.text is not None else self.latest.get(r, ""),
                "failed": a.text is None,
                "vote": text.ballot(self.lang, a.ballot) if rnd >= 2 else None,
            }
            for r, a in answers.items()
        ]
        return {"answers": shown, "answers_round": rnd}

    def judge(self, rnd: int, answers: dict[str, _Answer]) -> dict[str, Any] | None:
        turn = self.attempt(
            rnd,
            "judge",
            lambda: self.engine.structured(
                "judge",
                "judge",
                self.schema,
                round=rnd,
                label=text.label(self.lang, "judge"),
                max_tokens=JUDGE_TOKENS.get(self.lang, JUDGE_TOKENS["en"]),
                # Whether the round is resolved, and who won, are read as the judge's
                # probabilities first.
                decide={
                    "resolved": Decide(("yes", "no"), written=(True, False)),
                    "winner": Decide(tuple(self.names.values())),
                },
                names=list(self.names.values()),
                **self.shown(rnd, answers),
                **self.common(),
            )[1],
        )
        return turn.data if turn else None

    # -- evidence asked for -------------------------------------------------------------

    def supply(self, rnd: int, answers: dict[str, _Answer]) -> None:
        """Before round RND (if the cap allows it): the requests of the round before go to
        the user, who may supply a file for every seat from RND on."""
        requests = {self.names[r]: a.request for r, a in answers.items() if a.request}
        if rnd > self.params.rounds or not requests:
            return
        given = evidence.supplement(self.engine, rnd, requests, self.supplied)
        if given:
            self.supplied.append(given)


def settle(rnd: int, verdict: dict[str, Any] | None, answers: dict[str, _Answer]) -> str:
    """Why the round is not resolved, or "resolved": the judge's `resolved` is necessary,
    not sufficient. The rulebook's rules are checked here, in code."""
    if verdict is None:
        return "no_verdict"
    if not verdict["resolved"]:
        return "judge_unresolved"
    if not verdict["claim_audit_complete"]:
        return "audit_incomplete"
    if verdict["critical_conflicts"]:
        return "conflicts_remain"
    if rnd == 1 and any(a.text is None for a in answers.values()):
        return "participant_failed"
    if rnd >= 2 and not all(a.ballot and a.ballot.accepts for a in answers.values()):
        return "not_all_accepted"
    return "resolved"


def run(engine: Engine, question: str, params: AdversarialParams) -> dict[str, Any]:
    """Rounds until resolved or the cap; then the synthesizer's final answer."""
    roles = participant_roles(len(params.participants))
    names = participant_names(engine, roles)
    review = _Review(
        engine, question, params, names, judge_schema(tuple(names.values()), engine.language)
    )
    stop: StopReason = "cap"
    for rnd in range(1, params.rounds + 1):
        answers = review.answer_round(rnd)
        if rnd == 1 and all(a.text is None for a in answers.values()):
            engine.stop("failed")
            raise MootError(key="formats.adversarial.flow.error_review_failed_every_participant")
        verdict = review.judge(rnd, answers)
        outcome = settle(rnd, verdict, answers)
        review.rounds.append(_round_record(rnd, verdict, outcome, answers, names))
        if outcome == "resolved":
            stop = "resolved"
            break
        review.supply(rnd + 1, answers)
    engine.stop(stop)
    return _result(review, stop, _synthesis(review, stop))


def _round_record(
    rnd: int,
    verdict: dict[str, Any] | None,
    outcome: str,
    answers: dict[str, _Answer],
    names: dict[str, str],
) -> dict[str, Any]:
    votes = {
        names[r]: {"vote": a.ballot.vote, "reason": a.ballot.reason}
        for r, a in answers.items()
        if a.ballot is not None
    }
    failed = [names[r] for r, a in answers.items() if a.text is None]
    return {
        "round": rnd,
        "verdict": verdict,
        "resolved": outcome == "resolved",
        "outcome": outcome,
        "votes": votes,
        "failed": failed,
        "requests": {names[r]: a.request for r, a in answers.items() if a.request},
    }


def _synthesis(review: _Review, stop: str) -> str | None:
    """The final answer, after the rounds: it carries no round number. It is shown the last
    round's answers, and the trajectory of every round before it (each answer, what the
    judge's audit found and flagged), so it can merge the points that held up across the
    rounds, not only in the last one."""
    last = next((r["verdict"] for r in reversed(review.rounds) if r["verdict"]), None)
    held = len(review.rounds)
    path = text.trajectory(
        review.lang, review.history[:-1], review.rounds[:-1], review.names, TRAJECTORY_CHARS
    )
    turn = review.attempt(
        None,
        "synthesizer",
        lambda: review.engine.speak(
            "synthesizer",
            "synthesis",
            round=None,
            label=text.label(review.lang, "synthesis"),
            limit=LIMITS["synthesis"],
            **review.shown(held, review.history[-1]),
            winner=last["winner"] if last else None,
            conflicts=text.conflicts(review.lang, last),
            trajectory=path,
            stop=stop,
            **review.common(),
        ),
    )
    return turn.text if turn else None


def _result(review: _Review, stop: str, final_answer: str | None) -> dict[str, Any]:
    judged = [r for r in review.rounds if r["verdict"]]
    return {
        "question": review.question,
        "participants": review.names,
        "rounds": review.rounds,
        "rounds_held": len(review.rounds),
        "stop_reason": stop,
        "winner": judged[-1]["verdict"]["winner"] if judged else None,
        "final_answer": final_answer,
        "failures": review.failures,
        "session": [e.model_dump() for e in review.params.earlier],
        "continued_from": review.params.continued_from,
        "supplied": review.supplied,
    }


def sample_variables() -> dict[str, dict[str, Any]]:
    """Variables that exercise every step of the pack (used to validate a user's pack)."""
    base = {
        "question": "Is nuclear power safer per TWh than wind?",
        "language": "en",
        "limits": LIMITS,
        "round": 2,
        "me": "a",
        "evidence": [
            {"name": "a.md", "text": "e", "round": None},
            {"name": "b.txt", "text": "f", "round": 2},
        ],
    }
    answers = [{"name": "a", "text": "x", "failed": False, "vote": "accept: y"}]
    shown = {"answers": answers, "answers_round": 1}
    earlier = [{"question": "q", "answer": "a"}]
    return {
        "record": {**base, **shown, "conflicts": "c", "trajectory": "t"},
        "answer": {**base, "round": 1, "earlier": earlier},
        "revise": {**base, **shown, "own": "x", "conflicts": "c", "trajectory": "t"},
        "judge": {**base, **shown, "names": ["a", "b"]},
        "synthesis": {
            **base,
            **shown,
            "round": None,  # after the rounds
            "winner": "a",
            "conflicts": "c",
            "trajectory": "t",
            "stop": "cap",
        },
    }


def quoted_words(params: AdversarialParams) -> int:
    """The most one prompt quotes: every participant's answer in every round, the earlier
    questions it follows up on with their syntheses, and its own; the shared evidence, and
    the room for what the user may supply when asked."""
    answers = params.rounds * len(params.participants) * LIMITS["answer"]
    shared = sum(length_units(e.text) for e in params.evidence) + SUPPLEMENT_UNITS
    asked = sum(length_units(e.question) for e in params.earlier)
    return answers + asked + (1 + len(params.earlier)) * LIMITS["synthesis"] + shared


FORMAT = Format(
    name="adversarial",
    steps=STEPS,
    params_type=AdversarialParams,
    options=AdversarialOptions,
    make_params=make_params,
    cast=make_cast,
    run=run,
    render=text.render,
    sample_variables=sample_variables,
    quoted_words=lambda params: quoted_words(params),
    judging=Judging(("judge",), verdict=reply_field("winner"), kept=evidence.supplied_kept),
    seat_labels=lambda params, language: text.seat_labels(
        participant_roles(len(params.participants)), language
    ),
    outcome=text.review_outcome,
)
