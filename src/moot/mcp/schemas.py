"""The tools' input schemas, made from moot's own declarations: the settings of a debate
(`DebateSettings`, `RunSettings`), of a tournament (`TournamentSettings`) and every
format's parameters (`formats.parameters()`), so a parameter or a setting declared there
reaches the tools with no change here."""

from __future__ import annotations

from typing import Any

from moot.config import MAX_PARALLEL, RunSettings
from moot.debates.settings import DebateSettings
from moot.formats import NAMES, SharedParameter, get_format, parameters
from moot.tournaments.judge import SIDES
from moot.tournaments.plan import MAX_MODELS, MAX_MOTION_CHARS, MAX_MOTIONS, MAX_REF_CHARS
from moot.tournaments.settings import TournamentSettings, help_of, keyword_of

# What pydantic's schema carries that a tool's caller has no use for: the page's and the
# command line's own words about a field.
_FRONT_END = ("page", "option", "keyword", "metavar", "label", "title", "default")
# The run settings a tool takes, with what each does (RunSettings says it in comments).
RUN_FIELDS = {
    "max_tokens": "cap on tokens per speech (shorter, faster debates)",
    "n_ctx": "context window per loaded model (default: what the rulebook needs, up to the "
    "model's trained context)",
    "gpu_layers": "layers to offload to the GPU (0 = CPU, -1 = all)",
    "call_timeout_s": "seconds one model call may take",
    "think_budget": "tokens a speaker may think before it speaks (0 = thinking off)",
    "one_model_at_a_time": "load each model for its turns and unload it after",
    "dry_run": "scripted models: checks the set-up and the prompts, loads no model",
}
# The run settings `moot tournament` takes: each debate of it runs with them.
TOURNAMENT_RUN = ("max_tokens", "n_ctx", "gpu_layers", "call_timeout_s", "dry_run")
MAX_WAIT = 600.0  # seconds one wait_debate call may wait
DEBATE_ID = {
    "type": "string",
    "minLength": 1,
    "maxLength": 300,
    "description": "a saved debate: its id, a unique prefix of one, or `last`",
}


def _plain(spec: dict[str, Any]) -> dict[str, Any]:
    """A field's JSON Schema without the front ends' words, null left out (not giving a
    parameter is how its default is asked for)."""
    spec = {k: v for k, v in spec.items() if k not in _FRONT_END}
    choices = spec.pop("anyOf", None)
    if choices:
        typed = [c for c in choices if c.get("type") != "null"]
        spec = {**(typed[0] if len(typed) == 1 else {"anyOf": typed}), **spec}
    if isinstance(spec.get("items"), dict):
        spec["items"] = _plain(spec["items"])
    spec.pop("format", None)  # pydantic's "path": a path is a string
    return spec


def _parameter(shared: SharedParameter, among: tuple[str, ...] = NAMES) -> dict[str, Any]:
    """One format parameter: its type as its first format (of AMONG) declares it, its range
    where every format that declares it agrees (else each format refuses what is out of its
    own), and its help after the names of the formats that take it."""
    formats = [fmt for fmt, _ in shared.declared if fmt in among]
    specs = [
        _plain(get_format(fmt).options.model_json_schema()["properties"][shared.name])
        for fmt in formats
    ]
    spec = dict(specs[0])
    for key in ("minimum", "maximum", "maxItems", "enum"):
        if any(s.get(key) != spec.get(key) for s in specs[1:]):
            spec.pop(key, None)
    spec["description"] = f"{shared.help()} (formats: {', '.join(formats)})"
    return spec


def start_debate() -> dict[str, Any]:
    """`start_debate`'s input: a debate's settings as `moot run` takes them."""
    settings = DebateSettings.model_json_schema()["properties"]
    run = RunSettings.model_json_schema()["properties"]
    props: dict[str, Any] = {
        "motion": {
            **_plain(settings["motion"]),
            "description": "the motion, or a bare topic (worded as the format words it)",
        },
        "format": {"type": "string", "enum": list(NAMES), "description": "the debate format"},
        "model": {
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
            "description": "every seat's model (catalog id, hf:OWNER/REPO/FILE.gguf, a .gguf "
            "path, another tool's model such as ollama:NAME); several for the formats that "
            "seat one model each (challenge, adversarial). Default: moot's default model",
        },
        "roles": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": 'a seat\'s model, by seat (e.g. {"judge": "gemma3-270m"})',
        },
        "temperatures": {
            "type": "object",
            "additionalProperties": _plain(settings["temperatures"]["additionalProperties"]),
            "description": "a seat's temperature, by seat",
        },
        "lang": {**_plain(settings["lang"]), "description": "auto (by the motion), en or zh"},
        "seed": {**_plain(settings["seed"]), "description": "seed of every draw and sample"},
    }
    for name, what in RUN_FIELDS.items():
        props[name] = {**_plain(run[name]), "description": what}
    for name, shared in parameters().items():
        props[name] = _parameter(shared)
    return _object(props, required=["motion"])


def _object(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def wait_debate() -> dict[str, Any]:
    return _object(
        {
            "id": {"type": "string", "minLength": 1, "description": "the id start_debate gave"},
            "seconds": {
                "type": "number",
                "minimum": 0,
                "maximum": MAX_WAIT,
                "description": "the longest this call waits for the debate to end (default 20)",
            },
        },
        required=["id"],
    )


def by_id() -> dict[str, Any]:
    return _object({"id": DEBATE_ID}, required=["id"])


def get_debate() -> dict[str, Any]:
    return _object(
        {
            "id": DEBATE_ID,
            "speeches": {
                "type": "boolean",
                "description": "every speech too, as Markdown, after the document (default true)",
            },
        },
        required=["id"],
    )


def list_debates() -> dict[str, Any]:
    return _object(
        {
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1000,
                "description": "the most recent this many (default 50)",
            }
        }
    )


def list_models() -> dict[str, Any]:
    return _object(
        {
            "all": {
                "type": "boolean",
                "description": "also the catalog's models that are not installed (default "
                "false: only those that can debate now)",
            }
        }
    )


def judge_debate() -> dict[str, Any]:
    return _object(
        {
            "id": DEBATE_ID,
            "judges": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": MAX_PARALLEL,
                "description": "the models that judge the saved debate again",
            },
            "dry_run": {"type": "boolean", "description": "scripted judges, nothing loads"},
        },
        required=["id", "judges"],
    )


def start_tournament() -> dict[str, Any]:
    """`start_tournament`'s input: the models, the motions, the tournament's settings as
    they are declared once (`TournamentSettings`, by their keywords in `moot.tournament`),
    the run settings `moot tournament` takes, and the two-sided formats' parameters."""
    declared = TournamentSettings.model_json_schema()["properties"]
    run = RunSettings.model_json_schema()["properties"]
    ref = {"type": "string", "minLength": 1, "maxLength": MAX_REF_CHARS}
    props: dict[str, Any] = {
        "models": {
            "type": "array",
            "items": ref,
            "minItems": 2,
            "maxItems": MAX_MODELS,
            "description": "the models to rank (as start_debate's model)",
        },
        "motions": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_MOTION_CHARS},
            "minItems": 1,
            "maxItems": MAX_MOTIONS,
            "description": "the motions every pair of models debates (English or Chinese)",
        },
        "format": {
            "type": "string",
            "enum": list(SIDES),
            "description": "the format of its debates: a two-sided one",
        },
        "lang": {
            **_plain(DebateSettings.model_json_schema()["properties"]["lang"]),
            "description": "auto (by the motions), en or zh",
        },
    }
    for name in TournamentSettings.model_fields:
        props[keyword_of(name)] = {**_plain(declared[name]), "description": help_of(name)}
    for name in TOURNAMENT_RUN:
        props[name] = {**_plain(run[name]), "description": RUN_FIELDS[name]}
    for name, shared in parameters().items():
        if set(shared.formats) & set(SIDES):
            props[name] = _parameter(shared, tuple(SIDES))
    return _object(props, required=["models", "motions"])


TOURNAMENT_ID = {
    "type": "string",
    "minLength": 1,
    "maxLength": 300,
    "description": "a tournament: the id start_tournament gave, a unique prefix, or `last`",
}


def wait_tournament() -> dict[str, Any]:
    schema = wait_debate()
    schema["properties"]["id"] = {**TOURNAMENT_ID}
    schema["properties"]["seconds"]["description"] = (
        "the longest this call waits for the tournament to end (default 20)"
    )
    return schema


def get_tournament() -> dict[str, Any]:
    return _object({"id": TOURNAMENT_ID}, required=["id"])


def resume_tournament() -> dict[str, Any]:
    """`resume_tournament`'s input: the tournament, and how many of its debates are played
    at once (its plan fixes everything else), as the tournament's settings declare it."""
    declared = TournamentSettings.model_json_schema()["properties"]
    props: dict[str, Any] = {"id": {**TOURNAMENT_ID}}
    for name in ("parallel", "batch"):
        props[keyword_of(name)] = {**_plain(declared[name]), "description": help_of(name)}
    return _object(props, required=["id"])
