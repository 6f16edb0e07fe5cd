"""What a model reference names, and where its files lie on disk: no network, no hashing."""

from __future__ import annotations

import difflib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moot.config import models_dir
from moot.errors import ModelIntegrityError, ModelNotFoundError, MootError, Phrase, UsageError
from moot.inference.chat_template import chat_template_problem
from moot.inference.remote import is_remote_ref
from moot.models import gguf_check, hub_cache, registry, stores
from moot.models.catalog import CHAT_FORMATS, HfSource, ModelCard, PypiSource, load_catalog
from moot.models.hub_cache import HubFile

HF_PREFIX = "hf:"
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")  # a scheme: a URL, never a file name
REF_HINT = (
    "name a catalog id (`moot models list`), hf:OWNER/REPO/FILE.gguf, a registered name, "
    f"a .gguf path, or a model of another tool's store: {stores.REF_FORMS}"
)
# Architectures whose chat format is unambiguous. "llama" is not here: SmolLM, Llama 2/3 and
# Mistral all use it with different formats, and guessing wrong gives garbage silently.
ARCH_FORMATS = {
    "gemma": "gemma",
    "gemma2": "gemma",
    "gemma3": "gemma",
    "qwen2": "chatml",
    "qwen2moe": "chatml",
    "qwen3": "chatml",
    "qwen3moe": "chatml",
}
SUGGESTION_CUTOFF = 0.75  # how like a known name a mistyped one must be to be offered it
Located = tuple[tuple[Path, ...], tuple[str | None, ...]]  # files, and the sha256 each should have


class ModelFileError(ModelIntegrityError, UsageError):
    """A file the user named (a path, a registered name) that is not a usable model: its
    header or its chat templates are refused. Bad input, not a failed download: exit 2."""

    exit_code = 2


@dataclass(frozen=True)
class Target:
    """What a reference names, before anything is looked up on disk."""

    id: str
    card: ModelCard | None = None
    hub: tuple[HubFile, ...] = ()
    path: Path | None = None
    registered: dict[str, Any] | None = None
    store: stores.StoreRef | None = None  # a model of Ollama, LM Studio or llama.cpp's cache

    @property
    def users_own(self) -> bool:
        """Whether the file is one the user brought (a path, a registered name, another
        tool's store), not one moot downloaded: a bad header in it is bad input."""
        return self.path is not None or self.store is not None


def parse_ref(ref: str) -> Target:
    """What REF names: a store's model (ollama:, lmstudio:, llamacpp:), hf: reference,
    catalog id, registered name or path (in that order)."""
    ref = ref.strip()
    if not ref:
        raise UsageError(key="models.locate.model_reference_empty", fix=REF_HINT)
    if is_remote_ref(ref) or _URL.match(ref):
        raise UsageError(key="models.locate.server_url_names_no_local", ref=ref)
    in_store = stores.parse(ref)
    if in_store is not None:
        return Target(id=ref, store=in_store)
    if ref.startswith(HF_PREFIX):
        return Target(id=ref, hub=hub_files(ref))
    catalog = load_catalog()
    if ref in catalog.cards:
        return Target(id=ref, card=catalog.cards[ref])
    entry = registry.load().get(ref)
    if entry is not None:
        return Target(id=ref, path=Path(entry["path"]), registered=entry)
    if ref.endswith(".gguf") or "/" in ref or os.sep in ref or Path(ref).is_file():
        return Target(id=ref, path=Path(ref).expanduser().absolute())
    try:
        catalog.get(ref)  # raises the unknown-model error with its hint
    except ModelNotFoundError as exc:
        raise _with_suggestion(exc, ref, known_names()) from None
    raise AssertionError("unreachable")


def known_names() -> list[str]:
    """Every name a model can be called by here, offline: the catalog's ids, the registered
    names, the hub cache's files and the models of the other tools' stores."""
    listed = [row.ref for row in _listed() if not row.problem]
    return [*load_catalog().cards, *registry.load(), *_cached_refs(), *listed]


def close_match(ref: str, names: Iterable[str]) -> str | None:
    """The name most like REF, as a mistyped one would be, or None when none is close."""
    others = [name for name in dict.fromkeys(names) if name != ref]
    for name in others:  # its store's prefix left out: qwen3:8b for ollama:qwen3:8b
        if name.partition(":")[2] == ref:
            return name
    lower = {name.lower(): name for name in others}
    if ref.lower() in lower:  # a slip of case: Qwen3-8B for qwen3-8b
        return lower[ref.lower()]
    found = difflib.get_close_matches(ref, others, n=1, cutoff=SUGGESTION_CUTOFF)
    return found[0] if found else None


def _with_suggestion(exc: MootError, ref: str, names: Iterable[str]) -> MootError:
    """EXC, its hint led by the closest name to REF where there is one."""
    near = close_match(ref, names)
    if near is not None:
        exc.near = near
        exc.hint = f"did you mean {near}? {exc.hint}".rstrip()
    return exc


def hub_files(ref: str) -> tuple[HubFile, ...]:
    """The hub files an hf:OWNER/REPO/FILE.gguf reference names (every shard of a split)."""
    parts = ref[len(HF_PREFIX) :].split("/")
    if (
        len(parts) < 3
        or not all(parts)
        or any(part in (".", "..") or "\\" in part for part in parts)
        or not parts[-1].endswith(".gguf")
    ):
        raise UsageError(key="models.locate.bad_hub_reference", ref=ref)
    return hub_cache.shards("/".join(parts[:2]), "/".join(parts[2:]))


def find(target: Target) -> Located:
    """The target's files on disk and their expected sha256; ModelNotFoundError if absent."""
    if target.store is not None:
        try:
            return stores.find(target.store)
        except ModelNotFoundError as exc:  # a mistyped name or tag: the store's own, named
            kind = target.store.kind
            near = (row.ref for row in _listed() if row.kind == kind and not row.problem)
            raise _with_suggestion(exc, target.id, near) from None
    pull_hint = f"download it first: `moot models pull {target.id}`"
    if target.path is not None:
        try:
            check_file(target.path, lambda: _missing_path(target))
        except (UsageError, ModelNotFoundError) as exc:
            if target.registered is None:
                raise
            # No file where one was registered: the fix is the name's, not the path's.
            raise exc.hinted(Phrase("models.locate.register_again", name=target.id)) from None
        sha = target.registered.get("sha256") if target.registered else None
        return (target.path,), (sha,)
    if target.card is not None:
        for source in target.card.sources:
            found = _card_files(target.card, source)
            if found is not None:
                return found
        raise ModelNotFoundError(
            key="models.locate.model_not_installed", id=target.id, fix=pull_hint
        )
    paths = [hub_cache.cached_file(f) for f in target.hub]
    files = tuple(p for p in paths if p is not None)
    if len(files) != len(paths):
        missing = ModelNotFoundError(
            key="models.locate.not_local_cache", id=target.id, fix=pull_hint
        )
        raise _with_suggestion(missing, target.id, _cached_refs())
    return files, tuple(hub_cache.etag_sha256(p) for p in files)


def _listed() -> list[stores.Listed]:
    try:
        return list(stores.listed())
    except (MootError, OSError):
        return []


def _cached_refs() -> list[str]:
    try:
        return list(hub_cache.cached_gguf_files())
    except (MootError, OSError):
        return []


def _card_files(card: ModelCard, source: PypiSource | HfSource) -> Located | None:
    if isinstance(source, PypiSource):
        path = pypi_path(card)
        return ((path,), (card.expected_sha256(0),)) if path.is_file() else None
    found = [hub_cache.cached_file(HubFile(source.repo, f, source.revision)) for f in source.files]
    files = tuple(p for p in found if p is not None)
    if len(files) != len(found):
        return None
    wants = tuple(card.expected_sha256(i) or hub_cache.etag_sha256(p) for i, p in enumerate(files))
    return files, wants


def pypi_path(card: ModelCard) -> Path:
    """Where a model assembled from PyPI wheels lives: models_dir()/<id>/<filename>."""
    return models_dir() / card.id / card.filename


def check_file(path: Path, missing: Callable[[], MootError]) -> None:
    """Refuse PATH unless it is a regular file (followed through symlinks), without opening
    it: a folder, a FIFO, a device or a symlink loop gets its own message; MISSING is raised
    when nothing is there."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise ModelNotFoundError(
                key="models.locate.symlink_which_does_not_exist", path=path, path2=os.readlink(path)
            ) from None
        raise missing() from None
    except NotADirectoryError:
        raise missing() from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(key="models.locate.symlink_loop", path=path) from None
        raise UsageError(
            key="models.locate.cannot_read", path=path, value=exc.strerror or exc
        ) from None
    if stat.S_ISDIR(mode):
        raise UsageError(key="models.locate.folder_not_model_file", path=path)
    if not stat.S_ISREG(mode):
        raise UsageError(key="models.locate.not_regular_file_fifo_device", path=path)


def _missing_path(target: Target) -> ModelNotFoundError:
    if target.registered is not None:
        return ModelNotFoundError(
            key="models.locate.file_registered_as_gone",
            id=target.id,
            path=target.path,
            fix=Phrase("models.locate.register_again", name=target.id),
        )
    return ModelNotFoundError(key="models.locate.no_such_model_file", path=target.path)


def chat_format(header: gguf_check.GGUFInfo, target: Target, declared: str | None) -> str:
    """The file's own template, else the declared format, else one its architecture implies.

    Every template the file carries is checked first, whichever format wins: llama-cpp-python
    compiles them all when it loads the file, and renders the file's own for every call.
    """
    if target.registered and declared:
        check_templates(header, used=False)
        return declared  # chosen explicitly at `moot models add`: it beats the file's template
    check_templates(header, used=True)
    if header.chat_template:
        return "template"
    if declared:
        return declared
    arch = header.architecture or "unknown"
    if arch in ARCH_FORMATS:
        return ARCH_FORMATS[arch]
    raise UsageError(
        key="models.locate.gguf_has_no_chat_template",
        id=target.id,
        arch=arch,
        path=header.path,
        value=", ".join(sorted(CHAT_FORMATS - {"template"})),
    )


def check_templates(header: gguf_check.GGUFInfo, *, used: bool) -> None:
    """Refuse a file whose embedded chat templates are broken, or unsafe when moot would use one.

    USED: moot would format chats with the file's own template (no format chosen at
    `moot models add`). A template that does not parse is refused either way: llama.cpp's
    Python binding compiles every embedded template on load and fails on it.
    """
    path = header.path
    intact = "use an intact copy of the model: llama.cpp compiles every chat template a GGUF "
    intact += "carries when it loads it, so no --chat-format gets past this one"
    trusted = (
        "if you trust the weights, name a chat format so the file's template is never used: "
        f"`moot models add NAME {path} --chat-format chatml` "
        f"(one of: {', '.join(sorted(CHAT_FORMATS - {'template'}))})"
    )
    for key, text in header.chat_templates.items():
        if text is None:
            raise ModelIntegrityError(
                key="models.locate.chat_template_not_utf_8",
                path=path,
                key_value=key,
                max_decoded_string=gguf_check.MAX_DECODED_STRING,
                fix=intact,
            )
        problem = chat_template_problem(text, rendered=used and key == gguf_check.TEMPLATE_KEY)
        if problem is None:
            continue
        if problem.kind == "broken":
            raise ModelIntegrityError(
                key="models.locate.chat_template_broken",
                path=path,
                key_value=key,
                detail=problem.detail,
                fix=intact,
            )
        if used and problem.kind == "unsafe":
            raise ModelIntegrityError(
                key="models.locate.chat_template_malicious_unsafe_moot",
                path=path,
                key_value=key,
                detail=problem.detail,
                fix=trusted,
            )
        if used:
            raise ModelIntegrityError(
                key="models.locate.chat_template_cannot_format_conversation",
                path=path,
                key_value=key,
                detail=problem.detail,
                fix=trusted,
            )
