"""Benchmark a seeded 3-round Oxford debate on SmolLM2: wall time, tokens, efficiency, TTFT."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

MOTION = "This House Believes That remote work is better than office work"


class NaiveModel:
    """The rulebook run with stateless calls, for comparison: llama-cpp-python's own
    create_chat_completion (grammar= for judges), the KV cache cleared before every call."""

    def __init__(self, model_id: str) -> None:
        from llama_cpp import Llama

        from moot.config import physical_cores
        from moot.models.store import resolve

        resolved = resolve(model_id)
        self.model_id = resolved.id
        threads = physical_cores()
        self._llm = Llama(
            model_path=str(resolved.path),
            n_ctx=4096,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )

    def chat(self, request: Any, *, on_text: Any = None) -> Any:
        from llama_cpp import LlamaGrammar

        from moot.inference.llama import schema_to_gbnf
        from moot.inference.protocol import Completion

        start = time.perf_counter()
        schema = request.reply_schema
        grammar = LlamaGrammar.from_string(schema_to_gbnf(schema)) if schema else None
        self._llm.reset()  # stateless: nothing of the previous call is reused
        s = request.sampling
        out: Any = self._llm.create_chat_completion(
            messages=[{"role": m.role, "content": m.content} for m in request.messages],
            temperature=s.temperature,
            top_p=s.top_p,
            max_tokens=s.max_tokens,
            seed=s.seed,
            grammar=grammar,
            repeat_penalty=s.repeat_penalty,
        )
        text = out["choices"][0]["message"]["content"] or ""
        if on_text:
            on_text(text)
        usage = out["usage"]
        return Completion(
            text=text,
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            duration_ms=round((time.perf_counter() - start) * 1000),
        )


def oxford_debate(results: dict[str, Any], *, seed: int = 7, naive: bool = False) -> None:
    """Run the debate in process; efficiency = completion tokens / decode_ref_tps / wall.

    With `naive`, the same debate with stateless calls through llama-cpp-python's own
    chat completion: what the figure would be without moot's decode loop and KV reuse.
    """
    import moot

    pool = None
    if naive:
        model = NaiveModel("smollm2-135m")
        pool = SimpleNamespace(get=lambda ref: model)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = moot.debate(
            MOTION,
            lang="en",
            seed=seed,
            min_score=10,
            max_rounds=3,
            out=Path(tmp) / "out",
            pool=pool,
        )
        wall = time.perf_counter() - start
    turns = result.turns
    counts = counted(turns, wall)
    prompt, cached = counts["prompt_tokens"], counts["cached_tokens"]
    completion = counts["completion_tokens"]
    # Time to the first token is (almost all) prompt evaluation; the rest of a call decodes.
    prompt_s = sum(t.ttft_ms for t in turns) / 1000
    decode_s = sum(t.duration_ms - t.ttft_ms for t in turns) / 1000
    ref = results.get("smollm2-135m", {}).get("decode_ref_tps")
    figures = {
        "model": "smollm2-135m",
        "rounds": 3,
        **counts,
        "efficiency": round(completion / ref / wall, 3) if ref else None,
    }
    if naive:
        results["oxford_naive"] = figures
        return
    if prompt_s and decode_s:  # the naive path does not stream, so it has no split
        figures["prompt_phase_s"] = round(prompt_s, 1)
        figures["prompt_eval_tps"] = round((prompt - cached) / prompt_s, 1)
        figures["decode_phase_s"] = round(decode_s, 1)
        figures["decode_tps"] = round(completion / decode_s, 1)
        if ref:  # the most `efficiency` could be were no prompt evaluated at all
            figures["decode_vs_ref"] = round(completion / decode_s / ref, 3)
    results["oxford"] = figures
    results["oxford_efficiency"] = figures["efficiency"]
    results["prompt_reuse"] = figures["prompt_reuse"]


def counted(turns: list[Any], wall: float) -> dict[str, Any]:
    """What every debate bench reports of a run: turns, wall time, tokens, the cached share."""
    prompt = sum(t.prompt_tokens for t in turns)
    cached = sum(t.cached_tokens for t in turns)
    return {
        "turns": len(turns),
        "wall_s": round(wall, 2),
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "completion_tokens": sum(t.completion_tokens for t in turns),
        "prompt_reuse": round(cached / prompt, 3) if prompt else None,
    }


def ttft(results: dict[str, Any]) -> None:
    """`moot run` process start → first streamed token of the first speech."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-m",
            "moot",
            "run",
            MOTION,
            "--seed",
            "1",
            "--max-rounds",
            "3",
            "--out",
            tmp,
        ]
        env = {**os.environ, "COLUMNS": "200"}
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert proc.stdout is not None
        seen = b""
        first = None
        while first is None:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
            # The first speech's text starts on the line after its label.
            head, _, rest = seen.partition("🔵 Proposition\n".encode())
            if rest.strip():
                first = time.perf_counter() - start
        proc.kill()
        proc.wait()
    results["ttft_s"] = round(first, 3) if first is not None else None


def run(results: dict[str, Any]) -> None:
    oxford_debate(results)
    oxford_debate(results, naive=True)
    naive = results["oxford_naive"]["efficiency"]
    if naive and results.get("oxford_efficiency"):
        results["oxford_vs_naive"] = round(results["oxford_efficiency"] / naive, 2)
    ttft(results)


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out)
    print(json.dumps(out, indent=2))
