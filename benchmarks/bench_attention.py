"""Flash attention on and off, on this machine: the figures behind moot's choice per model.

moot loads a model with llama.cpp's flash attention or without it by the width of its
attention heads and where it runs (`moot.inference.attention`). This measures both ways
with bench_roofline's minimal loop (batch evaluation and decoding at a ladder of contexts)
and prices the seeded Oxford debate's turns (the one bench_peer runs) at each: the
faster way for that debate's mix of evaluating and decoding, beside the one moot takes.
A model where the two disagree by more than NOISE says the rule is wrong on this CPU;
`MOOT_FLASH_ATTENTION=on|off` overrides it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bench_peer import MODELS, moot_debate, resolved_model
from bench_rates import Rates
from bench_roofline import ladder, measure, priced

NOISE = 0.05  # a difference in priced debate time smaller than this is a tie


def debate_seconds(turns: Sequence[Any], rates: Rates) -> float:
    """The debate's turns at RATES: their uncached prompts evaluated, their replies decoded."""
    return sum(sum(priced(t, rates)) for t in turns)


def verdict(on_s: float, off_s: float, moot_takes: bool) -> dict[str, Any]:
    """Which way is faster for the debate (None: within NOISE) and whether moot takes it."""
    faster = None if abs(on_s - off_s) <= NOISE * max(on_s, off_s) else on_s < off_s
    return {
        "debate_s_flash_on": round(on_s, 1),
        "debate_s_flash_off": round(off_s, 1),
        "off_over_on": round(off_s / on_s, 3) if on_s else None,
        "faster": {None: "tie", True: "on", False: "off"}[faster],
        "moot_loads_with": "on" if moot_takes else "off",
        "moot_takes_the_faster": faster is None or faster == moot_takes,
    }


def compare(model_id: str) -> dict[str, Any]:
    from moot.inference.attention import flash_attention

    head_dim = resolved_model(model_id).head_dim
    turns = moot_debate(model_id).turns
    on, off = measure(model_id, flash_attn=True), measure(model_id, flash_attn=False)
    return {
        "head_dim": head_dim,
        **verdict(
            debate_seconds(turns, on), debate_seconds(turns, off), flash_attention(head_dim, 0)
        ),
        "flash_on": ladder(on),
        "flash_off": ladder(off),
    }


def run(results: dict[str, Any], *, models: Sequence[str] = MODELS) -> None:
    results["attention"] = {model_id: compare(model_id) for model_id in models}


def summary(results: dict[str, Any]) -> list[str]:
    """One line per model: the debate at raw rates both ways, and whether moot's choice holds."""
    lines = []
    for model_id, f in (results.get("attention") or {}).items():
        holds = "holds" if f["moot_takes_the_faster"] else "does NOT hold on this CPU"
        lines.append(
            f"flash attention, {model_id} (heads {f['head_dim']} wide): debate at raw rates "
            f"{f['debate_s_flash_on']} s on, {f['debate_s_flash_off']} s off; faster: "
            f"{f['faster']}; moot loads it {f['moot_loads_with']} ({holds})"
        )
    return lines


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out)
    out["speed_summary"] = summary(out)
    print(json.dumps(out, indent=2))
