"""What every debate format provides to the engine and the CLI."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from moot.engine import Engine
from moot.transcript import Transcript


@dataclass(frozen=True)
class RunOptions:
    """Every `moot run` option a format may read; each format validates its own."""

    min_score: float = 7.5
    max_rounds: int = 5
    rounds: int | None = None
    preset: str | None = None
    positions: tuple[str, ...] = ()
    out_of_scope: tuple[str, ...] = ()
    effort: str | None = None
    models: tuple[str, ...] = ()  # every --model given, in order
    installed: tuple[tuple[str, int], ...] = ()  # (model id, size in bytes) installed here
    yes: bool = False
    interactive: bool = False  # a terminal is attached: a format may ask to confirm
    call_timeout_s: float = 240.0
    continue_from: Path | None = None  # a saved transcript to follow up on


@dataclass(frozen=True)
class Cast:
    """The seats of one debate: roles, default temperatures, personas, models."""

    roles: tuple[str, ...]
    temperatures: Mapping[str, float]
    personas: Mapping[str, str] = field(default_factory=dict)
    # A role's model when the user binds none with --role; None: the --model / default one.
    models: Mapping[str, str] = field(default_factory=dict)


class Format(Protocol):
    """A debate format: its rulebook's parameters, seats, steps, run and rendered result."""

    name: str
    steps: tuple[str, ...]
    saves_by_default: bool  # the decision format is ephemeral unless --out is given
    document: str  # file name of the rendered result, e.g. "debate.md"

    def params(self, options: RunOptions) -> BaseModel: ...

    def motion(self, text: str, language: str) -> str: ...

    def cast(self, params: Any) -> Cast: ...

    def sample_variables(self) -> dict[str, dict[str, Any]]: ...

    def run(self, engine: Engine, motion: str, params: Any) -> dict[str, Any]: ...

    def render(self, transcript: Transcript) -> str: ...
