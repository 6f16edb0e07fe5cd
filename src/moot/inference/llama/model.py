"""A GGUF model loaded in this process: chat formatting, KV reuse across turns, one call."""

from __future__ import annotations

import ctypes
import hashlib
import inspect
import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from moot import config
from moot.errors import ContextOverflowError, ModelIntegrityError, MootError
from moot.inference.attention import flash_attention
from moot.inference.chat_template import render_chat_template
from moot.inference.choice import (
    Choice,
    ChoiceRequest,
    Likelihood,
    LikelihoodRequest,
    schema_for,
)
from moot.inference.decoding import (
    SessionCache,
    fit_thinking,
    fold_system,
    plan_decode,
    spelled,
)
from moot.inference.llama import choice as scoring
from moot.inference.llama.build import map_weights
from moot.inference.llama.context import Runtime
from moot.inference.llama.decode import decode
from moot.inference.llama.grammar import schema_to_gbnf
from moot.inference.protocol import (
    ChatRequest,
    Completion,
    Generated,
    OnText,
    ResolvedModel,
    check_not_degenerate,
)
from moot.inference.reasoning import close_in_prompt, opens_thinking, split, with_soft_switch

log = logging.getLogger("moot.inference.llama")

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
        session_cache_mb: int = config.SESSION_CACHE_MB,
        snapshot_budget: int | None = None,
        spill_to: Callable[[], Path] | None = None,
        sessions: SessionCache | None = None,
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
                # Read, not mapped, where llama.cpp would hold the weights twice: `map_weights`.
                use_mmap=map_weights(n_gpu_layers),
                flash_attn=flash_attention(model.head_dim, n_gpu_layers),
                verbose=False,
            )
        except ValueError as exc:
            raise ModelIntegrityError(
                key="inference.llama.model.llama_cpp_could_not_load",
                path=model.path,
                exc=exc,
                id=model.id,
            ) from exc
        self._formatter = _make_formatter(self._llm, model)
        self._lock = threading.Lock()
        self._runtime = Runtime(self._llm)
        # A model loaded again (one at a time) takes back the snapshots it had: `sessions`.
        # SNAPSHOT_BUDGET (bytes, the memory plan's share for this model) wins over the
        # fixed SESSION_CACHE_MB; with SPILL_TO what the budget cannot hold may go to disk.
        if sessions is None:
            budget = session_cache_mb * 2**20 if snapshot_budget is None else snapshot_budget
            sessions = SessionCache(budget, spill_to=spill_to)
        self._sessions = sessions
        self._closed = False
        self._owns_model = True

    @classmethod
    def on_runtime(cls, loaded: LlamaCppModel, runtime: Runtime) -> LlamaCppModel:
        """LOADED's model, its weights and chat format shared, answering through RUNTIME (a
        lane of a batch shared with other debates, `llama.batch`) with snapshots of its own.
        Closing it frees the runtime only; the loaded model stays LOADED's."""
        model = cls.__new__(cls)
        model._resolved, model._llm, model._formatter = (
            loaded._resolved,
            loaded._llm,
            loaded._formatter,
        )
        model._lock = threading.Lock()
        model._runtime = runtime
        model._sessions = SessionCache(loaded._sessions.budget)  # in memory only: a lane's
        model._closed = False
        model._owns_model = False
        return model

    backend = "llama.cpp"

    @property
    def runtime(self) -> Runtime:
        """Its context at the level of llama.cpp's C API (`llama.context`)."""
        return self._runtime

    @property
    def model_id(self) -> str:
        return self._resolved.id

    @property
    def file_name(self) -> str:
        """The GGUF file it runs (the first part of a split model)."""
        return self._resolved.path.name

    @property
    def n_ctx(self) -> int:
        """The tokens its context holds (a lane's: its own sequence's)."""
        return self._runtime.n_ctx

    @property
    def flash_attention(self) -> bool:
        """Whether its context computes attention with flash attention (`inference.attention`)."""
        from llama_cpp import LLAMA_FLASH_ATTN_TYPE_ENABLED

        return bool(self._llm.context_params.flash_attn_type == LLAMA_FLASH_ATTN_TYPE_ENABLED)

    def count_tokens(self, request: ChatRequest) -> int:
        """How many tokens the request's prompt takes, chat template included."""
        with self._lock:
            prompt, _, added_special, _ = self._format_prompt(request)
            return len(self._tokenize(prompt, added_special))

    def text_tokens(self, text: str) -> int:
        """How many tokens TEXT is to this model's tokenizer (no special tokens)."""
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        start = time.perf_counter()
        with self._lock:
            if self._closed:
                raise MootError(key="inference.llama.model.was_closed", model_id=self.model_id)
            prompt, stops, added_special, opened = self._format_prompt(request)
            tokens, alone = self._spliced(request, prompt, added_special)
            if not self._runtime.keeps_alone:
                alone = [False] * len(tokens)
            grammar = (
                schema_to_gbnf(request.reply_schema, request.prose)
                if request.reply_schema
                else request.grammar
            )
            plan = plan_decode(request, format_stops=stops, grammar=grammar)
            spare = self.n_ctx - len(tokens) - plan.max_tokens
            if spare < 0:
                raise ContextOverflowError(
                    prompt_tokens=len(tokens), n_ctx=self.n_ctx, max_tokens=plan.max_tokens
                )
            plan = fit_thinking(plan, spare=spare, opened=opened)
            deadline = start + request.timeout_s if request.timeout_s else None
            with self._runtime.turn():
                cached = self._prepare_kv(tokens, alone, request.session)
                text, n_out, finish, ttft = decode(
                    self._runtime,
                    plan,
                    on_text,
                    start=start,
                    deadline=deadline,
                    model_id=self.model_id,
                )
                generated = None
                if request.reply_schema is None:  # free text: a later prompt may quote it
                    held = tuple(int(t) for t in self._runtime.tokens[len(tokens) :])
                    generated = Generated(
                        model=self._fingerprint, prompt=_sha(prompt.encode()), tokens=held
                    )
                if request.session and self._sessions.enabled:
                    self._sessions.discard(request.session)  # free it before taking the new one
                    self._sessions.put(request.session, self._runtime.snapshot())
        # A reply held to a grammar matches it from its first token (thinking is off for it).
        reasoning, answer = ("", text) if grammar else split(text)
        completion = Completion(
            text=answer,
            reasoning=reasoning,
            prompt_tokens=len(tokens),
            completion_tokens=n_out,
            cached_tokens=cached,
            duration_ms=round((time.perf_counter() - start) * 1000),
            ttft_ms=round(ttft * 1000),
            finish_reason=finish,
            generated=generated,
        )
        if request.reply_schema is None:
            check_not_degenerate(completion)
        return completion

    def choose(self, request: ChoiceRequest) -> Choice:
        """The probability of each of the request's options, read from the logits: the chat
        prompt formatted as for a structured reply, the reply's prefix after it, and each
        option's whole continuation scored over the full vocabulary (`llama.choice`)."""
        start = time.perf_counter()
        chat = ChatRequest(
            messages=request.messages,
            reply_schema=schema_for(request),
            session=request.session,
            timeout_s=request.timeout_s,
        )
        logps, n, _ = self._score(
            chat, request.prefix(), [request.spelled(option) for option in request.options]
        )
        top = max(logps)
        weights = {str(o): math.exp(lp - top) for o, lp in zip(request.options, logps, strict=True)}
        total = sum(weights.values())
        return Choice(
            probabilities={k: w / total for k, w in weights.items()},
            method="logits",
            prompt_tokens=n,
            duration_ms=round((time.perf_counter() - start) * 1000),
        )

    def likelihood(self, request: LikelihoodRequest) -> Likelihood:
        """The log-probability of the request's reply after its chat prompt, token by token
        over the full vocabulary (`llama.choice`), thinking off."""
        start = time.perf_counter()
        chat = ChatRequest(messages=request.messages, think_budget=0, timeout_s=request.timeout_s)
        (logp,), n, (whole,) = self._score(chat, "", [request.reply])
        return Likelihood(
            logprob=logp,
            tokens=whole - n,
            duration_ms=round((time.perf_counter() - start) * 1000),
        )

    def _score(
        self, chat: ChatRequest, prefix: str, options: list[str]
    ) -> tuple[list[float], int, list[int]]:
        """Each of OPTIONS' log-probability as the reply's continuation after CHAT's prompt
        and PREFIX, how many leading tokens they all share with the prompt, and each one's
        whole length in tokens (prompt included)."""
        with self._lock:
            if self._closed:
                raise MootError(key="inference.llama.model.closed", model=self.model_id)
            prompt, _, added_special, _ = self._format_prompt(chat)
            head = prompt + prefix
            base, alone = self._spliced(chat, head, added_special)
            replies = [self._spliced(chat, head + option, added_special)[0] for option in options]
            n = scoring.split_point(base, replies)
            tokens = replies[0][:n]
            alone = alone[:n] if self._runtime.keeps_alone else [False] * n
            longest = max(len(reply) for reply in replies)
            if longest > self.n_ctx:
                raise ContextOverflowError(
                    prompt_tokens=n, n_ctx=self.n_ctx, max_tokens=longest - n
                )
            root = scoring.trie([reply[n:] for reply in replies])
            rt = self._runtime

            def rewind(depth: int) -> None:
                path = list(rt.tokens[:depth])
                rt.eval_from(0, path, (alone + [True] * (depth - n)) if rt.keeps_alone else ())

            with rt.turn():
                self._prepare_kv(tokens, alone, chat.session)
                logps = scoring.score(rt, root, len(replies), n, rewind)
                if chat.session and self._sessions.enabled:
                    self._sessions.discard(chat.session)
                    self._sessions.put(chat.session, rt.snapshot())
        return logps, n, [len(reply) for reply in replies]

    def forget(self) -> None:
        """Drop every cached prompt, live and kept: the next call starts as on a freshly
        loaded model, so what a debate says does not depend on what ran before it."""
        with self._lock:
            if not self._closed:
                self._sessions.clear()
                self._runtime.eval_from(0, [])

    def take_sessions(self) -> SessionCache:
        """The speakers' KV snapshots, handed over (this model keeps none): what a model
        unloaded for another's turns passes on to itself loaded again."""
        with self._lock:
            taken, self._sessions = self._sessions, self._sessions.emptied()
            return taken

    def close(self) -> None:
        """Free the model and its context; the instance is unusable afterwards."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._sessions.clear()
                self._runtime.close()
                if self._owns_model:
                    self._llm.close()

    def _format_prompt(self, request: ChatRequest) -> tuple[str, tuple[str, ...], bool, str]:
        """The prompt, its stop strings, whether it holds its special tokens, and the think
        tag it ends with when the chat template opened the block for the model.

        Thinking is off for a think budget of 0 and for a reply held to a grammar (JSON, or
        one question, from the first token): the template is told (`enable_thinking`),
        a Qwen3-style one that cannot be told gets `/no_think`, and a block the template
        opens anyway is closed in the prompt."""
        off = (
            request.think_budget == 0
            or request.reply_schema is not None
            or request.grammar is not None
        )
        msgs = [{"role": m.role, "content": m.content} for m in request.messages]
        formatter = self._formatter
        if off and isinstance(formatter, _TemplateFormatter):
            formatter = formatter.without_thinking()
        result = _render_chat(formatter, msgs)
        if off and _soft_switch(formatter, result.prompt, msgs):
            msgs[-1]["content"] = with_soft_switch(msgs[-1]["content"])
            result = _render_chat(formatter, msgs)
        stop = result.stop or ()
        stops = (stop,) if isinstance(stop, str) else tuple(stop)
        prompt = result.prompt
        if off:
            return close_in_prompt(prompt), stops, bool(result.added_special), ""
        return prompt, stops, bool(result.added_special), opens_thinking(prompt) or ""

    def _tokenize(self, prompt: str, added_special: bool) -> list[int]:
        return self._tokenize_bytes(prompt.encode("utf-8"), bos=not added_special)

    def _tokenize_bytes(self, data: bytes, *, bos: bool) -> list[int]:
        return list(self._llm.tokenize(data, add_bos=bos, special=True)) if data else []

    @property
    def _fingerprint(self) -> str:
        """What tells this model's token ids from another's: the file's checksum, or path."""
        return self._resolved.sha256 or str(self._resolved.path.resolve())

    def _spliced(
        self, request: ChatRequest, prompt: str, added_special: bool
    ) -> tuple[list[int], list[bool]]:
        """The prompt's tokens, and which of them are to be evaluated alone.

        An assistant message that is this model's own reply, quoted after the very prompt
        it was generated for, is spelled in the tokens generated (`Message.generated`), not
        tokenized again from its text, and marked to be evaluated one at a time, as they
        were: the KV cache generation left is then this prompt's prefix, and a resumed
        debate, evaluating it cold from the journaled tokens, computes the same values.
        What a reply's tokens spell beyond its quoted text (a cut, a stop) is left out."""
        data = prompt.encode("utf-8")
        tokens: list[int] = []
        alone: list[bool] = []
        done = 0  # bytes of the prompt already in `tokens`
        for t, message in enumerate(request.messages):
            gen = message.generated
            if message.role != "assistant" or gen is None or gen.model != self._fingerprint:
                continue
            earlier = request.model_copy(update={"messages": request.messages[:t]})
            before = self._format_prompt(earlier)[0].encode("utf-8")
            if len(before) < done or not data.startswith(before) or _sha(before) != gen.prompt:
                continue
            n, used = spelled(gen.tokens, data[len(before) :], self._runtime.piece)
            if not n:
                continue
            head = self._tokenize_bytes(
                data[done : len(before)], bos=not done and not added_special
            )
            tokens += [*head, *gen.tokens[:n]]
            alone += [False] * len(head) + [True] * n
            done = len(before) + used
        tail = self._tokenize_bytes(data[done:], bos=not done and not added_special)
        return tokens + tail, alone + [False] * len(tail)

    def _prepare_kv(self, tokens: list[int], alone: list[bool], session: str | None) -> int:
        """Evaluate the prompt, reusing the longest prefix already cached; return its length."""
        rt = self._runtime
        live = rt.common_prefix(tokens, alone)
        sessions = self._sessions
        snapshot, shared = sessions.best(tokens, alone) if session else (None, 0)
        if snapshot and shared > live + _MIN_RESTORE_GAIN:
            # A spilled snapshot is read back only where that beats evaluating what it spares.
            on_disk = snapshot.path is not None
            if not on_disk or sessions.costs.reading_pays(snapshot.nbytes, shared - live):
                began = time.perf_counter()
                live = shared if rt.restore(snapshot) else 0
                if on_disk and live:
                    sessions.costs.read(snapshot.nbytes, time.perf_counter() - began)
        # At least two tokens are evaluated: the last one for its logits, and never alone.
        n_past = max(0, min(live, len(tokens) - 2))
        # Nor is a batch's first token left alone: the stretch evaluated from N_PAST that
        # the cold prompt evaluates in a batch keeps at least two tokens.
        if 0 < n_past < len(tokens) - 1 and alone[n_past - 1 : n_past + 2] == [False, False, True]:
            n_past -= 1
        if n_past > 0 and not rt.truncate(n_past):
            n_past = 0
        began = time.perf_counter()
        rt.eval_from(n_past, tokens, alone)
        sessions.costs.evaluated(len(tokens) - n_past, time.perf_counter() - began)
        return n_past


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _render_chat(formatter: Any, msgs: list[dict[str, str]]) -> Any:
    result = _render(formatter, msgs)
    system = "\n\n".join(m["content"] for m in msgs if m["role"] == "system").strip()
    if system and system not in result.prompt:
        # Some formats (gemma) drop system messages without a word.
        result = _render(formatter, fold_system(msgs))
    return result


def _soft_switch(formatter: Any, prompt: str, msgs: list[dict[str, str]]) -> bool:
    """Whether thinking off must be asked in the model's own words: a template that knows
    think blocks but not `enable_thinking`, and does not open the block itself (which is
    closed in the prompt then)."""
    return (
        isinstance(formatter, _TemplateFormatter)
        and formatter.soft_switch
        and opens_thinking(prompt) is None
        and msgs[-1]["role"] == "user"
    )


def _render(formatter: Any, msgs: list[dict[str, str]]) -> Any:
    try:
        return formatter(messages=msgs)
    except MootError:
        raise
    except Exception as exc:  # a template's raise_exception(), or a jinja2 error
        raise MootError(
            key="inference.llama.model.chat_template_could_not_format", exc=exc
        ) from exc


@dataclass(frozen=True)
class _Formatted:
    prompt: str
    stop: list[str]
    added_special: bool = True


@dataclass(frozen=True)
class _TemplateFormatter:
    """A GGUF file's chat template, applied by `chat_template.render_chat_template`."""

    template: str
    eos_token: str
    bos_token: str
    variables: tuple[tuple[str, object], ...] = ()

    def __call__(self, *, messages: list[dict[str, str]]) -> _Formatted:
        prompt = render_chat_template(
            self.template,
            messages,
            eos_token=self.eos_token,
            bos_token=self.bos_token,
            **dict(self.variables),
        )
        return _Formatted(prompt=prompt, stop=[self.eos_token])

    def without_thinking(self) -> _TemplateFormatter:
        """The template told to leave thinking out: Qwen3's `enable_thinking`, and the lowest
        `reasoning_effort` for gpt-oss, which cannot stop reasoning altogether."""
        off = (("enable_thinking", False), ("reasoning_effort", "low"))
        return replace(self, variables=off)

    @property
    def soft_switch(self) -> bool:
        """A template that knows think blocks but not `enable_thinking`: a Qwen3-style model
        is then told in its own words."""
        return "<think>" in self.template and "enable_thinking" not in self.template


def _make_formatter(llm: Any, model: ResolvedModel) -> Any:
    """The file's own chat template, or a named llama-cpp-python format; never a default."""
    from llama_cpp import llama_chat_format as lcf

    if model.chat_format == "template":
        template = model.chat_template  # the text moot checked when it resolved the file
        if not template:
            raise MootError(
                key="inference.llama.model.has_no_chat_template_metadata", name=model.path.name
            )
        if llm.metadata.get("tokenizer.chat_template") != template:
            raise ModelIntegrityError(
                key="inference.llama.model.changed_after_moot_checked_chat",
                path=model.path,
                id=model.id,
            )
        eos, bos = llm.token_eos(), llm.token_bos()
        # The template is code from the internet: rendered in moot's sandbox, bounded in time,
        # work and output (as llama-cpp-python's Jinja2ChatFormatter would render it).
        return _TemplateFormatter(
            template,
            eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
            bos_token=llm._model.token_get_text(bos) if bos != -1 else "",
        )
    try:
        handler = lcf.get_chat_completion_handler(model.chat_format)
    except Exception:
        known = ", ".join(sorted(lcf.LlamaChatCompletionHandlerRegistry()._chat_handlers))
        raise MootError(
            key="inference.llama.model.unknown_chat_format",
            chat_format=model.chat_format,
            id=model.id,
            known=known,
        ) from None
    # Registered formats are only reachable wrapped in a completion handler.
    formatter = inspect.getclosurevars(handler).nonlocals.get("chat_formatter")
    if formatter is None:
        raise MootError(
            key="inference.llama.model.chat_format_not_plain_text", chat_format=model.chat_format
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
