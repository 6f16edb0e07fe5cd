"""In-process inference on llama.cpp: chat formatting, a grammar-checked decode loop, KV reuse."""

from __future__ import annotations

import ctypes
import inspect
import logging
import threading
import time
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

from pydantic import BaseModel

from moot import config
from moot.decoding import (
    DecodePlan,
    PrefixIndex,
    SessionCache,
    Snapshot,
    TextStream,
    common_prefix,
    fold_system,
    plan_decode,
    range_rule,
)
from moot.errors import CallTimeoutError, ContextOverflowError, ModelIntegrityError, MootError
from moot.llm import ChatRequest, Completion, FinishReason, OnText, check_not_degenerate
from moot.store import ResolvedModel

log = logging.getLogger(__name__)

# JSON forbids raw control characters in strings; llama-cpp-python's rule allows them.
_JSON_CHAR = (
    r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" '
    r"[0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])"
)
_MIN_RESTORE_GAIN = 16  # tokens: below this, evaluating them costs about what a restore does


class LlamaCppModel:
    """A GGUF model loaded in this process; implements ChatModel.

    Free-text replies that are empty or one phrase repeated raise DegenerateReplyError
    (a structured reply is judged by its schema instead). Calls are serialised by a lock:
    one llama.cpp context is not thread-safe. With `session_cache_mb` > 0 the KV cache
    after each call that names a `session` is kept, so that speaker's next turn only
    evaluates what is new even when other speakers ran in between.
    """

    def __init__(
        self,
        model: ResolvedModel,
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        n_batch: int = 512,
        n_gpu_layers: int = 0,
        session_cache_mb: int = 256,
    ) -> None:
        from llama_cpp import Llama

        _route_llama_logs()
        threads = n_threads or config.physical_cores()
        self._resolved = model
        try:
            self._llm = Llama(
                model_path=str(model.path),
                n_ctx=n_ctx or min(model.context_length or 4096, 4096),
                n_threads=threads,
                n_threads_batch=threads,
                n_batch=n_batch,
                n_gpu_layers=n_gpu_layers,
                # llama.cpp's own default where the backend has it; llama-cpp-python turns
                # it off. A seeded 3-round Oxford debate: 77-78 s with it, 81-85 s without.
                flash_attn=True,
                verbose=False,
            )
        except ValueError as exc:
            raise ModelIntegrityError(
                f"llama.cpp could not load {model.path}: {exc}",
                hint=f"check the file with `moot models verify {model.id}`",
            ) from exc
        self._formatter = _make_formatter(self._llm, model)
        self._lock = threading.Lock()
        self._runtime = _Runtime(self._llm)
        self._sessions = SessionCache(session_cache_mb * 2**20)
        self._closed = False

    @property
    def model_id(self) -> str:
        return self._resolved.id

    @property
    def n_ctx(self) -> int:
        return int(self._llm.n_ctx())

    def count_tokens(self, request: ChatRequest) -> int:
        """How many tokens the request's prompt takes, chat template included."""
        with self._lock:
            prompt, _, added_special = self._format_prompt(request)
            return len(self._tokenize(prompt, added_special))

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        start = time.perf_counter()
        with self._lock:
            if self._closed:
                raise MootError(f"{self.model_id} was closed", hint="load the model again")
            prompt, stops, added_special = self._format_prompt(request)
            tokens = self._tokenize(prompt, added_special)
            grammar = schema_to_gbnf(request.reply_schema) if request.reply_schema else None
            plan = plan_decode(request, format_stops=stops, grammar=grammar)
            if len(tokens) + plan.max_tokens > self.n_ctx:
                raise ContextOverflowError(
                    prompt_tokens=len(tokens), n_ctx=self.n_ctx, max_tokens=plan.max_tokens
                )
            cached = self._prepare_kv(tokens, request.session)
            deadline = start + request.timeout_s if request.timeout_s else None
            text, n_out, finish, ttft = self._decode_loop(plan, on_text, start, deadline)
            if request.session and self._sessions.enabled:
                self._sessions.discard(request.session)  # free it before taking the new one
                self._sessions.put(request.session, self._runtime.snapshot(trim=True))
        completion = Completion(
            text=text,
            prompt_tokens=len(tokens),
            completion_tokens=n_out,
            cached_tokens=cached,
            duration_ms=round((time.perf_counter() - start) * 1000),
            ttft_ms=round(ttft * 1000),
            finish_reason=finish,
        )
        if request.reply_schema is None:
            check_not_degenerate(completion)
        return completion

    def close(self) -> None:
        """Free the model and its context; the instance is unusable afterwards."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._sessions.clear()
                self._runtime.close()
                self._llm.close()

    def _format_prompt(self, request: ChatRequest) -> tuple[str, tuple[str, ...], bool]:
        msgs = [{"role": m.role, "content": m.content} for m in request.messages]
        result = _render(self._formatter, msgs)
        system = "\n\n".join(m["content"] for m in msgs if m["role"] == "system").strip()
        if system and system not in result.prompt:
            # Some formats (gemma) drop system messages without a word.
            result = _render(self._formatter, fold_system(msgs))
        stop = result.stop or ()
        stops = (stop,) if isinstance(stop, str) else tuple(stop)
        return result.prompt, stops, bool(result.added_special)

    def _tokenize(self, prompt: str, added_special: bool) -> list[int]:
        data = prompt.encode("utf-8")
        return list(self._llm.tokenize(data, add_bos=not added_special, special=True))

    def _prepare_kv(self, tokens: list[int], session: str | None) -> int:
        """Evaluate the prompt, reusing the longest prefix already cached; return its length."""
        rt = self._runtime
        live = rt.common_prefix(tokens)
        snapshot, shared = self._sessions.best(tokens) if session else (None, 0)
        if snapshot and shared > live + _MIN_RESTORE_GAIN:
            live = shared if rt.restore(snapshot) else 0
        # At least two tokens are evaluated: the last one for its logits, and never alone.
        n_past = max(0, min(live, len(tokens) - 2))
        if n_past > 0 and not rt.truncate(n_past):
            n_past = 0
        rt.eval_from(n_past, tokens)
        return n_past

    def _decode_loop(
        self, plan: DecodePlan, on_text: OnText | None, start: float, deadline: float | None
    ) -> tuple[str, int, FinishReason, float]:
        """Sample until end of generation, a stop string, a complete grammar, or max_tokens."""
        rt = self._runtime
        sampler = _Sampler(rt, plan, context=rt.llm._input_ids)
        stream = TextStream(plan.stop, on_text)
        finish: FinishReason = "length"
        n_out, ttft = 0, 0.0
        try:
            while n_out < plan.max_tokens:
                if deadline is not None and time.perf_counter() > deadline:
                    raise CallTimeoutError(seconds=deadline - start, model=self.model_id)
                token = sampler.sample()
                if not n_out:
                    ttft = time.perf_counter() - start
                if rt.is_eog(token):
                    finish = "stop"
                    break
                n_out += 1
                complete = sampler.accept(token)
                if stream.feed(rt.piece(token)) or complete:
                    finish = "stop"
                    break
                rt.step(token)
        finally:
            sampler.free()
        if sampler.fallbacks:
            log.debug("grammar rejected %d of %d draws", sampler.fallbacks, n_out)
        return stream.finish(), n_out, finish, ttft


@lru_cache(maxsize=64)
def schema_to_gbnf(schema: type[BaseModel]) -> str:
    """A GBNF grammar for JSON replies valid against `schema`; MootError if it cannot be built."""
    try:
        converter = _converter_class()(
            prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False
        )
        resolved = converter.resolve_refs(schema.model_json_schema(), "stdin")
        converter.visit(resolved, "")
        return str(converter.format_grammar())
    except Exception as exc:  # the converter asserts on schemas it does not know
        raise MootError(
            f"cannot build a grammar for {schema.__name__}: {exc}",
            hint="simplify the schema (plain objects, strings, numbers, enums, lists)",
        ) from exc


@cache
def _converter_class() -> type:
    from llama_cpp import llama_grammar as lg

    class Converter(lg.SchemaConverter):
        """llama-cpp-python's converter, plus number ranges and JSON-strict strings."""

        def visit(self, schema: dict[str, Any], name: str) -> str:
            if schema.get("type") in ("number", "integer") and (rule := range_rule(schema)):
                rule_name = name + "-" if name in lg.RESERVED_NAMES else name or "root"
                return str(self._add_rule(rule_name, rule))
            return str(super().visit(schema, name))

        def _add_primitive(self, name: str, rule: Any) -> str:
            if name == "char":
                rule = lg.BuiltinRule(_JSON_CHAR, [])
            return str(super()._add_primitive(name, rule))

    return Converter


def _render(formatter: Any, msgs: list[dict[str, str]]) -> Any:
    try:
        return formatter(messages=msgs)
    except Exception as exc:  # a template's raise_exception(), or a jinja2 error
        raise MootError(
            f"the chat template could not format this conversation: {exc}",
            hint="check the model's chat format in the catalog",
        ) from exc


def _make_formatter(llm: Any, model: ResolvedModel) -> Any:
    """The file's own chat template, or a named llama-cpp-python format; never a default."""
    from llama_cpp import llama_chat_format as lcf

    if model.chat_format == "template":
        template = model.chat_template  # the text moot checked when it resolved the file
        if not template:
            raise MootError(
                f"{model.path.name} has no chat template in its metadata",
                hint="name its chat format (e.g. chatml, gemma) in the catalog entry",
            )
        if llm.metadata.get("tokenizer.chat_template") != template:
            raise ModelIntegrityError(
                f"{model.path} changed after moot checked it: its chat template differs",
                hint=f"check the file with `moot models verify {model.id}`",
            )
        eos, bos = llm.token_eos(), llm.token_bos()
        # The template is code from the internet: Jinja2ChatFormatter renders it sandboxed.
        return lcf.Jinja2ChatFormatter(
            template=template,
            eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
            bos_token=llm._model.token_get_text(bos) if bos != -1 else "",
            stop_token_ids=[eos],
        )
    try:
        handler = lcf.get_chat_completion_handler(model.chat_format)
    except Exception:
        known = ", ".join(sorted(lcf.LlamaChatCompletionHandlerRegistry()._chat_handlers))
        raise MootError(
            f"unknown chat format {model.chat_format!r} for {model.id}",
            hint=f"use 'template' (the file's own) or one of: {known}",
        ) from None
    # Registered formats are only reachable wrapped in a completion handler.
    formatter = inspect.getclosurevars(handler).nonlocals.get("chat_formatter")
    if formatter is None:
        raise MootError(
            f"chat format {model.chat_format!r} is not a plain text chat format",
            hint="use 'template' or a format such as chatml, gemma, llama-3",
        )
    return formatter


_log_callback: Any = None


def _route_llama_logs() -> None:
    """Send llama.cpp's log to Python logging: library code never prints.

    llama-cpp-python maps llama.cpp's log levels off by one, so with verbose=False
    warnings still reach stderr.
    """
    global _log_callback
    if _log_callback is not None:
        return
    import llama_cpp as lc

    @lc.llama_log_callback
    def forward(level: int, text: bytes, user_data: Any) -> None:
        log.debug("%s", text.decode("utf-8", "replace").rstrip())

    _log_callback = forward  # ctypes callbacks must outlive their registration
    lc.llama_log_set(forward, ctypes.c_void_p(0))


class _Runtime:
    """The loaded model's context at the level of llama.cpp's C API: KV cache, vocab, logits."""

    def __init__(self, llm: Any) -> None:
        import llama_cpp as lc

        self.lc, self.llm = lc, llm
        self.ctx = llm.ctx
        self.vocab = lc.llama_model_get_vocab(llm.model)
        self.n_vocab = int(lc.llama_vocab_n_tokens(self.vocab))
        self.n_swa = int(lc.llama_model_n_swa(llm.model))
        eos = int(lc.llama_vocab_eos(self.vocab))
        self.eog = eos if eos >= 0 else int(lc.llama_vocab_eot(self.vocab))
        self._buf = ctypes.create_string_buffer(64)
        self._batch = lc.llama_batch_init(1, 0, 1)
        self._candidates: Any = None
        self._ids: Any = None
        self._subset: Any = None
        self._index: PrefixIndex | None = None
        # How many leading cached tokens were evaluated in batches of two or more. Only
        # those are reused: llama.cpp computes a lone token (as in generation) slightly
        # differently from the same token inside a batch, and a cache built from both
        # would make a seeded debate depend on which turns happened to be cached, so a
        # resumed debate would drift from the uninterrupted one.
        self.batch_len = 0

    def common_prefix(self, tokens: Sequence[int]) -> int:
        return min(common_prefix(self.llm._input_ids, tokens), self.batch_len)

    def truncate(self, n_past: int) -> bool:
        """Drop the KV cache after `n_past`; False when the cache cannot keep that prefix."""
        lc = self.lc
        mem = lc.llama_get_memory(self.ctx)
        if not lc.llama_memory_seq_rm(mem, 0, n_past, -1):
            return False  # recurrent models cannot drop a tail
        # A sliding-window cache may have evicted positions the next tokens attend to.
        return not self.n_swa or lc.llama_memory_seq_pos_min(mem, 0) <= max(0, n_past - self.n_swa)

    def eval_from(self, n_past: int, tokens: Sequence[int]) -> None:
        if n_past == 0:
            self.llm.reset()
        self.llm.n_tokens = n_past  # Llama.eval drops the KV cache from here on
        for start, end in batches(n_past, len(tokens), self.llm.n_batch):
            self.llm.eval(tokens[start:end])
        self.batch_len = len(tokens)

    def step(self, token: int) -> None:
        """Evaluate one generated token, as Llama.eval would, without its copy of the logits."""
        lc, llm, batch = self.lc, self.llm, self._batch
        n_past = llm.n_tokens
        batch.n_tokens = 1
        batch.token[0], batch.pos[0], batch.n_seq_id[0] = token, n_past, 1
        batch.seq_id[0][0], batch.logits[0] = 0, True
        if lc.llama_decode(self.ctx, batch) != 0:
            raise MootError(
                f"llama.cpp could not evaluate token {n_past + 1} of the context",
                hint="retry with a shorter prompt or a larger context",
            )
        llm.input_ids[n_past] = token
        llm.n_tokens = n_past + 1

    def is_eog(self, token: int) -> bool:
        return bool(self.lc.llama_vocab_is_eog(self.vocab, token))

    def piece(self, token: int, *, special: bool = False) -> bytes:
        """The token's bytes, which may end inside a multi-byte UTF-8 character; `special`
        spells control tokens out (as a grammar reads them) instead of leaving them empty."""
        to_piece = self.lc.llama_token_to_piece
        n = to_piece(self.vocab, token, self._buf, len(self._buf), 0, special)
        if n < 0:
            self._buf = ctypes.create_string_buffer(-n)
            n = to_piece(self.vocab, token, self._buf, -n, 0, special)
        return self._buf.raw[:n]

    def candidates(self, tokens: Sequence[int] | None = None) -> Any:
        """`tokens` (every token by default) with their logits from the last decode, as a
        llama_token_data_array. It stays valid until the next call."""
        import numpy as np

        lc = self.lc
        logits = np.ctypeslib.as_array(lc.llama_get_logits_ith(self.ctx, -1), shape=(self.n_vocab,))
        if tokens is None:
            if self._candidates is None:
                self._candidates = np.zeros(self.n_vocab, dtype=_token_data())
                self._ids = np.arange(self.n_vocab, dtype=np.intc)
            data = self._candidates
            # Samplers sort the array in place: the ids must be laid out afresh every
            # time, or the logits below would be paired with the wrong tokens.
            data["id"] = self._ids
            data["logit"] = logits
            data["p"] = 0.0
        else:
            data = self._subset = np.zeros(len(tokens), dtype=_token_data())
            data["id"] = tokens
            data["logit"] = logits[data["id"]]
        return token_array(lc, data)

    def prefix_index(self) -> PrefixIndex:
        """The vocabulary by first bytes, as the grammar reads it; built on first use."""
        if self._index is None:  # ~1 s for 262k tokens, once per model
            tokens = range(self.n_vocab)
            pieces = [self.piece(token, special=True) for token in tokens]
            # The grammar judges an end-of-generation token by its state, not its text.
            ends = [token for token in tokens if self.is_eog(token)]
            self._index = PrefixIndex(pieces, always=ends)
        return self._index

    def snapshot(self, *, trim: bool = False) -> Snapshot:
        """The context's state; `trim` first drops what is never reused (generated tokens)."""
        lc = self.lc
        if trim and self.llm.n_tokens > self.batch_len and self.truncate(self.batch_len):
            self.llm.n_tokens = self.batch_len
        # The whole context's state, not llama_state_seq_*: a sequence's state leaves out
        # cells outside the sliding window, and then its prefix cannot be reused (Gemma-3).
        size = int(lc.llama_state_get_size(self.ctx))
        state = (ctypes.c_uint8 * size)()
        written = int(lc.llama_state_get_data(self.ctx, state, size))
        return Snapshot(tuple(self.llm._input_ids[: self.batch_len].tolist()), state, written)

    def restore(self, snap: Snapshot) -> bool:
        if not self.lc.llama_state_set_data(self.ctx, snap.state, snap.nbytes):
            self.eval_from(0, [])  # a half-restored cache must not be reused
            return False
        self.llm.input_ids[: len(snap.tokens)] = snap.tokens
        self.llm.n_tokens = self.batch_len = len(snap.tokens)
        return True

    def close(self) -> None:
        self._candidates = self._subset = None
        if self._batch is not None:
            self.lc.llama_batch_free(self._batch)
            self._batch = None


@cache
def _token_data() -> Any:
    """llama_token_data as a numpy dtype: id, logit, p."""
    import numpy as np

    return np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)])


def token_array(lc: Any, data: Any) -> Any:
    """A llama_token_data_array over a numpy array of _token_data(), which must outlive it."""
    return lc.llama_token_data_array(
        data=data.ctypes.data_as(lc.llama_token_data_p), size=len(data), selected=-1, sorted=False
    )


def batches(start: int, end: int, size: int) -> list[tuple[int, int]]:
    """Split [start, end) into chunks of at most `size`, none of a single token if avoidable."""
    spans = [(i, min(i + size, end)) for i in range(start, end, size)]
    if len(spans) > 1 and spans[-1][1] - spans[-1][0] == 1:
        (a, b), (_, c) = spans[-2], spans[-1]
        spans[-2:] = [(a, b - 1), (b - 1, c)]
    return spans


PENALTY_LAST_N = 256
PRIME_TOKENS = 2048
DRY_BREAKERS = (b"\n", b":", b'"', b"*")
# Penalties and DRY only ever lower logits, so applying them to the 128 likeliest tokens
# rather than the whole vocabulary changes nothing unless more than 88 of those 128 are
# pushed below the 128th (TOP_K = 40 are kept afterwards). It saves two hash lookups per
# vocabulary entry per token: ~1.4 ms a token on Gemma-3's 262k vocabulary.
PENALISED_TOP_K = 128
REDRAW_TOP_K = 512


class _Sampler:
    """A sampler chain plus, for structured replies, a grammar checked on the chosen token only.

    Sampling without the grammar and redrawing from the grammar-masked distribution only
    when the draw is rejected gives exactly the masked distribution, at a fraction of the
    cost of masking the whole vocabulary at every token (llama.cpp's own sampler does this).
    The redraw itself avoids masking the whole vocabulary too (see `_redraw`).
    """

    def __init__(self, rt: _Runtime, plan: DecodePlan, *, context: Sequence[int] = ()) -> None:
        lc = rt.lc
        self.rt, self.lc = rt, lc
        self.chain = lc.llama_sampler_chain_init(lc.llama_sampler_chain_default_params())
        # Samplers that learn from the tokens accepted (repeat penalty, DRY).
        self.learns = plan.penalises or plan.dry_in_json
        if self.learns:
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_top_k(PENALISED_TOP_K))
        if plan.penalises:
            self._add_penalties(plan, context)
        elif plan.dry_in_json:
            self._add_dry(plan.dry)
        if plan.temperature <= 0:
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_greedy())
        else:
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_top_k(plan.top_k))
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_top_p(plan.top_p, 1))
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_temp(plan.temperature))
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_dist(plan.seed))
        # How many tokens the chain's first stage keeps: a redraw needs that many valid.
        self.needed = PENALISED_TOP_K if self.learns else 1 if plan.temperature <= 0 else plan.top_k
        self.wide = lc.llama_sampler_init_top_k(REDRAW_TOP_K) if plan.grammar else None
        self.grammar = None
        if plan.grammar is not None:
            self.grammar = lc.llama_sampler_init_grammar(
                rt.vocab, plan.grammar.encode("utf-8"), b"root"
            )
            if not self.grammar:
                self.free()
                raise MootError(
                    "llama.cpp rejected the grammar built from the reply schema",
                    hint="simplify the schema; the grammar is in the debug log",
                )
        self.fallbacks = 0

    def _add_penalties(self, plan: DecodePlan, context: Sequence[int]) -> None:
        lc, chain = self.lc, self.chain
        if plan.repeat_penalty > 1.0:
            sampler = lc.llama_sampler_init_penalties(
                self.rt.n_vocab, PENALTY_LAST_N, plan.repeat_penalty, 0.0, 0.0
            )
            lc.llama_sampler_chain_add(chain, sampler)
        if plan.dry > 0.0:
            self._add_dry(plan.dry)
        # The penalties see the prompt too: a small model otherwise copies the speech it
        # was just shown word for word.
        for token in list(context)[-PRIME_TOKENS:]:
            lc.llama_sampler_accept(chain, int(token))

    def _add_dry(self, multiplier: float) -> None:
        lc = self.lc
        breakers = (ctypes.c_char_p * len(DRY_BREAKERS))(*DRY_BREAKERS)
        sampler = lc.llama_sampler_init_dry(
            self.rt.vocab, multiplier, 1.75, 2, PRIME_TOKENS, breakers, len(DRY_BREAKERS)
        )
        lc.llama_sampler_chain_add(self.chain, sampler)

    def sample(self) -> int:
        lc, rt = self.lc, self.rt
        if self.grammar is None:  # llama_sampler_sample also accepts the token into the chain
            return int(lc.llama_sampler_sample(self.chain, rt.ctx, -1))
        if not self.learns:  # accepting a draw the grammar rejects then does no harm
            token = int(lc.llama_sampler_sample(self.chain, rt.ctx, -1))
            return token if self._allows([token])[0] else self._redraw()
        # The chain must learn the token finally chosen, not a draw the grammar rejected.
        cur = rt.candidates()
        lc.llama_sampler_apply(self.chain, ctypes.byref(cur))
        token = int(cur.data[cur.selected].id)
        if not self._allows([token])[0]:
            token = self._redraw()
        lc.llama_sampler_accept(self.chain, token)
        return token

    def _redraw(self) -> int:
        """Draw from the grammar-masked distribution without masking the whole vocabulary.

        The chain first keeps the `needed` best tokens. If that many of the REDRAW_TOP_K
        likeliest tokens pass the grammar, they are exactly the ones it would keep from the
        masked vocabulary (usual inside a string). Otherwise few tokens pass (between
        fields): the PrefixIndex finds every one of them. Both give the same draw as
        masking everything, which remains the way out when neither applies.
        """
        import numpy as np

        lc, rt = self.lc, self.rt
        self.fallbacks += 1
        cur = rt.candidates()
        lc.llama_sampler_apply(self.wide, ctypes.byref(cur))  # sorted, REDRAW_TOP_K long
        lc.llama_sampler_apply(self.grammar, ctypes.byref(cur))
        cur.sorted = False  # the grammar leaves the order flag set, rejected tokens in place
        kept = np.ctypeslib.as_array(cur.data, shape=(cur.size,))
        if np.count_nonzero(kept["logit"] != -np.inf) < self.needed:
            cur = rt.candidates(rt.prefix_index().narrow(self._allows_after, limit=rt.n_vocab // 4))
            lc.llama_sampler_apply(self.grammar, ctypes.byref(cur))
        lc.llama_sampler_apply(self.chain, ctypes.byref(cur))
        return int(cur.data[cur.selected].id)

    def accept(self, token: int) -> bool:
        """Advance the grammar past `token`; True once it is complete (it would allow the end)."""
        if self.grammar is None:
            return False
        self.lc.llama_sampler_accept(self.grammar, token)
        return self._allows([self.rt.eog])[0]

    def _allows(self, tokens: Sequence[int], grammar: Any = None) -> list[bool]:
        """Whether the grammar, in its present state, allows each of `tokens`."""
        import numpy as np

        data = np.zeros(len(tokens), dtype=_token_data())
        data["id"] = tokens
        array = token_array(self.lc, data)
        self.lc.llama_sampler_apply(grammar or self.grammar, ctypes.byref(array))
        return [bool(ok) for ok in data["logit"] != -np.inf]

    def _allows_after(self, after: Sequence[int], tokens: Sequence[int]) -> list[bool]:
        """Whether the grammar allows each of `tokens` once it has read `after` (which it
        must allow: llama.cpp aborts on a token that leaves no way to go on)."""
        if not after:
            return self._allows(tokens)
        lc = self.lc
        clone = lc.llama_sampler_clone(self.grammar)
        try:
            for token in after:
                lc.llama_sampler_accept(clone, token)
            return self._allows(tokens, clone)
        finally:
            lc.llama_sampler_free(clone)

    def free(self) -> None:
        if self.chain:
            self.lc.llama_sampler_free(self.chain)
            self.chain = None
        if self.grammar:
            self.lc.llama_sampler_free(self.grammar)
            self.grammar = None
        if self.wide:
            self.lc.llama_sampler_free(self.wide)
            self.wide = None
