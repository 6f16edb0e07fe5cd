"""A griffe extension for the Python API pages: `moot.debate`'s docstring ends in the list
of the format parameters, which `moot.api.debates` makes from the formats' declarations
when it is imported. The page, read from the source, gets the same list from the same
function."""

from __future__ import annotations

from typing import Any

import griffe

_DEBATE = "moot.api.debates.debate"


class FormatParameters(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.path == _DEBATE and obj.docstring is not None:
            from moot.api.debates import parameters_doc

            obj.docstring.value = f"{obj.docstring.value}\n\n{parameters_doc()}"
