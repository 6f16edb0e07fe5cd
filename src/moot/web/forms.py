"""The page's forms: what each format asks for, and a filled-in form turned into the setup
`moot run` would build from the same choices, its problems named by the field they concern."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from moot.debates.settings import DebateSetup, check_model_ref, check_motion, prepare, settings
from moot.errors import MootError, UsageError
from moot.formats import NAMES, get_format
from moot.formats.base import Format, RunOptions
from moot.prompts import LANGUAGES, detect_language

FieldErrors = dict[str, dict[str, str]]
MAX_MODELS = 8  # model fields the page offers a format that seats one model each
TEXT_LIMIT = 4000  # characters of one text field (a motion's limit); longer is refused


class FormErrors(UsageError):
    """A form with problems, each named by the field it concerns ("form": the whole form)."""

    def __init__(self, fields: FieldErrors) -> None:
        first = next(iter(fields.values()))
        super().__init__(first["message"], hint=first["hint"])
        self.fields = fields


# -- what the page offers ----------------------------------------------------------------


def formats() -> list[dict[str, Any]]:
    """Each format's seats, default temperatures and parameters, for the form."""
    return [_describe(get_format(name)) for name in NAMES]


def _describe(fmt: Format) -> dict[str, Any]:
    seats = _seats(fmt)
    return {
        "name": fmt.name,
        "roles": [r for r in seats.roles if r not in seats.models],
        "temperatures": dict(seats.temperatures),
        "models": MAX_MODELS if seats.models else 1,
        "params": params_of(fmt),
        "document": fmt.document,
    }


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
                "kind": kind,  # number, integer, choice, array, string
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
    raise UsageError(f"the {fmt.name} format has no seats without models")  # pragma: no cover


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
    if read.errors:
        raise FormErrors(read.errors)
    try:
        chosen = settings(hint="see moot run --help", options=True, **read.values)
        return prepare(chosen)
    except MootError as exc:
        raise FormErrors({form_field(exc): problem(exc.message, exc.hint)}) from None


def _read(form: dict[str, Any], *, dry_run: bool) -> _Read:
    errors: FieldErrors = {}
    name = text_of(form.get("format")) or "oxford"
    try:
        fmt = get_format(name)
    except UsageError as exc:
        return _Read({"format": problem(exc.message, exc.hint)}, {})
    motion = text_of(form.get("motion"))
    try:
        check_motion(motion)
    except UsageError as exc:
        errors["motion"] = problem(exc.message, exc.hint)
    models = [text_of(m) for m in list_of(form.get("models"))][:MAX_MODELS]
    roles = {str(k): text_of(v) for k, v in dict_of(form.get("roles")).items() if text_of(v)}
    for field, ref in [
        *((f"models.{i}", r) for i, r in enumerate(models)),
        *((f"roles.{k}", r) for k, r in roles.items()),
    ]:
        if ref:
            _check_ref(ref, field, errors)
    temperatures = {}
    for role, value in dict_of(form.get("temperatures")).items():
        number = number_of(value, f"temperatures.{role}", errors, float)
        if number is not None:
            temperatures[str(role)] = number
    params = read_params(fmt, form.get("params"), errors)
    seed = number_of(form.get("seed"), "seed", errors, int)
    max_tokens = number_of(form.get("max_tokens"), "max_tokens", errors, int)
    lang = text_of(form.get("lang")) or "auto"
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
    given); problems reading them go to ERRORS."""
    given: dict[str, Any] = {}
    for spec in params_of(fmt):
        name = spec["name"]
        value = dict_of(form).get(name)
        if spec["kind"] == "array":
            lines = tuple(line.strip() for line in text_of(value).splitlines() if line.strip())
            given[name] = lines or None
        elif spec["kind"] in ("number", "integer"):
            kind = int if spec["kind"] == "integer" else float
            given[name] = number_of(value, f"params.{name}", errors, kind)
        else:
            given[name] = text_of(value).strip() or None
    return {name: value for name, value in given.items() if value is not None}


def _check_ref(ref: str, field: str, errors: FieldErrors) -> None:
    try:
        check_model_ref(ref)
    except MootError as exc:
        errors[field] = problem(exc.message, exc.hint)


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


def text_of(value: object) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return text[: TEXT_LIMIT + 1]  # one over: a text past the limit is still refused by it


def list_of(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def dict_of(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def number_of(value: object, field: str, errors: FieldErrors, kind: type[Any]) -> Any:
    text = text_of(value).strip()
    if not text:
        return None
    try:
        number = kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        errors[field] = problem(f"{text[:40]!r} is not {what}", "type digits, e.g. 3")
        return None
    if isinstance(number, float) and number != number:  # NaN: no range holds it
        errors[field] = problem(f"{text[:40]!r} is not a number", "type digits, e.g. 0.5")
        return None
    return number
