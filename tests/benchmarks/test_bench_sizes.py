"""benchmarks/bench_sizes.py's count of what the speakers' session cache did, on moot's own
SessionCache with made-up snapshots, and its command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import bench_sizes
from conftest import REPO
from moot.inference.decoding import SessionCache, Snapshot


def snap(nbytes: int) -> Snapshot:
    return Snapshot(tokens=(1, 2, 3), state=bytearray(nbytes), nbytes=nbytes)


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> bench_sizes.Counts:
    # The class as it was is put back after the test.
    monkeypatch.setattr(SessionCache, "put", SessionCache.put)
    monkeypatch.setattr(SessionCache, "spill", SessionCache.spill)
    found = bench_sizes.Counts()
    bench_sizes.count_sessions(found)
    return found


def test_the_least_recently_used_dropped_and_the_too_large_are_counted(
    counts: bench_sizes.Counts,
) -> None:
    cache = SessionCache(100)
    cache.put("proposition", snap(40))
    cache.put("opposition", snap(40))
    cache.put("proposition", snap(50))  # replaces its own: nothing dropped
    assert counts.dropped == 0 and counts.peak_bytes == 90
    cache.put("devil", snap(40))  # 130 > 100: the opposition's goes
    assert counts.dropped == 1 and "opposition" not in cache
    cache.put("judge", snap(101))  # larger than the whole budget: never kept
    assert counts.too_large == 1 and counts.dropped == 1
    cache.put("chair", snap(100))  # the other two go to make room
    assert counts.dropped == 3 and counts.kept == 5
    assert counts.figures()["snapshots_peak_mb"] == 0.0


def test_a_spill_counts_the_snapshots_written_to_disk(
    counts: bench_sizes.Counts, tmp_path: Path
) -> None:
    cache = SessionCache(100)
    cache.put("proposition", snap(30))
    cache.put("opposition", snap(30))
    kept = cache.spill(tmp_path)
    assert counts.spilled == 2
    kept.spill(tmp_path / "again")  # already on disk: not written again
    assert counts.spilled == 2


def test_an_unknown_shape_is_refused_with_the_list() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_sizes.py"), "llama-70b"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "no shape 'llama-70b'" in done.stderr and "llama-3.1-8b" in done.stderr


def test_a_replay_drops_what_a_larger_shape_cannot_keep() -> None:
    from types import SimpleNamespace

    import shapes

    def turn(role: str, tokens: int) -> SimpleNamespace:
        return SimpleNamespace(role=role, prompt_tokens=tokens - 10, completion_tokens=10)

    turns = [turn("proposition", 1000), turn("opposition", 1200), turn("proposition", 2100)]
    budget = 256 << 20
    # SmolLM2 keeps all: 2,100 + 1,200 tokens × 22.5 KiB is 73 MiB.
    assert bench_sizes.replayed(turns, shapes.SMOLLM2_135M, budget=budget) == {
        "dropped": 0,
        "too_large": 0,
    }
    # 8B: 1,000 and 1,200 tokens (125 + 150 MiB) do not fit together; 2,100 tokens (262.5
    # MiB) is more than the whole budget, never kept.
    big = shapes.SHAPES["llama-3.1-8b"]
    assert bench_sizes.replayed(turns, big, budget=budget) == {"dropped": 1, "too_large": 1}


def test_a_snapshot_the_budget_pushes_to_disk_counts_as_spilled_not_dropped(
    counts: bench_sizes.Counts, tmp_path: Path
) -> None:
    cache = SessionCache(100, spill_to=lambda: tmp_path)
    cache.put("proposition", snap(60))
    cache.put("opposition", snap(60))  # the proposition's goes to disk
    cache.put("judge", snap(101))  # larger than the budget: straight to disk
    assert (counts.spilled, counts.dropped, counts.too_large, counts.kept) == (2, 0, 0, 3)


def test_two_models_of_a_shape_are_two_files_the_plan_counts_twice(tmp_path: Path) -> None:
    from gguf_samples import LLAMA_7B, shape, write_gguf

    template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    one = write_gguf(tmp_path / "7b.gguf", chat_template=template, extra=shape("llama", **LLAMA_7B))
    other = bench_sizes.second(one)
    assert other != one and other.stat().st_ino == one.stat().st_ino  # a link: no copy
    assert bench_sizes.second(one) == other  # made once
    alone = bench_sizes.planned([one], n_ctx=4096, speakers=3)
    both = bench_sizes.planned([one, other], n_ctx=4096, speakers=3)
    for part in ("plan_weights_mb", "plan_kv_cache_mb", "plan_compute_mb"):
        assert both[part] == 2 * alone[part]
    assert both["plan_models_mb"] == pytest.approx(2 * alone["plan_models_mb"], abs=1)
    assert alone["plan_mb"] == alone["plan_models_mb"] + alone["plan_snapshots_mb"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--turns", "0", "llama-3.2-3b"], "--turns takes a number of turns"),
        (["--models", "2", "smollm2-135m"], "--models 2 takes the shapes"),
        (["--models", "3", "llama-3.2-3b"], "invalid choice: 3"),
    ],
)
def test_what_the_bench_cannot_run_is_refused(args: list[str], says: str) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_sizes.py"), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and says in done.stderr, done.stderr
