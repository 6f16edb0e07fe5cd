"""A tournament's plan: the motions, the models, and the schedule of debates: every
pair of models on every motion twice, sides swapped, each judged by outsiders."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from math import comb
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot._version import __version__
from moot.config import Seed, validate_params
from moot.engine.turns import derive_seed
from moot.errors import Phrase, UsageError, concerning, invalid
from moot.formats.base import Format
from moot.prompts import Language, load_pack, resolve_language
from moot.records import files
from moot.tournaments.calibration import MAX_CONTROLS
from moot.tournaments.judge import SIDES
from moot.tournaments.settings import MAX_JUDGES, MAX_SWAPS, BallotSettings

# What one tournament may hold: far more than a person would plan, far less than a typo.
MAX_MODELS = 100
MAX_MOTIONS = 1000
MAX_MOTION_CHARS = 1000  # one motion: one line, a sentence or two
MAX_DEBATES = 10_000
MAX_BOOTSTRAP = 100_000
MAX_REF_CHARS = 1000  # a model reference: a path, a catalog id or a server URL


Ref = Annotated[str, Field(min_length=1, max_length=MAX_REF_CHARS)]  # a model reference


class Motion(BaseModel):
    text: str = Field(max_length=2 * MAX_MOTION_CHARS)  # as the format words it
    language: Language


class Pairing(BaseModel):
    """One scheduled debate: who sits where, on which motion, judged by whom."""

    # Its folder under debates/: a plain name, never a path out of the tournament.
    id: str = Field(pattern=r"^[0-9]+-[\w.-]+$", max_length=200)
    motion: int = Field(ge=0)  # index into the plan's motions
    proposition: Ref
    opposition: Ref
    swap: str = Field(max_length=200)  # shared by the two debates of a swap pair
    seed: Seed  # shared by a swap pair too: the pair differs only in who sits where
    judges: list[Ref] = Field(min_length=1, max_length=MAX_JUDGES)
    self_judged: bool  # every judge debated in it: no other judge was available


class TournamentPlan(BaseModel):
    moot_version: str = __version__
    format: str
    models: list[Ref] = Field(min_length=2, max_length=MAX_MODELS)
    motions: list[Motion] = Field(min_length=1, max_length=MAX_MOTIONS)
    judges: list[Ref] = Field(max_length=MAX_JUDGES)
    # What each reference named when planned: a model file's sha256, or a server URL.
    identities: dict[str, str] = Field(default_factory=dict)
    seed: Seed
    params: dict[str, Any]  # the format's validated parameters
    options: dict[str, Any] = Field(default_factory=dict)  # max_tokens, n_ctx, gpu_layers, …
    debates: list[Pairing] = Field(min_length=1, max_length=MAX_DEBATES)
    # adaptive: `debates` is the plan so far, and tournaments/adaptive.py adds the next one.
    schedule: str = Field(default="round-robin", pattern="^(round-robin|adaptive)$")
    budget: int | None = Field(default=None, ge=2, le=MAX_DEBATES)  # adaptive: at most this
    # Control debates of each kind, made from the finished debates (calibration.py); 0: none,
    # as in a plan written before controls were.
    controls: int = Field(default=0, ge=0, le=MAX_CONTROLS)
    # How each judge's ballot is read; a plan written before ballots were read as
    # probabilities resumes with today's defaults.
    ballot: BallotSettings = Field(default_factory=BallotSettings)


class _Counts(BaseModel):
    """The counts a caller chooses, with their ranges (a bad one is named by its option)."""

    model_config = ConfigDict(extra="forbid")

    swaps: int = Field(default=1, ge=1, le=MAX_SWAPS)
    bootstrap: int = Field(default=1000, ge=0, le=MAX_BOOTSTRAP)
    seed: Seed = 0
    controls: int = Field(default=0, ge=0, le=MAX_CONTROLS)


def check_counts(
    *,
    swaps: int = 1,
    bootstrap: int = 1000,
    seed: int | None = None,
    controls: int | None = None,
) -> None:
    """--swaps, --bootstrap, --seed and --controls in their ranges, or a one-line
    UsageError."""
    given: dict[str, Any] = {"swaps": swaps, "bootstrap": bootstrap}
    for name, value in (("seed", seed), ("controls", controls)):
        if value is not None:
            given[name] = value
    try:
        validate_params(_Counts, **given)
    except UsageError as exc:  # the tournament's own settings, not a format's parameters
        exc.field = exc.field and exc.field.removeprefix("params.")
        raise


def control_languages(motions: Sequence[Motion]) -> list[str]:
    """The languages controls can be made in: those with two motions or more, since an
    off-the-motion control takes one side from a debate on another motion."""
    texts: dict[str, set[str]] = {}
    for m in motions:
        texts.setdefault(m.language, set()).add(m.text)
    return [language for language, seen in texts.items() if len(seen) >= 2]


def with_controls(plan: TournamentPlan, controls: int | None) -> TournamentPlan:
    """The plan with its control debates of each kind: CONTROLS, or by default a tenth of
    its debates (at least 4, at most MAX_CONTROLS), none where its motions cannot make
    them; CONTROLS given where they cannot is a UsageError."""
    check_counts(controls=controls)
    usable = bool(control_languages(plan.motions))
    if controls is None:
        planned = plan.budget or len(plan.debates)
        controls = min(MAX_CONTROLS, max(4, planned // 10)) if usable else 0
    elif controls and not usable:
        raise UsageError(
            key="tournaments.plan.controls_needs_two_motions_more",
            field="controls",
            controls=controls,
        )
    return plan.model_copy(update={"controls": controls})


def count_debates(models: int, motions: int, swaps: int) -> int:
    """How many debates a plan of MODELS on MOTIONS with SWAPS swap pairs holds."""
    return comb(models, 2) * motions * swaps * 2


def check_size(models: Sequence[str], judges: Sequence[str], motions: int, swaps: int) -> None:
    """A plan moot can run: bounded models, judges, motions and debates, before any is made."""
    check_counts(swaps=swaps)
    for option, field, refs, limit, fewer in (
        ("--model", "models", models, MAX_MODELS, "rank fewer models in one tournament"),
        ("--judge", "judges", judges, MAX_JUDGES, "a smaller panel judges as well"),
    ):
        with concerning(field):
            check_refs(option, refs, limit, fewer)
    if motions > MAX_MOTIONS:
        raise UsageError(
            key="tournaments.plan.motions_over_limit",
            field="motions",
            motions=motions,
            max_motions=MAX_MOTIONS,
        )
    debates = count_debates(len(models), motions, swaps)
    if debates > MAX_DEBATES:
        raise UsageError(
            key="tournaments.plan.plan_would_debates_over_limit",
            debates=debates,
            max_debates=MAX_DEBATES,
        )


def check_refs(option: str, refs: Sequence[str], limit: int, fewer: str) -> None:
    """At most LIMIT references for OPTION, none empty or too long to be one."""
    if len(refs) > limit:
        raise UsageError(
            key="tournaments.plan.given_times_over_limit",
            option=option,
            n_refs=len(refs),
            limit=limit,
            fix=fewer,
        )
    for ref in refs:
        if not ref.strip():
            raise UsageError(key="tournaments.plan.empty_2", option=option)
        if len(ref) > MAX_REF_CHARS:
            raise UsageError(
                key="tournaments.plan.characters_long_over_limit",
                option=option,
                n_ref=len(ref),
                max_ref_chars=MAX_REF_CHARS,
            )


def two_sided(fmt: Format) -> tuple[str, str]:
    """The format's two opposing seats, or a usage error for a format without them."""
    if fmt.name not in SIDES:
        raise UsageError(
            key="tournaments.plan.format_has_no_two_opposing",
            field="format",
            name=fmt.name,
            sides=" or ".join(SIDES),
        )
    return SIDES[fmt.name][0]


def slug(ref: str) -> str:
    """A model reference as a debate folder names it: its file's stem, plain characters."""
    tail = ref.rstrip("/").split("/")[-1].split("#")[-1].removesuffix(".gguf")
    return "".join(c if c.isalnum() or c in "-._" else "-" for c in tail)[:32] or "model"


def schedule(
    models: Sequence[str],
    n_motions: int,
    *,
    seed: int,
    judges: Sequence[str] = (),
    identity: Callable[[str], str] = str,
    swaps: int = 1,
) -> list[Pairing]:
    """Every motion × every pair of models × `swaps` swap pairs: two debates each, the
    same seed, sides swapped.

    A debate's judges are those of `judges` (default: the models themselves) that took
    no part in it; when none is left, all of them judge and the debate is self-judged.
    `identity` maps a reference to what it names, so two spellings of one file match.
    """
    panel = list(judges) or list(models)
    out: list[Pairing] = []
    for m in range(n_motions):
        for i, j in combinations(range(len(models)), 2):
            a, b = models[i], models[j]
            seats = {identity(a), identity(b)}
            outside = [ref for ref in panel if identity(ref) not in seats]
            for s in range(swaps):
                swap = f"m{m + 1}-{i + 1}-{j + 1}" + (f"-{s + 1}" if swaps > 1 else "")
                out += [
                    Pairing(
                        id=f"{len(out) + k + 1:03d}-motion{m + 1}-{slug(p)}-vs-{slug(o)}",
                        motion=m,
                        proposition=p,
                        opposition=o,
                        swap=swap,
                        seed=derive_seed(seed, "tournament", swap),
                        judges=outside or panel,
                        self_judged=not outside,
                    )
                    for k, (p, o) in enumerate(((a, b), (b, a)))
                ]
    return out


def read_motions(
    path: Path, fmt: Format, lang: str = "auto", *, what: str = "--motions file"
) -> list[Motion]:
    """The motions of a file, one a line (blank lines and # comments skipped), each worded
    by the format in its own language (by its script, unless `lang` names one)."""
    text = files.read_text(path, what=what, limit=files.TEXT_LIMIT)
    lines = [
        (f"line {number} of the {what} {path}", line)
        for number, line in enumerate(text.split("\n"), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise UsageError(key="tournaments.plan.holds_no_motion", what=what, path=path)
    if len(lines) > MAX_MOTIONS:
        raise UsageError(
            key="tournaments.plan.holds_motions_over_limit",
            what=what,
            path=path,
            n_lines=len(lines),
            max_motions=MAX_MOTIONS,
        )
    return [_word(text, where, fmt, lang) for where, text in lines]


def word_motions(texts: Sequence[str], fmt: Format, lang: str = "auto") -> list[Motion]:
    """Each motion worded by the format in its own language (by its script, unless `lang`
    names one)."""
    if len(texts) > MAX_MOTIONS:
        raise UsageError(
            key="tournaments.plan.motions_over_limit_2", n_texts=len(texts), max_motions=MAX_MOTIONS
        )
    return [_word(text, f"motion {i + 1}", fmt, lang) for i, text in enumerate(texts)]


def _word(text: str, where: str, fmt: Format, lang: str) -> Motion:
    """One motion, checked (some words, one line's length) and worded by the format."""
    if not isinstance(text, str):
        raise UsageError(key="tournaments.plan.not_text", where_value=where)
    words = " ".join(text.split())
    if not words:
        raise UsageError(key="tournaments.plan.empty", where_value=where)
    if len(words) > MAX_MOTION_CHARS:
        raise UsageError(
            key="tournaments.plan.characters_over_limit",
            where_value=where,
            n_words=len(words),
            max_motion_chars=MAX_MOTION_CHARS,
        )
    if not any(ch.isalnum() for ch in words):
        raise UsageError(key="tournaments.plan.has_no_letters_digits", where_value=where)
    language = resolve_language(lang, words)
    return Motion(text=fmt.motion(words, language), language=language)


def identity(ref: str) -> str:
    """What a reference names, offline: a server URL as given, else the file's sha256."""
    from moot.inference.remote import is_remote_ref
    from moot.models import store

    if is_remote_ref(ref):
        return ref
    resolved = store.resolve(ref)
    return resolved.sha256 or str(resolved.path.resolve())


def checked_identity(ref: str) -> str:
    """What a reference names on a dry run: checked as a real run would check it (header,
    chat template; nothing hashed, nothing loaded), told apart by its file."""
    from moot import models

    found = models.check(ref)
    return ref if found is None else str(found.path.resolve())


def dry_identity(ref: str) -> str:
    """What a reference names on a dry run, which loads no model: as `checked_identity`,
    but a catalog model that is not installed here stands for itself (its id). Anything
    else that names no model (a typo, a path to nothing, another tool's model it does not
    have) is refused as on a run: it can only be a mistake."""
    from moot.errors import ModelNotFoundError
    from moot.models.catalog import load_catalog

    try:
        return checked_identity(ref)
    except ModelNotFoundError:
        if ref in load_catalog().cards:
            return ref
        raise


def make_plan(
    fmt: Format,
    models: Sequence[str],
    motions: list[Motion],
    *,
    params: BaseModel,
    seed: int,
    judges: Sequence[str] = (),
    options: dict[str, Any] | None = None,
    identify: Callable[[str], str] = str,
    swaps: int = 1,
) -> TournamentPlan:
    """The whole schedule; refuses fewer than two distinct models, a one-sided format, or a
    plan larger than moot runs."""
    two_sided(fmt)
    check_size(models, judges, len(motions), swaps)
    check_counts(seed=seed)
    if len(models) < 2:
        raise UsageError(key="tournaments.plan.tournament_needs_two_more_model", field="models")
    keys: dict[str, str] = {}
    for option, field, refs in (("--model", "models", models), ("--judge", "judges", judges)):
        seen: dict[str, str] = {}
        for ref in refs:
            if ref not in keys:
                with concerning(field):
                    keys[ref] = identify(ref)
            if keys[ref] in seen:
                raise UsageError(
                    key="tournaments.plan.names_same_model_as",
                    field=field,
                    option=option,
                    ref=ref,
                    seen=seen[keys[ref]],
                )
            seen[keys[ref]] = ref
    for language in sorted({m.language for m in motions}):
        check_packs(fmt, language)
    return TournamentPlan(
        format=fmt.name,
        models=list(models),
        motions=motions,
        judges=list(judges),
        identities=keys,
        seed=seed,
        params=params.model_dump(mode="json"),
        options=options or {},
        debates=schedule(
            models, len(motions), seed=seed, judges=judges, identity=keys.__getitem__, swaps=swaps
        ),
    )


def check_packs(fmt: Format, language: Language) -> None:
    """The format's pack and the verdict step render, before any model is loaded."""
    from moot.tournaments.ballots import sample_variables

    load_pack(language, fmt.name).validate(fmt.steps, fmt.sample_variables())
    steps = sample_variables()
    load_pack(language, "tournament").validate(tuple(steps), steps)


def check_plan(plan: TournamentPlan) -> None:
    """A plan read back holds together: a two-sided format, its params and run settings
    valid, every debate's motion, seats and judges among the plan's own, no id twice."""
    from moot.config import RunSettings
    from moot.formats import get_format

    fmt = get_format(plan.format)
    two_sided(fmt)
    for name, schema, data in (
        ("params", fmt.params_type, plan.params),
        ("options", RunSettings, plan.options),
    ):
        try:
            schema.model_validate(data)
        except ValidationError as exc:
            raise UsageError(
                key="tournaments.plan.invalid", problem=problem(exc, prefix=name)
            ) from None
    models, refs = set(plan.models), {*plan.models, *plan.judges}
    seen: set[str] = set()
    for i, p in enumerate(plan.debates):
        where = f"debates.{i}"
        if p.id in seen:
            raise UsageError(key="tournaments.plan.id_there_twice", where_value=where, id=p.id)
        seen.add(p.id)
        if p.motion >= len(plan.motions):
            raise UsageError(
                key="tournaments.plan.motion_there_no_motion", where_value=where, motion=p.motion
            )
        for seat in ("proposition", "opposition"):
            if getattr(p, seat) not in models:
                raise UsageError(
                    key="tournaments.plan.not_one_plan_s_models", where_value=where, seat=seat
                )
        if p.proposition == p.opposition:
            raise UsageError(key="tournaments.plan.model_debates_itself", where_value=where)
        if any(ref not in refs for ref in p.judges):
            raise UsageError(key="tournaments.plan.judges_not_one_plan_s", where_value=where)
    if plan.schedule == "adaptive" and (plan.budget or 0) < max(
        len(plan.models), len(plan.debates)
    ):
        raise UsageError(key="tournaments.plan.budget_fewer_debates_than_plan")


def problem(exc: ValidationError, *, prefix: str = "") -> Phrase:
    """`debates.3.seed: input should be …`: a validation error's first problem, in a line."""
    first = exc.errors()[0]
    where = ".".join(str(part)[:40] for part in (*([prefix] if prefix else []), *first["loc"]))
    message = " ".join(first["msg"].split())[:200]
    why = invalid(first, f"{message[:1].lower()}{message[1:]}")
    if not where:
        return Phrase("tournaments.plan.problem_in_file", why=why)
    return Phrase("tournaments.plan.problem", where_value=where, why=why)
