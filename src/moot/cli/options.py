"""Options shared by `moot run` and `moot tournament`, each defined once; the formats'
parameters as options, made from the formats' own declarations."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

import typer

from moot.config import RunSettings, validate_params
from moot.formats import NAMES, SharedParameter, parameters
from moot.formats.base import bare

Many = list[str] | None

FormatName = Annotated[str, typer.Option("--format", help=f"Format: {', '.join(NAMES)}.")]
Lang = Annotated[str, typer.Option(help="Prompt pack: auto (by the motion), en or zh.")]
Seed = Annotated[int | None, typer.Option(help="Seed for every draw and sample (0–4294967295).")]
GpuLayers = Annotated[int, typer.Option(help="Layers to offload to the GPU (0 = CPU, -1 = all).")]
NCtx = Annotated[
    int | None,
    typer.Option(
        help="Context window per loaded model (default: what the debate's rulebook needs, "
        "up to the model's trained context)."
    ),
]
MaxTokens = Annotated[
    int | None, typer.Option(help="Cap on tokens per speech (shorter, faster debates).")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON, for scripts.")]
CallTimeout = Annotated[float, typer.Option(help="Seconds one model call may take.")]
Batch = Annotated[
    bool,
    typer.Option(
        "--batch",
        help="With --parallel N: play the N debates in this process on models loaded once, "
        "each step of a model decoding every debate's next tokens in one llama.cpp batch. "
        "Meant for a GPU, where reading the weights bounds decoding; on a small CPU, worker "
        "processes are faster (docs: Performance). A debate's words then depend on those "
        "beside it.",
    ),
]
DryRun = Annotated[
    bool,
    typer.Option(
        help="Run with scripted models: checks the set-up and the prompts without loading a model."
    ),
]


def run_settings(**values: object) -> RunSettings:
    """The run settings from their options; a bad value is named by its option."""
    return validate_params(RunSettings, **values)


# -- the formats' parameters ------------------------------------------------------------


class FormatOptions:
    """A command that takes the parameters of some formats as options, each made from its
    declaration (`formats.base.param`) whenever the command line is built: its type, its
    option, its help after the names of the formats that take it, repeatable where it is a
    tuple. They come after the option AFTER, in the formats' order; the command gets those
    given as keywords (`**params`: a repeated one as a tuple, none that was not given)."""

    def __init__(
        self, command: Callable[..., Any], formats: Callable[[], Sequence[str]], after: str
    ) -> None:
        self.command, self.formats, self.after = command, formats, after
        self.__name__ = command.__name__
        self.__qualname__ = command.__qualname__
        self.__module__ = command.__module__
        self.__doc__ = command.__doc__
        self.__annotations__: dict[str, Any] = {}  # the signature's are evaluated already

    def parameters(self) -> dict[str, SharedParameter]:
        return parameters(self.formats())

    @property
    def __signature__(self) -> inspect.Signature:
        own = inspect.signature(self.command, eval_str=True)
        kept = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
        at = next(i for i, p in enumerate(kept) if p.name == self.after) + 1
        added = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=a)
            for name, a in ((n, _option(s)) for n, s in self.parameters().items())
        ]
        taken = {p.name for p in kept}
        clash = [p.name for p in added if p.name in taken]
        if clash:
            raise TypeError(f"a format parameter has the name of an option: {clash[0]}")
        ordered = [*kept[:at], *added, *kept[at:]]
        kind = inspect.Parameter.KEYWORD_ONLY
        return own.replace(parameters=[p.replace(kind=kind) for p in ordered])

    def __call__(self, **values: Any) -> Any:
        names = self.parameters()
        given = {
            name: tuple(value) if isinstance(value, list) else value
            for name, value in values.items()
            if name in names and value is not None
        }
        rest = {name: value for name, value in values.items() if name not in names}
        return self.command(**rest, **given)


def format_options(
    formats: Callable[[], Sequence[str]] = lambda: NAMES, *, after: str
) -> Callable[[Callable[..., Any]], FormatOptions]:
    """Decorate a command that ends in `**params`: the parameters of FORMATS (a function, so
    a format's new parameter is an option without a change here) become its options."""
    return lambda command: FormatOptions(command, formats, after)


def _option(shared: SharedParameter) -> Any:
    """The option of one parameter: its type as typer takes it, none by default."""
    first = shared.first
    kind = _plain(bare(first.annotation))
    help = described(shared) + (" (repeatable)" if first.repeatable else "") + "."
    info = typer.Option(first.option, help=help, metavar=first.metavar, show_default=False)
    return Annotated[kind | None, info]


# A help that states its default already: "(5–10; 7.5)", "(…; the default)".
_STATES_DEFAULT = re.compile(r"; [^;()]+\)$|the default")


def described(shared: SharedParameter) -> str:
    """A parameter's help as its option shows it: each format's, with the default where the
    declaration does not say it (`number of rounds (default: decision 1, challenge 2)`)."""
    declared = dict(shared.declared)
    parts = []
    for names, text in shared.groups():
        defaults = {fmt: declared[fmt].default for fmt in names}
        given = {fmt: d for fmt, d in defaults.items() if d not in (None, (), [], "")}
        if given and not _STATES_DEFAULT.search(text):
            if len(set(map(str, defaults.values()))) == 1:
                text += f" (default: {next(iter(given.values()))})"
            else:
                text += " (default: " + ", ".join(f"{f} {d}" for f, d in given.items()) + ")"
        parts.append(f"{', '.join(names)}: {text}")
    return ". ".join(parts)


def _plain(kind: Any) -> Any:
    """A parameter's type as a command-line value: a choice as text (the format names what
    is allowed when it is wrong), a tuple as a list of its items."""
    if get_origin(kind) in (tuple, list):
        return list[_plain(get_args(kind)[0])]  # type: ignore[misc]
    if get_origin(kind) is Literal or kind not in (int, float, bool, Path):
        return str
    return kind
