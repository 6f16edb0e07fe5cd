"""moot as a library: debates and tournaments from Python, with the CLI's defaults and checks.

Everything a caller passes is validated before any model loads; a mistake raises a
`MootError` naming the setting. Models a debate loads for itself are released when it
ends; a `ModelPool` holds them across debates instead.
"""

from moot.api.debates import (
    Debate,
    DebateStopped,
    ModelPool,
    ModelSource,
    Result,
    debate,
    debate_settings,
)
from moot.api.tournaments import TournamentResult, tournament

__all__ = [
    "Debate",
    "DebateStopped",
    "ModelPool",
    "ModelSource",
    "Result",
    "TournamentResult",
    "debate",
    "debate_settings",
    "tournament",
]
