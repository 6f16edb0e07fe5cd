"""The page's forms: what each format asks for, and a filled-in form turned into the setup
`moot run` would build from the same choices, its problems named by the field they concern."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from moot.config import param_problems
from moot.debates.settings import (
    DebateSettings,
    DebateSetup,
    check_model_ref,
    check_motion,
    given_twice,
    prepare,
    settings,
    settings_problems,
)
from moot.errors import MootError, Phrase, UsageError
from moot.formats import NAMES, get_format
from moot.formats.base import Format, RunOptions
from moot.prompts import LANGUAGES, detect_language
from moot.web.wire import seat_name
from moot.words import words

FieldErrors = dict[str, "MootError | dict[str, str]"]  # an error, or moot's English words
MAX_MODELS = 8  # model fields the page offers a format that seats one model each
TEXT_LIMIT = 4000  # characters of one text field (a motion's limit); longer is refused


class FormErrors(UsageError):
    """A form with problems, each named by the field it concerns ("form": the whole form)."""

    def __init__(self, fields: FieldErrors) -> None:
        first = next(iter(fields.values()))
        if isinstance(first, MootError):
            super().__init__(first.message, hint=first.hint, key=first.key, **first.values)
        else:
            super().__init__(first["message"], hint=first["hint"])
        self.fields = fields


# -- what the page offers ----------------------------------------------------------------


def formats() -> list[dict[str, Any]]:
    """Each format's seats, default temperatures and parameters, for the form."""
    return [_describe(get_format(name)) for name in NAMES]


def _describe(fmt: Format) -> dict[str, Any]:
    seats = _seats(fmt)
    roles = [r for r in seats.roles if r not in seats.models]
    return {
        "name": fmt.name,
        # The format's and its seats' names in each language the page is shown in.
        "title": {lang: _title(words(lang).say(f"format_{fmt.name}")) for lang in LANGUAGES},
        "seats": {lang: {r: seat_name(fmt.name, lang, r) for r in roles} for lang in LANGUAGES},
        "roles": roles,
        "temperatures": dict(seats.temperatures),
        "models": MAX_MODELS if seats.models else 1,
        "params": params_of(fmt),
        "document": fmt.document,
    }


def _title(text: str) -> str:
    return text[:1].upper() + text[1:]


def params_of(fmt: Format) -> list[dict[str, Any]]:
    """The format's parameters the page offers, as their declarations say: how each is
    typed in, its default and range, its choices, its label in each language."""
    props = fmt.options.model_json_schema().get("properties", {})
    offered = []
    for p in fmt.parameters:
        if not p.page:
            continue
        spec = props.get(p.name, {})
        # A parameter that may be None is an anyOf of its own type and null.
        typed = next((a for a in spec.get("anyOf", []) if a.get("type") != "null"), spec)
        choices = list(p.choices) or None
        kind = "choice" if choices else typed.get("type", "string")
        offered.append(
            {
                "name": p.name,
                "kind": kind,  # number, integer, boolean, choice, array, string
                "default": spec.get("default"),
                "minimum": typed.get("minimum"),
                "maximum": typed.get("maximum"),
                "choices": choices,
                "option": p.option,
                "label": {lang: p.label(lang) for lang in LANGUAGES},
            }
        )
    return offered


def _seats(fmt: Format) -> Any:
    """The format's seats when two models are named (the formats that seat one each name
    them from the models); else its seats with one."""
    for models in (("a", "b"), ()):
        try:
            return fmt.cast(fmt.params(RunOptions(models=models)))
        except UsageError:
            continue
    raise UsageError(key="web.forms.format_has_no_seats_without", name=fmt.name)  # pragma: no cover


# -- a debate ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Read:
    """The form's values, typed; problems reading them go to `errors`."""

    errors: FieldErrors
    values: dict[str, Any]


def debate_setup(form: object, *, dry_run: bool) -> DebateSetup:
    """The setup the form asks for, checked as `moot run` checks it (every field the page
    offers is one of its options); FormErrors names each problem's field."""
    if not isinstance(form, dict):
        raise FormErrors({"form": problem("the form is not an object", "reload the page")})
    read = _read(form, dry_run=dry_run)
    errors = dict(read.errors)
    if read.values:  # its format is known: every value it refuses, beside its field
        _check_each(read.values, errors)
    if errors:
        raise FormErrors(errors)
    try:
        chosen = settings(hint="see moot run --help", options=True, **read.values)
        return prepare(chosen, check_models=not dry_run)
    except MootError as exc:
        raise FormErrors({form_field(exc): page_problem(exc)}) from None


def _check_each(values: dict[str, Any], errors: FieldErrors) -> None:
    """Each value the settings or the format's parameters refuse goes to ERRORS beside its
    field, all at once: `moot run` stops at the first, a form shows them together."""
    try:
        DebateSettings.model_validate(values)
    except ValidationError as exc:
        for found in settings_problems(exc, hint=""):
            errors.setdefault(form_field(found), page_problem(found))
    param_errors(get_format(values["format"]), values["params"], errors)


def param_errors(fmt: Format, params: dict[str, Any], errors: FieldErrors) -> None:
    """Each of PARAMS that FMT's declarations refuse goes to ERRORS beside its field."""
    for found in param_problems(fmt.options, **params):
        errors.setdefault(found.field or "form", page_problem(found))


def page_problem(exc: MootError) -> MootError:
    """EXC as the page says it. A value a setting refuses is shown beside its field, under
    the field's label, so it is said without the command-line option that names it at the
    terminal (`--max-rounds 99 is not allowed` is `99 is not allowed` under "Most rounds")."""
    said = exc.values
    if exc.key == "config.param_not_allowed":
        return UsageError(
            key="web.forms.not_allowed_range",
            field=exc.field,
            value=said["value"],
            why=said["why"],
            low=said["low"],
            high=said["high"],
        )
    if exc.key in (
        "debates.settings.not_allowed",
        "config.param_not_allowed_see_help",
        "tournaments.settings.ballot_not_allowed",
    ):
        fix = said.get("use") or said.get("fix")
        return UsageError(
            key="web.forms.not_allowed",
            field=exc.field,
            value=said["value"],
            why=said["why"],
            # A bound's words, or the tournament's about the ballot; not the help's command
            fix=fix if isinstance(fix, Phrase) else Phrase("web.forms.fix_value"),
        )
    return _plan_problem(exc)


def _plan_problem(exc: MootError) -> MootError:
    """A tournament's plan refused, as the page says it: by its fields, not `--model`."""
    said = exc.values
    if exc.key == "tournaments.plan.tournament_needs_two_more_model":
        return UsageError(key="web.forms.needs_two_models", field=exc.field)
    if exc.key == "tournaments.plan.names_same_model_as":
        return UsageError(
            key="web.forms.same_model", field=exc.field, ref=said["ref"], seen=said["seen"]
        )
    if exc.key == "tournaments.plan.plan_would_debates_over_limit":
        return UsageError(
            key="web.forms.too_many_debates",
            field=exc.field,
            debates=said["debates"],
            max_debates=said["max_debates"],
        )
    return exc


def _read(form: dict[str, Any], *, dry_run: bool) -> _Read:
    errors: FieldErrors = {}
    refuse_repeated(form, errors)
    name = text_at(form.get("format", ""), "format", errors) or "oxford"
    if "format" in errors:
        return _Read(errors, {})
    try:
        fmt = get_format(name)
    except UsageError as exc:
        return _Read({"format": exc}, {})
    motion = text_at(form.get("motion", ""), "motion", errors)
    if "motion" not in errors:
        try:
            check_motion(motion)
        except UsageError as exc:
            errors["motion"] = exc
    models = texts_at(form.get("models", []), "models", errors)[:MAX_MODELS]
    roles = {}
    for role, value in object_at(form.get("roles", {}), "roles", errors).items():
        ref = text_at(value, f"roles.{role}", errors)
        if ref:
            roles[role] = ref
    for field, ref in [
        *((f"models.{i}", r) for i, r in enumerate(models)),
        *((f"roles.{k}", r) for k, r in roles.items()),
    ]:
        if ref and not dry_run:  # a dry run's scripted models take any name
            _check_ref(ref, field, errors)
    temperatures = {}
    for role, value in object_at(form.get("temperatures", {}), "temperatures", errors).items():
        number = number_of(value, f"temperatures.{role}", errors, float)
        if number is not None:
            temperatures[role] = number
    params = read_params(fmt, form.get("params", {}), errors)
    seed = number_of(form.get("seed", ""), "seed", errors, int)
    max_tokens = number_of(form.get("max_tokens", ""), "max_tokens", errors, int)
    lang = text_at(form.get("lang", ""), "lang", errors) or "auto"
    values = {
        "motion": motion,
        "format": fmt.name,
        "models": tuple(m for m in models if m),
        "roles": roles,
        "temperatures": temperatures,
        "lang": lang,
        "seed": seed,
        "params": params,
        "run": {"max_tokens": max_tokens, "dry_run": dry_run},
    }
    return _Read(errors, values)


def read_params(fmt: Format, form: object, errors: FieldErrors) -> dict[str, Any]:
    """The format's parameters the form gave, typed as the page offers them (only those
    given): a list's items one a line, a number as digits or a JSON number, the rest as
    text; problems reading them go to ERRORS."""
    given: dict[str, Any] = {}
    offered = object_at(form, "params", errors)
    for spec in params_of(fmt):
        name = spec["name"]
        field = f"params.{name}"
        value = offered.get(name, "")
        if spec["kind"] == "array":
            text = text_at(value, field, errors)
            lines = tuple(line.strip() for line in text.splitlines() if line.strip())
            given[name] = lines or None
        elif spec["kind"] in ("number", "integer"):
            kind = int if spec["kind"] == "integer" else float
            given[name] = number_of(value, field, errors, kind)
        elif spec["kind"] == "boolean":  # a box ticked: true; left empty: not given
            given[name] = flag_of(value, field, errors) or None
        else:
            given[name] = text_at(value, field, errors).strip() or None
    return {name: value for name, value in given.items() if value is not None}


def _check_ref(ref: str, field: str, errors: FieldErrors) -> None:
    try:
        check_model_ref(ref)
    except MootError as exc:
        errors.setdefault(field, exc)


def form_field(exc: MootError) -> str:
    """The form's field an error concerns, from the setting it names ("form": none, or one
    the page does not offer)."""
    field = exc.field or "form"
    if field.startswith("run."):  # the run settings the page offers sit beside the others
        field = field.removeprefix("run.")
        return field if field == "max_tokens" else "form"
    return field


def language_of(form: dict[str, Any], page: str, *, motion: object = None) -> str:
    """The language a form's problems are said in: its debate's where the form says it (its
    language, else its MOTION's: the form's motion unless given), else the page's (PAGE)."""
    lang = text_of(form.get("lang"))
    if lang in LANGUAGES:
        return lang
    text = text_of(form.get("motion") if motion is None else motion)
    return detect_language(text) if text.strip() else page


def problem(message: str, hint: str) -> dict[str, str]:
    return {"message": message, "hint": hint}


# -- typed values from a form ------------------------------------------------------------
#
# A form is JSON: each field is read as the kind the page sends it (text, a list, an object;
# a number as digits or as a JSON number), and any other kind is a problem named by its
# field, never turned into text. A field left out is not given; null is not a value.


class JSONObject(dict[str, Any]):
    """A JSON object as it was read, with the keys it gave more than once (a plain dict keeps
    the last value of each, the others lost)."""

    repeated: tuple[str, ...] = ()


def json_object(pairs: list[tuple[str, Any]]) -> JSONObject:
    """`json.loads`'s object_pairs_hook: the object, its repeated keys noted."""
    read = JSONObject(pairs)
    if len(read) < len(pairs):
        seen: set[str] = set()
        repeated = []
        for key, _ in pairs:
            if key in seen:
                repeated.append(key)
            seen.add(key)
        read.repeated = tuple(repeated)
    return read


def refuse_repeated(form: object, errors: FieldErrors) -> None:
    """A key given twice anywhere in FORM goes to ERRORS, named by its field: the page's
    forms take each field once, as the command line takes each option once."""
    if not isinstance(form, dict):
        return
    stack: list[tuple[str, dict[str, Any] | list[Any]]] = [("", form)]
    while stack:  # not recursive: a form nested deep is read to its end
        path, value = stack.pop()
        for key in getattr(value, "repeated", ())[:1]:
            exc = given_twice(path, key)
            errors.setdefault(exc.field or "form", exc)
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, inner in items:
            if isinstance(inner, dict | list):
                stack.append((f"{path}.{key}" if path else str(key), inner))


_KINDS = ((bool, "a boolean"), (str, "a string"), (int | float, "a number"))


def kind_of(value: object) -> str:
    """What a JSON value is, as a problem names it."""
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return next((name for kind, name in _KINDS if isinstance(value, kind)), type(value).__name__)


def wrong_kind(value: object, field: str, errors: FieldErrors, expected: str) -> None:
    errors.setdefault(
        field,
        problem(
            f"{field}: {kind_of(value)} given where {expected} is expected",
            f"give {expected}, or leave {field} out",
        ),
    )


def text_at(value: object, field: str, errors: FieldErrors) -> str:
    """VALUE as text (the form's FIELD); another kind goes to ERRORS."""
    if isinstance(value, str):
        return value[: TEXT_LIMIT + 1]  # one over: a text past the limit is still refused by it
    wrong_kind(value, field, errors, "a string")
    return ""


def list_at(value: object, field: str, errors: FieldErrors) -> list[Any]:
    if isinstance(value, list):
        return value
    wrong_kind(value, field, errors, "a list")
    return []


def texts_at(value: object, field: str, errors: FieldErrors) -> list[str]:
    """A list of texts (the form's FIELD, its items FIELD.0, FIELD.1, …)."""
    items = list_at(value, field, errors)
    return [text_at(item, f"{field}.{i}", errors) for i, item in enumerate(items)]


def object_at(value: object, field: str, errors: FieldErrors) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    wrong_kind(value, field, errors, "an object")
    return {}


def text_of(value: object) -> str:
    """VALUE as text where only a guess is asked (the language a form's problems are said
    in): anything but text is none."""
    return value[: TEXT_LIMIT + 1] if isinstance(value, str) else ""


def flag_of(value: object, field: str, errors: FieldErrors) -> bool:
    """VALUE as a box ticked or not (the form's FIELD): true or false, or "" for not
    given; another kind goes to ERRORS."""
    if isinstance(value, bool):
        return value
    if value != "":
        wrong_kind(value, field, errors, "a boolean")
    return False


def number_of(value: object, field: str, errors: FieldErrors, kind: type[Any]) -> Any:
    """VALUE, digits or a JSON number, as KIND (None: not given); a problem goes to ERRORS."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        wrong_kind(value, field, errors, "a number")
        return None
    text = value[: TEXT_LIMIT + 1].strip()
    if not text:
        return None
    try:
        number = kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        errors.setdefault(field, problem(f"{text[:40]!r} is not {what}", "type digits, e.g. 3"))
        return None
    if isinstance(number, float) and number != number:  # NaN: no range holds it
        errors.setdefault(field, problem(f"{text[:40]!r} is not a number", "type digits, e.g. 0.5"))
        return None
    return number
