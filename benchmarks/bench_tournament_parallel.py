"""A tournament's debates one after another, and several at once (`moot tournament --parallel`).

The same seeded 2-model Oxford tournament of 8 debates (SmolLM2 and Gemma, 2 motions, 2
swap pairs, short: 3 rounds, 32 tokens a speech, no controls) is run by the command line in a
fresh folder with --parallel 1, 2 and 4: the wall time of each, its ratio to the sequential
run's, and the peak resident memory of the whole process tree (the workers included),
sampled every 0.2 s, and how many debates said word for word what the sequential run's
did. The target of issue 31 is --parallel 2 at most 0.70 of the sequential
wall time on a 2-core machine.

    python benchmarks/bench_tournament_parallel.py          # 1, 2 and 4
    python benchmarks/bench_tournament_parallel.py 1 2      # only those
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODELS = ("smollm2-135m", "gemma3-270m")
MOTIONS = (
    "This House believes that cities should ban private cars from their centres",
    "This House would make voting compulsory",
)
PARALLEL = (1, 2, 4)
ARGS = ("--max-rounds", "3", "--max-tokens", "32", "--swaps", "2", "--seed", "3")
ARGS += ("--controls", "0", "--bootstrap", "0", "--quiet")


def tree_rss(pid: int) -> int:
    """Resident bytes of PID and every process below it, now (0 for one gone)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) * 1024
    return total


def tournament(parallel: int, folder: Path) -> dict[str, Any]:
    """One run of the tournament with PARALLEL debates at once: wall, peak RSS, debates."""
    motions = folder / "motions.txt"
    motions.write_text("\n".join(MOTIONS) + "\n")
    out = folder / f"p{parallel}"
    models = [a for m in MODELS for a in ("--model", m)]
    cmd = [sys.executable, "-m", "moot", "tournament", *models, "--motions", str(motions)]
    cmd += [*ARGS, "--out", str(out), "--parallel", str(parallel)]
    print(f"tournament: --parallel {parallel}", file=sys.stderr)
    load = os.getloadavg()[0]  # a shared machine's other work slows each run its own way
    began, peak = time.perf_counter(), 0
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.2)
    wall = time.perf_counter() - began
    _, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"--parallel {parallel} failed ({proc.returncode}): {err[-2000:]}")
    debates = sorted((out / "debates").iterdir())
    transcripts = {d.name: json.loads((d / "transcript.json").read_text()) for d in debates}
    return {
        "wall_s": round(wall, 1),
        "load_before": round(load, 1),
        "peak_rss_mb": round(peak / 2**20),
        "debates": len(debates),
        "verdicts": sum((d / "verdict.json").is_file() for d in debates),
        "decoding": sorted({json.dumps(t["params"].get("decoding")) for t in transcripts.values()}),
        # The work done: the words differ from run to run, and so may the debates' lengths.
        "turns": sum(len(t["turns"]) for t in transcripts.values()),
        "completion_tokens": sum(
            turn.get("completion_tokens") or 0 for t in transcripts.values() for turn in t["turns"]
        ),
        "words": {k: [turn["text"] for turn in t["turns"]] for k, t in transcripts.items()},
    }


def run(results: dict[str, Any], *, parallel: tuple[int, ...] = PARALLEL) -> None:
    table: dict[str, Any] = results.setdefault("tournament_parallel", {})
    table["cores"] = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="moot-bench-") as tmp:
        for n in parallel:
            table[f"parallel_{n}"] = tournament(n, Path(tmp))
    words = {n: table[f"parallel_{n}"].pop("words") for n in parallel}
    first = table.get("parallel_1")
    for n in parallel:
        row = table[f"parallel_{n}"]
        if first and n != 1:
            row["ratio_to_sequential"] = round(row["wall_s"] / first["wall_s"], 3)
            # The same ratio per token generated, for runs whose debates said more or less.
            row["ratio_per_token"] = round(
                row["wall_s"]
                / max(row["completion_tokens"], 1)
                / (first["wall_s"] / max(first["completion_tokens"], 1)),
                3,
            )
            # Each debate decoded alone in its worker: the same words as one after another?
            row["same_words_as_sequential"] = sum(
                words[n].get(k) == spoken for k, spoken in words[1].items()
            )


def summary(results: dict[str, Any]) -> list[str]:
    table = results.get("tournament_parallel") or {}
    return [
        f"tournament of {row['debates']} debates, --parallel {key.split('_')[1]}: "
        f"{row['wall_s']} s, {row.get('ratio_to_sequential', 1.0)} of sequential "
        f"({row.get('ratio_per_token', 1.0)} a token generated), "
        f"peak {row['peak_rss_mb']} MB"
        for key, row in table.items()
        if key.startswith("parallel_")
    ]


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out, parallel=tuple(int(a) for a in sys.argv[1:]) or PARALLEL)
    out["summary"] = summary(out)
    print(json.dumps(out, indent=2))
