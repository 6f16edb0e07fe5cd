"""The loaded model's context at the level of llama.cpp's C API: evaluation, KV cache, vocab."""

from __future__ import annotations

import contextlib
import ctypes
import math
from collections.abc import Sequence
from functools import cache
from typing import Any

from moot.errors import MootError
from moot.inference.decoding import PrefixIndex, Snapshot, common_prefix, same_pattern
from moot.inference.reasoning import MARKERS


def log_softmax(logits: Any) -> Any:
    """The log-probability of every token of the vocabulary, in float64."""
    import numpy as np

    x = np.asarray(logits, dtype=np.float64)
    top = float(x.max())
    return x - (top + math.log(float(np.exp(x - top).sum())))


# Positions a path is scored in at once (`Runtime.path_logprobs`): their logits are held
# together, 32 x the vocabulary in floats (33 MB at Gemma's 262k).
PATH_CHUNK = 32


class Runtime:
    """The loaded model's context at the level of llama.cpp's C API: KV cache, vocab, logits."""

    def __init__(self, llm: Any, ctx: Any = None) -> None:
        """The loaded model LLM's vocabulary, in its own context or in CTX (a shared one)."""
        import llama_cpp as lc

        self.lc, self.llm = lc, llm
        self.ctx = ctx or llm.ctx
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
        # How each cached position was evaluated: True for a token evaluated on its own, as
        # generation does, False for one evaluated in a batch of two or more. llama.cpp
        # computes a lone token slightly differently from the same token inside a batch, so
        # a cached position is reused only by a prompt that asks for it evaluated the same
        # way: a seeded debate then says the same whichever turns happened to be cached, and
        # a resumed debate does not drift from the uninterrupted one.
        self.alone: list[bool] = []
        # Which of the last decode's outputs holds this sequence's logits (-1: the last).
        self.idx = -1

    # Whether a prompt's quoted replies are evaluated one token at a time, as generated
    # (`alone`); a lane of a shared batch (`llama.batch`) evaluates every prompt in batches.
    keeps_alone = True

    @property
    def n_ctx(self) -> int:
        """The tokens the context holds."""
        return int(self.llm.n_ctx())

    @property
    def tokens(self) -> Sequence[int]:
        """The tokens the cache holds, in order."""
        return self.llm._input_ids

    def turn(self) -> contextlib.AbstractContextManager[None]:
        """Around one call: a lane of a shared batch says it is taking part (`llama.batch`)."""
        return contextlib.nullcontext()

    def common_prefix(self, tokens: Sequence[int], alone: Sequence[bool]) -> int:
        """How many leading cached positions hold TOKENS evaluated as ALONE says."""
        n = common_prefix(self.llm._input_ids, tokens)
        return same_pattern(self.alone, alone, n)

    def truncate(self, n_past: int) -> bool:
        """Drop the KV cache after `n_past`; False when the cache cannot keep that prefix."""
        lc = self.lc
        mem = lc.llama_get_memory(self.ctx)
        if not lc.llama_memory_seq_rm(mem, 0, n_past, -1):
            return False  # recurrent models cannot drop a tail
        self.llm.n_tokens = min(self.llm.n_tokens, n_past)
        del self.alone[n_past:]
        # A sliding-window cache may have evicted positions the next tokens attend to.
        return not self.n_swa or lc.llama_memory_seq_pos_min(mem, 0) <= max(0, n_past - self.n_swa)

    def eval_from(self, n_past: int, tokens: Sequence[int], alone: Sequence[bool] = ()) -> None:
        """Evaluate TOKENS after the first N_PAST, which are cached: in batches, but for the
        positions ALONE marks, which are evaluated one at a time (as they were generated)."""
        alone = list(alone) or [False] * len(tokens)
        if n_past == 0:
            self.llm.reset()
        lc = self.lc
        lc.llama_memory_seq_rm(lc.llama_get_memory(self.ctx), -1, n_past, -1)
        self.llm.n_tokens = n_past
        del self.alone[n_past:]
        for start, end, single in runs(alone, n_past, len(tokens)):
            if single:
                for token in tokens[start:end]:
                    self.step(token)
                continue
            for a, b in batches(start, end, self.llm.n_batch):
                self.llm.eval(tokens[a:b])
            self.alone.extend([False] * (end - start))

    def step(self, token: int) -> None:
        """Evaluate one generated token, as Llama.eval would, without its copy of the logits."""
        lc, llm, batch = self.lc, self.llm, self._batch
        n_past = llm.n_tokens
        batch.n_tokens = 1
        batch.token[0], batch.pos[0], batch.n_seq_id[0] = token, n_past, 1
        batch.seq_id[0][0], batch.logits[0] = 0, True
        if lc.llama_decode(self.ctx, batch) != 0:
            raise MootError(
                key="inference.llama.context.llama_cpp_could_not_evaluate", value=n_past + 1
            )
        llm.input_ids[n_past] = token
        llm.n_tokens = n_past + 1
        self.alone.append(True)

    def path_logprobs(self, tokens: Sequence[int]) -> list[float]:
        """The log-probability of each of TOKENS in turn after the cached ones (the last
        decode's logits give the first), each read over the whole vocabulary, the tokens
        then cached. They are evaluated PATH_CHUNK at a time with every position's logits
        kept: a chunk's logits, not the whole context's (`logits_all`), are ever held."""
        lc, llm = self.lc, self.llm
        out = [float(log_softmax(self.logits())[tokens[0]])] if tokens else []
        batch = lc.llama_batch_init(PATH_CHUNK, 0, 1)
        try:
            for a in range(0, len(tokens), PATH_CHUNK):
                chunk = tokens[a : a + PATH_CHUNK]
                n_past = llm.n_tokens
                batch.n_tokens = len(chunk)
                for j, token in enumerate(chunk):
                    batch.token[j], batch.pos[j], batch.n_seq_id[j] = token, n_past + j, 1
                    batch.seq_id[j][0], batch.logits[j] = 0, True
                if lc.llama_decode(self.ctx, batch) != 0:
                    raise MootError(
                        key="inference.llama.context.llama_cpp_could_not_evaluate",
                        value=n_past + len(chunk),
                    )
                llm.input_ids[n_past : n_past + len(chunk)] = chunk
                llm.n_tokens = n_past + len(chunk)
                self.alone.extend([False] * len(chunk))
                for j in range(len(chunk)):
                    if a + j + 1 < len(tokens):
                        row = self._row(j)
                        out.append(float(log_softmax(row)[tokens[a + j + 1]]))
        finally:
            lc.llama_batch_free(batch)
        return out

    def _row(self, i: int) -> Any:
        import numpy as np

        return np.ctypeslib.as_array(
            self.lc.llama_get_logits_ith(self.ctx, i), shape=(self.n_vocab,)
        )

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

    def text_piece(self, token: int) -> bytes:
        """The token's bytes as the reply's text: control tokens are left out, but for the
        Harmony markers (gpt-oss), which tell its reasoning from its answer."""
        data = self.piece(token)
        if not data and not self.is_eog(token):
            spelled = self.piece(token, special=True)
            if spelled.decode("utf-8", "replace") in MARKERS:
                return spelled
        return data

    def tokenize(self, text: str) -> list[int]:
        """TEXT's tokens, special ones read as such, without a BOS."""
        return list(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def logits(self) -> Any:
        """The last decode's logits for this sequence's last token, over the whole vocabulary:
        a numpy view, valid until the next decode."""
        import numpy as np

        return np.ctypeslib.as_array(
            self.lc.llama_get_logits_ith(self.ctx, self.idx), shape=(self.n_vocab,)
        )

    def candidates(self, tokens: Sequence[int] | None = None) -> Any:
        """`tokens` (every token by default) with their logits from the last decode, as a
        llama_token_data_array. It stays valid until the next call."""
        import numpy as np

        lc = self.lc
        logits = np.ctypeslib.as_array(
            lc.llama_get_logits_ith(self.ctx, self.idx), shape=(self.n_vocab,)
        )
        if tokens is None:
            if self._candidates is None:
                self._candidates = np.zeros(self.n_vocab, dtype=token_data())
                self._ids = np.arange(self.n_vocab, dtype=np.intc)
            data = self._candidates
            # Samplers sort the array in place: the ids must be laid out afresh every
            # time, or the logits below would be paired with the wrong tokens.
            data["id"] = self._ids
            data["logit"] = logits
            data["p"] = 0.0
        else:
            data = self._subset = np.zeros(len(tokens), dtype=token_data())
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

    def snapshot(self) -> Snapshot:
        """The context's state, with the tokens it holds and how each was evaluated."""
        lc = self.lc
        # The whole context's state, not llama_state_seq_*: a sequence's state leaves out
        # cells outside the sliding window, and then its prefix cannot be reused (Gemma-3).
        size = int(lc.llama_state_get_size(self.ctx))
        state = (ctypes.c_uint8 * size)()
        written = int(lc.llama_state_get_data(self.ctx, state, size))
        n = self.llm.n_tokens
        tokens = tuple(self.llm._input_ids[:n].tolist())
        return Snapshot(tokens, state, written, alone=tuple(self.alone[:n]))

    def restore(self, snap: Snapshot) -> bool:
        try:
            state = snap.data()
        except OSError:  # a spilled snapshot's file went missing: start from what is live
            return False
        if not self.lc.llama_state_set_data(self.ctx, state, snap.nbytes):
            self.eval_from(0, [])  # a half-restored cache must not be reused
            return False
        self.llm.input_ids[: len(snap.tokens)] = snap.tokens
        self.llm.n_tokens = len(snap.tokens)
        self.alone = list(snap.alone)
        return True

    def close(self) -> None:
        self._candidates = self._subset = None
        if self._batch is not None:
            self.lc.llama_batch_free(self._batch)
            self._batch = None


@cache
def token_data() -> Any:
    """llama_token_data as a numpy dtype: id, logit, p."""
    import numpy as np

    return np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)])


def token_array(lc: Any, data: Any) -> Any:
    """A llama_token_data_array over a numpy array of token_data(), which must outlive it."""
    return lc.llama_token_data_array(
        data=data.ctypes.data_as(lc.llama_token_data_p), size=len(data), selected=-1, sorted=False
    )


def runs(alone: Sequence[bool], start: int, end: int) -> list[tuple[int, int, bool]]:
    """[start, end) split where ALONE changes: (first, past-the-end, alone) per stretch."""
    spans: list[tuple[int, int, bool]] = []
    for i in range(start, end):
        if spans and spans[-1][2] == alone[i]:
            spans[-1] = (spans[-1][0], i + 1, alone[i])
        else:
            spans.append((i, i + 1, alone[i]))
    return spans


def batches(start: int, end: int, size: int) -> list[tuple[int, int]]:
    """Split [start, end) into chunks of at most `size`, none of a single token if avoidable."""
    spans = [(i, min(i + size, end)) for i in range(start, end, size)]
    if len(spans) > 1 and spans[-1][1] - spans[-1][0] == 1:
        (a, b), (_, c) = spans[-2], spans[-1]
        spans[-2:] = [(a, b - 1), (b - 1, c)]
    return spans
