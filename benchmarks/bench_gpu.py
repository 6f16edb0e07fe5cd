"""`make bench-gpu`: moot with its layers offloaded to an NVIDIA GPU, on a machine that has one.

Says which backend llama-cpp-python was built with, and stops with the command that rebuilds
it when it cannot offload (`--cpu-ok` goes on anyway, to try the script on a CPU build). Then
loads SmolLM2 with every layer offloaded: the layers llama.cpp says it offloaded and the
decode rate of one free-text call, beside the same call with no layer offloaded; runs
bench_peer's seeded Oxford debate with every layer offloaded, with bench_peer's figures;
and bench_tournament_parallel's ladder (--parallel 1, 2, 2 --batch, 4) and its step costs
with every layer offloaded (`--no-ladder` leaves them out). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import bench_tournament_parallel
from bench_inference import N_TOKENS, PROMPT, moot_tps
from bench_inference import SEED as CALL_SEED
from bench_peer import moot_figures, ratio, seeded_debate

MODEL = "smollm2-135m"
N_CTX = 4096
ALL_LAYERS = -1
# What llama.cpp logs as it loads a model; moot routes it to this logger at DEBUG.
LLAMA_LOGGER = "moot.inference.llama"
OFFLOADED = re.compile(r"offloaded (\d+)/(\d+) layers to GPU")
DEVICE = re.compile(r"using device (\S+ \([^)]*\))")


def backend() -> dict[str, Any]:
    """The llama-cpp-python build: its version, whether it can offload, its backends."""
    import llama_cpp

    return {
        "llama_cpp_python": llama_cpp.__version__,
        "gpu_offload": bool(llama_cpp.llama_supports_gpu_offload()),
        "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip(),
    }


@contextmanager
def llama_log() -> Iterator[list[str]]:
    """llama.cpp's log lines while the block runs."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    logger = logging.getLogger(LLAMA_LOGGER)
    handler, level = Keep(logging.DEBUG), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def offload(lines: list[str]) -> dict[str, Any]:
    """What the load log says went to the GPU: layers offloaded of the model's, devices used."""
    found = [m for line in lines if (m := OFFLOADED.search(line))]
    return {
        "offloaded_layers": int(found[-1][1]) if found else None,
        "layers": int(found[-1][2]) if found else None,
        "devices": sorted({m[1] for line in lines if (m := DEVICE.search(line))}),
    }


def call_figures(gpu_layers: int) -> dict[str, Any]:
    """SmolLM2 loaded with GPU_LAYERS offloaded: the load's offload, and the decode rate of
    one free-text call (tokens after the first over the time after it; bench_inference's)."""
    from moot.inference.llama import LlamaCppModel
    from moot.inference.protocol import ChatRequest, Sampling, messages
    from moot.models.store import resolve

    sampling = Sampling(temperature=0.8, top_p=0.95, max_tokens=N_TOKENS, seed=CALL_SEED)
    request = ChatRequest(messages=messages(("user", PROMPT)), sampling=sampling)
    with llama_log() as lines:
        model = LlamaCppModel(resolve(MODEL), n_gpu_layers=gpu_layers, n_ctx=N_CTX)
    try:
        tps = moot_tps(model, request)
    finally:
        model.close()
    return {"gpu_layers": gpu_layers, **offload(lines), "decode_tps": tps}


def debate_figures() -> dict[str, Any]:
    """bench_peer's seeded Oxford debate with every layer offloaded, and its figures."""
    from moot.config import RunSettings

    with llama_log() as lines:
        run = seeded_debate(MODEL, run=RunSettings(gpu_layers=ALL_LAYERS))
    return {"rounds": run.rounds, **offload(lines), **moot_figures(run)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--cpu-ok", action="store_true", help="go on when llama-cpp-python cannot offload"
    )
    parser.add_argument(
        "--no-ladder", action="store_true", help="leave out the tournament's --parallel ladder"
    )
    args = parser.parse_args(argv)
    built = backend()
    print(
        f"llama-cpp-python {built['llama_cpp_python']}, GPU offload: {built['gpu_offload']}; "
        f"{built['system_info']}",
        file=sys.stderr,
    )
    if not built["gpu_offload"] and not args.cpu_ok:
        print(
            f"llama-cpp-python {built['llama_cpp_python']} was built for the CPU only; rebuild "
            "it with CUDA: `make install GPU=cuda` (or, outside the Makefile's .venv, "
            f'CMAKE_ARGS="-DGGML_CUDA=on" {sys.executable} -m pip install '
            f"--force-reinstall --no-cache-dir llama-cpp-python=={built['llama_cpp_python']})",
            file=sys.stderr,
        )
        return 1
    print(f"gpu: one call on {MODEL}, all layers offloaded and none", file=sys.stderr)
    gpu, cpu = call_figures(ALL_LAYERS), call_figures(0)
    print(f"gpu: a seeded Oxford debate on {MODEL}, all layers offloaded", file=sys.stderr)
    speedup = ratio(gpu["decode_tps"], cpu["decode_tps"])  # GPU tokens/s over the CPU's
    out = {
        "backend": built,
        "call": {"gpu": gpu, "cpu": cpu, "decode_speedup": speedup},
        "debate": debate_figures(),
    }
    if not args.no_ladder:
        print("gpu: a tournament's debates one by one and at once, all layers offloaded",
              file=sys.stderr)  # fmt: skip
        bench_tournament_parallel.run(out, gpu_layers=ALL_LAYERS)
        out["summary"] = bench_tournament_parallel.summary(out)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
