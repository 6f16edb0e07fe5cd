"""What one debate is asked to be: a validated settings model, checked before anything loads,
and the setup the runner runs. `moot run`, `moot.debate` and tournaments all come through here."""

from __future__ import annotations

import difflib
import os
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.config import Defaults, RunSettings, Seed, config_path, option_of
from moot.errors import Phrase, UsageError, invalid
from moot.formats import get_format, option_name, parameters
from moot.formats.base import MAX_MOTION, Format, RunOptions
from moot.inference.human import HUMAN, HumanConsole, is_human_ref
from moot.inference.scripted import ECHO_FORM
from moot.prompts import Language, resolve_language

Temperature = Annotated[float, Field(ge=0.0, le=2.0)]
# The format parameters a caller gave, by name: only those given (None is not given). Each
# format checks its own against its declarations (`Format.options`), in `prepare`.
FormatParams = dict[str, Any]


class DebateSettings(BaseModel):
    """Everything a caller chooses for one debate. Unknown fields are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    motion: str
    format: str = "oxford"
    models: tuple[str, ...] = ()  # the first is every role's model; some formats take more
    roles: dict[str, str] = Field(default_factory=dict)  # role -> model reference
    temperatures: dict[str, Temperature] = Field(default_factory=dict)
    lang: Literal["auto", "en", "zh"] = "auto"
    seed: Seed | None = None  # None: a fresh random seed, recorded in the transcript
    prompts: Path | None = None  # a prompt pack of one's own: <dir>/<lang>/<format>/<step>.j2
    params: FormatParams = Field(default_factory=dict)
    run: RunSettings = Field(default_factory=RunSettings)


def settings(
    *, hint: str = "see help(moot.debate)", options: bool = False, **values: Any
) -> DebateSettings:
    """DebateSettings from keyword values, or a one-line UsageError naming the field (as its
    command-line option, with `options`)."""
    try:
        return DebateSettings.model_validate(values)
    except ValidationError as exc:
        raise settings_error(exc, hint=hint, options=options) from None


def keyed(given: object, *, field: str, option: str | None = None) -> dict[str, Any]:
    """A setting given role by role (`roles`, `temperatures`) as a dict, from a mapping or
    from what the command line gives: "ROLE=VALUE" texts (the role's case ignored) or
    (role, value) pairs. A role given twice is refused, never the last value winning; the
    error names the field (as OPTION, its command-line option, where given)."""
    if given is None:
        return {}
    if isinstance(given, Mapping):
        return dict(given)
    if isinstance(given, str | bytes) or not isinstance(given, Iterable):
        raise UsageError(
            key="debates.settings.not_mapping_role_value",
            field=field,
            field_value=field,
            given=_shown(given),
        )
    pairs: dict[str, Any] = {}
    for i, item in enumerate(given):
        if isinstance(item, str):
            key, sep, value = item.partition("=")
            key, value = key.strip().lower(), value.strip()
            if not sep or not key or not value:
                if option:
                    raise UsageError(
                        key="debates.settings.not_key_value", field=field, option=option,
                        item=repr(item),
                    )  # fmt: skip
                raise UsageError(
                    key="debates.settings.not_key_value_item",
                    field=f"{field}.{i}",
                    where_value=f"{field}.{i}",
                    item=repr(item),
                )
        elif isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[0], str):
            key, value = item
        else:
            raise UsageError(
                key="debates.settings.not_role_value",
                field=f"{field}.{i}",
                field_value=field,
                i=i,
                item=_shown(item),
            )
        if key in pairs:
            raise given_twice(field, key, option)
        pairs[key] = value
    return pairs


def given_twice(field: str, key: str, option: str | None = None) -> UsageError:
    """The error for KEY given twice in FIELD (a role's setting, a form's object): its first
    value would be lost, the last silently winning."""
    if option:
        return UsageError(
            key="debates.settings.given_twice_2", field=field, option=option, key_value=key
        )
    where = f"{field}: " if field else ""
    path = f"{field}.{key}" if field else key
    return UsageError(
        key="debates.settings.given_twice", field=path, where_value=where, key_value=key
    )


def _use(ctx: dict[str, Any]) -> Phrase | None:
    """The value a bound of pydantic's error context allows, in words of its own."""
    if "ge" in ctx:
        return Phrase("debates.settings.use_at_least", n=ctx["ge"])
    if "gt" in ctx:
        return Phrase("debates.settings.use_above", n=ctx["gt"])
    if "le" in ctx:
        return Phrase("debates.settings.use_at_most", n=ctx["le"])
    if "lt" in ctx:
        return Phrase("debates.settings.use_below", n=ctx["lt"])
    return None


def settings_error(exc: ValidationError, *, hint: str, options: bool = False) -> UsageError:
    """The first problem of a validation error, as the field it concerns and what is wrong."""
    return settings_problems(exc, hint=hint, options=options)[0]


def settings_problems(
    exc: ValidationError, *, hint: str, options: bool = False
) -> list[UsageError]:
    """Every problem of a validation error (a form shows each beside its field)."""
    return [_problem(error, hint=hint, options=options) for error in exc.errors()]


def _problem(error: Any, *, hint: str, options: bool) -> UsageError:
    loc = [str(part) for part in error["loc"]]
    where = _option(loc) if options and loc else ".".join(loc) or "settings"
    field = ".".join(loc) or None
    if error["type"] == "extra_forbidden":
        unknown = UsageError(
            key="debates.settings.unknown_setting", field=field, where_value=where, fix=hint
        )
        unknown.near = _nearest(loc)
        return unknown
    return UsageError(
        key="debates.settings.not_allowed",
        field=field,
        where_value=where if where.endswith("=") else f"{where} ",
        value=_shown(error.get("input")),
        why=invalid(error, error["msg"].lower()),
        use=_use(error.get("ctx", {})) or hint,
    )


# How like a known setting a mistyped one must be to be offered it (as a model's name is).
NEAR = 0.75


def _nearest(loc: list[str]) -> str | None:
    """The setting an unknown one at LOC (`run.dryrun`) most likely meant (`dry_run`), among
    those of the settings it was given in; None where none is close."""
    model: type[BaseModel] = DebateSettings
    for part in loc[:-1]:
        found = model.model_fields.get(part)
        kinds = (get_args(found.annotation) or (found.annotation,)) if found else ()
        models = [k for k in kinds if isinstance(k, type) and issubclass(k, BaseModel)]
        if not models:
            return None
        model = models[0]
    if not loc:
        return None
    close = difflib.get_close_matches(loc[-1], list(model.model_fields), n=1, cutoff=NEAR)
    return close[0] if close else None


def _shown(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_OPTIONS = {"models": "--model", "roles": "--role", "temperatures": "--temperature"}


def _option(loc: list[str]) -> str:
    """The command-line option a settings field comes from."""
    head = loc[0]
    if head == "motion":
        return "the motion"
    if head == "temperatures" and len(loc) > 1:
        return f"--temperature {loc[1]}="
    if head == "params" and len(loc) > 1:
        return option_name(loc[1])
    if head == "run" and len(loc) > 1:
        return option_of(RunSettings, loc[1])
    return _OPTIONS.get(head, "--" + head.replace("_", "-"))


@dataclass
class DebateSetup:
    """A debate ready to run: its format and validated params, its seats, where it is saved."""

    format: Format
    motion: str
    language: Language
    seed: int
    params: BaseModel
    out_dir: Path | None  # None: nothing is written anywhere
    default_model: str | None = None
    role_models: dict[str, str] = field(default_factory=dict)
    temperatures: dict[str, float] = field(default_factory=dict)
    prompts_root: Path | None = None
    run: RunSettings = field(default_factory=RunSettings)
    # Who answers for a seat a person holds (`--role ROLE=human`): a terminal, a script on
    # standard input, the page. None: nobody here can be asked.
    human: HumanConsole | None = None
    # The day a resumed debate began (ISO), from its record; None: it begins today.
    began: str | None = None
    # The form of a dry run's scripted replies (inference.scripted.ECHO_FORM); a saved
    # debate's own where it is replayed or resumed.
    echo: int = ECHO_FORM
    # The motion as it was given, before the format worded it ("cities should ban cars" for
    # "This House Believes That cities should ban cars"): what its folder is named after,
    # from every front end (history.claim). Empty: the motion.
    asked: str = ""
    # The documents given with --evidence, as absolute paths: read into passages before any
    # model loads (debates.evidence). Empty: none.
    evidence: tuple[Path, ...] = ()
    # Whether the debate's folder keeps each document's whole extracted text (`evidence/`,
    # the cache of paragraphs and index) rather than only the passages its turns used.
    keep_sources: bool = False

    def __post_init__(self) -> None:
        self.asked = self.asked or self.motion
        # A setup made from a format's params alone (a tournament's debate): its documents.
        self.evidence = self.evidence or documents_in(self.params)
        self.keep_sources = self.keep_sources or getattr(self.params, "keep_sources", False)


def installed_models() -> tuple[tuple[str, int], ...]:
    """(model id, size in bytes) of every model installed here that can debate, for formats
    that pick one (an embedding model in another tool's store is listed, never picked)."""
    from moot.models import listing

    return tuple((m.id, m.size or 0) for m in listing.list_models() if m.installed and m.usable)


def refuse_unknown(names: Iterable[str], *, prefix: str = "") -> None:
    """A one-line UsageError for the first of NAMES that no format declares as a parameter
    (its field: PREFIX and the name)."""
    known = parameters()
    for name in names:
        if name not in known:
            raise UsageError(
                key="debates.settings.unknown_parameter",
                field=prefix + name,
                name=name,
                known=", ".join(known),
            )


def format_params(fmt: Format, given: FormatParams, models: tuple[str, ...] = ()) -> BaseModel:
    """The format's own params from what the caller gave, validated by the format. A parameter
    the format does not read is refused, not ignored; None (or nothing, for one given several
    times) is a parameter not given."""
    given = {name: value for name, value in given.items() if value not in (None, (), [])}
    refuse_unknown(given, prefix="params.")
    for name in given:
        if name not in fmt.reads:
            reads = ", ".join(sorted(p.option for p in fmt.parameters))
            if not reads:
                raise UsageError(
                    key="debates.settings.option_not_for_format_drop",
                    field=f"params.{name}",
                    option=option_name(name),
                    format=fmt.name,
                )
            raise UsageError(
                key="debates.settings.option_not_for_format",
                field=f"params.{name}",
                option=option_name(name),
                format=fmt.name,
                options=reads,
            )
    if "evidence" in given:  # absolute, so a resumed debate finds them from anywhere
        given["evidence"] = given_documents(given["evidence"])
    elif given.get("keep_sources") is True:
        raise UsageError(
            key="debates.settings.keep_sources_without_evidence", field="params.keep_sources"
        )
    # The store is listed only if the format asks (challenge's --effort picks a model).
    return fmt.params(RunOptions(models=models, installed=installed_models, **given))


def check_motion(motion: str) -> None:
    """A motion says something: a letter or a digit (not `-`, not zero-width spaces), and
    no more than a few paragraphs."""
    if not motion.strip():
        raise UsageError(key="debates.settings.motion_empty", field="motion")
    if not any(ch.isalnum() for ch in motion):
        raise UsageError(key="debates.settings.motion_has_no_words", field="motion", motion=motion)
    if len(motion) > MAX_MOTION:
        raise UsageError(
            key="debates.settings.motion_characters_over_limit",
            field="motion",
            n_motion=len(motion),
            max_motion=MAX_MOTION,
        )


def check_model_ref(ref: str) -> None:
    """A model reference names a model that is here (its header checked; no weights loaded
    or hashed) or a well-formed server URL (no connection is opened)."""
    from moot import models

    if not ref.strip():
        raise UsageError(key="debates.settings.model_reference_empty")
    if is_human_ref(ref):
        return  # a person takes the seat: no model to check
    models.check(ref)


def _ref(ref: str) -> str:
    """A model reference as it is recorded: "human" for a seat a person holds."""
    return HUMAN if is_human_ref(ref) else ref


def prepare(
    chosen: DebateSettings, *, out_dir: Path | None = None, check_models: bool = True
) -> DebateSetup:
    """Check what only the format can check (its params, its roles), before any model loads;
    and that each model named is here, unless not CHECK_MODELS (a dry run from the page,
    whose scripted models take any name)."""
    fmt = get_format(chosen.format)
    check_motion(chosen.motion)
    language = resolve_language(chosen.lang, chosen.motion)
    refs = tuple(_ref(m) for m in chosen.models)
    params = format_params(fmt, chosen.params, refs)
    cast = fmt.cast(params)
    if len(chosen.models) > 1 and not cast.models:
        raise UsageError(
            key="debates.settings.format_takes_one_model", field="models.1", name=fmt.name
        )
    for what, given in (("roles", chosen.roles), ("temperatures", chosen.temperatures)):
        unknown = sorted(set(given) - set(cast.roles))
        if unknown:
            raise UsageError(
                key="debates.settings.unknown_role_format",
                field=f"{what}.{unknown[0]}",
                what=what,
                unknown=unknown[0],
                name=fmt.name,
                roles=", ".join(cast.roles),
            )
    for ref in (*chosen.models, *chosen.roles.values()) if check_models else ():
        check_model_ref(ref)  # last: it reads model headers
    return DebateSetup(
        format=fmt,
        motion=fmt.motion(chosen.motion, language),
        asked=chosen.motion,
        language=language,
        seed=chosen.seed if chosen.seed is not None else random.SystemRandom().randrange(2**31),
        params=params,
        out_dir=out_dir,
        default_model=refs[0] if refs else None,
        role_models={role: _ref(ref) for role, ref in chosen.roles.items()},
        temperatures=dict(chosen.temperatures),
        prompts_root=chosen.prompts,
        run=chosen.run,
        # The adversarial format's params hold the text it shows whole, not the paths.
        evidence=documents_in(params) or given_documents(chosen.params.get("evidence") or ()),
        keep_sources=chosen.params.get("keep_sources") is True,
    )


def documents_in(params: BaseModel) -> tuple[Path, ...]:
    """The documents a format's params name (`--evidence`, made absolute by
    `format_params`); none where its params keep none (the adversarial format's hold the
    text it shows whole: its setup is given them by `prepare`)."""
    found = getattr(params, "evidence", ())
    if isinstance(found, tuple) and all(isinstance(p, Path) for p in found):
        return found
    return ()


def given_documents(given: object) -> tuple[Path, ...]:
    """The --evidence paths: one named alone, or several; each made absolute, checked to
    exist and each folder walked for its count of files, before anything is read. A value
    of another kind is left to the format's own check, which names it."""
    if isinstance(given, str | Path):
        given = (given,)
    if not isinstance(given, list | tuple) or not all(isinstance(p, str | Path) for p in given):
        return given  # type: ignore[return-value]
    from moot.errors import concerning
    from moot.evidence.sources import find

    with concerning("params.evidence"):
        find([Path(p) for p in given])  # a path is named as it was given
    return tuple(Path(p).expanduser().absolute() for p in given)


# -- the config file's defaults ----------------------------------------------------------


def read_defaults() -> Defaults:
    """The defaults in config.toml (none when there is no such file); a file that is not TOML,
    or holds an unknown key or a bad value, is a one-line UsageError naming the file and key."""
    import tomllib

    from moot.records.files import TEXT_LIMIT, read_text

    path = config_path()
    if not os.path.lexists(path):
        return Defaults()
    text = read_text(path, what="config file", limit=TEXT_LIMIT)
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(
            key="debates.settings.config_not_toml", path=str(path), why=str(exc)
        ) from None
    try:
        return Defaults.model_validate(table)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "?"
        if first["type"] == "extra_forbidden":
            known = ", ".join(Defaults.model_fields)
            raise UsageError(
                key="debates.settings.config_unknown_key", path=str(path), name=key, known=known
            ) from None
        raise UsageError(
            key="debates.settings.config_not_allowed",
            path=str(path),
            name=key,
            value=_shown(first.get("input")),
            why=invalid(first, first["msg"].lower()),
        ) from None


def with_defaults(
    chosen: DebateSettings, defaults: Defaults, *, lang_given: bool
) -> DebateSettings:
    """CHOSEN with what its caller left out taken from DEFAULTS: the language (unless one
    was given), the token cap, and the models, when none was named at all (the config's
    `roles` for the seats this format has)."""
    update: dict[str, Any] = {}
    if not lang_given and defaults.lang is not None:
        update["lang"] = defaults.lang
    if chosen.run.max_tokens is None and defaults.max_tokens is not None:
        update["run"] = chosen.run.model_copy(update={"max_tokens": defaults.max_tokens})
    if not chosen.models and not chosen.roles:
        models = (defaults.model,) if defaults.model else ()
        if models:
            update["models"] = models
        if defaults.roles:
            fmt = get_format(chosen.format)
            seats = fmt.cast(format_params(fmt, chosen.params, models)).roles
            update["roles"] = {r: m for r, m in defaults.roles.items() if r in seats}
    return chosen.model_copy(update=update) if update else chosen
