"""Benchmark a seeded 3-round Oxford debate on SmolLM2: wall time, tokens, efficiency, TTFT."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MOTION = "This House Believes That remote work is better than office work"


def oxford_debate(results: dict[str, Any], *, seed: int = 7) -> None:
    """Run the debate in process; efficiency = completion tokens / decode_ref_tps / wall."""
    from moot.config import OxfordParams
    from moot.debate import Debate, DebateSetup
    from moot.formats.oxford import FORMAT

    with tempfile.TemporaryDirectory() as tmp:
        setup = DebateSetup(
            format=FORMAT,
            motion=MOTION,
            language="en",
            seed=seed,
            params=OxfordParams(min_score=10, max_rounds=3),
            out_dir=Path(tmp) / "out",
        )
        start = time.perf_counter()
        result = Debate(setup).run()
        wall = time.perf_counter() - start
    turns = result.transcript.turns
    prompt = sum(t.prompt_tokens for t in turns)
    cached = sum(t.cached_tokens for t in turns)
    completion = sum(t.completion_tokens for t in turns)
    ref = results.get("smollm2-135m", {}).get("decode_ref_tps")
    results["oxford"] = {
        "model": "smollm2-135m",
        "rounds": 3,
        "turns": len(turns),
        "wall_s": round(wall, 2),
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "completion_tokens": completion,
        "prompt_reuse": round(cached / prompt, 3) if prompt else None,
    }
    if ref:
        results["oxford_efficiency"] = round(completion / ref / wall, 3)
    results["prompt_reuse"] = results["oxford"]["prompt_reuse"]


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
    ttft(results)


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out)
    print(json.dumps(out, indent=2))
