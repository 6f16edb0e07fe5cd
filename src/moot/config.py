"""Settings read from the environment at call time, and where moot keeps its files."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.errors import UsageError, invalid


def data_dir() -> Path:
    """moot's data directory: $MOOT_HOME, else $XDG_DATA_HOME/moot, else ~/.local/share/moot."""
    home = os.environ.get("MOOT_HOME")
    if home:
        return Path(home).expanduser().absolute()
    xdg = Path(os.environ.get("XDG_DATA_HOME") or "").expanduser()
    # The XDG spec: a relative XDG_DATA_HOME is invalid and ignored.
    base = xdg if xdg.is_absolute() else Path.home() / ".local" / "share"
    return base / "moot"


def cache_dir() -> Path:
    """What moot can make again: $MOOT_HOME/cache, else $XDG_CACHE_HOME/moot, else
    ~/.cache/moot. Speakers' KV snapshots spill here, not to the temporary folder, which is
    often a tmpfs: memory, the very thing a spill makes room in."""
    home = os.environ.get("MOOT_HOME")
    if home:
        return Path(home).expanduser().absolute() / "cache"
    xdg = Path(os.environ.get("XDG_CACHE_HOME") or "").expanduser()
    return (xdg if xdg.is_absolute() else Path.home() / ".cache") / "moot"


def models_dir() -> Path:
    """Where models installed from PyPI wheels or registered locally are recorded."""
    return data_dir() / "models"


def debates_dir() -> Path:
    """Where saved debates live, one folder each."""
    return data_dir() / "debates"


def tournaments_dir() -> Path:
    """Where tournaments live, one folder each."""
    return data_dir() / "tournaments"


def resource_path(*parts: str) -> Path:
    """A file shipped with moot: inside the wheel (moot/_data) or, in a checkout, the repo."""
    packaged = Path(__file__).parent / "_data"
    if packaged.is_dir():
        return packaged.joinpath(*parts)
    repo = Path(__file__).resolve().parents[2]
    if parts and parts[0] == "catalog.toml":
        return repo / "models" / "catalog.toml"
    return repo.joinpath(*parts)


def physical_cores() -> int:
    """Physical cores (not hyperthreads) this process may run on: its CPU affinity, counted
    by core where Linux says which logical CPU sits on which core; else the logical count."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1
    cores = set()
    for cpu in allowed:
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            package = (topology / "physical_package_id").read_text().strip()
            core = (topology / "core_id").read_text().strip()
        except OSError:
            return len(allowed) or 1
        cores.add((package, core))
    return len(cores) or 1


# -- settings of one run -----------------------------------------------------------------

# Tokens a speaker may think before it speaks, beside the speech's own budget: enough for a
# plan, not for an essay (Qwen3 runs to thousands when left alone).
THINK_BUDGET = 1024
# The memory a loaded model keeps its speakers' KV snapshots in, in MiB, where the memory
# free cannot be read; else the memory plan sizes it to the machine
# (`models.memory.snapshot_budget`). Beyond it the least recently used is spilled to disk or
# dropped.
SESSION_CACHE_MB = 256

# Seeds are what llama.cpp takes: an unsigned 32-bit number. One rule for debates and tournaments.
MAX_SEED = 2**32 - 1
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]


# The most debates a tournament plays at once (`moot tournament --parallel`).
MAX_PARALLEL = 16


class Decoding(BaseModel):
    """How a debate's tokens were decoded, recorded where that differs from a debate alone in
    its process on every core: PARALLEL debates at once, each in a process of its own that
    decodes on THREADS threads, or (BATCH) all in one process, each step of a model one
    llama.cpp batch holding every debate's next tokens on it (`inference.llama.batch`). A
    replay decodes on those threads too, alone."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    parallel: int = Field(ge=2, le=MAX_PARALLEL)
    threads: int = Field(ge=1, le=4096)
    batch: bool = False


class RunSettings(BaseModel):
    """How a debate runs, whatever its format: the one place these defaults live."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Context window per loaded model; None: what the debate needs (formats.base.context_need),
    # bounded by the smallest trained context of its models.
    n_ctx: int | None = Field(default=None, ge=256, le=262_144)
    gpu_layers: int = Field(default=0, ge=-1, le=10_000)  # layers offloaded to the GPU; -1: all
    max_tokens: int | None = Field(default=None, ge=1, le=32_768)  # cap on tokens a speech
    # Seconds one model call may take: at most a day.
    call_timeout_s: float | None = Field(default=240.0, gt=0, le=86_400, allow_inf_nan=False)
    dry_run: bool = False  # scripted models: checks the set-up and the prompts, loads nothing
    # Tokens a speech may think, beside max_tokens; 0: thinking off where the model allows it.
    think_budget: int = Field(default=THINK_BUDGET, ge=0, le=32_768)
    # Load each model for its seat's turns and unload it after: a debate of models that do
    # not fit in memory together still runs, slower (each load takes seconds).
    one_model_at_a_time: bool = False
    # Set by a tournament that plays debates side by side (never planned: a resume may choose
    # another number); None: alone, on every core.
    decoding: Decoding | None = None


# -- the config file: a user's defaults ----------------------------------------------------

CONFIG_FILE = "config.toml"


def config_path() -> Path:
    """The config file of defaults: config.toml in the data directory."""
    return data_dir() / CONFIG_FILE


class Defaults(BaseModel):
    """What config.toml may set: defaults a command-line option or a keyword overrides. A key
    it does not know is refused, never ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(default=None, min_length=1, max_length=4096)  # every seat's
    roles: dict[str, Annotated[str, Field(min_length=1, max_length=4096)]] = Field(
        default_factory=dict, max_length=64
    )  # role -> model, for the seats the format has
    lang: Literal["auto", "en", "zh"] | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=32_768)


# -- per-format parameters --------------------------------------------------------------

P = TypeVar("P", bound=BaseModel)


# CLI option names of the fields that are not `--field-name`, so errors name what the user
# typed. A format's parameter declares its own (`formats.base.param(option=…)`).
OPTION_NAMES = {"call_timeout_s": "--call-timeout"}


def option_of(cls: type[BaseModel], name: str) -> str:
    """The command-line option of CLS's field NAME: the one it declares, else OPTION_NAMES',
    else `--field-name`."""
    field = cls.model_fields.get(name)
    extra = field.json_schema_extra if field is not None else None
    declared = extra.get("option") if isinstance(extra, dict) else None
    return str(declared or OPTION_NAMES.get(name, "--" + name.replace("_", "-")))


def validate_params(cls: type[P], **values: Any) -> P:
    """Build a params model or raise a one-line UsageError naming the option and its range
    (its field: `params.` and the parameter's name)."""
    try:
        return cls(**values)
    except ValidationError as exc:
        raise param_problem(cls, values, exc.errors()[0]) from None


def param_problems(cls: type[BaseModel], **values: Any) -> list[UsageError]:
    """Every problem VALUES give a params model, each as `validate_params` names the first
    (a form shows each beside its field); none where they build it."""
    try:
        cls(**values)
    except ValidationError as exc:
        return [param_problem(cls, values, error) for error in exc.errors()]
    return []


def param_problem(cls: type[BaseModel], values: Mapping[str, Any], error: Any) -> UsageError:
    """One ERROR of validating CLS with VALUES: the option, the value, why, and its range."""
    name = str(error["loc"][0]) if error["loc"] else "?"
    field = cls.model_fields.get(name)
    low, high = _bounds(field.metadata) if field else (None, None)
    said: dict[str, Any] = {
        "option": option_of(cls, name),
        "value": repr(values.get(name)),
        "why": invalid(error, error["msg"].lower()),
    }
    where = f"params.{name}"
    if low is not None and high is not None:
        return UsageError(key="config.param_not_allowed", field=where, low=low, high=high, **said)
    return UsageError(key="config.param_not_allowed_see_help", field=where, **said)


def _bounds(metadata: list[Any]) -> tuple[Any, Any]:
    lo = hi = None
    for m in metadata:
        lo = getattr(m, "ge", lo)
        hi = getattr(m, "le", hi)
    return lo, hi
