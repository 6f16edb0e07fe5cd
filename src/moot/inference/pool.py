"""Which model serves which role: each distinct model loaded once, on first use, and shared."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from moot import config
from moot.inference.decoding import SessionCache
from moot.inference.llama import LlamaCppModel
from moot.inference.llama.batch import Batcher, Lane, SharedContext
from moot.inference.protocol import ChatModel, ChatRequest, Completion, OnText, ResolvedModel
from moot.inference.remote import OpenAICompatModel, is_remote_ref, split_ref
from moot.inference.spill import SpillFolder, sweep


class ModelPool:
    """Loads models by reference and hands the same instance to every role that names it.

    A reference is a store reference (catalog id, hf:…, a .gguf path), turned into a local
    file by `resolve` (the model manager's offline resolver, passed in so that inference
    never depends on it), or a server URL `http://HOST:PORT/v1` with an optional `#MODEL`.
    Two references that resolve to the same file share one loaded model. Nothing loads
    until first asked for.
    """

    def __init__(
        self,
        *,
        resolve: Callable[[str], ResolvedModel],
        n_gpu_layers: int = 0,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        one_at_a_time: bool = False,
        snapshot_budgets: Mapping[str, int] | None = None,
    ) -> None:
        self._one_at_a_time = one_at_a_time
        self._options: dict[str, Any] = {
            "n_gpu_layers": n_gpu_layers,
            "n_ctx": n_ctx,
            "n_threads": n_threads,
            "spill_to": self._spill_to,
        }
        # Each model's memory for its speakers' snapshots, by the path of its file (the
        # memory plan's shares); a model not named keeps config.SESSION_CACHE_MB.
        self._budgets = {str(Path(k).resolve()): v for k, v in (snapshot_budgets or {}).items()}
        self._resolve = resolve
        self._models: dict[str, ChatModel] = {}  # load key → loaded model
        # One at a time: an unloaded model's KV snapshots, on disk, until it is loaded again.
        self._kept: dict[str, SessionCache] = {}
        self._spill_dir: SpillFolder | None = None
        self._swept = False  # the folders of processes killed mid-spill: removed once
        self._spill_lock = threading.Lock()  # models spill from their own threads
        # Loading takes seconds; one lock keeps two threads from loading the same file twice.
        # Each LlamaCppModel serialises its own calls.
        self._lock = threading.Lock()

    @property
    def n_threads(self) -> int | None:
        """The threads each model loaded here decodes on (None: the machine's cores)."""
        threads: int | None = self._options["n_threads"]
        return threads

    @property
    def loaded(self) -> dict[str, ChatModel]:
        """The models loaded so far, by load key (a file path or a server URL#model)."""
        return dict(self._models)

    def get(self, ref: str) -> ChatModel:
        """The model REF names, loading it on first use."""
        if is_remote_ref(ref):
            url, name = split_ref(ref)
            key = f"{url}#{name or ''}"
            with self._lock:
                if key not in self._models:
                    self._models[key] = OpenAICompatModel(url, name)
                return self._models[key]
        resolved = self._resolve(ref)
        key = str(resolved.path.resolve())
        if self._one_at_a_time:
            return _Turns(self, key, resolved)
        with self._lock:
            if key not in self._models:
                self._sweep()
                self._models[key] = LlamaCppModel(resolved, **self._load_options(key))
            return self._models[key]

    def only(self, key: str, resolved: ResolvedModel) -> ChatModel:
        """The model of KEY loaded, every other local model unloaded first: one at a time."""
        with self._lock:
            others = [k for k in self._models if k != key and not k.startswith("http")]
            for other in others:
                model = self._models.pop(other)
                take = getattr(model, "take_sessions", None)
                if take is not None:
                    self._kept[other] = take().spill(self._spill_to())
                closer = getattr(model, "close", None)
                if closer is not None:
                    closer()
            if key not in self._models:
                self._sweep()
                kept = self._kept.pop(key, None)  # its speakers' snapshots, if it had any
                options = self._load_options(key)
                self._models[key] = LlamaCppModel(resolved, **options, sessions=kept)
            return self._models[key]

    def _load_options(self, key: str) -> dict[str, Any]:
        budget = self._budgets.get(key)
        return {**self._options, **({"snapshot_budget": budget} if budget is not None else {})}

    def _spill_to(self) -> Path:
        """The folder snapshots are written to (an unloaded model's, and those its memory
        budget cannot hold): private, in moot's cache (`config.cache_dir`), removed on close,
        and by the next pool to load a model here where this process is killed first
        (`inference.spill.SpillFolder`)."""
        with self._spill_lock:
            if self._spill_dir is None:
                self._spill_dir = SpillFolder(config.cache_dir() / "kv")
            return self._spill_dir.path

    def _sweep(self) -> None:
        """Before this pool's first model loads: the spill folders that processes killed
        before removing them left in moot's cache, removed (a model's snapshots can take
        gigabytes there)."""
        if not self._swept:
            self._swept = True
            sweep(config.cache_dir() / "kv")

    def bind(self, roles: dict[str, str]) -> dict[str, ChatModel]:
        """Map each role to the model its reference names; roles naming one model share it."""
        return {role: self.get(ref) for role, ref in roles.items()}

    def forget(self) -> None:
        """Every loaded model's cached prompts dropped (the models stay loaded): a debate
        that starts next says what it would on models just loaded, whatever ran before."""
        with self._lock:
            models, kept, self._kept = list(self._models.values()), self._kept, {}
        for cache in kept.values():
            cache.clear()
        for model in models:
            forget = getattr(model, "forget", None)
            if forget is not None:
                forget()

    def close(self) -> None:
        """Free every loaded model."""
        with self._lock:
            models, self._models = list(self._models.values()), {}
            spilled, self._spill_dir, self._kept = self._spill_dir, None, {}
        for model in models:
            closer = getattr(model, "close", None)
            if closer is not None:
                closer()
        if spilled is not None:
            spilled.close()

    def __enter__(self) -> ModelPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Turns:
    """A seat's model under one-model-at-a-time: loaded when the seat speaks (unloading any
    other), not before. What it is called and how it counts tokens are asked of it loaded."""

    def __init__(self, pool: ModelPool, key: str, resolved: ResolvedModel) -> None:
        self._pool, self._key, self._resolved = pool, key, resolved

    # What a format may ask of a seat's model without loading it (see __getattr__).
    backend = "llama.cpp"

    @property
    def model_id(self) -> str:
        return self._resolved.id

    @property
    def file_name(self) -> str:
        return self._resolved.path.name

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        return self._pool.only(self._key, self._resolved).chat(request, on_text=on_text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool.only(self._key, self._resolved), name)


# The context a model loaded for lanes keeps of its own: nothing is decoded in it (its lanes
# decode in the shared one), but its batch size is the shared context's, which llama.cpp
# holds to at most the context size.
OWN_CONTEXT = 512


class BatchPool:
    """The models of LANES debates decoded together: each model loaded once (by POOL, whose
    models' own contexts need hold no debate: see OWN_CONTEXT), with a shared context of
    N_CTX tokens a debate slot; the debate in slot K is seated on lane K of each model. A
    server model is the pool's own: its debates' requests are in flight at once anyway."""

    def __init__(self, pool: ModelPool, lanes: int, n_ctx: int) -> None:
        self.pool, self.lanes, self.n_ctx = pool, lanes, n_ctx
        self.batcher = Batcher()
        self._shared: dict[int, SharedContext] = {}  # by the loaded model's id()
        self._seated: dict[tuple[int, int], LlamaCppModel] = {}  # (loaded model, slot) → lane
        self._lock = threading.Lock()

    def model_for(self, slot: int) -> Callable[[str], ChatModel]:
        """The models of the debate in SLOT, by reference."""

        def get(ref: str) -> ChatModel:
            loaded = self.pool.get(ref)
            if not isinstance(loaded, LlamaCppModel):
                return loaded
            key = id(loaded)
            with self._lock:
                shared = self._shared.get(key)
                if shared is None:
                    shared = self._shared[key] = SharedContext(
                        loaded.runtime, self.lanes, self.n_ctx
                    )
                seated = self._seated.get((key, slot))
                if seated is None:
                    lane = Lane(shared, slot, self.batcher)
                    seated = self._seated[(key, slot)] = LlamaCppModel.on_runtime(loaded, lane)
                return seated

        return get

    def forget(self, slot: int) -> None:
        """The debate in SLOT starts as on models just loaded: its lanes' caches dropped."""
        with self._lock:
            seated = [model for (_, s), model in self._seated.items() if s == slot]
        for model in seated:
            model.forget()

    def stop(self) -> None:
        """Every debate waiting on the batcher ends there (Ctrl-C)."""
        self.batcher.stop()

    def close(self) -> None:
        self.batcher.stop()
        with self._lock:
            seated, self._seated = list(self._seated.values()), {}
            shared, self._shared = list(self._shared.values()), {}
        for model in seated:
            model.close()
        for context in shared:
            context.close()
        self.pool.close()
