"""moot's turns priced at llama.cpp's raw rates: the roofline, and the work figures.

A minimal loop on llama.cpp's C API (one llama_decode per batch, greedy sampling, moot's
thread count) measures the batch-evaluation rate and the decode rate at a ladder of
contexts. Every turn of moot's seeded Oxford debate (the one bench_peer runs) is priced
at those rates: its uncached prompt tokens evaluated in a batch at the context they start
from, then its completion decoded one token at a time. `implementation_efficiency` is the
roofline time over the time the turns took; the work figures say how much moot evaluates
for what it generates.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from bench_floor import floor
from bench_peer import MODELS, load_as_moot, moot_debate, peer_side, spent
from bench_rates import Rates, interpolate

LADDER = (0, 512, 1024, 2048, 3072)  # tokens already in the context
BATCH = 256  # tokens evaluated in one timed batch (a turn evaluates ~300 uncached)
DECODE = 48  # tokens decoded one at a time per timed run
REPEATS = 3  # each point keeps its best run: a slow one measures the neighbours
FILLER = (
    "The motion before the House is that remote work is better than office work. "
    "Working from home saves hours of travel, yet the office keeps teams together. "
)


def priced(turn: Any, rates: Rates) -> tuple[float, float]:
    """Seconds a turn would take at the raw rates: (evaluating its uncached prompt tokens,
    decoding its completion), each at the context in the middle of that work; a refused
    draw's work is priced at the kept one's context."""
    evaluated = spent(turn, "prompt_tokens") - spent(turn, "cached_tokens")
    eval_s = evaluated / interpolate(rates.eval, turn.cached_tokens + evaluated / 2)
    middle = turn.prompt_tokens + turn.completion_tokens / 2
    decode_s = spent(turn, "completion_tokens") / interpolate(rates.decode, middle)
    return eval_s, decode_s


def share(part: float, whole: float) -> float | None:
    return round(part / whole, 3) if whole else None


def efficiency(turns: Sequence[Any], rates: Rates) -> dict[str, Any]:
    """Roofline over measured time, in all and by phase (time to first token is taken as
    the prompt's, the rest as decoding)."""
    costs = [priced(t, rates) for t in turns]
    eval_s = sum(c[0] for c in costs)
    decode_s = sum(c[1] for c in costs)
    measured = sum(spent(t, "duration_ms") for t in turns) / 1000
    prompt_phase = sum(spent(t, "ttft_ms") for t in turns) / 1000
    generated = sum(t.completion_tokens for t in turns)
    return {
        "implementation_efficiency": share(eval_s + decode_s, measured),
        # Decoding one sequence at llama.cpp's raw rate, per token kept: no lever on the
        # prompt side takes moot's seconds per generated token below it.
        "decode_floor_s_per_token": round(decode_s / generated, 4) if generated else None,
        "turn_s": round(measured, 1),
        "roofline_s": round(eval_s + decode_s, 1),
        "prompt_efficiency": share(eval_s, prompt_phase),
        "decode_efficiency": share(decode_s, measured - prompt_phase),
    }


def by_step(turns: Sequence[Any], rates: Rates) -> list[dict[str, Any]]:
    """Per role and step: measured and roofline seconds, most time lost first."""
    groups: dict[str, list[Any]] = defaultdict(list)
    for t in turns:
        groups[f"{t.role}/{t.step}"].append(t)
    rows = []
    for name, group in groups.items():
        roof = sum(sum(priced(t, rates)) for t in group)
        measured = sum(spent(t, "duration_ms") for t in group) / 1000
        rows.append(
            {
                "step": name,
                "turns": len(group),
                "turn_s": round(measured, 2),
                "roofline_s": round(roof, 2),
                "efficiency": share(roof, measured),
                "lost_s": round(measured - roof, 2),
            }
        )
    return sorted(rows, key=lambda row: -row["lost_s"])


def work(turns: Sequence[Any]) -> dict[str, Any]:
    """What moot evaluated (for every draw, kept or refused) for what it generated (kept),
    the share its cache served, and which steps evaluated it (role/step, most first)."""
    prompt = sum(spent(t, "prompt_tokens") for t in turns)
    cached = sum(spent(t, "cached_tokens") for t in turns)
    generated = sum(t.completion_tokens for t in turns)
    by: dict[str, int] = defaultdict(int)
    for t in turns:
        by[f"{t.role}/{t.step}"] += spent(t, "prompt_tokens") - spent(t, "cached_tokens")
    return {
        "prompt_tokens": prompt,
        "prompt_evaluated": prompt - cached,
        "completion_tokens": generated,
        "refused_draws_completion_tokens": sum(spent(t, "completion_tokens") for t in turns)
        - generated,
        "evaluated_per_generated": share(prompt - cached, generated),
        "cache_share": share(cached, prompt),
        "evaluated_by_step": dict(sorted(by.items(), key=lambda kv: -kv[1])),
    }


# -- the minimal loop --------------------------------------------------------------------


class Loop:
    """llama.cpp's C API and nothing else: a batch, llama_decode, a greedy sampler."""

    def __init__(self, model_id: str, *, flash_attn: bool | None = None) -> None:
        import llama_cpp as lc

        self.lc = lc
        self.llm = load_as_moot(model_id, flash_attn=flash_attn)
        self.ctx = self.llm.ctx
        self.mem = lc.llama_get_memory(self.ctx)
        self.batch = lc.llama_batch_init(self.llm.n_batch, 0, 1)
        self.sampler = lc.llama_sampler_chain_init(lc.llama_sampler_chain_default_params())
        lc.llama_sampler_chain_add(self.sampler, lc.llama_sampler_init_greedy())

    def decode(self, tokens: Sequence[int], start: int) -> None:
        """Evaluate TOKENS at positions from START, the last one's logits kept."""
        batch = self.batch
        batch.n_tokens = len(tokens)
        for i, token in enumerate(tokens):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, start + i, 1
            batch.seq_id[i][0], batch.logits[i] = 0, i == len(tokens) - 1
        if self.lc.llama_decode(self.ctx, batch) != 0:
            raise RuntimeError(f"llama_decode failed at position {start}")
        self.lc.llama_synchronize(self.ctx)

    def fill(self, tokens: Sequence[int], start: int) -> None:
        for i in range(0, len(tokens), self.llm.n_batch):
            self.decode(tokens[i : i + self.llm.n_batch], start + i)

    def drop_from(self, pos: int) -> None:
        self.lc.llama_memory_seq_rm(self.mem, 0, pos, -1)

    def eval_rate(self, tokens: Sequence[int], start: int) -> float:
        self.drop_from(start)
        began = time.perf_counter()
        self.decode(tokens, start)
        return len(tokens) / (time.perf_counter() - began)

    def decode_rate(self, token: int, start: int, n: int) -> float:
        self.drop_from(start)
        began = time.perf_counter()
        for i in range(n):
            self.decode([token], start + i)
            token = self.lc.llama_sampler_sample(self.sampler, self.ctx, -1)
        return n / (time.perf_counter() - began)

    def close(self) -> None:
        self.lc.llama_sampler_free(self.sampler)
        self.lc.llama_batch_free(self.batch)
        self.llm.close()


def measure(
    model_id: str,
    *,
    flash_attn: bool | None = None,
    contexts: Sequence[int] = LADDER,
    repeats: int = REPEATS,
) -> Rates:
    """Batch-eval and decode rates at every one of CONTEXTS, each its best of REPEATS
    (FLASH_ATTN: None, as moot loads MODEL_ID)."""
    print(f"speed: llama.cpp's raw rates on {model_id}", file=sys.stderr)
    loop = Loop(model_id, flash_attn=flash_attn)
    try:
        need = max(contexts) + BATCH + 1
        filler: list[int] = []
        while len(filler) < need:
            filler += loop.llm.tokenize(FILLER.encode(), add_bos=not filler, special=False)
        evals, decodes = [], []
        loop.lc.llama_memory_clear(loop.mem, True)
        held = 0
        for context in contexts:
            loop.drop_from(held)
            loop.fill(filler[held:context], held)  # the context itself is not timed
            held = context
            chunk = filler[context : context + BATCH]
            best_eval = max(loop.eval_rate(chunk, context) for _ in range(repeats))
            best_decode = max(
                loop.decode_rate(filler[context], context, DECODE) for _ in range(repeats)
            )
            evals.append((context + BATCH / 2, round(best_eval, 1)))
            decodes.append((context + DECODE / 2, round(best_decode, 1)))
    finally:
        loop.close()
    return Rates(eval=tuple(evals), decode=tuple(decodes))


def ladder(rates: Rates, contexts: Sequence[int] = LADDER) -> list[dict[str, float]]:
    """RATES as printed: each of the CONTEXTS they were measured at with its two rates."""
    return [
        {"context": c, "eval_tps": e, "decode_tps": d}
        for c, (_, e), (_, d) in zip(contexts, rates.eval, rates.decode, strict=True)
    ]


# -- make bench --------------------------------------------------------------------------


def roofline(model_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The roofline and the work figures of MODEL_ID's seeded debate."""
    turns = moot_debate(model_id).turns
    rates = measure(model_id)
    figures = {
        **efficiency(turns, rates),
        "rates": ladder(rates),
        "by_step": by_step(turns, rates),
    }
    return figures, {**work(turns), "visibility_floor": floor(turns, counter(model_id), rates)}


def counter(model_id: str) -> Callable[[str], int]:
    """A text's tokens in MODEL_ID's vocabulary (its tokenizer alone is loaded)."""
    from llama_cpp import Llama

    from bench_peer import resolved_model

    vocab = Llama(model_path=str(resolved_model(model_id).path), vocab_only=True, verbose=False)
    return lambda text: len(vocab.tokenize(text.encode(), add_bos=False, special=False))


def run(results: dict[str, Any], *, models: Sequence[str] = MODELS) -> None:
    results["roofline"], results["work"] = {}, {}
    for model_id in models:
        results["roofline"][model_id], results["work"][model_id] = roofline(model_id)


def summary(results: dict[str, Any]) -> list[str]:
    """One line per target of the speed issue, each model's figure, met or not."""
    targets = (
        ("peer spt ratio ≤ 0.5", "peer", "spt_ratio", lambda v: v <= 0.5),
        ("peer wall ratio ≤ 1", "peer", "wall_ratio", lambda v: v <= 1),
        (
            "implementation_efficiency ≥ 0.90",
            "roofline",
            "implementation_efficiency",
            lambda v: v >= 0.9,
        ),
        ("evaluated per generated ≤ 0.5", "work", "evaluated_per_generated", lambda v: v <= 0.5),
    )
    lines = []
    for model_id, figures in (results.get("roofline") or {}).items():
        peer = peer_side(results, model_id)
        floor, theirs = figures.get("decode_floor_s_per_token"), peer.get("s_per_token")
        if floor and theirs:
            lines.append(
                f"decode floor / peer spt, {model_id}: {round(floor / theirs, 3)} "
                "(the lowest spt ratio one decoded sequence allows)"
            )
    for model_id, figures in (results.get("work") or {}).items():
        least = figures.get("visibility_floor") or {}
        peer = peer_side(results, model_id)
        if least.get("evaluated_per_generated") is not None:
            lines.append(
                f"visibility floor, {model_id}: evaluated per generated "
                f"{least['evaluated_per_generated']}"
                + (
                    f", spt ratio {round(least['s_per_token'] / peer['s_per_token'], 3)}"
                    if least.get("s_per_token") and peer.get("s_per_token")
                    else ""
                )
                + " (the least any prompt layout allows under the rulebook's visibility)"
            )
    for name, section, key, met in targets:
        table = results.get(section) or {}
        cells = []
        for model_id, figures in table.items():
            value = figures.get(key)
            mark = "?" if value is None else ("met" if met(value) else "not met")
            cells.append(f"{model_id} {value} ({mark})")
        lines.append(f"{name}: {', '.join(cells) or 'not measured'}")
    return lines


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out)
    out["speed_summary"] = summary(out)
    print(json.dumps(out, indent=2))
