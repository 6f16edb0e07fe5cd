"""A debate's memory, planned from its models' GGUF headers before any of them loads.

Each distinct model needs, as llama.cpp loads it for moot:

- its weights: the size of its files (all shards), held once: mapped, or read where
  llama.cpp would repack them out of a mapping that stays resident
  (`inference.llama.build.map_weights`);
- its KV cache for n_ctx at f16 (llama.cpp's default cache type):
  2 (K and V) × layers × n_ctx × KV heads × head size × 2 bytes, summed layer by layer where
  the header counts KV heads per layer. A sliding-window layer (Gemma 3's) is counted at the
  full n_ctx: llama.cpp keeps a full-size cache for it unless told otherwise;
- a compute allowance: llama.cpp's compute buffer with flash attention is mostly the logits
  of one batch (vocabulary × BATCH floats, whatever n_ctx); the allowance adds four
  embedding-wide rows per batch token and a fixed COMPUTE_FIXED for the rest. A model moot
  loads without flash attention (`inference.attention`: narrow heads on the CPU) holds a
  batch's attention scores instead at their peak, n_ctx × heads floats per batch token,
  where that is more than the logits (llama.cpp reuses the one space for the other).

Where the header lacks a figure the estimate assumes the larger case and says so in the
model's notes. Free memory is what the system can give without swapping (MemAvailable) and,
for layers offloaded to a GPU, what nvidia-smi reports free (`models.free`); a figure that
cannot be read never refuses a debate.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from moot.errors import NotEnoughMemoryError, Phrase, UsageError
from moot.inference.attention import flash_attention
from moot.models import gguf_check, hub_cache
from moot.models.free import Free, free_memory
from moot.models.gguf_check import GGUFInfo

MiB = 1 << 20
GiB = 1 << 30
KV_BYTES = 2  # an f16 element of the K or V cache
F32 = 4
BATCH = 512  # tokens moot's llama backend evaluates at once (its n_batch)
COMPUTE_FIXED = 32 * MiB
UNKNOWN_VOCAB = 262_144  # the largest vocabulary of today's models (Gemma 3's)
UNKNOWN_EMBEDDING = 8192
NARROWEST_HEAD = 64  # the narrowest attention heads of today's models (SmolLM2's, Llama 1's)
# A header without its layer count: the cache at this many tokens counted as large as the
# weights (a 7B model's grouped-query cache is an eighth of that, one without it a half).
UNKNOWN_KV_TOKENS = 4096
MIN_CTX = 512
CTX_STEP = 256  # llama.cpp pads a context to a multiple of 256
MAX_CTX = 262_144  # the most `--n-ctx` takes (config.RunSettings)
INFO_N_CTX = 4096  # what `moot models info` sizes a cache for where `--n-ctx` has no default


@dataclass(frozen=True)
class ModelShape:
    """What the header says a model's memory depends on; no figure here depends on n_ctx."""

    architecture: str | None
    weights: int  # bytes of all its files
    kv_per_token: int  # bytes of K and V per position, all layers (a stand-in when unknown)
    kv_known: bool
    layers: int | None
    vocab: int | None
    embedding: int | None
    heads: int | None  # attention heads of its widest layer
    head_dim: int | None  # how wide one head's keys are
    trained_context: int | None
    sliding_window: int | None
    notes: tuple[str, ...] = ()  # what the KV estimate had to assume

    def compute(self, n_ctx: int, gpu_layers: int = 0) -> int:
        """The compute-buffer allowance at N_CTX (see the module's docstring)."""
        widest = self.vocab or UNKNOWN_VOCAB
        embedding = self.embedding or UNKNOWN_EMBEDDING
        if not flash_attention(self.head_dim, gpu_layers):
            # Heads the header does not count: as many as the embedding holds (at the
            # narrowest common width where it gives no width either).
            width = self.head_dim or NARROWEST_HEAD
            widest = max(widest, n_ctx * (self.heads or max(1, embedding // width)))
        return BATCH * F32 * (widest + 4 * embedding) + COMPUTE_FIXED


@dataclass(frozen=True)
class ModelMemory:
    """One model's figures at one n_ctx, in bytes."""

    name: str
    path: Path
    n_ctx: int
    weights: int
    kv_cache: int
    compute: int
    gpu_share: float  # the part of its layers (and their cache) offloaded: 0.0 to 1.0
    shape: ModelShape
    notes: tuple[str, ...] = ()

    @property
    def kv_known(self) -> bool:
        return self.shape.kv_known

    @property
    def trained_context(self) -> int | None:
        return self.shape.trained_context

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + self.compute

    @property
    def gpu(self) -> int:
        """Bytes on the GPU: the offloaded layers' weights and cache, and a compute buffer."""
        if not self.gpu_share:
            return 0
        return round((self.weights + self.kv_cache) * self.gpu_share) + self.compute

    @property
    def host(self) -> int:
        """Bytes in system memory: the layers left on the CPU, and a compute buffer."""
        kept = round((self.weights + self.kv_cache) * (1 - self.gpu_share))
        return kept + self.compute

    def line(self) -> str:
        """`weights 4.1 GiB, KV cache 512 MiB at n_ctx 4096 (trained context 32,768)`."""
        kv = (
            size_text(self.kv_cache)
            if self.kv_known
            else f"unknown (counted as {size_text(self.kv_cache)})"
        )
        trained = f"{self.trained_context:,}" if self.trained_context else "unknown"
        text = (
            f"weights {size_text(self.weights)}, KV cache {kv} at n_ctx {self.n_ctx} "
            f"(trained context {trained})"
        )
        return "; ".join((text, *self.notes))


@dataclass(frozen=True)
class MemoryPlan:
    """A debate's models at one n_ctx: each one's figures, and what they need together."""

    models: tuple[ModelMemory, ...]
    n_ctx: int
    gpu_layers: int = 0
    snapshots: int = 0  # speakers' KV snapshots kept in system memory
    snapshot_bytes: int = 0  # each: a full context of the largest model's cache
    one_at_a_time: bool = False  # each model loaded for its turns and unloaded after
    # The most the loaded models keep their snapshots in (None: no bound): beyond it the
    # least recently used is dropped, so the snapshots never take more.
    snapshot_budget: int | None = None

    @property
    def snapshot_total(self) -> int:
        total = self.snapshots * self.snapshot_bytes
        return total if self.snapshot_budget is None else min(total, self.snapshot_budget)

    @property
    def host(self) -> int:
        """System memory needed: every model at once, or the largest with one at a time."""
        return _together([m.host for m in self.models], self.one_at_a_time) + self.snapshot_total

    @property
    def gpu(self) -> int:
        return _together([m.gpu for m in self.models], self.one_at_a_time)

    @property
    def total(self) -> int:
        """Bytes across system and GPU memory."""
        return _together([m.total for m in self.models], self.one_at_a_time) + self.snapshot_total

    @property
    def trained_context(self) -> int | None:
        """The smallest trained context among the models; None when no header gives one."""
        known = [m.trained_context for m in self.models if m.trained_context]
        return min(known) if known else None

    def at(self, n_ctx: int | None = None, *, one_at_a_time: bool | None = None) -> MemoryPlan:
        """The same models at another n_ctx, or loaded another way; no header is read again."""
        ctx = self.n_ctx if n_ctx is None else _check_ctx(n_ctx)
        models = tuple(
            _estimate(m.name, m.path, m.shape, ctx, self.gpu_layers) for m in self.models
        )
        return replace(
            self,
            models=models,
            n_ctx=ctx,
            snapshot_bytes=_largest_snapshot(models, ctx),
            one_at_a_time=self.one_at_a_time if one_at_a_time is None else one_at_a_time,
        )


# ---------------------------------------------------------------- the plan


def plan(
    models: Sequence[tuple[str, Path | str | Sequence[Path]]],
    n_ctx: int,
    *,
    gpu_layers: int = 0,
    snapshots: int = 0,
    one_at_a_time: bool = False,
    snapshot_budget: int | None = None,
) -> MemoryPlan:
    """Each distinct model's figures at N_CTX, from its header (read bounded, no weights).

    MODELS pairs a name with the model's file (a split model: its first shard, or all of
    them). A file named twice is one model. GPU_LAYERS is `--gpu-layers` (-1: all);
    SNAPSHOTS the speakers' KV snapshots held in memory, each counted as a full context of the
    largest model, and in all no more than SNAPSHOT_BUDGET bytes (what the loaded models keep
    them in). A bad file raises ModelIntegrityError, as resolving it would.
    """
    ctx = _check_ctx(n_ctx)
    if snapshots < 0:
        raise UsageError(key="models.memory.snapshots_must_0_more_not", snapshots=snapshots)
    seen: dict[Path, ModelMemory] = {}
    for name, where in models:
        shards = (
            (Path(where),) if isinstance(where, (str, os.PathLike)) else tuple(map(Path, where))
        )
        if not shards:
            raise UsageError(key="models.memory.model_names_no_file", name=name)
        key = shards[0].resolve()
        if key not in seen:
            shape = shape_of(gguf_check.check(shards[0]), shards)
            seen[key] = _estimate(name, shards[0], shape, ctx, gpu_layers)
    found = tuple(seen.values())
    return MemoryPlan(
        models=found,
        n_ctx=ctx,
        gpu_layers=gpu_layers,
        snapshots=snapshots,
        snapshot_bytes=_largest_snapshot(found, ctx),
        one_at_a_time=one_at_a_time,
        snapshot_budget=snapshot_budget,
    )


def estimate(
    name: str, path: Path, shape: ModelShape, n_ctx: int, *, gpu_layers: int = 0
) -> ModelMemory:
    """One model's figures at N_CTX (`moot models info`)."""
    return _estimate(name, path, shape, _check_ctx(n_ctx), gpu_layers)


def _estimate(name: str, path: Path, shape: ModelShape, n_ctx: int, gpu_layers: int) -> ModelMemory:
    notes = list(shape.notes)
    if shape.trained_context and n_ctx > shape.trained_context:
        notes.append(f"n_ctx {n_ctx} is past its trained context")
    if shape.sliding_window and shape.sliding_window < n_ctx:
        notes.append(
            f"some layers attend to a sliding window of {shape.sliding_window:,} tokens; "
            "every layer is counted at the full n_ctx (conservative)"
        )
    share, note = _gpu_share(gpu_layers, shape.layers)
    if note:
        notes.append(note)
    return ModelMemory(
        name=name,
        path=path,
        n_ctx=n_ctx,
        weights=shape.weights,
        kv_cache=shape.kv_per_token * n_ctx,
        compute=shape.compute(n_ctx, gpu_layers),
        gpu_share=share,
        shape=shape,
        notes=tuple(notes),
    )


def _gpu_share(gpu_layers: int, layers: int | None) -> tuple[float, str]:
    if gpu_layers == 0:
        return 0.0, ""
    if gpu_layers < 0 or (layers and gpu_layers >= layers):
        return 1.0, ""
    if not layers:
        return 1.0, "layers unknown: every one counted on the GPU and in system memory"
    return gpu_layers / layers, ""


def _together(values: list[int], one_at_a_time: bool) -> int:
    if not values:
        return 0
    return max(values) if one_at_a_time else sum(values)


def _largest_snapshot(models: Sequence[ModelMemory], n_ctx: int) -> int:
    return max((snapshot_bytes(m.shape, n_ctx) for m in models), default=0)


def _check_ctx(n_ctx: int) -> int:
    if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 1:
        raise UsageError(key="models.memory.n_ctx_must_positive_number", n_ctx=n_ctx)
    return n_ctx


# ---------------------------------------------------------------- from a header


def shape_of(info: GGUFInfo, shards: Sequence[Path] = ()) -> ModelShape:
    """The figures INFO's header gives, with the files' size (SHARDS: every file of it)."""
    per_token, notes = kv_per_token(info)
    weights, weight_note = _weights(info, shards)
    known = per_token is not None
    if per_token is None:
        per_token = -(-weights // UNKNOWN_KV_TOKENS)
        notes = (
            *notes,
            f"KV cache counted as large as the weights at {UNKNOWN_KV_TOKENS:,} tokens",
        )
    return ModelShape(
        architecture=info.architecture,
        weights=weights,
        kv_per_token=per_token,
        kv_known=known,
        layers=info.block_count or None,
        vocab=info.vocab_size,
        embedding=info.embedding_length or None,
        heads=(
            max(info.head_count, default=0)
            if isinstance(info.head_count, tuple)
            else info.head_count
        )
        or None,
        head_dim=info.head_dim,
        trained_context=info.context_length or None,
        sliding_window=info.sliding_window or None,
        notes=(*notes, *weight_note),
    )


def kv_per_token(info: GGUFInfo) -> tuple[int | None, tuple[str, ...]]:
    """Bytes of K and V one position takes across all layers, and what had to be assumed;
    None when the header lacks its layer count or embedding size."""
    arch = info.architecture or "<arch>"
    layers = info.block_count
    if not layers:
        return None, (f"KV cache unknown: the header lacks {arch}.block_count",)
    notes: list[str] = []
    heads = _layer_sum(info.head_count, layers, f"{arch}.attention.head_count", notes)
    kv_heads = _layer_sum(info.head_count_kv, layers, f"{arch}.attention.head_count_kv", notes)
    if kv_heads is None and heads is not None:
        kv_heads = heads
        notes.append("KV heads unknown: counted as many as the attention heads")
    first = gguf_check.first_count(info.head_count)
    embedding = info.embedding_length
    key, value = info.key_length, info.value_length
    if (key is None or value is None) and first and embedding:
        # llama.cpp's own default: the embedding split evenly among the first layer's heads.
        key = embedding // first if key is None else key
        value = embedding // first if value is None else value
    if kv_heads is None or key is None or value is None:
        if not embedding:
            return None, (f"KV cache unknown: the header lacks {arch}.embedding_length",)
        notes.append("attention heads unknown: K and V counted as wide as the embedding")
        return layers * 2 * embedding * KV_BYTES, tuple(notes)
    return kv_heads * (key + value) * KV_BYTES, tuple(notes)


def _layer_sum(
    value: int | tuple[int, ...] | None, layers: int, key: str, notes: list[str]
) -> int | None:
    """VALUE's count summed over LAYERS; an array of another length counts its largest for
    every layer."""
    if value is None:
        return None
    if isinstance(value, int):
        return value * layers
    if len(value) != layers:
        notes.append(f"{key} lists {len(value)} layers of {layers}: its largest counted for each")
        return max(value) * layers
    return sum(value)


def _weights(info: GGUFInfo, shards: Sequence[Path]) -> tuple[int, tuple[str, ...]]:
    count = info.split_count or 1
    paths = list(shards) or [info.path]
    if count > 1 and len(paths) == 1:
        paths = [info.path.parent / name for name in hub_cache.split_names(info.path.name)]
    try:
        sizes = [info.file_size] + [path.stat().st_size for path in paths[1:]]
    except OSError:
        sizes = []
    if count > 1 and len(sizes) != count:
        return info.file_size * count, (f"{count} files: weights counted as {count} × the first",)
    return sum(sizes), ()


# ---------------------------------------------------------------- snapshots and context


def snapshot_bytes(source: ModelShape | GGUFInfo | Path | str, n_tokens: int) -> int:
    """What a speaker's KV snapshot of N_TOKENS positions takes: the cache of those positions
    and the logits of the last one (what llama.cpp's state holds after a turn)."""
    shape = source if isinstance(source, ModelShape) else _shape(source)
    return shape.kv_per_token * _check_ctx(n_tokens) + F32 * (shape.vocab or UNKNOWN_VOCAB)


def snapshot_mb(source: ModelShape | GGUFInfo | Path | str, n_ctx: int) -> float:
    """snapshot_bytes in MiB: a 7B Llama-shaped model's (32 layers, 8 KV heads of 128) is
    128 KiB a token, 512 MiB for a full 4096-token context."""
    return snapshot_bytes(source, n_ctx) / MiB


def _shape(source: GGUFInfo | Path | str) -> ModelShape:
    info = source if isinstance(source, GGUFInfo) else gguf_check.check(source)
    return shape_of(info)


def default_n_ctx(needed_tokens: int, trained: int | None) -> int:
    """The context a debate needs: NEEDED_TOKENS rounded up to a multiple of CTX_STEP (at
    least MIN_CTX), bounded by the model's TRAINED context where its header gives one (for
    several models, the smallest). A debate that needs more than that still gets the trained
    context: its prompt that does not fit is refused before the turn, with the numbers."""
    if isinstance(needed_tokens, bool) or needed_tokens < 0:
        raise UsageError(key="models.memory.debate_cannot_need_tokens", needed_tokens=needed_tokens)
    want = min(MAX_CTX, max(MIN_CTX, -(-needed_tokens // CTX_STEP) * CTX_STEP))
    return min(want, trained) if trained and trained > 0 else want


# ---------------------------------------------------------------- the snapshots' share

# Of the memory left free once the models are loaded, the part their speakers' snapshots
# may take: the rest stays for the machine's other work and its file cache.
SNAPSHOT_SHARE = 0.5


def snapshot_budget(plan: MemoryPlan, free: int | None, *, fallback: int) -> int:
    """The bytes PLAN's loaded models may keep their speakers' snapshots in memory: all of
    them at a full context (`snapshots` × `snapshot_bytes`) where FREE (system memory free
    now, MemAvailable) leaves room for it, else SNAPSHOT_SHARE of what the models leave;
    FALLBACK where FREE is unknown. Beyond it snapshots spill to disk or are dropped."""
    wanted = plan.snapshots * plan.snapshot_bytes
    if free is None:
        return min(wanted, fallback)
    room = free - replace(plan, snapshots=0).host
    return max(0, min(wanted, int(room * SNAPSHOT_SHARE)))


def shares(budget: int, seats: dict[str, int]) -> dict[str, int]:
    """BUDGET split among models in proportion to their SEATS (model → seats on it)."""
    total = sum(seats.values())
    return {k: budget * n // total for k, n in seats.items()} if total else {}


# ---------------------------------------------------------------- the check


def check_fits(plan: MemoryPlan, free: Free | None = None) -> Free:
    """Refuse PLAN, with its numbers and the ways out, when it needs more memory than is free
    (FREE, or read now); return the figures it was held against. Unknown figures pass."""
    if free is None:
        free = free_memory(gpu=plan.gpu > 0)
    if free.ram is not None and plan.host > free.ram:
        raise _short(plan, free.ram, gpu=False)
    if plan.gpu and free.gpu is not None and plan.gpu > free.gpu:
        raise _short(plan, free.gpu, gpu=True)
    return free


def _short(plan: MemoryPlan, free: int, *, gpu: bool) -> NotEnoughMemoryError:
    needed = plan.gpu if gpu else plan.host
    count = len(plan.models)
    need_text, free_text = _pair(needed, free)
    said: dict[str, Any] = {
        "need": Phrase(
            "models.memory.gpu_memory_with_layers", size=need_text, layers=plan.gpu_layers
        )
        if gpu
        else need_text,
        "n_ctx": Phrase("models.memory.with_snapshots", n_ctx=plan.n_ctx, n=plan.snapshots)
        if plan.snapshots and not gpu
        else plan.n_ctx,
        "available": Phrase("models.memory.gpu_memory", size=free_text) if gpu else free_text,
        "ways": _ways_out(plan, free, gpu=gpu),
        "needed": needed,
        "free": free,
        "gpu": gpu,
    }
    if count == 1:
        return NotEnoughMemoryError(key="models.memory.model_needs", **said)
    if plan.one_at_a_time:
        return NotEnoughMemoryError(key="models.memory.models_one_at_a_time_need", n=count, **said)
    return NotEnoughMemoryError(key="models.memory.models_need", n=count, **said)


def _ways_out(plan: MemoryPlan, free: int, *, gpu: bool) -> Phrase:
    """What would fit: fewer models, a smaller context, one model at a time, fewer layers on
    the GPU, or else a smaller model, each with what it would need."""

    def need(p: MemoryPlan) -> int:
        return p.gpu if gpu else p.host

    several = len(plan.models) > 1 and not plan.one_at_a_time
    ctx = plan.n_ctx // 2
    while ctx >= MIN_CTX and need(plan.at(ctx)) > free:
        ctx //= 2
    at = size_text(need(plan.at(ctx))) if ctx >= MIN_CTX else ""
    alone = size_text(need(plan.at(one_at_a_time=True))) if several else ""
    if several and at:
        if gpu:
            return Phrase(
                "models.memory.use_fewer_smaller_ctx_alone_layers", ctx=ctx, at=at, alone=alone
            )
        return Phrase("models.memory.use_fewer_smaller_ctx_alone", ctx=ctx, at=at, alone=alone)
    if several:
        if gpu:
            return Phrase("models.memory.use_fewer_alone_layers", alone=alone)
        return Phrase("models.memory.use_fewer_alone", alone=alone)
    if at:
        if gpu:
            return Phrase("models.memory.use_smaller_ctx_layers", ctx=ctx, at=at)
        return Phrase("models.memory.use_smaller_ctx", ctx=ctx, at=at)
    largest = max(plan.models, key=lambda m: m.weights)
    weights = size_text(largest.weights)
    if gpu:
        return Phrase("models.memory.use_layers_smaller_model", model=largest.name, weights=weights)
    return Phrase("models.memory.use_smaller_model", model=largest.name, weights=weights)


def size_text(n: int) -> str:
    """Bytes as GiB from 1 GiB up (`9.4 GiB`), MiB from 1 MiB (`512 MiB`), else KiB or B."""
    if n >= GiB:
        return f"{n / GiB:.1f} GiB"
    if n >= MiB:
        return f"{n / MiB:.0f} MiB"
    return f"{n / 1024:.0f} KiB" if n >= 1024 else f"{n} B"


def _pair(needed: int, free: int) -> tuple[str, str]:
    """NEEDED and FREE as text that does not read as equal when they are not."""
    a, b = size_text(needed), size_text(free)
    if a == b:
        unit, scale = ("GiB", GiB) if needed >= GiB else ("MiB", MiB)
        a, b = f"{needed / scale:.3f} {unit}", f"{free / scale:.3f} {unit}"
    return a, b
