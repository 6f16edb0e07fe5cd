"""Benchmark local inference: moot's decode loop against a minimal reference loop, the library's
own path and a grammar; KV snapshots per speaker; peak memory with one and two models loaded."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from pydantic import BaseModel, Field

MODELS = ("smollm2-135m", "gemma3-270m")
N_TOKENS = 128
ROUNDS = 5
SEED = 11
PROMPT = "Write a long, detailed speech for the proposition: cities should ban private cars."
# Grammar cost depends on how often the model's own draw breaks the grammar: ask for JSON.
JUDGE_PROMPT = (
    "Speech: Cities should ban private cars because cars pollute the air and make streets"
    " dangerous.\n\nRate how convincing this speech is from 0 to 10 and give your reasoning."
    " Reply with a JSON object with the keys score and reasoning."
)


class JudgeScore(BaseModel):
    score: float = Field(ge=0, le=10)
    reasoning: str = Field(max_length=200)


def run(results: dict[str, Any]) -> None:
    """Add per-model decode figures, session figures and peak RSS to `results`."""
    for model_id in MODELS:
        results[model_id] = decode_figures(model_id)
    results["sessions_smollm2-135m"] = session_figures("smollm2-135m")
    results.update(rss_figures())


def decode_figures(model_id: str) -> dict[str, Any]:
    """Tokens per second after the first token, same model, prompt and sampler settings.

    The loops take turns for ROUNDS rounds and each keeps its best round: on a shared
    machine a slow round measures the neighbours, and taking turns gives each loop the
    same chances of a quiet moment.
    """
    from moot.inference.llama import LlamaCppModel
    from moot.inference.protocol import ChatRequest, Sampling, messages
    from moot.models.store import resolve

    model = LlamaCppModel(resolve(model_id), n_ctx=2048)
    sampling = Sampling(temperature=0.8, top_p=0.95, max_tokens=N_TOKENS, seed=SEED)
    request = ChatRequest(messages=messages(("user", PROMPT)), sampling=sampling)
    judge = ChatRequest(messages=messages(("user", JUDGE_PROMPT)), sampling=sampling)
    prompt, _, added_special, _ = model._format_prompt(request)
    tokens = model._tokenize(prompt, added_special)
    loops = {
        "decode_ref_tps": lambda: reference_tps(model._llm, tokens),
        "create_completion_tps": lambda: create_completion_tps(model._llm, tokens),
        "decode_moot_tps": lambda: moot_tps(model, request),
        "decode_grammar_tps": lambda: moot_tps(model, judge, schema=JudgeScore, samples=8),
    }
    figures: dict[str, Any] = dict.fromkeys(loops, 0.0)
    for _ in range(ROUNDS):
        for key, loop in loops.items():
            figures[key] = max(figures[key], loop())
    ref = figures["decode_ref_tps"]
    for key in ("create_completion_tps", "decode_moot_tps", "decode_grammar_tps"):
        figures[key.replace("_tps", "_vs_ref")] = round(figures[key] / ref, 3)
    model.close()
    return figures


def reference_tps(llm: Any, tokens: list[int]) -> float:
    """The minimal loop on llama.cpp's sampler API: top-k, top-p, temperature, seeded dist."""
    import llama_cpp as lc

    llm.reset()
    llm.eval(tokens)
    chain = lc.llama_sampler_chain_init(lc.llama_sampler_chain_default_params())
    for sampler in (
        lc.llama_sampler_init_top_k(40),
        lc.llama_sampler_init_top_p(0.95, 1),
        lc.llama_sampler_init_temp(0.8),
        lc.llama_sampler_init_dist(SEED),
    ):
        lc.llama_sampler_chain_add(chain, sampler)
    token = lc.llama_sampler_sample(chain, llm.ctx, -1)
    start = time.perf_counter()
    for _ in range(N_TOKENS - 1):
        llm.eval([token])
        token = lc.llama_sampler_sample(chain, llm.ctx, -1)
    elapsed = time.perf_counter() - start
    lc.llama_sampler_free(chain)
    return round((N_TOKENS - 1) / elapsed, 1)


def create_completion_tps(llm: Any, tokens: list[int]) -> float:
    """llama-cpp-python's own high-level path, streamed, timed from the first chunk."""
    stream = llm.create_completion(
        tokens, max_tokens=N_TOKENS, temperature=0.8, top_p=0.95, top_k=40, seed=SEED, stream=True
    )
    stamps = [time.perf_counter() for _ in stream]
    return round((len(stamps) - 1) / (stamps[-1] - stamps[0]), 1)


def moot_tps(model: Any, request: Any, *, schema: Any = None, samples: int = 1) -> float:
    """moot's loop: (tokens - 1) over the time after the first token, summed over samples.

    A reply that repeats itself counts too: the speed of the loop is what is measured.
    """
    from moot.errors import DegenerateReplyError

    def chat(req: Any) -> Any:
        try:
            return model.chat(req)
        except DegenerateReplyError as exc:
            return exc.completion

    tokens = seconds = 0.0
    for i in range(samples):
        req = request.model_copy(
            update={
                "reply_schema": schema,
                "sampling": request.sampling.model_copy(update={"seed": SEED + i}),
            }
        )
        chat(req)  # warm the KV cache with this prompt: the timed call decodes only
        completion = chat(req)
        tokens += completion.completion_tokens - 1
        seconds += (completion.duration_ms - completion.ttft_ms) / 1000
    return round(tokens / seconds, 1)


def session_figures(model_id: str) -> dict[str, Any]:
    """Two speakers alternating for 8 turns over a growing transcript, with and without
    a KV snapshot per speaker."""
    from moot.errors import DegenerateReplyError
    from moot.inference.llama import LlamaCppModel
    from moot.inference.protocol import ChatRequest, Sampling, messages
    from moot.models.store import resolve

    figures: dict[str, Any] = {}
    for budget_mb in (0, 256):
        model = LlamaCppModel(resolve(model_id), n_ctx=4096, session_cache_mb=budget_mb)
        transcript: list[str] = []
        prompt_s = cached = total = 0.0
        start = time.perf_counter()
        for turn in range(8):
            side = ("proposition", "opposition")[turn % 2]
            system = f"You speak for the {side} on: cities should ban private cars. " * 3
            body = "\n\n".join(transcript) or "(no speeches yet)"
            req = ChatRequest(
                messages=messages(("system", system), ("user", f"{body}\n\nYour speech:")),
                sampling=Sampling(max_tokens=48, seed=turn),
                session=side,
            )
            try:
                c = model.chat(req)
            except DegenerateReplyError as exc:
                transcript.append(exc.raw)
                continue
            transcript.append(f"{side}: {c.text} " + "Traffic, air and shops matter. " * 12)
            prompt_s += c.ttft_ms / 1000
            cached += c.cached_tokens
            total += c.prompt_tokens
        name = "on" if budget_mb else "off"
        figures[f"wall_s_{name}"] = round(time.perf_counter() - start, 2)
        figures[f"prompt_eval_s_{name}"] = round(prompt_s, 2)
        figures[f"cached_share_{name}"] = round(cached / total, 3)
        if budget_mb:  # what keeping a snapshot per speaker costs
            figures["snapshots_mb"] = round(model._sessions.nbytes / 2**20, 1)
        model.close()
    return figures


_RSS_SCRIPT = """
import json, resource
from moot.inference.llama import LlamaCppModel
from moot.inference.protocol import ChatRequest, Sampling, messages
from moot.models.store import resolve
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
req = ChatRequest(messages=messages(("user", "Hello")), sampling=Sampling(max_tokens=16, seed=1))
out = {}
models = []
for key, model_id in (("rss_one_model_mb", "smollm2-135m"), ("rss_two_models_mb", "gemma3-270m")):
    models.append(LlamaCppModel(resolve(model_id), n_ctx=2048))
    for m in models:
        try:
            m.chat(req)
        except Exception:
            pass
    out[key] = hwm()
print(json.dumps(out))
"""


def rss_figures() -> dict[str, float]:
    """Peak RSS of a fresh process after loading (and using) SmolLM2, then both models."""
    done = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT], capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    figures: dict[str, Any] = {}
    run(figures)
    print(json.dumps(figures, indent=2))
