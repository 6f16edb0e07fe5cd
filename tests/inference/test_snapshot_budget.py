"""The speakers' KV snapshots sized to the machine: the budget follows the memory free (a
fake figure here), a debate's models share it by their seats, and what the budget cannot
hold goes to disk where reading it back pays, else is dropped."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from gguf_samples import LLAMA_7B, shape, write_gguf
from moot.inference.decoding import SessionCache, Snapshot
from moot.inference.spill import RestoreCosts
from moot.models import memory
from moot.models.free import Free
from moot.models.memory import GiB, MiB

TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}"


def seven_b(tmp_path: Path, name: str = "big") -> Path:
    return write_gguf(
        tmp_path / f"{name}.gguf", chat_template=TEMPLATE, extra=shape("llama", **LLAMA_7B)
    )


def test_the_budget_follows_the_memory_free(tmp_path: Path) -> None:
    planned = memory.plan([("m", seven_b(tmp_path))], 4096, snapshots=5)
    models = memory.replace(planned, snapshots=0).host
    every = 5 * planned.snapshot_bytes  # five speakers at a full 4,096-token context
    # 128 KiB a token, and the last position's logits (this header's vocabulary is tiny)
    assert 5 * 512 * MiB < every < 5 * 512 * MiB + MiB
    fallback = 256 * MiB

    def budget(free: int | None) -> int:
        return memory.snapshot_budget(planned, free, fallback=fallback)

    # Room for all of them: every snapshot kept, none dropped.
    assert budget(models + 2 * every + GiB) == every
    # Less room: half of what the model leaves, the rest for the machine's other work.
    assert budget(models + 2 * GiB) == GiB
    assert budget(models + 4 * GiB) == 2 * GiB
    # None at all (the plan refuses it anyway), and a figure that cannot be read.
    assert budget(models // 2) == 0
    assert budget(None) == fallback
    # The budget is what the plan counts, so a plan sized by it fits what it was sized by.
    free = models + 3 * GiB
    sized = memory.replace(planned, snapshot_budget=budget(free))
    assert sized.host <= free and memory.check_fits(sized, Free(ram=free)).ram == free


def test_models_share_the_budget_by_their_seats() -> None:
    assert memory.shares(900, {"a": 2, "b": 1}) == {"a": 600, "b": 300}
    assert memory.shares(900, {}) == {}


def test_a_debate_hands_each_model_its_share_of_what_is_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.debates.runner import DebateRun
    from moot.debates.settings import prepare, settings
    from moot.inference import pool

    path = seven_b(tmp_path)
    monkeypatch.setattr(pool.ModelPool, "get", lambda self, ref: None)
    chosen = settings(motion="cities should ban cars", models=(str(path),), seed=1)
    planned: dict[str, int] = {}
    for free in (64 * GiB, 2 * GiB):
        monkeypatch.setattr(memory, "free_memory", lambda gpu=False, f=free: Free(ram=f))
        debate = DebateRun(prepare(chosen, out_dir=None))
        debate._machines(debate.refs())
        assert debate._pool is not None
        [(key, planned[str(free)])] = debate._pool._budgets.items()
        assert key == str(path.resolve())
    seats = len(DebateRun(prepare(chosen, out_dir=None)).refs())
    each = memory.snapshot_bytes(path, debate.n_ctx or 0)
    assert planned[str(64 * GiB)] == seats * each  # all of them, at a full context
    # A share of what the model leaves: less than the speakers would take at a full context.
    alone = memory.plan([("m", path)], debate.n_ctx or 0).host
    assert planned[str(2 * GiB)] == (2 * GiB - alone) // 2 < seats * each


def snap(nbytes: int, tokens: int = 100) -> Snapshot:
    state = (ctypes.c_uint8 * nbytes)()
    return Snapshot(tuple(range(tokens)), state, nbytes)


def test_what_the_budget_cannot_hold_spills_to_disk_where_reading_it_pays(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "kv"
    cache = SessionCache(100, spill_to=lambda: folder)
    cache.costs = RestoreCosts(eval_rate=100.0, read_rate=1e6)  # a token: 10 ms; 1 KB: 1 ms
    cache.put("proposition", snap(60))
    cache.put("opposition", snap(60))  # 120 > 100: the proposition's goes to disk
    assert "proposition" in cache and cache.nbytes == 60 and cache.on_disk == 60
    assert (cache.spilled, cache.dropped) == (1, 0) and len(list(folder.iterdir())) == 1
    found, n = cache.best(list(range(100)))
    assert found is not None and n == 100
    cache.put("judge", snap(500))  # larger than the whole budget: straight to disk
    assert cache.spilled == 2 and "opposition" in cache and cache.nbytes == 60
    # Where evaluating is faster than reading back, a snapshot is dropped, not written.
    cache.costs = RestoreCosts(eval_rate=1e6, read_rate=1.0)
    cache.put("chair", snap(60))
    assert cache.dropped == 1 and "opposition" not in cache and "chair" in cache
    cache.clear()
    assert list(folder.iterdir()) == []


def test_no_folder_no_spill_and_a_full_disk_drops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.inference import spill

    plain = SessionCache(100)
    plain.put("a", snap(60))
    plain.put("b", snap(60))
    assert "a" not in plain and (plain.spilled, plain.dropped) == (0, 1)
    usage = spill.shutil.disk_usage(tmp_path)
    full_disk = usage._replace(free=spill.DISK_RESERVE + 59)  # short of 60 bytes by one
    monkeypatch.setattr(spill.shutil, "disk_usage", lambda p: full_disk)
    full = SessionCache(100, spill_to=lambda: tmp_path)
    full.put("a", snap(60))
    full.put("b", snap(60))
    assert "a" not in full and full.dropped == 1 and list(tmp_path.iterdir()) == []


def test_the_rates_decide_and_the_crossover_follows_them() -> None:
    costs = RestoreCosts()
    assert costs.reading_pays(1 << 30, 1)  # nothing measured: keeping pays, as in memory
    costs.evaluated(200, 1.0)  # 200 tokens a second
    costs.written(100 * MiB, 0.1)  # 1,000 MiB a second written
    assert costs.read_rate == pytest.approx(1000 * MiB)
    costs.read(100 * MiB, 0.2)  # a read measured replaces the written figure
    assert costs.read_measured and costs.read_rate == pytest.approx(500 * MiB)
    # A token is 5 ms to evaluate; its 128 KiB are 0.25 ms to read: reading pays at once.
    assert costs.reading_pays(128 * 1024 * 100, 100)
    assert not costs.reading_pays(500 * MiB, 100)  # 1 s of reading for 0.5 s of evaluation
    # (fixed bytes / read rate) / (evaluation − reading) a token
    at = costs.crossover(128 * 1024, fixed=4 * 32000)
    assert at is not None and at == pytest.approx((128_000 / (500 * MiB)) / (1 / 200 - 1 / 4000))
    assert costs.crossover(10 * MiB) is None  # 20 ms to read a token evaluated in 5: never
    costs.evaluated(8, 1.0)  # too few tokens to time: ignored
    assert costs.eval_rate == 200
