"""When reading a speaker's KV snapshot back from disk beats evaluating its prompt again.

Per model (SmolLM2-135M, or a shape of `shapes.py`): a prompt of N tokens evaluated in
batches, timed (llama.cpp's rate at that model); the KV snapshot it leaves, written to a file
in moot's cache as a spill writes it, then read back and restored, timed twice: from the page
cache (warm: a snapshot spilled moments ago) and with this file's pages dropped first
(`posix_fadvise` DONTNEED on that one file: cold, as from the disk). From those rates, the
crossover `spill.RestoreCosts.crossover` computes: the prompt length above which reading the
snapshot back costs less than evaluating it. Prints one JSON object.

    python benchmarks/bench_spill.py                        # SmolLM2 and the 1.5B shape
    python benchmarks/bench_spill.py --tokens 1024 smollm2-135m
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import shapes

MiB = 1 << 20
TOKENS = 512
N_CTX = 2048
TINY = "smollm2-135m"
SMALLEST_SHAPE = "qwen2.5-1.5b"
TEXT = (
    "The motion before the house is that cities should ban private cars from their centres. "
    "The proposition says streets belong to people, buses and bicycles; the opposition says "
    "trade, the disabled and the night shift depend on the car. "
)


def ref_of(name: str) -> str:
    return name if name == TINY else str(shapes.cached(shapes.SHAPES[name]))


def figures(name: str, n_tokens: int) -> dict[str, Any]:
    from moot import config
    from moot.inference.decoding import Snapshot
    from moot.inference.llama import LlamaCppModel
    from moot.inference.spill import RestoreCosts
    from moot.models import gguf_check, memory, resolve

    resolved = resolve(ref_of(name))
    kv_per_token = memory.shape_of(gguf_check.check(resolved.path)).kv_per_token
    model = LlamaCppModel(resolved, n_ctx=N_CTX)
    try:
        rt = model.runtime
        words = model._llm.tokenize(TEXT.encode() * 64, add_bos=True, special=False)
        tokens = list(words[:n_tokens])
        began = time.perf_counter()
        rt.eval_from(0, tokens)
        evaluated = time.perf_counter() - began
        snap = rt.snapshot()
        folder = config.cache_dir() / "kv"
        folder.mkdir(parents=True, exist_ok=True)
        fd, where = tempfile.mkstemp(suffix=".kv", dir=folder)
        os.close(fd)
        try:
            began = time.perf_counter()
            spilled = snap.spill(Path(where))
            with open(where, "rb+") as f:
                os.fsync(f.fileno())
            written = time.perf_counter() - began
            warm = _restore(rt, spilled)
            _drop_pages(Path(where))
            cold = _restore(rt, spilled)
            memory = _restore(rt, Snapshot(snap.tokens, snap.state, snap.nbytes))
        finally:
            os.unlink(where)
    finally:
        model.close()
    fixed = snap.nbytes - kv_per_token * n_tokens  # the last logits, and the state's headers
    out: dict[str, Any] = {
        "tokens": n_tokens,
        "snapshot_mb": round(snap.nbytes / MiB, 2),
        "snapshot_kib_a_token": round(kv_per_token / 1024, 1),
        "snapshot_fixed_kib": round(fixed / 1024, 1),
        "eval_s": round(evaluated, 3),
        "eval_tok_s": round(n_tokens / evaluated, 1),
        "write_s": round(written, 3),
        "write_mb_s": round(snap.nbytes / MiB / written),
        "restore_from_memory_s": round(memory, 4),
    }
    for label, seconds in (("warm", warm), ("cold", cold)):
        costs = RestoreCosts(eval_rate=n_tokens / evaluated, read_rate=snap.nbytes / seconds)
        crossover = costs.crossover(kv_per_token, fixed=fixed)
        out[label] = {
            "read_back_s": round(seconds, 4),
            "read_mb_s": round(snap.nbytes / MiB / seconds),
            "read_over_eval": round(seconds / evaluated, 4),
            # A token of the prompt: read back from its snapshot, against evaluated again.
            "read_us_a_token": round(kv_per_token / costs.read_rate * 1e6, 1),
            "eval_us_a_token": round(1e6 / costs.eval_rate, 1),
            "crossover_tokens": None if crossover is None else round(crossover, 4),
            # The read rate below which reading back never pays at this evaluation rate.
            "break_even_read_mb_s": round(kv_per_token * costs.eval_rate / MiB, 1),
        }
    return out


def _restore(rt: Any, snap: Any) -> float:
    began = time.perf_counter()
    if not rt.restore(snap):
        raise RuntimeError("the snapshot did not restore")
    return time.perf_counter() - began


def _drop_pages(path: Path) -> None:
    """This one file's pages out of the page cache (nothing else's): a read from the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=[TINY, SMALLEST_SHAPE])
    parser.add_argument("--tokens", type=int, default=TOKENS)
    args = parser.parse_args()
    print(json.dumps({m: figures(m, args.tokens) for m in args.models}, indent=2))


if __name__ == "__main__":
    main()
