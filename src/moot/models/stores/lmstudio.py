"""LM Studio's models folder, read in place: `<publisher>/<model>/<file>.gguf`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from moot.errors import ModelNotFoundError, UsageError
from moot.models.stores.base import (
    Found,
    Listed,
    StoreRef,
    Unreadable,
    either,
    entries,
    is_gguf,
    kind_of,
    offered,
    refuse,
    unique,
    with_shards,
)

KIND, PREFIX, TITLE = "lmstudio", "lmstudio:", "LM Studio"


def roots() -> list[Path]:
    """LM Studio's models folder, and the one older installs kept."""
    home = Path.home()
    return unique([home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"])


def parse(body: str, ref: str) -> StoreRef:
    """`PUBLISHER/MODEL[/FILE.gguf]`: names inside the models folder, never a way out of it."""
    parts = tuple(body.split("/"))
    if (
        len(parts) not in (2, 3)
        or any(not p or p in (".", "..") or "\\" in p or "\0" in p for p in parts)
        or (len(parts) == 3 and not is_gguf(parts[2]))
    ):
        raise UsageError(key="models.stores.lmstudio.bad_lm_studio_reference", ref=ref)
    return StoreRef(KIND, PREFIX + "/".join(parts), parts, "/".join(parts[:2]))


def get_hint(ref: StoreRef) -> str:
    return (
        f"download it in LM Studio (or `lms get {ref.name}`); "
        "`moot models list` shows the models moot found"
    )


def mismatch_hint(ref: StoreRef) -> str:
    return "the file changed since moot checked it; `moot models verify` hashes it again"


def remove_hint(ref: StoreRef) -> str:
    return "delete it in LM Studio, or delete its folder yourself"


def find(ref: StoreRef) -> Found:
    """The model's files (every part of a split one); ModelNotFoundError when no models
    folder holds it, UsageError when its folder names several models and REF no file."""
    hint = get_hint(ref)
    looked = roots()
    for root in looked:
        folder = root.joinpath(*ref.parts[:2])
        kind = kind_of(folder)
        if kind == "missing":
            continue
        if kind != "dir":
            raise refuse(folder, kind, hint=hint)
        if len(ref.parts) == 3:
            return _file(folder / ref.parts[2], ref)
        return _file(_only_model(folder, ref), ref)
    where = either(looked)
    raise ModelNotFoundError(
        key="models.stores.lmstudio.not_lm_studio_s_models",
        ref=ref.ref,
        where_value=where,
        fix=hint,
    )


def _file(path: Path, ref: StoreRef) -> Found:
    hint = get_hint(ref)
    kind = kind_of(path)
    if kind == "missing":
        raise ModelNotFoundError(
            key="models.stores.lmstudio.there_no", ref=ref.ref, path=path, fix=hint
        )
    if kind != "file":
        raise refuse(path, kind, hint=hint)
    files = with_shards(path, what=ref.ref, hint=hint)
    return Found(files, (None,) * len(files))


def _only_model(folder: Path, ref: StoreRef) -> Path:
    try:
        models = offered(entries(folder))
    except Unreadable as exc:
        raise UsageError(key="models.stores.lmstudio.unreadable", reason=exc.said) from None
    if not models:
        raise ModelNotFoundError(
            key="models.stores.lmstudio.holds_no_gguf_model",
            ref=ref.ref,
            folder=folder,
            fix=get_hint(ref),
        )
    if len(models) > 1:
        names = ", ".join(name for name, _, _ in models)
        raise UsageError(
            key="models.stores.lmstudio.holds_models",
            ref=ref.ref,
            n_models=len(models),
            names=names,
            models=models[0][0],
        )
    return models[0][1]


def scan() -> Iterator[Listed]:
    """Every model the models folders hold; the folder's own name when it holds one model,
    else one row per file; what cannot be read is a row saying so."""
    seen: set[str] = set()
    for root in roots():
        if kind_of(root) == "missing":
            continue
        for parts, folder, problem in _folders(root):
            name = "/".join(parts)
            if problem:
                ref = PREFIX + ("/".join([*parts, "*"]) if len(parts) < 2 else name)
                yield Listed(ref, name or str(folder), KIND, problem=problem)
                continue
            for row in _models(folder, parts):
                if row.ref not in seen:
                    seen.add(row.ref)
                    yield row


def _folders(root: Path) -> Iterator[tuple[tuple[str, ...], Path, str]]:
    """(publisher, model), the folder and "" for each model folder; a folder that cannot be
    read is (the parts that lead there, it, why)."""
    try:
        publishers = entries(root)
    except Unreadable as exc:
        yield (), root, exc.reason
        return
    for publisher, pub_path, pub_kind in publishers:
        if publisher.startswith(".") or pub_kind == "file":
            continue
        if pub_kind != "dir":
            yield (publisher,), pub_path, refuse(pub_path, pub_kind, hint="").message
            continue
        try:
            models = entries(pub_path)
        except Unreadable as exc:
            yield (publisher,), pub_path, exc.reason
            continue
        for model, path, kind in models:
            if model.startswith(".") or kind == "file":
                continue
            problem = "" if kind == "dir" else refuse(path, kind, hint="").message
            yield (publisher, model), path, problem


def _models(folder: Path, parts: tuple[str, ...]) -> Iterator[Listed]:
    base = PREFIX + "/".join(parts)
    try:
        models = offered(entries(folder))
    except Unreadable as exc:
        yield Listed(base, "/".join(parts), KIND, problem=exc.reason)
        return
    for name, path, kind in models:
        ref = base if len(models) == 1 else f"{base}/{name}"
        if kind != "file":
            yield Listed(ref, name, KIND, problem=refuse(path, kind, hint="").message)
            continue
        try:
            files = with_shards(path, what=ref, hint="")
        except (ModelNotFoundError, UsageError) as exc:
            yield Listed(ref, name, KIND, problem=exc.message)
            continue
        yield Listed(ref, name, KIND, files, (None,) * len(files))
