"""A griffe extension for the Python API pages: `moot.debate`'s and `moot.tournament`'s
docstrings end in the list of the format parameters, which `moot.api.debates` makes from
the formats' declarations when it is imported. The page, read from the source, gets the
same list from the same function."""

from __future__ import annotations

from typing import Any

import griffe

_DEBATE = "moot.api.debates.debate"
_TOURNAMENT = "moot.api.tournaments.tournament"


class FormatParameters(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is None or obj.path not in (_DEBATE, _TOURNAMENT):
            return
        from moot.api.debates import parameters_doc
        from moot.api.tournaments import TOURNAMENT_PARAMETERS

        lead = f"{TOURNAMENT_PARAMETERS}\n\n" if obj.path == _TOURNAMENT else ""
        obj.docstring.value = f"{obj.docstring.value}\n\n{lead}{parameters_doc()}"
