"""The ceiling of decoding moot's independent steps as parallel sequences of one context.

A minimal loop on llama.cpp's C API (a second context on moot's loaded model, room for four
sequences in one unified KV cache, greedy sampling, moot's thread count) decodes 48 tokens
after a prefix of C tokens: (a) one sequence, one token per llama_decode (also on moot's own
context); (b) two sequences, each llama_decode a batch of one token of each, the prefix shared
(llama_memory_seq_cp); (b_distinct) the same with a prefix of its own for each sequence (two
prompts, as two steps have); (c) four sequences sharing the prefix. The steps of moot's
seeded Oxford debate that the rulebook lets run side by side (the chair's summary and the
judge; the verdict and the brief; the opposition's point of information and its speech)
are then priced as if their common tokens decoded together at rate (b): what that saves
is the lever's ceiling.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import bench_peer
from bench_peer import MODELS, N_CTX, moot_debate, peer_side, spent
from bench_rates import Rates, interpolate
from bench_roofline import FILLER, Loop, priced

LADDER = (256, 1024, 2048)  # tokens of prefix before the decoded ones
DECODE = 48  # tokens decoded in each sequence per timed run
REPEATS = 3  # each figure keeps its best run
SEQS = 4  # the most sequences the context holds
# The role/step pairs the rulebook lets run side by side, within a round (or the closing).
PAIRS = {
    "round_summary+judge": (("chair", "round_summary"), ("judge", "judge")),
    "verdict+brief": (("chair", "verdict"), ("judge", "brief")),
    "poi_question+speech": (("opposition", "poi_question"), ("opposition", "speech")),
}
MODES = {  # name: (sequences, whether each has a prefix of its own)
    "a": (1, False),
    "b": (2, False),
    "b_distinct": (2, True),
    "c": (4, False),
}


# -- the minimal loop, several sequences -------------------------------------------------


class Parallel(Loop):
    """bench_roofline's loop on a second context of the same model: moot's context params
    (threads, batch, flash attention), SEQS sequences, one KV cache for all of them, twice
    moot's context so that two sequences of moot's full context fit with prefixes apart."""

    def __init__(self, model_id: str) -> None:
        super().__init__(model_id)
        lc = self.lc
        params = lc.llama_context_params.from_buffer_copy(self.llm.context_params)
        params.n_seq_max, params.kv_unified, params.n_ctx = SEQS, True, 2 * N_CTX
        self.moot_ctx = self.ctx
        self.parallel_ctx = lc.llama_init_from_model(self.llm.model, params)
        if not self.parallel_ctx:
            raise RuntimeError(f"no context with {SEQS} sequences for {model_id}")
        self.apart: int | None = None  # the prefix sequences 1.. hold apart, if any
        lc.llama_batch_free(self.batch)
        self.batch = lc.llama_batch_init(self.llm.n_batch, 0, SEQS)

    def use(self, ctx: Any) -> None:
        """Run on CTX (self.moot_ctx: moot's own one-sequence context), its memory cleared."""
        self.ctx, self.mem = ctx, self.lc.llama_get_memory(ctx)
        self.lc.llama_memory_clear(self.mem, True)
        self.apart = None

    def decode(self, tokens: Sequence[int], start: int, seq: int = 0) -> None:
        """Evaluate TOKENS of sequence SEQ at positions from START, the last one's logits kept."""
        self.put([(token, start + i, seq) for i, token in enumerate(tokens)], last_only=True)

    def put(self, cells: Sequence[tuple[int, int, int]], *, last_only: bool = False) -> None:
        """One llama_decode of (token, position, sequence) CELLS, logits for each (or the last)."""
        batch = self.batch
        batch.n_tokens = len(cells)
        for i, (token, pos, seq) in enumerate(cells):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, pos, 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = not last_only or i == len(cells) - 1
        if self.lc.llama_decode(self.ctx, batch) != 0:
            raise RuntimeError(f"llama_decode failed at position {cells[0][1]}")
        self.lc.llama_synchronize(self.ctx)

    def grow(self, tokens: Sequence[int], held: int) -> None:
        """Sequence 0 extended from HELD tokens by TOKENS (untimed); what was after, dropped."""
        self.lc.llama_memory_seq_rm(self.mem, -1, held, -1)
        self.fill_seq(tokens, held, 0)

    def fill_seq(self, tokens: Sequence[int], start: int, seq: int) -> None:
        for i in range(0, len(tokens), self.llm.n_batch):
            self.decode(tokens[i : i + self.llm.n_batch], start + i, seq)

    def prepare(self, prefix: Sequence[int], seqs: int, own: bool) -> None:
        """Sequence 0 holds PREFIX (it does already); sequences 1..SEQS-1 a copy of its
        cells or, OWN, the same tokens evaluated apart into cells of their own."""
        lc, context = self.lc, len(prefix)
        lc.llama_memory_seq_rm(self.mem, -1, context, -1)  # every sequence back to the prefix
        if own and self.apart == context:
            return
        for seq in range(1, lc.llama_n_seq_max(self.ctx)):
            lc.llama_memory_seq_rm(self.mem, seq, -1, -1)
        self.apart = context if own else None
        for seq in range(1, seqs):
            if own:
                self.fill_seq(prefix, 0, seq)
            else:
                lc.llama_memory_seq_cp(self.mem, 0, seq, -1, -1)

    def steps(self, first: int, context: int, seqs: int) -> tuple[float, list[list[int]]]:
        """DECODE tokens in each of SEQS sequences from CONTEXT, one llama_decode a step:
        tokens per second in all, and each sequence's greedy tokens."""
        lc, tokens = self.lc, [first] * seqs
        out: list[list[int]] = [[] for _ in range(seqs)]
        began = time.perf_counter()
        for step in range(DECODE):
            self.put([(token, context + step, seq) for seq, token in enumerate(tokens)])
            tokens = [lc.llama_sampler_sample(self.sampler, self.ctx, s) for s in range(seqs)]
            for seq, token in enumerate(tokens):
                out[seq].append(token)
        return seqs * DECODE / (time.perf_counter() - began), out

    def close(self) -> None:
        self.lc.llama_free(self.parallel_ctx)
        super().close()


def filler_tokens(loop: Loop, need: int) -> list[int]:
    tokens: list[int] = []
    while len(tokens) < need:
        tokens += loop.llm.tokenize(FILLER.encode(), add_bos=not tokens, special=False)
    return tokens


def best(loop: Parallel, prefix: Sequence[int], first: int, mode: str) -> tuple[float, list]:
    """MODE's best rate of REPEATS runs after PREFIX, and every run's token lists."""
    seqs, own = MODES[mode]
    rates, runs = [], []
    for _ in range(REPEATS):
        loop.prepare(prefix, seqs, own)
        rate, tokens = loop.steps(first, len(prefix), seqs)
        rates.append(rate)
        runs += tokens
    return max(rates), runs


def divergence(reference: Sequence[int], runs: Sequence[Sequence[int]]) -> int | None:
    """The first step at which any run's greedy tokens leave REFERENCE's; None: never."""
    found = [
        next(i for i, (x, y) in enumerate(zip(reference, r, strict=True)) if x != y)
        for r in runs
        if list(r) != list(reference)
    ]
    return min(found, default=None)


def ladder_point(loop: Parallel, filler: list[int], context: int) -> dict[str, Any]:
    """Every mode's rate after CONTEXT filler tokens, on the parallel context (sequence 0
    already holds them), and where seq 0's greedy tokens leave mode (a)'s."""
    prefix, first = filler[:context], filler[context]
    point: dict[str, Any] = {"context": context}
    reference: list[int] = []
    for mode in MODES:
        rate, runs = best(loop, prefix, first, mode)
        reference = reference or runs[0]
        point[f"{mode}_tps"] = round(rate, 1)
        point[f"{mode}_diverges_at"] = divergence(reference, runs)
    point["b_speedup"] = round(point["b_tps"] / point["a_tps"], 3)
    point["b_distinct_speedup"] = round(point["b_distinct_tps"] / point["a_tps"], 3)
    point["c_speedup"] = round(point["c_tps"] / point["a_tps"], 3)
    return point


def measure_parallel(model_id: str) -> list[dict[str, Any]]:
    """The ladder on MODEL_ID: moot's own context for (a), then the parallel context."""
    print(f"speed: parallel sequences on {model_id}", file=sys.stderr)
    loop = Parallel(model_id)
    try:
        filler = filler_tokens(loop, max(LADDER) + 1)
        loop.use(loop.moot_ctx)
        own = []
        for held, context in zip((0, *LADDER), LADDER, strict=False):
            loop.grow(filler[held:context], held)
            rate, _ = best(loop, filler[:context], filler[context], "a")
            own.append(round(rate, 1))
        loop.use(loop.parallel_ctx)
        points = []
        for held, context, rate in zip((0, *LADDER), LADDER, own, strict=False):
            loop.grow(filler[held:context], held)
            points.append({**ladder_point(loop, filler, context), "a_moot_ctx_tps": rate})
    finally:
        loop.close()
    return points


# -- the ceiling for moot's seeded debate ------------------------------------------------


def rates(points: Sequence[dict[str, Any]], mode: str) -> Rates:
    """MODE's decode rates as bench_rates' Rates (the context at each run's middle)."""
    decode = tuple((p["context"] + DECODE / 2, p[f"{mode}_tps"]) for p in points)
    return Rates(eval=((0.0, 1.0),), decode=decode)


def pairs(turns: Sequence[Any]) -> list[tuple[str, Any, Any]]:
    """(kind, one turn, the other) for each pair of PAIRS found in one round or the closing."""
    at: dict[tuple[Any, str, str], Any] = {}
    for t in turns:
        at.setdefault((t.round, t.role, t.step), t)
    rounds = dict.fromkeys(t.round for t in turns)
    found = []
    for kind, (one, other) in PAIRS.items():
        for rnd in rounds:
            a, b = at.get((rnd, *one)), at.get((rnd, *other))
            if a is not None and b is not None:
                found.append((kind, a, b))
    return found


def overlap(one: Any, other: Any, single: Rates, paired: Rates) -> tuple[int, float]:
    """The K tokens the pair decodes together (the shorter completion) and the seconds
    saved: K of each one after another take K/a(ctx₁) + K/a(ctx₂); together they take
    2K/b(ctx), b the two sequences' aggregate rate at the pair's mean context."""
    k = min(one.completion_tokens, other.completion_tokens)
    middles = [t.prompt_tokens + k / 2 for t in (one, other)]
    apart = sum(k / interpolate(single.decode, m) for m in middles)
    together = 2 * k / interpolate(paired.decode, sum(middles) / 2)
    return k, apart - together


def savings(turns: Sequence[Any], single: Rates, paired: Rates) -> tuple[float, dict]:
    """Seconds saved over the debate, and by kind of pair: pairs, tokens overlapped, seconds."""
    by: dict[str, dict[str, float]] = defaultdict(lambda: {"pairs": 0, "tokens": 0, "s": 0.0})
    for kind, one, other in pairs(turns):
        k, saved = overlap(one, other, single, paired)
        row = by[kind]
        row["pairs"], row["tokens"], row["s"] = (
            row["pairs"] + 1,
            row["tokens"] + k,
            row["s"] + saved,
        )
    total = sum(row["s"] for row in by.values())
    return total, {kind: {**row, "s": round(row["s"], 2)} for kind, row in by.items()}


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a and b else None


def ceiling(model_id: str, points: Sequence[dict[str, Any]], peer_spt: float | None) -> dict:
    """moot's turn time and seconds per generated token, now and with the pairs overlapped
    (rate b, prefixes shared: the ceiling; b_distinct: a prompt each), and with every
    turn's decoding at rate b (the lever's bound). Ratios are to the peer's s_per_token."""
    run = moot_debate(model_id)
    turns, single = run.turns, rates(points, "a")
    generated = sum(t.completion_tokens for t in turns)
    turn_s = sum(spent(t, "duration_ms") for t in turns) / 1000
    paired = rates(points, "b")
    saved, by_pair = savings(turns, single, paired)
    saved_distinct, _ = savings(turns, single, rates(points, "b_distinct"))
    every = sum(priced(t, single)[1] - priced(t, paired)[1] for t in turns)
    spt, spt_par = turn_s / generated, (turn_s - saved) / generated
    wall_par = (run.wall_s - saved) / generated
    return {
        "parallel_saving_s": round(saved, 2),
        "parallel_saving_s_distinct_prefixes": round(saved_distinct, 2),
        "by_pair": by_pair,
        "moot_turn_s": round(turn_s, 1),
        "moot_turn_s_with_parallel": round(turn_s - saved, 1),
        "completion_tokens": generated,
        "s_per_generated_token": round(spt, 4),
        "s_per_generated_token_with_parallel": round(spt_par, 4),
        "peer_s_per_token": peer_spt,
        "turn_spt_ratio_with_parallel": ratio(spt_par, peer_spt),
        "wall_spt_ratio_with_parallel": ratio(wall_par, peer_spt),
        "every_turn_at_b_saving_s": round(every, 2),
        "turn_spt_ratio_every_turn_at_b": ratio((turn_s - every) / generated, peer_spt),
        "wall_spt_ratio_every_turn_at_b": ratio((run.wall_s - every) / generated, peer_spt),
    }


def run(results: dict[str, Any], *, models: Sequence[str] = MODELS) -> None:
    table: dict[str, Any] = results.setdefault("parallel", {})
    for model_id in models:
        moot_debate(model_id)  # the debate first: its load and cache stay out of the timing
        points = measure_parallel(model_id)
        peer = peer_side(results, model_id)
        figures = ceiling(model_id, points, peer.get("s_per_token"))
        table[model_id] = {**figures, "rates": points}


def summary(results: dict[str, Any]) -> list[str]:
    """One line per model: the peer ratio the lever could reach at best, and its bound."""
    lines = []
    for model_id, figures in (results.get("parallel") or {}).items():
        lines.append(
            f"parallel sequences, {model_id}: spt ratio to peer at best "
            f"{figures['wall_spt_ratio_with_parallel']} (the independent pairs overlapped), "
            f"{figures['wall_spt_ratio_every_turn_at_b']} (every turn decoded at the "
            "two-sequence rate)"
        )
    return lines


if __name__ == "__main__":
    out: dict[str, Any] = {}
    bench_peer.run(out)
    run(out)
    print(json.dumps(out, indent=2))
