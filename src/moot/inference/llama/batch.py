"""Several debates' sequences decoded in one llama.cpp batch (`moot tournament --parallel N
--batch`).

A loaded model reads its weights once per `llama_decode` whatever the batch holds, so where
reading them bounds decoding (a GPU), two debates that each want their next token from the
same model get both for little more than the price of one. Each model gets one shared
context (`SharedContext`) with a sequence per debate slot; each debate's seat on it is a
`Lane`, a Runtime that hands its tokens to the process's `Batcher` instead of decoding them
itself. The batcher runs one decode at a time, on every core: the pending tokens of every lane of
one model, once each lane of that model that is in a call has handed in its next tokens (a lane
is between two draws for a moment only), so the debates on one model step together. Where
lanes of several models are ready, the model most lanes wait on goes first, then the one
decoded last.

Tokens decoded beside another sequence's come out of other kernels (a batch of two sums in
another order than a batch of one), so a batched debate's words depend on which debates ran
beside it: its transcript records that (`config.Decoding.batch`) and a replay explains a
difference instead of failing. Its journal resumes it word for word as ever.

The pool that seats a tournament's debates on lanes is `moot.inference.pool.BatchPool`.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from moot.errors import MootError
from moot.inference.decoding import Snapshot, common_prefix
from moot.inference.llama.context import Runtime, log_softmax

if TYPE_CHECKING:
    pass


class BatchStopped(MootError):
    """The batcher was stopped (Ctrl-C, the end of a tournament) while a lane waited on it."""

    def __init__(self) -> None:
        super().__init__(key="inference.llama.batch.stopped_mid_turn")


class SharedContext:
    """One loaded model's context for several sequences, one per lane, decoded by the batcher."""

    def __init__(self, loaded: Runtime, lanes: int, n_ctx: int) -> None:
        lc, llm = loaded.lc, loaded.llm
        params = lc.llama_context_params.from_buffer_copy(llm.context_params)
        # A KV buffer of N_CTX cells for each sequence (kv_unified off), so that attention
        # reads only the sequence's own cells: one buffer for all made a 2-debate challenge
        # tournament 1.2 times as slow (llama.cpp 0.3.x, 2 CPU cores).
        params.n_seq_max, params.n_ctx, params.kv_unified = lanes, lanes * n_ctx, False
        self.lc, self.loaded, self.n_ctx = lc, loaded, n_ctx
        self.ctx = lc.llama_init_from_model(llm.model, params)
        if not self.ctx:
            raise MootError(key="inference.llama.batch.llama_cpp_could_not_make", lanes=lanes)
        self.n_batch = int(params.n_batch)
        self._batch = lc.llama_batch_init(self.n_batch, 0, 1)
        self.lock = threading.Lock()  # the context: a decode, or a lane's cache operation

    def decode(self, work: Sequence[_Chunk]) -> bool:
        """One llama_decode of every chunk of WORK; False when llama.cpp refused it."""
        lc, batch = self.lc, self._batch
        k = 0
        for chunk in work:
            for j, token in enumerate(chunk.tokens):
                batch.token[k], batch.pos[k], batch.n_seq_id[k] = token, chunk.pos + j, 1
                batch.seq_id[k][0] = chunk.lane.seq
                batch.logits[k] = chunk.last and j == len(chunk.tokens) - 1
                if batch.logits[k]:
                    chunk.lane.idx = k
                k += 1
        batch.n_tokens = k
        with self.lock:
            return bool(lc.llama_decode(self.ctx, batch) == 0)

    def close(self) -> None:
        if self._batch is not None:
            self.lc.llama_batch_free(self._batch)
            self._batch = None
        if self.ctx:
            self.lc.llama_free(self.ctx)
            self.ctx = None


@dataclass
class _Chunk:
    lane: Lane
    tokens: list[int]
    pos: int
    last: bool  # the lane's submission ends with this chunk


@dataclass
class _Submission:
    tokens: list[int]
    order: int
    failed: bool = False
    done: bool = False
    pos: int = 0  # where its next untaken token goes


@dataclass
class Stats:
    """What the batcher did: how many decodes held each number of debates."""

    by_width: dict[int, int] = field(default_factory=dict)

    @property
    def together(self) -> int:
        """The decodes that held two debates or more."""
        return sum(n for width, n in self.by_width.items() if width > 1)


class Batcher:
    """Decodes every lane's tokens, one batch at a time: the pending tokens of all the lanes
    of one model, once each of its lanes in a call has handed its in. Whoever waits does the
    decoding (no thread of its own), so nothing runs once no lane waits."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._busy: dict[SharedContext, set[Lane]] = {}
        self._pending: dict[SharedContext, dict[Lane, _Submission]] = {}
        self._decoding = False
        self._last: SharedContext | None = None
        self._order = itertools.count()
        self._stopped = False
        self.stats = Stats()

    @contextlib.contextmanager
    def taking_part(self, lane: Lane) -> Iterator[None]:
        """Around a lane's call: decodes of its model wait for its tokens meanwhile."""
        with self._cond:
            self._busy.setdefault(lane.shared, set()).add(lane)
        try:
            yield
        finally:
            with self._cond:
                self._busy[lane.shared].discard(lane)
                self._cond.notify_all()

    def stop(self) -> None:
        """Every lane waiting now or later raises BatchStopped: the debates end where they are."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def submit(self, lane: Lane, tokens: Sequence[int]) -> None:
        """Decode TOKENS at the end of LANE's sequence, with the last one's logits: returns once
        they are in its cache (`lane.idx` then names its logits)."""
        mine = _Submission(list(tokens), next(self._order), pos=lane.n_past)
        with self._cond:
            if self._stopped:
                raise BatchStopped()
            self._pending.setdefault(lane.shared, {})[lane] = mine
            self._cond.notify_all()
            while not mine.done:
                if self._stopped:
                    self._pending[lane.shared].pop(lane, None)
                    raise BatchStopped()
                shared = None if self._decoding else self._choose()
                if shared is None:
                    self._cond.wait()
                    continue
                self._lead(shared)
        if mine.failed:
            raise MootError(
                key="inference.llama.batch.llama_cpp_could_not_evaluate", value=lane.n_past + 1
            )

    def _choose(self) -> SharedContext | None:
        """The model to decode next: of those whose every lane in a call has handed in its
        tokens, the one with most lanes waiting, then the one decoded last."""
        ready = [
            ((len(subs), shared is self._last, -min(s.order for s in subs.values())), shared)
            for shared, subs in self._pending.items()
            if subs and self._busy.get(shared, set()) <= subs.keys()
        ]
        return max(ready, key=lambda item: item[0])[1] if ready else None

    def _lead(self, shared: SharedContext) -> None:
        """Decode SHARED's pending tokens, with the condition's lock held on entry and exit."""
        subs = self._pending[shared]
        work, room = [], shared.n_batch
        # One-token submissions first, so that a long prompt never keeps a draw waiting.
        for lane, sub in sorted(subs.items(), key=lambda kv: (len(kv[1].tokens), kv[1].order)):
            if room == 0:
                break
            taken = sub.tokens[:room]
            sub.tokens = sub.tokens[room:]
            room -= len(taken)
            work.append(_Chunk(lane, taken, sub.pos, last=not sub.tokens))
            sub.pos += len(taken)
        self._decoding, self._last = True, shared
        self._cond.release()
        try:
            ok = shared.decode(work)
        finally:
            self._cond.acquire()
            self._decoding = False
        widths = self.stats.by_width
        widths[len(work)] = widths.get(len(work), 0) + 1
        for chunk in work:
            sub = subs[chunk.lane]
            if not ok:
                sub.failed, sub.done = True, True
            elif chunk.last:
                sub.done = True
            if sub.done:
                del subs[chunk.lane]
        self._cond.notify_all()


class Lane(Runtime):
    """One debate's sequence on a shared context: a Runtime whose tokens the batcher decodes
    with the other lanes'. Every prompt is evaluated in batches (`keeps_alone` False)."""

    keeps_alone = False

    def __init__(self, shared: SharedContext, seq: int, batcher: Batcher) -> None:
        super().__init__(shared.loaded.llm, shared.ctx)
        self.shared, self.seq, self.batcher = shared, seq, batcher
        self.held: list[int] = []  # the tokens its sequence holds (`alone` is not kept)

    @property
    def tokens(self) -> Sequence[int]:
        return self.held

    @property
    def n_ctx(self) -> int:
        return self.shared.n_ctx

    @property
    def n_past(self) -> int:
        return len(self.held)

    def turn(self) -> contextlib.AbstractContextManager[None]:
        return self.batcher.taking_part(self)

    def prefix_index(self) -> Any:
        return self.shared.loaded.prefix_index()  # built once per model, for every lane

    def common_prefix(self, tokens: Sequence[int], alone: Sequence[bool]) -> int:
        return common_prefix(self.held, tokens)  # evaluated alike: all in batches

    def _memory(self) -> Any:
        return self.lc.llama_get_memory(self.ctx)

    def truncate(self, n_past: int) -> bool:
        lc = self.lc
        with self.shared.lock:
            if not lc.llama_memory_seq_rm(self._memory(), self.seq, n_past, -1):
                return False
            del self.held[n_past:]
            low = lc.llama_memory_seq_pos_min(self._memory(), self.seq)
        return not self.n_swa or low <= max(0, n_past - self.n_swa)

    def eval_from(self, n_past: int, tokens: Sequence[int], alone: Sequence[bool] = ()) -> None:
        with self.shared.lock:
            self.lc.llama_memory_seq_rm(self._memory(), self.seq, n_past, -1)
        del self.held[n_past:]
        new = list(tokens[n_past:])
        if new:
            self.batcher.submit(self, new)
            self.held.extend(new)

    def step(self, token: int) -> None:
        self.batcher.submit(self, [token])
        self.held.append(token)

    def path_logprobs(self, tokens: Sequence[int]) -> list[float]:
        """As Runtime's, a token at a time: the batcher decodes a lane's last position only."""
        out: list[float] = []
        for token in tokens:
            out.append(float(log_softmax(self.logits())[token]))
            self.step(token)
        return out

    def snapshot(self) -> Snapshot:
        lc = self.lc
        with self.shared.lock:
            size = int(lc.llama_state_seq_get_size(self.ctx, self.seq))
            state = (ctypes.c_uint8 * size)()
            written = int(lc.llama_state_seq_get_data(self.ctx, state, size, self.seq))
        return Snapshot(tuple(self.held), state, written)  # every token evaluated in a batch

    def restore(self, snap: Snapshot) -> bool:
        try:
            state = snap.data()
        except OSError:
            return False
        lc = self.lc
        with self.shared.lock:
            lc.llama_memory_seq_rm(self._memory(), self.seq, -1, -1)
            ok = lc.llama_state_seq_set_data(self.ctx, state, snap.nbytes, self.seq) != 0
            if not ok:
                lc.llama_memory_seq_rm(self._memory(), self.seq, -1, -1)
        self.held = list(snap.tokens) if ok else []
        return ok

    def close(self) -> None:
        with self.shared.lock:
            if self.shared.ctx:
                self.lc.llama_memory_seq_rm(self._memory(), self.seq, -1, -1)
        self.held = []
        super().close()
