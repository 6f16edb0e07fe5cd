"""moot: structured debates between local language models, fully offline.

    >>> import moot
    >>> result = moot.debate("This House Believes That cities should ban cars", seed=7)
    >>> print(result.markdown)

The public names load on first use: importing moot imports neither llama.cpp nor the hub
client. `moot.models` lists, pulls and resolves models; `moot.Debate` runs one debate step
by step; `moot.tournament` ranks models as debaters.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from moot._version import __version__

# name -> the module that defines it
_PUBLIC = {
    "debate": "moot.api",
    "Debate": "moot.api",
    "DebateStopped": "moot.api",
    "Result": "moot.api",
    "ModelPool": "moot.api",
    "tournament": "moot.api",
    "TournamentResult": "moot.api",
    "judge": "moot.api.rejudge",
    "calibrate": "moot.api.calibration",
    "RunSettings": "moot.config",
    "MootError": "moot.errors",
    "UsageError": "moot.errors",
    "ModelNotFoundError": "moot.errors",
}
_MODULES = ("events", "models")

__all__ = ["__version__", *_PUBLIC, *_MODULES]

if TYPE_CHECKING:
    from moot import events as events
    from moot import models as models
    from moot.api import Debate as Debate
    from moot.api import DebateStopped as DebateStopped
    from moot.api import ModelPool as ModelPool
    from moot.api import Result as Result
    from moot.api import TournamentResult as TournamentResult
    from moot.api import debate as debate
    from moot.api import tournament as tournament
    from moot.api.calibration import calibrate as calibrate
    from moot.api.rejudge import judge as judge
    from moot.config import RunSettings as RunSettings
    from moot.errors import ModelNotFoundError as ModelNotFoundError
    from moot.errors import MootError as MootError
    from moot.errors import UsageError as UsageError


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
    elif name in _MODULES:
        value = importlib.import_module(f"moot.{name}")
    else:
        raise AttributeError(f"module 'moot' has no attribute {name!r}")
    globals()[name] = value  # once loaded, found without this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
