"""The shorter-contexts lever at its limit: the seeded Oxford debate on a pack that says
each step's task in a few words (`terse_pack/`: no rules, no persona beyond a side).

Not a pack to use: its speeches drift off the motion and its Chair copies the record's
labels. It measures how far cutting the instructions alone could take seconds per
generated token and prompt tokens evaluated per generated token, beside the plain
procedure bench_peer ran in the same `make bench`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_peer import MODELS, moot_figures, peer_side, ratio, seeded_debate
from bench_roofline import work

PACK = Path(__file__).parent / "terse_pack"


def run(results: dict[str, Any], *, models: Sequence[str] = MODELS) -> None:
    table: dict[str, Any] = results.setdefault("terse", {})
    for model_id in models:
        print(f"speed: the terse pack on {model_id}", file=sys.stderr)
        debate = seeded_debate(model_id, prompts=PACK)
        figures = moot_figures(debate)
        peer = peer_side(results, model_id)
        table[model_id] = {
            **figures,
            "evaluated_per_generated": work(debate.turns)["evaluated_per_generated"],
            "spt_ratio_to_peer": ratio(figures["s_per_token"], peer.get("s_per_token")),
        }


def summary(results: dict[str, Any]) -> list[str]:
    return [
        f"terse pack, {model_id}: spt ratio to peer {f['spt_ratio_to_peer']}, evaluated per "
        f"generated {f['evaluated_per_generated']} (instructions cut to a few words a step)"
        for model_id, f in (results.get("terse") or {}).items()
    ]


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out)
    out["speed_summary"] = summary(out)
    print(json.dumps(out, indent=2))
