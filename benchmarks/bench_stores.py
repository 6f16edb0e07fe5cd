"""Benchmark `moot models list` over the other tools' stores: a generated HOME holding 50 small
GGUF models across Ollama, LM Studio and llama.cpp's cache; the first listing in a process, the
listing warm (median of several), and `moot models list --json` as a process of its own."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from store_layouts import gguf, llamacpp_file, lmstudio_model, ollama_model  # noqa: E402

# 50 models: (Ollama, LM Studio, llama.cpp's cache).
COUNTS = (20, 20, 10)
TOKENS = tuple(f"tok{i}" for i in range(512))  # a vocabulary to skip, as in a real header
WARM_RUNS = 5
ENV = ("HOME", "MOOT_HOME", "HF_HOME", "OLLAMA_MODELS", "LLAMA_CACHE", "XDG_CACHE_HOME")


def make_stores(home: Path) -> int:
    """HOME's stores, filled with small distinct models; returns how many."""
    ollama, lmstudio, cache = COUNTS
    for i in range(ollama):
        data = gguf(arch="qwen3", name=f"ollama {i}", tokens=TOKENS)
        ollama_model(home / ".ollama" / "models", f"model{i}", "q4", data=data)
    for i in range(lmstudio):
        data = gguf(arch="llama", name=f"lmstudio {i}", tokens=TOKENS)
        lmstudio_model(home / ".lmstudio" / "models", "pub", f"Model{i}-GGUF", "m.gguf", data=data)
    for i in range(cache):
        data = gguf(arch="gemma3", name=f"cache {i}", tokens=TOKENS)
        llamacpp_file(home / ".cache" / "llama.cpp", f"owner_repo{i}_m.gguf", data=data)
    return sum(COUNTS)


@contextmanager
def environment(home: Path) -> Iterator[dict[str, str]]:
    saved = {k: os.environ.get(k) for k in ENV}
    changes = {"HOME": str(home), "MOOT_HOME": str(home / "moot"), "HF_HOME": str(home / "hf")}
    try:
        for key in ENV:
            os.environ.pop(key, None)
        os.environ.update(changes)
        yield changes
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def list_stores() -> dict[str, Any]:
    import moot.models

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        made = make_stores(home)
        with environment(home):
            start = time.perf_counter()
            rows = moot.models.list()
            first = time.perf_counter() - start
            warm = []
            for _ in range(WARM_RUNS):
                start = time.perf_counter()
                moot.models.list()
                warm.append(time.perf_counter() - start)
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "moot", "models", "list", "--json"],
                capture_output=True,
                text=True,
                check=False,
            )
            process = time.perf_counter() - start
    found = [r for r in rows if r.kind in ("ollama", "lmstudio", "llamacpp") and r.usable]
    return {
        "models": made,
        "found": len(found),
        "first_s": round(first, 4),
        "warm_s": round(statistics.median(warm), 4),
        "process_s": round(process, 3),
        "process_ok": proc.returncode == 0,
    }


def run(results: dict[str, Any]) -> None:
    results["stores"] = list_stores()


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out)
    print(json.dumps(out, indent=2))
