"""Judges measured on debates whose winner the user knows: a JSON Lines file of labelled
debates, each shown to every judge as a transcript, and each judge's (and the jury's)
accuracy, coverage and position bias with their Wilson intervals, overall, per kind and per
language."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from moot.errors import Phrase, UsageError, invalid
from moot.inference.protocol import ChatModel
from moot.prompts import detect_language, load_pack
from moot.records import files
from moot.records.transcript import ModelInfo, Transcript
from moot.tournaments.ballots import judgement_of, read_judge
from moot.tournaments.calibration import _turns, wilson
from moot.tournaments.judge import SIDES
from moot.tournaments.jury import MARGIN, Judgement, pool, weight
from moot.tournaments.settings import BallotSettings

FILE_LIMIT = 50 * files.MIB  # a labelled set: refused before it is read whole
MAX_DEBATES = 10_000
MAX_SPEECHES = 20  # a side's speeches
SPEECH_LIMIT = 20_000  # characters of one speech
RESERVED = ("all", "en", "zh")  # the report's own keys beside the kinds

# A judge's say on one labelled debate, with the sampling seed it is to use. The seam a
# probability ballot plugs into: anything returning a Judgement.
JudgementFn = Callable[[Transcript, int], Judgement]


class LabelledDebate(BaseModel):
    """One debate of a labelled set: both sides' speeches and the winner the user knows."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=200)
    motion: str = Field(min_length=1, max_length=2000)
    language: Literal["en", "zh"] | None = None  # None: from the motion's script
    format: Literal["oxford", "challenge"] = "oxford"
    proposition: list[str] = Field(min_length=1, max_length=MAX_SPEECHES)
    opposition: list[str] = Field(min_length=1, max_length=MAX_SPEECHES)
    winner: Literal["proposition", "opposition", "draw"]
    kind: str | None = Field(default=None, min_length=1, max_length=40)

    @field_validator("proposition", "opposition")
    @classmethod
    def _spoken(cls, said: list[str]) -> list[str]:
        if any(not s.strip() for s in said):
            raise ValueError("a speech is empty")
        if any(len(s) > SPEECH_LIMIT for s in said):
            raise ValueError(f"a speech is over {SPEECH_LIMIT} characters")
        return said

    @field_validator("kind")
    @classmethod
    def _not_reserved(cls, kind: str | None) -> str | None:
        if kind in RESERVED:
            raise ValueError(f"{kind!r} names a figure of the report's own; choose another tag")
        return kind

    @property
    def lang(self) -> str:
        return self.language or detect_language(self.motion)

    def transcript(self, seed: int) -> Transcript:
        """The debate as a judge reads it: the Proposition's speeches first, alternating."""
        (prop, opp), _ = SIDES[self.format]
        return Transcript(
            format=self.format,
            motion=self.motion,
            language=self.lang,
            seed=seed,
            models={prop: ModelInfo(id="labelled"), opp: ModelInfo(id="labelled")},
            turns=_turns(self.format, self.proposition, self.opposition),
        )


_FIX = {
    "winner": Phrase("tournaments.labelled.give_winner"),
    "proposition": Phrase("tournaments.labelled.give_proposition"),
    "opposition": Phrase("tournaments.labelled.give_opposition"),
    "format": Phrase("tournaments.labelled.give_format"),
    "language": Phrase("tournaments.labelled.give_language"),
    "id": Phrase("tournaments.labelled.give_id"),
    "motion": Phrase("tournaments.labelled.give_motion"),
    "kind": Phrase("tournaments.labelled.give_kind"),
}
_NO_SUCH_FIELD = Phrase("tournaments.labelled.remove_field")


def _refused(path: Path, line: int, err: ValidationError) -> UsageError:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "line"
    name = str(first["loc"][0]) if first["loc"] else ""
    fix = _FIX.get(name, _NO_SUCH_FIELD)
    if first["type"] == "missing":
        return UsageError(
            key="tournaments.labelled.field_missing",
            field="labelled",
            path=path,
            line=line,
            name=where,
            fix=fix,
        )
    why = first["msg"][:1].lower() + first["msg"][1:]
    return UsageError(
        key="tournaments.labelled.field_invalid",
        field="labelled",
        path=path,
        line=line,
        name=where,
        why=invalid(first, why),
        fix=fix,
    )


def read_labelled(path: Path) -> list[LabelledDebate]:
    """The labelled debates of PATH, each line checked; a UsageError names the first bad
    line and field, and the fix."""
    text = files.read_text(path, what="labelled debates file", limit=FILE_LIMIT)
    debates: list[LabelledDebate] = []
    seen: set[str] = set()
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(debates) >= MAX_DEBATES:
            raise UsageError(
                key="tournaments.labelled.too_many",
                path=str(path),
                most=MAX_DEBATES,
                field="labelled",
            )
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deep"
            raise UsageError(
                key="tournaments.labelled.not_json",
                path=str(path),
                line=n,
                why=why,
                field="labelled",
            ) from None
        if not isinstance(record, dict):
            raise UsageError(
                key="tournaments.labelled.not_object", path=str(path), line=n, field="labelled"
            )
        try:
            debate = LabelledDebate.model_validate(record)
        except ValidationError as exc:
            raise _refused(path, n, exc) from None
        if debate.id in seen:
            raise UsageError(
                key="tournaments.labelled.id_twice",
                path=str(path),
                line=n,
                id=debate.id,
                field="labelled",
            )
        seen.add(debate.id)
        debates.append(debate)
    if not debates:
        raise UsageError(key="tournaments.labelled.empty", path=str(path), field="labelled")
    return debates


class Figure(BaseModel):
    """A share with its Wilson 95 % interval over N debates (share None: none)."""

    share: float | None
    low: float
    high: float
    n: int


class Verdict(BaseModel):
    """One judge's (or the jury's) say on one labelled debate."""

    debate: str
    outcome: str
    p_proposition: float | None = None


class LabelledFigures(BaseModel):
    """A judge's (or the jury's) figures on the labelled set."""

    judge: str
    accuracy: dict[str, Figure]  # "all", each kind, each language
    position_bias: Figure
    coverage: Figure
    verdicts: list[Verdict] = Field(default_factory=list)


def _figure(k: int, n: int) -> Figure:
    w = wilson(k, n)
    return Figure(share=w.share, low=w.low, high=w.high, n=n)


def position_bias(outcomes: Sequence[str], winners: Sequence[str]) -> Figure:
    """Over the debates labelled with a side and given a side: how far the verdicts lean to
    the side shown first (the Proposition), scaled by the room the labels leave. S is the
    share of verdicts for the first side, B the share of those debates it should win:
    (S − B) / (1 − B) where S ≥ B, else (S − B) / B; +1: always the first side, −1: always
    the second, 0: as often as the labels say. The interval is Wilson's of S, mapped so."""
    pairs = [
        (o, w)
        for o, w in zip(outcomes, winners, strict=True)
        if o in ("proposition", "opposition") and w in ("proposition", "opposition")
    ]
    n = len(pairs)
    if n == 0:
        return Figure(share=None, low=-1.0, high=1.0, n=0)
    s = wilson(sum(o == "proposition" for o, _ in pairs), n)
    base = sum(w == "proposition" for _, w in pairs) / n

    def lean(x: float) -> float:
        if x >= base:
            return (x - base) / (1 - base) if base < 1 else 0.0
        return (x - base) / base if base > 0 else 0.0

    share = lean(s.share or 0.0)
    return Figure(
        share=round(share, 4), low=round(lean(s.low), 4), high=round(lean(s.high), 4), n=n
    )


def figures(
    name: str, debates: Sequence[LabelledDebate], outcomes: Sequence[Judgement]
) -> LabelledFigures:
    """Accuracy over the decided debates (not undecided), overall, per kind and language;
    coverage (the share decided); position bias."""
    rows = list(zip(debates, outcomes, strict=True))

    def accuracy(picked: list[tuple[LabelledDebate, Judgement]]) -> Figure:
        decided = [(d, j) for d, j in picked if j.outcome != "undecided"]
        return _figure(sum(j.outcome == d.winner for d, j in decided), len(decided))

    groups: dict[str, list[tuple[LabelledDebate, Judgement]]] = {"all": rows}
    for kind in sorted({d.kind for d in debates if d.kind}):
        groups[kind] = [(d, j) for d, j in rows if d.kind == kind]
    for lang in sorted({d.lang for d in debates}):
        groups[lang] = [(d, j) for d, j in rows if d.lang == lang]
    return LabelledFigures(
        judge=name,
        accuracy={key: accuracy(group) for key, group in groups.items()},
        position_bias=position_bias([j.outcome for j in outcomes], [d.winner for d in debates]),
        coverage=_figure(sum(j.outcome != "undecided" for j in outcomes), len(outcomes)),
        verdicts=[
            Verdict(debate=d.id, outcome=j.outcome, p_proposition=j.p_proposition) for d, j in rows
        ],
    )


def _read(j: Judgement) -> Judgement:
    """A vote the jury can pool: a sampled verdict (no probability read) counts as
    certain of the side it names, even for a draw; an undecided one is left out."""
    if j.p_proposition is not None or j.outcome == "undecided":
        return j
    p = {"proposition": 1.0, "opposition": 0.0, "draw": 0.5}[j.outcome]
    return Judgement(outcome=j.outcome, p_proposition=p, flipped=j.flipped)


def jury(
    debates: Sequence[LabelledDebate],
    said: Sequence[Sequence[Judgement]],
    margin: float = MARGIN,
) -> list[Judgement]:
    """The jury's judgement on each debate: `jury.pool` of the judges' (SAID: one list a
    judge), each weighted by its accuracy on the other debates of the set (leave-one-out,
    so no debate weighs the votes on itself); undecided within MARGIN of even."""
    right = [[j.outcome == d.winner for d, j in zip(debates, js, strict=True)] for js in said]
    decided = [[j.outcome != "undecided" for j in js] for js in said]
    out = []
    for i in range(len(debates)):
        votes = []
        for r, dec, js in zip(right, decided, said, strict=True):
            n = sum(dec) - dec[i]
            k = sum(a and b for a, b in zip(r, dec, strict=True)) - (r[i] and dec[i])
            votes.append((_read(js[i]), weight(k / n if n else None)))
        out.append(pool(votes, margin))
    return out


def ballot_judgement(
    ref: str, model_for: Callable[[str], ChatModel], ballot: BallotSettings | None = None
) -> JudgementFn:
    """A judge model's tournament ballot as a Judgement: its P(proposition) read as a
    tournament reads it (BALLOT: how; by default pairwise in both orders), undecided on a
    flip or within the margin of even."""
    settings = ballot or BallotSettings()

    def judge(shown: Transcript, seed: int) -> Judgement:
        pack = load_pack(shown.language, "tournament")  # type: ignore[arg-type]
        return judgement_of(
            read_judge(model_for(ref), pack, shown, settings, seed=seed), settings.margin
        )

    return judge


class LabelledReport(BaseModel):
    debates: dict[str, int]  # the set's debates: "all", each kind, each language
    judges: list[LabelledFigures]
    jury: LabelledFigures | None  # None: a single judge, nothing to pool


def measure(
    debates: Sequence[LabelledDebate],
    judges: dict[str, JudgementFn],
    *,
    seed: int,
    margin: float = MARGIN,
    on_judged: Callable[[str, int], None] | None = None,
) -> LabelledReport:
    """Every judge on every labelled debate (debate i at seed SEED + i), then the figures;
    the jury undecided within MARGIN of even."""
    said: list[list[Judgement]] = []
    for name, judge in judges.items():
        mine = []
        for i, d in enumerate(debates):
            mine.append(judge(d.transcript(seed + i), seed + i))
            if on_judged is not None:
                on_judged(name, i + 1)
        said.append(mine)
    rows = [figures(n, debates, s) for n, s in zip(judges, said, strict=True)]
    pooled = figures("jury", debates, jury(debates, said, margin)) if len(said) > 1 else None
    sizes = {"all": len(debates)}
    for key in rows[0].accuracy if rows else ():
        if key != "all":
            sizes[key] = sum(1 for d in debates if key in (d.kind, d.lang))
    return LabelledReport(debates=sizes, judges=rows, jury=pooled)
