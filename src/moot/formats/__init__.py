"""The debate formats: each a params model and a `run(engine, …)` that reads like its rulebook."""

from __future__ import annotations

import importlib

from moot.errors import UsageError
from moot.formats.base import Format

NAMES = ("oxford", "decision", "challenge", "adversarial")


def get_format(name: str) -> Format:
    """The format called NAME, or a one-line error listing the ones there are."""
    if name not in NAMES:
        raise UsageError(
            f"unknown format {name!r}", hint=f"choose one of: {', '.join(NAMES)}", field="format"
        )
    module = importlib.import_module(f"moot.formats.{name}")
    found: Format = module.FORMAT
    return found
