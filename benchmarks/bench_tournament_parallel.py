"""A tournament's debates one after another, and several at once (`moot tournament --parallel`).

The same seeded 2-model Oxford tournament of 8 debates (SmolLM2 and Gemma, 2 motions, 2
swap pairs, short: 3 rounds, 32 tokens a speech, no controls) is run by the command line in a
fresh folder with --parallel 1, 2 (worker processes), 2 --batch (one process, each step of a
model one llama.cpp batch of both debates' tokens) and 4: the wall time of each, its ratio to
the sequential run's, and the peak resident memory of the whole process tree (the workers
included), sampled every 0.2 s, and how many debates said word for word what the sequential
run's did. The goal set for it is --parallel 2 at most 0.70 of the sequential wall time on
a 2-core machine.

Beside them, the ceiling of each way on this machine (`ceiling`): llama.cpp's own cost of a
decoding step on moot's shared context, one sequence on every core, one sequence on one
core (what each of N worker processes gets) and two sequences in one batch (what --batch
decodes), each after a prompt of its own. For the time a tournament spends in such steps,
two debates at once can take no less than `processes_floor` (one thread's step, halved, over
every core's: two workers that never slow each other) or `batch_floor` (a two-sequence
step, halved, over a one-sequence one) of the sequential time.

    python benchmarks/bench_tournament_parallel.py            # 1, 2, 2b and 4, the ceiling
    python benchmarks/bench_tournament_parallel.py 1 2 2b     # only those runs
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
PARALLEL = ("1", "2", "2b", "4")  # "2b": --parallel 2 --batch
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


def tournament(run: str, folder: Path, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """One run of the tournament (RUN: debates at once, "b" for --batch; EXTRA: more of
    its options): wall, peak RSS, debates."""
    motions = folder / "motions.txt"
    motions.write_text("\n".join(MOTIONS) + "\n")
    out = folder / f"p{run}"
    models = [a for m in MODELS for a in ("--model", m)]
    cmd = [sys.executable, "-m", "moot", "tournament", *models, "--motions", str(motions)]
    cmd += [*ARGS, "--out", str(out), "--parallel", run.rstrip("b")]
    cmd += [*(["--batch"] if run.endswith("b") else []), *extra]
    print(f"tournament: --parallel {run}", file=sys.stderr)
    load = os.getloadavg()[0]  # a shared machine's other work slows each run its own way
    began, peak = time.perf_counter(), 0
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.2)
    wall = time.perf_counter() - began
    _, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"--parallel {run} failed ({proc.returncode}): {err[-2000:]}")
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


def run(
    results: dict[str, Any], *, parallel: tuple[str, ...] = PARALLEL, gpu_layers: int = 0
) -> None:
    """The runs, and the ceiling; with GPU_LAYERS (-1: all) offloaded in each (bench_gpu)."""
    table: dict[str, Any] = results.setdefault("tournament_parallel", {})
    table["cores"] = len(os.sched_getaffinity(0))
    table["gpu_layers"] = gpu_layers
    extra = ("--gpu-layers", str(gpu_layers)) if gpu_layers else ()
    with tempfile.TemporaryDirectory(prefix="moot-bench-") as tmp:
        for n in parallel:
            table[f"parallel_{n}"] = tournament(n, Path(tmp), extra)
    words = {n: table[f"parallel_{n}"].pop("words") for n in parallel}
    first = table.get("parallel_1")
    for n in parallel:
        row = table[f"parallel_{n}"]
        if first and n != "1":
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
                words[n].get(k) == spoken for k, spoken in words["1"].items()
            )
    table["ceiling"] = {model: ceiling(model, gpu_layers) for model in MODELS}


# -- the ceiling: llama.cpp's cost of one decoding step, by threads and sequences -----------

PROMPT = 1024  # tokens of prompt each sequence holds before the timed steps
STEPS = 48  # steps timed, each figure the best of REPEATS runs
REPEATS = 3


def ceiling(model_id: str, gpu_layers: int = 0) -> dict[str, Any]:
    """Milliseconds a step on MODEL_ID (GPU_LAYERS offloaded): one sequence on every core
    and on one core, two sequences (prompts of their own) in one batch on every core; the
    floors they set."""
    cores = len(os.sched_getaffinity(0))
    step = {
        "one_sequence_all_cores": _step_ms(model_id, cores, 1, gpu_layers),
        "one_sequence_one_core": _step_ms(model_id, 1, 1, gpu_layers),
        "two_sequences_one_batch": _step_ms(model_id, cores, 2, gpu_layers),
    }
    alone = step["one_sequence_all_cores"]
    return {
        "ms_per_step": step,
        # N = 2 worker processes of cores // 2 threads (one here) each, against one debate
        # on every core; one process whose steps hold a token of each debate.
        "processes_floor": round(step["one_sequence_one_core"] / 2 / alone, 3),
        "batch_floor": round(step["two_sequences_one_batch"] / 2 / alone, 3),
    }


def _step_ms(model_id: str, threads: int, seqs: int, gpu_layers: int) -> float:
    from moot.inference.llama import LlamaCppModel
    from moot.inference.llama.batch import SharedContext
    from moot.models import store

    loaded = LlamaCppModel(
        store.resolve(model_id), n_ctx=2 * PROMPT, n_threads=threads, n_gpu_layers=gpu_layers
    )
    shared = SharedContext(loaded.runtime, 2, 2 * PROMPT)
    try:
        lanes = [_Seat(seq) for seq in range(seqs)]
        vocab = loaded.runtime.n_vocab
        for lane in lanes:  # a prompt of its own for each
            prompt = [(7 * i + 97 * lane.seq) % (vocab - 100) + 50 for i in range(PROMPT)]
            for a in range(0, PROMPT, shared.n_batch):
                shared.decode([_chunk(lane, prompt[a : a + shared.n_batch], a)])
        best = float("inf")
        for _ in range(REPEATS):
            began = time.perf_counter()
            for i in range(STEPS):
                shared.decode([_chunk(lane, [100 + i], PROMPT + i) for lane in lanes])
            best = min(best, (time.perf_counter() - began) / STEPS * 1000)
            mem = shared.lc.llama_get_memory(shared.ctx)
            for lane in lanes:
                shared.lc.llama_memory_seq_rm(mem, lane.seq, PROMPT, -1)
        return round(best, 2)
    finally:
        shared.close()
        loaded.close()


class _Seat:
    def __init__(self, seq: int) -> None:
        self.seq, self.idx = seq, -1


def _chunk(lane: _Seat, tokens: list[int], pos: int) -> Any:
    from moot.inference.llama.batch import _Chunk

    return _Chunk(lane, tokens, pos, last=True)  # type: ignore[arg-type]


def summary(results: dict[str, Any]) -> list[str]:
    table = results.get("tournament_parallel") or {}
    lines = [
        f"tournament of {row['debates']} debates, --parallel {key.split('_')[1]}: "
        f"{row['wall_s']} s, {row.get('ratio_to_sequential', 1.0)} of sequential "
        f"({row.get('ratio_per_token', 1.0)} a token generated), "
        f"peak {row['peak_rss_mb']} MB"
        for key, row in table.items()
        if key.startswith("parallel_")
    ]
    lines += [
        f"two debates at once on {model}, at best: {c['processes_floor']} of sequential in "
        f"worker processes, {c['batch_floor']} in one batch"
        for model, c in (table.get("ceiling") or {}).items()
    ]
    return lines


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out, parallel=tuple(sys.argv[1:]) or PARALLEL)
    out["summary"] = summary(out)
    print(json.dumps(out, indent=2))
