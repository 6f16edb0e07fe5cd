"""Benchmark one seeded debate of each other format on the tiny models: wall time, tokens and
the share of prompt tokens served from the KV cache (`prompt_reuse`)."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_oxford import counted

TOPIC = "Should our city ban private cars from its centre?"
SMOL, GEMMA = "smollm2-135m", "gemma3-270m"
# Each format as a user would run it; the judge, the summariser and the synthesizer on SmolLM2.
# (The default model is SMOL, and so is the model challenge's --effort low picks.)
RUNS: dict[str, dict[str, Any]] = {
    "challenge": {"rounds": 2, "effort": "low"},
    "adversarial": {"rounds": 2, "model": (SMOL, GEMMA)},
    "decision": {"positions": ("ban cars", "keep cars")},
}
MAX_TOKENS = 160  # per speech: every step of every format, in a few minutes


def format_debate(name: str, options: dict[str, Any], *, seed: int = 7) -> dict[str, Any]:
    import moot

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = moot.debate(
            TOPIC,
            format=name,
            lang="en",
            seed=seed,
            out=Path(tmp) / "out",
            run={"max_tokens": MAX_TOKENS},
            **options,
        )
        wall = time.perf_counter() - start
    turns = result.turns
    return {
        "models": sorted({t.model for t in turns}),
        **counted(turns, wall),
        # Time to each turn's first token, summed: (almost all) prompt evaluation.
        "prompt_phase_s": round(sum(t.ttft_ms for t in turns) / 1000, 1),
    }


def run(results: dict[str, Any]) -> None:
    results["formats"] = {name: format_debate(name, options) for name, options in RUNS.items()}


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out)
    print(json.dumps(out, indent=2))
