"""A saved debate checked again (`moot check`): every turn measured and read from its text
as the file holds it now, against the length and voice rules of `moot.engine.rules`, each problem
found said to be one the debate declares (its turn's flags name it) or not."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from moot.engine.rules import (
    ELLIPSIS,
    QUOTED_AT_LENGTH,
    Voice,
    drift_point,
    ends_sentence,
    foreign,
    labelled_line,
    length_units,
    opening_manner,
    over_quoted,
    says_nothing,
    sentence_problem,
    sentences,
    shared_text,
    voice_for,
)
from moot.inference.human import HUMAN
from moot.inference.protocol import degeneracy
from moot.records.transcript import Transcript, Turn

# Each kind of problem moot check finds, and the words a turn's own flags (or note) use when
# the engine already found it and said so.
_DECLARED_BY = {
    "preamble": ("preamble",),
    "echoed labels": ("label",),
    "placeholder": ("placeholder",),
    "narration": ("narrat",),
    "copied": ("other side's words",),
    "language": ("English", "Chinese", "language"),
    "hollow": ("hollow",),
    "degenerate": ("degenerate",),
    QUOTED_AT_LENGTH: (QUOTED_AT_LENGTH,),
}
_ANY_RULE = "voice rules"  # "every sentence broke the rulebook's voice rules: kept as said"
# Structured fields that hold prose whatever their schema allowed (moot check has no schema).
_PROSE_KEYS = re.compile(
    r"reason|summary|rationale|explanation|justification|argument|critique|balance|attacks"
    r"|rebuttals|^pro$|^con$|trade_offs|analysis|assessment|^dissent$|what_would_change",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TurnCheck:
    """One turn of a saved debate checked again: its length against its limit (a limited
    turn), and every problem found in what it shows, each said to be declared (the turn's
    own flags name it) or not."""

    index: int
    role: str
    step: str
    length: int | None
    limit: int | None
    # "ok", "cut" (cut to fit), "over" (a broken limit), "theirs" (a person's turn over its
    # limit, kept by them and flagged so); "" for no limit
    status: str
    flags: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()  # "kind: detail"
    undeclared: tuple[str, ...] = ()  # the problems its flags do not name
    ends_sentence: bool = True


@dataclass(frozen=True)
class DebateCheck:
    turns: tuple[TurnCheck, ...]
    unlimited: int  # speeches with no limit recorded (older transcripts)

    @property
    def limited(self) -> tuple[TurnCheck, ...]:
        return tuple(t for t in self.turns if t.limit is not None)

    @property
    def over(self) -> int:
        return sum(t.status == "over" for t in self.turns)

    @property
    def broken(self) -> bool:
        """A limit broken, or a problem the saved debate does not itself declare."""
        return self.over > 0 or any(t.undeclared for t in self.turns)

    def count(self, kind: str) -> int:
        return sum(any(p.startswith(kind + ":") for p in t.problems) for t in self.turns)

    def summary(self) -> dict[str, int]:
        limited = self.limited
        return {
            "turns": len(self.turns),
            "limited_turns": len(limited),
            "within_limit": sum(t.status in ("ok", "cut") for t in limited),
            "persons_over": sum(t.status == "theirs" for t in limited),
            "cut_to_fit": sum(t.status == "cut" for t in limited),
            "over_limit": self.over,
            "ending_on_a_sentence": sum(t.ends_sentence for t in limited),
            "flagged": sum(bool(t.flags) for t in self.turns),
            "with_problems": sum(bool(t.problems) for t in self.turns),
            "undeclared": sum(bool(t.undeclared) for t in self.turns),
            **{kind.replace(" ", "_"): self.count(kind) for kind in _DECLARED_BY},
            "no_limit_recorded": self.unlimited,
        }


def check_debate(transcript: Transcript, sides: Mapping[str, tuple[str, ...]]) -> DebateCheck:
    """Every turn measured and read again from its text (what the file holds now, not what
    the turn says of itself): length against its limit, the voice rules, its language, and
    a structured reply's prose. SIDES: the seats that speak for a side and what each is
    called, as the debate's format casts them for its params (`Cast.sides`); any other seat
    speaks for no side."""
    checked, unlimited = [], 0
    result = transcript.result if isinstance(transcript.result, dict) else {}
    for turn in transcript.turns:
        if turn.data is not None:
            problems = [f"hollow: {found}" for found in hollow_fields(turn.data)]
            checked.append(_checked(turn, None, "", problems, ends=True))
            continue
        others = [
            t.text for t in transcript.turns[: turn.index] if t.role != turn.role and t.data is None
        ]
        given = [*_listed(transcript.params.get("evidence")), *_listed(result.get("supplied"))]
        # The passages of the debate's documents the turn was shown: nobody's words, as
        # the engine held them.
        kept = transcript.evidence.passages if transcript.evidence else {}
        if turn.evidence is not None:
            given += [{"text": f"[{i}] {kept[i]}"} for i in turn.evidence.shown if i in kept]
        voice = voice_for(
            sides.get(turn.role, ()),
            transcript.language,
            others,
            shared_text(transcript.motion, given),
        )
        person = turn.model == HUMAN  # a person's words are theirs: no voice rules, never cut
        problems = [] if person else speech_problems(turn.text, voice)
        if turn.limit is None:
            unlimited += 1
            checked.append(_checked(turn, None, "", problems, ends=True))
            continue
        length = length_units(turn.text)
        status = "over" if length > turn.limit else "cut" if turn.cut else "ok"
        if person and status == "over" and any("kept as the speaker's" in f for f in turn.flags):
            status = "theirs"  # a person ran over, was told, and kept it: said so, not broken
        ends = ends_sentence(turn.text) and not turn.text.endswith(ELLIPSIS)
        checked.append(_checked(turn, length, status, problems, ends=ends))
    return DebateCheck(tuple(checked), unlimited)


def _listed(value: object) -> list[Any]:
    """A saved list (the evidence in a debate's params, or supplied in its result), or none."""
    return value if isinstance(value, list) else []


def _checked(
    turn: Turn, length: int | None, status: str, problems: list[str], *, ends: bool
) -> TurnCheck:
    said = " ".join([*turn.flags, turn.note or ""])
    undeclared = tuple(
        p
        for p in problems
        if _ANY_RULE not in said
        and not any(word in said for word in _DECLARED_BY[p.split(":", 1)[0]])
    )
    return TurnCheck(
        turn.index,
        turn.role,
        turn.step,
        length,
        turn.limit,
        status,
        tuple(turn.flags),
        tuple(problems),
        undeclared,
        ends,
    )


def speech_problems(text: str, voice: Voice) -> list[str]:
    """What the voice rules find in a speech's TEXT as shown: "kind: detail" each."""
    found: list[str] = []
    manner = opening_manner(text)
    if manner == "labels":
        found.append("echoed labels: it opens with the prompt's labels")
    elif manner == "preamble":
        found.append("preamble: it opens with a chatbot's preamble")
    if labelled_line(text):
        found.append("echoed labels: a line opens with the prompt's labels")
    kinds = {"placeholder": "placeholder", "narration": "narration", "copied": "copied"}
    for sentence in sentences(text):  # as the engine reads them: quotations whole
        problem = sentence_problem(sentence, voice)
        if problem:
            found.append(f"{kinds[problem]}: {sentence.strip()[:60]!r}")
    quoted = over_quoted(text, voice)
    if quoted:
        found.append(quoted)
    language = foreign(text, voice.language)
    drift = drift_point(text, voice.language, final=True)
    if language:
        found.append(f"language: in {language}")
    elif drift:
        found.append(f"language: changes into {drift[1]}")
    reason = degeneracy(text)
    if reason:
        found.append(f"degenerate: {reason}")
    return found


def hollow_fields(data: dict[str, Any]) -> list[str]:
    """The prose fields of a saved structured reply that say nothing, read without its
    schema: a field named as prose (reasoning, summary, …) of one word (two 字), or any
    string that repeats one phrase."""
    found: list[str] = []

    def walk(value: Any, where: str, prose: bool) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{where}.{key}".lstrip("."), bool(_PROSE_KEYS.search(str(key))))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, f"{where}.{i}", prose)
        elif isinstance(value, str):
            if prose and says_nothing(value):
                found.append(f"{where} says nothing: {value!r}")
            elif degeneracy(value):
                found.append(f"{where} repeats one phrase")

    walk(data, "", False)
    return found
