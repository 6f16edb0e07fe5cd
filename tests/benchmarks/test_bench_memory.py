"""The arithmetic of benchmarks/bench_memory.py on made-up turns and 7B-shaped GGUF headers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import bench_memory
from conftest import REPO
from moot.models import gguf_check, memory

BENCHMARKS = REPO / "benchmarks"

MiB = 1 << 20
KiB = 1 << 10
# K and V × 32 layers × 4096 (KV heads × head size 128) × 2 bytes (f16, what moot assumes).
LLAMA_2_7B_PER_TOKEN = 2 * 32 * 4096 * 2


def turn(role: str, prompt: int, completion: int) -> SimpleNamespace:
    return SimpleNamespace(role=role, prompt_tokens=prompt, completion_tokens=completion)


def test_each_speaker_holds_only_its_latest_snapshot() -> None:
    turns = [
        turn("proposition", 100, 50),  # 150
        turn("opposition", 200, 50),  # 150 + 250 = 400
        turn("proposition", 300, 20),  # 320 + 250 = 570
        turn("judge", 10, 5),  # 570 + 15 = 585: the peak
        turn("opposition", 50, 0),  # 320 + 50 + 15 = 385
    ]
    assert bench_memory.peak_snapshot_tokens(turns) == 585


def test_no_turns_hold_nothing() -> None:
    assert bench_memory.peak_snapshot_tokens([]) == 0


def test_the_7b_headers_give_moots_f16_figures(tmp_path: Path) -> None:
    llama = bench_memory.write_header(tmp_path, "llama-2-7b")
    mistral = bench_memory.write_header(tmp_path, "mistral-7b-v0.1")
    assert bench_memory.kv_bytes_per_token(llama) == LLAMA_2_7B_PER_TOKEN == 512 * KiB
    # Grouped-query attention: 8 KV heads of 32, a quarter of the cache.
    assert bench_memory.kv_bytes_per_token(mistral) == LLAMA_2_7B_PER_TOKEN // 4 == 128 * KiB
    assert memory.kv_per_token(gguf_check.check(llama)) == (LLAMA_2_7B_PER_TOKEN, ())


def test_a_shapes_figures_price_the_peak_and_the_plans_full_contexts(tmp_path: Path) -> None:
    llama = bench_memory.write_header(tmp_path, "llama-2-7b")
    figures = bench_memory.shape_figures(
        llama, peak_tokens=1000, speakers=5, n_ctx=4096, budget_mb=256
    )
    # Each planned snapshot: a full context of cache and the last position's 32,000 logits;
    # five of them are more than the budget, which is what the plan counts then.
    assert 5 * (4096 * LLAMA_2_7B_PER_TOKEN + 4 * 32000) / MiB > 256
    assert figures == {
        "kv_kib_per_token": 512.0,
        "snapshots_peak_mb": 500.0,
        "session_cache_mb": 256,
        "within_budget": False,
        "memory_plan_snapshot_mb": 256.0,
    }
    mistral = bench_memory.write_header(tmp_path, "mistral-7b-v0.1")
    small = bench_memory.shape_figures(
        mistral, peak_tokens=1000, speakers=5, n_ctx=4096, budget_mb=256
    )
    assert small["snapshots_peak_mb"] == 125.0 and small["within_budget"]


def test_the_rulebook_context_is_bounded_by_the_trained_one() -> None:
    assert bench_memory.rulebook_n_ctx(4096) == 4096
    unbounded = bench_memory.rulebook_n_ctx(None)
    assert unbounded >= memory.MIN_CTX and unbounded % memory.CTX_STEP == 0


def test_the_session_cache_budget_is_read_without_importing_llama_cpp() -> None:
    code = (
        "import sys, bench_memory; print(bench_memory.session_cache_mb()); "
        "sys.exit('llama_cpp' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=BENCHMARKS, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == bench_memory.session_cache_mb() > 0
