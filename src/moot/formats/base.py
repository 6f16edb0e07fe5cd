"""What every debate format gives the engine and the front ends: one description each."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, cast, get_args, get_origin

from pydantic import BaseModel, Field

from moot.config import validate_params
from moot.engine.turns import Engine, is_failed
from moot.records.transcript import Transcript
from moot.words import words

# -- parameters -------------------------------------------------------------------------
#
# A format's parameters are the fields of its options model (`Format.options`), each
# declared once with `param(...)`: its type, default and range, and what the front ends show
# of it. The options of `moot run` (and of `moot tournament` and `moot calibrate`) and their
# `--help`, `moot.debate`'s keywords and docstring, the page's forms and the questions asked
# at a terminal are all made from these declarations.

Installed = tuple[tuple[str, int], ...]  # (model id, size in bytes) of each model installed here


def param(
    default: Any,
    help: str,
    *,
    option: str | None = None,
    metavar: str | None = None,
    page: bool = True,
    label: Mapping[str, str] | None = None,
    **constraints: Any,
) -> Any:
    """A format parameter: a field of the format's options model, with its DEFAULT, its
    pydantic CONSTRAINTS (`ge=`, `le=`, `max_length=`: out of range is refused, never
    clamped) and what the front ends show of it. HELP follows the formats' names in
    `moot run --help` and `help(moot.debate)`; OPTION is its command-line option when it is
    not `--field-name`, METAVAR what `--help` shows for its value; PAGE: whether the page's
    form offers it; LABEL: its name on the page (and where `moot run` asks for it), by
    language."""
    shown: dict[str, Any] = {"page": page}
    if option is not None:
        shown["option"] = option
    if metavar is not None:
        shown["metavar"] = metavar
    if label:
        shown["label"] = dict(label)
    return Field(default, description=help, json_schema_extra=shown, **constraints)


# The documents a debate is given (`--evidence`, every format's): files and folders whose
# passages the speakers are shown and cite (moot.evidence). The engine reads them, not the
# format; the adversarial format also shows its text files whole (its own rule).
# (One path named alone is made a tuple of one by `debates.settings.format_params`.)
Documents = tuple[Path, ...]
DOCUMENTS_HELP = "a document or folder of documents to cite (md, txt, html, pdf, docx)"
DOCUMENTS_LABEL = {
    "en": "Evidence on this machine: files or folders, one path a line",
    "zh": "证据（本机的文件或文件夹），每行一个路径",
}


def documents_param(help: str = DOCUMENTS_HELP) -> Any:
    """The `evidence` parameter, as every format declares it."""
    return param((), help, metavar="PATH", label=DOCUMENTS_LABEL)


def keep_sources_param() -> Any:
    """The `keep_sources` parameter, as every format declares it beside `evidence`: the
    debate's folder keeps each document's whole extracted text (the evidence cache), not
    only the passages its turns used."""
    return param(
        False,
        "keep each document's whole extracted text in the debate's folder (by default it "
        "keeps only the passages the speeches were shown or cited)",
        label={
            "en": "Keep the documents' whole text in the debate's folder",
            "zh": "在辩论文件夹中保留文件的全部文本",
        },
    )


@dataclass(frozen=True)
class Parameter:
    """One parameter of a format, as its `param(...)` declares it."""

    name: str
    help: str
    annotation: Any  # the field's type: float, tuple[Path, ...], Literal[...] | None, …
    default: Any
    option: str  # on the command line
    metavar: str | None
    page: bool  # offered on the page's form
    labels: Mapping[str, str]  # language -> its name on the page
    metadata: tuple[Any, ...] = ()  # pydantic's constraints (ge, le, max_length, …)

    @property
    def repeatable(self) -> bool:
        """Given several times (a tuple of values)."""
        return get_origin(bare(self.annotation)) in (tuple, list)

    @property
    def choices(self) -> tuple[Any, ...]:
        """The values a Literal parameter takes; () for any other."""
        kind = bare(self.annotation)
        return get_args(kind) if get_origin(kind) is Literal else ()

    @property
    def bounds(self) -> tuple[Any, Any]:
        """Its range (ge, le); None where it has no such bound."""
        lo = next((m.ge for m in self.metadata if getattr(m, "ge", None) is not None), None)
        hi = next((m.le for m in self.metadata if getattr(m, "le", None) is not None), None)
        return lo, hi

    def label(self, language: str) -> str:
        """Its name on the page and at a terminal, in LANGUAGE (else English, else its own)."""
        return self.labels.get(language) or self.labels.get("en") or self.name.replace("_", " ")


def bare(annotation: Any) -> Any:
    """ANNOTATION without `| None`."""
    args = get_args(annotation)
    if get_origin(annotation) in (Union, UnionType) and type(None) in args:
        rest = tuple(a for a in args if a is not type(None))
        return rest[0] if len(rest) == 1 else Union[rest]  # noqa: UP007
    return annotation


def parameters(options: type[BaseModel]) -> tuple[Parameter, ...]:
    """The parameters an options model declares, in its order."""
    found = []
    for name, info in options.model_fields.items():
        shown = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if not info.description:
            raise TypeError(f"{options.__name__}.{name} has no help: declare it with param(...)")
        found.append(
            Parameter(
                name=name,
                help=info.description,
                annotation=info.annotation,
                default=info.get_default(call_default_factory=True),
                option=str(shown.get("option") or "--" + name.replace("_", "-")),
                metavar=str(shown["metavar"]) if shown.get("metavar") else None,
                page=bool(shown.get("page", True)),
                labels=dict(cast(Mapping[str, str], shown.get("label") or {})),
                metadata=tuple(info.metadata),
            )
        )
    return tuple(found)


class RunOptions:
    """What a front end hands a format: the parameters the caller gave, by name (only those
    given), every --model given, in order, and the models installed here (listed only when
    the format asks: a function, or the list itself)."""

    def __init__(
        self,
        *,
        models: Sequence[str] = (),
        installed: Installed | Callable[[], Installed] = (),
        **given: Any,
    ) -> None:
        self.given = given
        self.models = tuple(models)
        self._installed = installed

    @cached_property
    def installed(self) -> Installed:
        found = self._installed
        return found() if callable(found) else found


def as_given(options: BaseModel, run: RunOptions) -> BaseModel:
    """A format whose params are its options, as given (defaults filled in)."""
    return options


@dataclass(frozen=True)
class Cast:
    """The seats of one debate: roles, default temperatures, personas, models, sides."""

    roles: tuple[str, ...]
    temperatures: Mapping[str, float]
    personas: Mapping[str, str] = field(default_factory=dict)
    # A role's model when the user binds none with --role; None: the --model / default one.
    models: Mapping[str, str] = field(default_factory=dict)
    # The seats that speak for a side, each with what it is called in the third person, in
    # every language of the packs ("proposition", "government", "正方"): such a seat is held
    # to the voice rules of a side (no narrating, no copying another seat's words). A seat
    # left out (a chair, judge, summariser) speaks for no side, and may quote anyone.
    sides: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """One judge's reply at one judging step, with what that step was asked about."""

    reply: BaseModel
    variables: dict[str, Any]  # the step's template variables
    params: BaseModel  # the debate's format parameters


def no_choices(saved: Transcript) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Judging:
    """What `moot judge` asks again of a format: the judge seat's steps whose replies are
    verdicts, the value of a reply that decides (who won, whether the rounds stop), a number
    code derives from it, and the choices the format keeps outside any turn, read back from
    the saved result (under the keys `Engine.keep` kept them by). DOCUMENTS: the judge's
    steps after those that write the format's document (Oxford's brief, the decision's
    sections), which a new judge is not asked again but whose failure leaves the debate
    without its judge's answer all the same (`unjudged`)."""

    steps: tuple[str, ...]
    verdict: Callable[[Reading], object]
    score: Callable[[Reading], float] | None = None
    kept: Callable[[Transcript], dict[str, Any]] = no_choices
    role: str = "judge"
    documents: tuple[str, ...] = ()


def unjudged(transcript: Transcript, judging: Judging) -> bool:
    """Whether a finished debate ended without its judge's answer: the judge's last judging
    step (a turn kept as failed, `engine.turns.is_failed`, or a failure the format's result
    records, `result.failures`: a timeout, a reply never valid) gave none, or a step of its
    document did (`Judging.documents`: the decision's verdict or sections, Oxford's brief)."""
    if any(
        turn.role == judging.role and turn.step in judging.documents and is_failed(turn)
        for turn in transcript.turns
    ):
        return True
    after = 1 << 30  # a step after the rounds (no round) comes last
    asked = [
        (turn.round if turn.round is not None else after, not is_failed(turn))
        for turn in transcript.turns
        if turn.role == judging.role and turn.step in judging.steps
    ]
    failures = (transcript.result or {}).get("failures")
    for failure in failures if isinstance(failures, list) else []:
        if isinstance(failure, dict) and failure.get("role") == judging.role:
            rnd = failure.get("round")
            asked.append((rnd if isinstance(rnd, int) else after, False))
    return bool(asked) and not max(asked, key=lambda a: (a[0], not a[1]))[1]


def reply_field(name: str) -> Callable[[Reading], object]:
    """A verdict that is one field of the judge's reply."""
    return lambda r: getattr(r.reply, name)


def no_outcome(transcript: Transcript, models: Mapping[str, str]) -> str:
    return ""


_SENTENCE_END = re.compile(r"(?<=[.!?])\s|(?<=[。！？])")
GIST = 160  # characters: the most of a model's text an outcome's line quotes


def gist(text: str, limit: int = GIST) -> str:
    """The first sentence of a model's TEXT, on one line, at most LIMIT characters (cut
    with …): what an outcome's line quotes of a verdict."""
    flat = " ".join(text.split())
    end = _SENTENCE_END.search(flat)
    first = flat[: end.start()].strip() if end else flat
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


SAVED_HINT = "pass the transcript.json of a debate moot saved"
MAX_MOTION = 4000  # characters: a motion, or a decision's topic with its context


def plain_motion(text: str, language: str) -> str:
    """The motion as given, its whitespace collapsed."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Format:
    """A debate format: its rulebook's parameters, seats, steps, run and rendered result."""

    name: str
    steps: tuple[str, ...]
    params_type: type[BaseModel]  # how a saved debate's params are rebuilt
    # The parameters a caller sets, one `param(...)` field each: the one place they are
    # declared. A name other formats declare too (`rounds`) has its own range and default
    # here, and the same type and option as theirs.
    options: type[BaseModel]
    cast: Callable[[Any], Cast]  # the seats for these params
    run: Callable[[Engine, str, Any], dict[str, Any]]
    render: Callable[[Transcript], str]
    sample_variables: Callable[[], dict[str, dict[str, Any]]]
    motion: Callable[[str, str], str] = plain_motion  # the motion as the format words it
    document: str = "debate.md"  # file name of the rendered result
    saves_by_default: bool = True  # the decision format is ephemeral unless --out is given
    # The most words (字) of the debate that one prompt can quote, by the rulebook's limits:
    # what sizes the context window when --n-ctx is not given (`context_need`).
    quoted_words: Callable[[Any], int] = lambda params: 2000
    judging: Judging | None = None  # what `moot judge` asks again; None: nothing to re-judge
    # The params from the options as given (validated by `options`, defaults filled in) and
    # the models named: what only the format can check or derive. Default: the options are
    # the params.
    make_params: Callable[[Any, RunOptions], BaseModel] = as_given
    # What a front end calls each seat before the first turn, in a language: the seats a
    # debate with these params shows, by role, in the order they speak. None: every seat of
    # the cast, by the name moot's words give it.
    seat_labels: Callable[[Any, str], Mapping[str, str]] | None = None
    # The debate's outcome in one line of its language, from its transcript: the verdict,
    # the recommendation, the judge's pick ("": none to say). The mapping names each role's
    # model as the front end shows it.
    outcome: Callable[[Transcript, Mapping[str, str]], str] = no_outcome

    def __post_init__(self) -> None:
        parameters(self.options)  # every parameter declared with its help, at import

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        """The parameters a caller may set, in the order they are declared."""
        return parameters(self.options)

    def seats(self, params: Any, language: str) -> dict[str, str]:
        """The seats of a debate with PARAMS in LANGUAGE as a front end names them before
        its first turn: role → label, in the order they speak."""
        if self.seat_labels is not None:
            return dict(self.seat_labels(params, language))
        said = words(language)
        return {r: said.name(r, self.name).replace("_", " ") for r in self.cast(params).roles}

    @property
    def reads(self) -> frozenset[str]:
        """The names of its parameters."""
        return frozenset(self.options.model_fields)

    def params(self, run: RunOptions) -> BaseModel:
        """The params of a debate from what the caller gave: checked against the options'
        declarations (a one-line UsageError names the option and its range, its field
        `params.NAME`), then made by the format."""
        given = {name: value for name, value in run.given.items() if value is not None}
        return self.make_params(validate_params(self.options, **given), run)


# Tokens a word (字) takes at most in the tiny models' tokenizers, with room to spare.
TOKENS_PER_UNIT = {"en": 2.0, "zh": 2.6}
SCAFFOLD_TOKENS = 1536  # a step's own instructions, personas and the record's labels
REPLY_TOKENS = 1800  # the longest reply a step asks for (the Oxford brief's grammar bound)


def context_need(fmt: Format, params: Any, language: str) -> int:
    """The context, in tokens, a debate of FMT with PARAMS in LANGUAGE needs at most: the
    words one prompt can quote, the step's scaffolding and the longest reply."""
    per_unit = TOKENS_PER_UNIT.get(language, TOKENS_PER_UNIT["en"])
    return round(fmt.quoted_words(params) * per_unit) + SCAFFOLD_TOKENS + REPLY_TOKENS
