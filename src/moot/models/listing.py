"""`moot models list`: every model moot knows or finds here, from its header alone (offline;
nothing is hashed, no weights are read)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from moot.errors import ModelIntegrityError, ModelNotFoundError, MootError
from moot.models import architectures, gguf_check, hub_cache, integrity, locate, registry, stores
from moot.models.catalog import HfSource, Thinks, load_catalog


@dataclass(frozen=True)
class ModelEntry:
    """One row of `moot models list`."""

    id: str
    name: str
    kind: str  # "catalog", "registered", "hf-cache", "ollama", "lmstudio" or "llamacpp"
    installed: bool
    verified: bool | None  # None: present but not checked yet
    size: int | None
    path: Path | None
    is_default: bool = False
    licence: str | None = None
    architecture: str | None = None
    quantisation: str | None = None
    context_length: int | None = None
    loadable: bool | None = None  # whether the bundled llama.cpp knows the architecture
    usable: bool = True  # False: here, but it cannot debate (`reason` says why)
    reason: str = ""
    thinks: Thinks | None = None  # the catalog's word; None: not a catalog model

    @property
    def ready(self) -> bool:
        """Whether it can debate now: its files here, usable, not failing its checksum, of
        an architecture the bundled llama.cpp loads."""
        checked = self.verified is not False and self.loadable is not False
        return self.installed and self.usable and checked


def list_models(*, installed: bool = False) -> list[ModelEntry]:
    """Catalog models (installed or not), registered names, the other GGUFs in the hub cache,
    and the models of Ollama, LM Studio and llama.cpp's cache; with INSTALLED, only those
    that can debate now (`ModelEntry.ready`).

    Offline and without hashing: `verified` reports the stamps an earlier check left. A
    vision projector, an adapter or a later part of a split model is not listed, unless a
    catalog entry or a registered name points at it.
    """
    catalog = load_catalog()
    entries = [
        _entry(
            locate.Target(id=card.id, card=card), card.name, "catalog", card.id == catalog.default
        )
        for card in catalog.cards.values()
    ]
    for name, reg in registry.load().items():
        target = locate.Target(id=name, path=Path(reg["path"]), registered=reg)
        entries.append(_entry(target, name, "registered"))
    in_catalog = {
        (source.repo, name)
        for card in catalog.cards.values()
        for source in card.sources
        if isinstance(source, HfSource)
        for name in source.files
    }
    for ref, (f, _) in hub_cache.cached_gguf_files().items():
        if (f.repo, f.filename) not in in_catalog:
            target = locate.Target(id=ref, hub=locate.hub_files(ref))
            entries.append(_entry(target, f.filename, "hf-cache", found_here=True))
    for row in stores.listed():
        entries.append(_stored(row))
    return [e for e in entries if e is not None and (e.ready or not installed)]


def _entry(
    target: locate.Target,
    name: str,
    kind: str,
    is_default: bool = False,
    *,
    found_here: bool = False,
) -> ModelEntry | None:
    card = target.card
    absent = ModelEntry(target.id, name, kind, False, None, None, None, is_default)
    if card is not None:
        absent = replace(absent, licence=card.licence, thinks=card.thinks)
    try:
        files, expected = locate.find(target)
    except ModelNotFoundError as exc:
        if target.registered is not None:  # its file is gone: the name cannot debate
            return replace(absent, usable=False, reason=exc.message)
        if card is None:
            return absent
        # Not here yet: what the catalog says of the file stands in for its header.
        return replace(
            absent,
            size=sum(card.size) if card.size else None,
            quantisation=card.quantisation,
            context_length=card.context_length,
        )
    except MootError as exc:  # a hub ref file that names no commit, and the like
        return replace(absent, usable=False, reason=exc.message)
    return _present(
        absent,
        files,
        expected,
        context=card.context_length if card else None,
        found_here=found_here,
    )


def _stored(row: stores.Listed) -> ModelEntry | None:
    entry = ModelEntry(row.ref, row.name, row.kind, False, None, row.size, None)
    if row.problem:
        path = row.files[0] if row.files else None
        return replace(
            entry, installed=bool(row.files), path=path, usable=False, reason=row.problem
        )
    return _present(entry, row.files, row.expected, found_here=True)


def _present(
    entry: ModelEntry,
    files: tuple[Path, ...],
    expected: tuple[str | None, ...],
    *,
    context: int | None = None,
    found_here: bool = False,
) -> ModelEntry | None:
    """ENTRY, for a model whose files are here: what its header says, and its stamps. A part
    of another model found while looking around (FOUND_HERE) is left out: None."""
    entry = replace(entry, installed=True, path=files[0])
    try:
        size = sum(p.stat().st_size for p in files)
        header = gguf_check.check(files[0])
    except (OSError, ModelIntegrityError) as exc:
        reason = exc.message if isinstance(exc, MootError) else f"{files[0]}: {exc.strerror}"
        return replace(entry, usable=False, reason=reason)
    unfit = architectures.unfit(header)
    if unfit is not None and unfit.part and found_here:
        return None
    stamps = [integrity.read_stamp(p) for p in files]
    verified: bool | None = None
    if all(stamps):
        verified = all(want in (None, got) for got, want in zip(stamps, expected, strict=True))
    return replace(
        entry,
        verified=verified,
        size=size,
        architecture=header.architecture,
        quantisation=header.quantisation,
        context_length=header.context_length or context,
        loadable=architectures.loadable(header.architecture),
        usable=unfit is None,
        reason=str(unfit.reason) if unfit else "",
    )
