"""A debate's memory planned from GGUF headers: exact bytes for known shapes, stated guesses
for missing ones, and the refusal that gives the numbers and the way out."""

from __future__ import annotations

import json
import os
import stat
import struct
from pathlib import Path

import pytest

from conftest import Cli
from gguf_samples import ARRAY, LLAMA_7B, UINT32, i32_array, kv, make_gguf, shape, u32, write_gguf
from moot.errors import ModelIntegrityError, NotEnoughMemoryError, UsageError
from moot.models import free, gguf_check, memory
from moot.models.free import Free
from moot.models.memory import MiB

KV_7B_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # K and V × layers × KV heads × head size × f16
TOKENS = 4  # gguf_samples' vocabulary


def model(
    tmp_path: Path, name: str = "m", *, arch: str = "llama", context: int = 32768, **dims: object
) -> Path:
    return write_gguf(
        tmp_path / f"{name}.gguf", arch=arch, context_length=context, extra=shape(arch, **dims)
    )


def compute(*, vocab: int = TOKENS, embedding: int) -> int:
    return 512 * 4 * (vocab + 4 * embedding) + 32 * MiB


# ---------------------------------------------------------------- known shapes


def test_a_7b_llama_header_gives_its_kv_cache_to_the_byte(tmp_path: Path) -> None:
    path = model(tmp_path, **LLAMA_7B)
    planned = memory.plan([("7b", path)], 4096)
    (m,) = planned.models
    assert m.kv_cache == KV_7B_PER_TOKEN * 4096 == 512 * MiB
    assert m.weights == path.stat().st_size
    assert m.compute == compute(embedding=4096)
    assert m.kv_known and m.notes == () and m.trained_context == 32768
    assert planned.host == planned.total == m.weights + 512 * MiB + m.compute
    assert planned.gpu == 0
    assert m.line() == (
        f"weights {m.weights} B, KV cache 512 MiB at n_ctx 4096 (trained context 32,768)"
    )
    assert memory.plan([("7b", path)], 8192).models[0].kv_cache == 1 << 30


def test_a_7b_speakers_kv_snapshot(tmp_path: Path) -> None:
    path = model(tmp_path, **LLAMA_7B)
    # The cache of every position, and the last position's logits (one float per token).
    assert memory.snapshot_bytes(path, 4096) == KV_7B_PER_TOKEN * 4096 + 4 * TOKENS
    assert memory.snapshot_mb(path, 4096) == pytest.approx(512.0, abs=0.001)
    assert memory.snapshot_mb(gguf_check.check(path), 8192) == pytest.approx(1024.0, abs=0.001)
    assert memory.snapshot_mb(path, 1) * 1024 == pytest.approx(128, abs=0.02)  # 128 KiB a token


def test_key_and_value_lengths_are_read_and_a_sliding_window_is_counted_whole(
    tmp_path: Path,
) -> None:
    # Gemma 3 270M's shape: head size 256, not embedding / heads (160).
    path = model(
        tmp_path,
        arch="gemma3",
        layers=18,
        heads=4,
        kv_heads=1,
        embedding=640,
        key_length=256,
        value_length=256,
        sliding_window=512,
    )
    (m,) = memory.plan([("g", path)], 4096).models
    assert m.kv_cache == 18 * 1 * (256 + 256) * 2 * 4096 == 72 * MiB
    assert any("sliding window of 512" in n and "conservative" in n for n in m.notes)
    (short,) = memory.plan([("g", path)], 512).models  # the window covers it all
    assert short.notes == ()


def test_kv_heads_counted_layer_by_layer(tmp_path: Path) -> None:
    path = model(tmp_path, layers=4, heads=32, kv_heads=[8, 0, 8, 2], embedding=4096)
    info = gguf_check.check(path)
    assert info.head_count_kv == (8, 0, 8, 2) and info.head_count == 32
    (m,) = memory.plan([("m", path)], 1000).models
    assert m.kv_cache == (8 + 0 + 8 + 2) * (128 + 128) * 2 * 1000
    assert m.notes == ()

    odd = model(tmp_path, "odd", layers=4, heads=32, kv_heads=[8, 2], embedding=4096)
    (o,) = memory.plan([("o", odd)], 1000).models
    assert o.kv_cache == 4 * 8 * 256 * 2 * 1000  # the largest count, for every layer
    assert any("lists 2 layers of 4" in n for n in o.notes)


def test_per_layer_heads_give_the_head_size_of_the_first_layer(tmp_path: Path) -> None:
    path = model(tmp_path, layers=3, heads=[0, 16, 32], kv_heads=[0, 4, 4], embedding=2048)
    (m,) = memory.plan([("m", path)], 100).models
    assert m.kv_cache == 8 * (128 + 128) * 2 * 100  # 2048 / 16: the first layer with heads


# ---------------------------------------------------------------- missing figures


def test_kv_heads_missing_are_counted_as_the_attention_heads(tmp_path: Path) -> None:
    path = model(tmp_path, layers=32, heads=32, embedding=4096)
    (m,) = memory.plan([("m", path)], 4096).models
    assert m.kv_cache == 4 * KV_7B_PER_TOKEN * 4096  # no grouped-query sharing: 4x the cache
    assert m.kv_known and any("KV heads unknown" in n for n in m.notes)


def test_heads_missing_count_k_and_v_as_wide_as_the_embedding(tmp_path: Path) -> None:
    path = model(tmp_path, layers=32, embedding=4096)
    (m,) = memory.plan([("m", path)], 4096).models
    assert m.kv_cache == 32 * 2 * 4096 * 2 * 4096
    assert any("attention heads unknown" in n for n in m.notes)


@pytest.mark.parametrize(
    ("dims", "lacking"),
    [
        ({"heads": 32, "embedding": 4096}, "llama.block_count"),
        ({"layers": 32}, "llama.embedding_length"),
    ],
)
def test_a_header_without_its_layers_is_an_unknown_cache_counted_large(
    tmp_path: Path, dims: dict[str, int], lacking: str
) -> None:
    path = model(tmp_path, **dims)
    weights = path.stat().st_size
    (m,) = memory.plan([("m", path)], 8192).models
    assert not m.kv_known
    assert m.kv_cache == -(-weights // 4096) * 8192  # as large as the weights at 4096 tokens
    assert any(f"lacks {lacking}" in n for n in m.notes)
    assert m.line().startswith(
        f"weights {memory.size_text(weights)}, KV cache unknown (counted as "
    )
    assert m.compute == 512 * 4 * (TOKENS + 4 * dims.get("embedding", 8192)) + 32 * MiB


def test_no_trained_context_is_said_to_be_unknown(tmp_path: Path) -> None:
    path = model(tmp_path, context=0, **LLAMA_7B)
    (m,) = memory.plan([("m", path)], 2048).models
    assert m.trained_context is None and "(trained context unknown)" in m.line()


def test_a_context_past_the_trained_one_is_noted(tmp_path: Path) -> None:
    path = model(tmp_path, context=2048, **LLAMA_7B)
    (m,) = memory.plan([("m", path)], 4096).models
    assert "n_ctx 4096 is past its trained context" in m.notes


def test_a_hostile_layer_count_is_counted_not_built(tmp_path: Path) -> None:
    path = model(tmp_path, layers=2**32 - 1, heads=32, kv_heads=8, embedding=4096)
    (m,) = memory.plan([("m", path)], 4096).models
    assert m.kv_cache == (2**32 - 1) * 8 * 256 * 2 * 4096


# ---------------------------------------------------------------- the header reader


def test_the_header_keeps_short_integer_arrays_and_skips_the_rest(tmp_path: Path) -> None:
    long = 5000  # over MAX_LAYER_VALUES
    path = write_gguf(
        tmp_path / "m.gguf",
        extra=(
            u32("llama.block_count", 2),
            kv(
                "llama.attention.head_count_kv",
                ARRAY,
                struct.pack("<IQ", UINT32, 2) + struct.pack("<2I", 4, 2),
            ),
            kv("llama.long", ARRAY, struct.pack("<IQ", UINT32, long) + b"\0" * 4 * long),
        ),
    )
    info = gguf_check.check(path)
    assert info.head_count_kv == (4, 2) and info.block_count == 2
    assert "llama.long" not in info.metadata
    assert "tokenizer.ggml.scores" not in info.metadata and info.vocab_size == TOKENS
    assert info.head_count is None and info.key_length is None and info.sliding_window is None


def test_a_per_layer_array_that_is_cut_short_is_a_truncated_file(tmp_path: Path) -> None:
    data = make_gguf(extra=(i32_array("llama.attention.head_count_kv", [4] * 8),))
    (tmp_path / "cut.gguf").write_bytes(data[:-28])  # 1 of its 8 counts left
    with pytest.raises(ModelIntegrityError, match="truncated"):
        gguf_check.check(tmp_path / "cut.gguf")


# ---------------------------------------------------------------- several models


def test_distinct_models_add_up_and_one_at_a_time_takes_the_largest(tmp_path: Path) -> None:
    big = model(tmp_path, "big", **LLAMA_7B)
    small = model(tmp_path, "small", layers=2, heads=4, kv_heads=4, embedding=256)
    planned = memory.plan([("a", big), ("b", small), ("c", big)], 2048)
    assert [m.name for m in planned.models] == ["a", "b"]  # a file named twice is one model
    a, b = planned.models
    assert planned.host == a.host + b.host
    alone = planned.at(one_at_a_time=True)
    assert alone.host == max(a.host, b.host) == a.host
    smaller = planned.at(1024)
    assert smaller.models[0].kv_cache == KV_7B_PER_TOKEN * 1024 and smaller.n_ctx == 1024


def test_snapshots_are_held_in_system_memory(tmp_path: Path) -> None:
    big = model(tmp_path, "big", **LLAMA_7B)
    small = model(tmp_path, "small", layers=2, heads=4, kv_heads=4, embedding=256)
    planned = memory.plan([("a", big), ("b", small)], 4096, snapshots=3, one_at_a_time=True)
    each = memory.snapshot_bytes(big, 4096)  # the largest model's, for every speaker
    assert planned.snapshot_bytes == each
    assert planned.host == planned.models[0].host + 3 * each
    # Never more than the loaded models keep them in: beyond it the oldest is dropped.
    budget = 256 * 2**20
    bounded = memory.plan(
        [("a", big), ("b", small)], 4096, snapshots=3, one_at_a_time=True, snapshot_budget=budget
    )
    assert 3 * each > budget and bounded.snapshot_total == budget
    assert bounded.host == planned.models[0].host + budget
    assert bounded.at(512).snapshot_total == 3 * memory.snapshot_bytes(big, 512) < budget


def test_offloaded_layers_move_to_the_gpu(tmp_path: Path) -> None:
    path = model(tmp_path, **LLAMA_7B)
    (cpu,) = memory.plan([("m", path)], 4096).models
    (half,) = memory.plan([("m", path)], 4096, gpu_layers=16).models
    (full,) = memory.plan([("m", path)], 4096, gpu_layers=-1).models
    body = cpu.weights + cpu.kv_cache
    assert (cpu.gpu, cpu.host) == (0, body + cpu.compute)
    assert half.gpu_share == 0.5 and half.gpu == round(body / 2) + half.compute
    assert full.gpu == body + full.compute and full.host == full.compute
    assert memory.plan([("m", path)], 4096, gpu_layers=99).models[0].gpu_share == 1.0


def test_a_split_model_weighs_all_its_files(tmp_path: Path) -> None:
    first = write_gguf(
        tmp_path / "m-00001-of-00002.gguf", extra=(*shape(**LLAMA_7B), u32("split.count", 2))
    )
    second = tmp_path / "m-00002-of-00002.gguf"
    second.write_bytes(b"\0" * 5000)
    (m,) = memory.plan([("m", first)], 512).models
    assert m.weights == first.stat().st_size + 5000 and m.notes == ()
    (given,) = memory.plan([("m", (first, second))], 512).models
    assert given.weights == m.weights
    second.unlink()
    (missing,) = memory.plan([("m", first)], 512).models
    assert missing.weights == 2 * first.stat().st_size
    assert any("2 files" in n for n in missing.notes)


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    path = model(tmp_path, **LLAMA_7B)
    with pytest.raises(UsageError, match="n_ctx"):
        memory.plan([("m", path)], 0)
    with pytest.raises(UsageError, match="snapshots"):
        memory.plan([("m", path)], 512, snapshots=-1)
    with pytest.raises(ModelIntegrityError):
        memory.plan([("m", tmp_path / "absent.gguf")], 512)


# ---------------------------------------------------------------- the check


def test_too_little_memory_is_one_line_with_the_numbers_and_the_way_out(tmp_path: Path) -> None:
    a = model(tmp_path, "a", **LLAMA_7B)
    b = model(tmp_path, "b", **LLAMA_7B)
    c = model(tmp_path, "c", **LLAMA_7B)
    planned = memory.plan([("a", a), ("b", b), ("c", c)], 8192)
    need = planned.host  # three 1 GiB caches and their compute allowances
    with pytest.raises(NotEnoughMemoryError) as caught:
        memory.check_fits(planned, Free(ram=3 << 29))
    err = caught.value
    assert err.exit_code == 2 and (err.needed, err.free, err.gpu) == (need, 3 << 29, False)
    assert err.message == (
        f"the debate's 3 models need {memory.size_text(need)} at n_ctx 8192; 1.5 GiB is free"
    )
    assert "\n" not in err.message and "\n" not in err.hint
    at_2048 = memory.size_text(planned.at(2048).host)
    alone = memory.size_text(planned.at(one_at_a_time=True).host)
    assert err.hint == (
        f"use fewer models, a smaller --n-ctx (at 2048: {at_2048}) "
        f"or --one-model-at-a-time ({alone})"
    )
    assert planned.at(4096).host > 3 << 29 >= planned.at(2048).host  # the first that fits


def test_one_model_that_cannot_fit_at_any_context_points_at_a_smaller_model(
    tmp_path: Path,
) -> None:
    path = model(tmp_path, **LLAMA_7B)
    planned = memory.plan([("big", path)], 4096)
    with pytest.raises(NotEnoughMemoryError) as caught:
        memory.check_fits(planned, Free(ram=10 * MiB))  # under the compute allowance alone
    assert caught.value.message.startswith("the debate's model needs ")
    assert caught.value.hint.startswith("use a smaller model or quantisation (big's weights: ")
    assert "fewer models" not in caught.value.hint


def test_enough_memory_passes_and_unknown_memory_never_refuses(tmp_path: Path) -> None:
    path = model(tmp_path, **LLAMA_7B)
    planned = memory.plan([("m", path)], 8192, gpu_layers=-1)
    enough = Free(ram=planned.host, gpu=planned.gpu)
    assert memory.check_fits(planned, enough) is enough
    memory.check_fits(planned, Free(ram=None, gpu=None))
    huge = memory.plan([("m", path)], 262_144, snapshots=100)
    memory.check_fits(huge, Free(ram=None))


def test_too_little_gpu_memory_names_the_gpu(tmp_path: Path) -> None:
    path = model(tmp_path, **LLAMA_7B)
    planned = memory.plan([("m", path)], 8192, gpu_layers=-1)
    with pytest.raises(NotEnoughMemoryError) as caught:
        memory.check_fits(planned, Free(ram=1 << 40, gpu=512 * MiB))
    err = caught.value
    assert err.gpu and err.needed == planned.gpu
    assert err.message == (
        f"the debate's model needs {memory.size_text(planned.gpu)} of GPU memory with "
        "--gpu-layers -1 at n_ctx 8192; 512 MiB of GPU memory is free"
    )
    assert "fewer --gpu-layers" in err.hint and "at 2048" in err.hint


def test_check_fits_reads_the_gpu_only_for_offloaded_layers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[bool] = []

    def fake(*, gpu: bool = True) -> Free:
        asked.append(gpu)
        return Free(ram=1 << 40, gpu=0 if gpu else None)

    monkeypatch.setattr(memory, "free_memory", fake)
    path = model(tmp_path, **LLAMA_7B)
    memory.check_fits(memory.plan([("m", path)], 512))
    with pytest.raises(NotEnoughMemoryError):
        memory.check_fits(memory.plan([("m", path)], 512, gpu_layers=4))
    assert asked == [False, True]


def test_close_figures_are_not_shown_as_equal() -> None:
    gib = 1 << 30
    assert memory._pair(gib + gib // 100, gib) == ("1.010 GiB", "1.000 GiB")
    assert memory.size_text(9_400 * MiB) == "9.2 GiB" and memory.size_text(500) == "500 B"


# ---------------------------------------------------------------- the context a debate needs


@pytest.mark.parametrize(
    ("needed", "trained", "expected"),
    [
        (3000, 32768, 3072),  # rounded up to llama.cpp's step of 256
        (3000, 2048, 2048),  # never past the trained context
        (100, None, 512),
        (100, 0, 512),  # a header without it: unknown
        (10**9, None, 262_144),
        (8192, 8192, 8192),
    ],
)
def test_default_n_ctx(needed: int, trained: int | None, expected: int) -> None:
    assert memory.default_n_ctx(needed, trained) == expected


def test_default_n_ctx_refuses_a_negative_need() -> None:
    with pytest.raises(UsageError):
        memory.default_n_ctx(-1, 4096)


# ---------------------------------------------------------------- free memory


def test_available_ram_reads_memavailable(tmp_path: Path) -> None:
    report = tmp_path / "meminfo"
    report.write_text(
        "MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    6400000 kB\n"
    )
    assert free.available_ram(report) == 6_400_000 * 1024


def test_available_ram_falls_back_to_sysconf_then_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = tmp_path / "meminfo"
    report.write_text("MemTotal: 16000000 kB\n")
    pages = {"SC_AVPHYS_PAGES": 1000, "SC_PAGE_SIZE": 4096}
    monkeypatch.setattr(os, "sysconf", lambda name: pages[name])
    assert free.available_ram(report) == 4_096_000
    assert free.available_ram(tmp_path / "absent") == 4_096_000

    def none(name: str) -> int:
        raise ValueError(name)

    monkeypatch.setattr(os, "sysconf", none)
    assert free.available_ram(tmp_path / "absent") is None


def fake_nvidia_smi(folder: Path, script: str) -> None:
    folder.mkdir(exist_ok=True)
    exe = folder / "nvidia-smi"
    exe.write_text("#!/bin/sh\n" + script + "\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)


def test_no_nvidia_smi_is_unknown_gpu_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert free.free_gpu() is None
    assert free.free_memory().gpu is None


def test_nvidia_smi_free_memory_summed_over_the_visible_gpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_nvidia_smi(tmp_path, 'echo "$@" > args; printf "1000\\n2000\\n"')
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert free.free_gpu() == 3000 * MiB
    assert (tmp_path / "args").read_text().split() == [
        "--query-gpu=memory.free",
        "--format=csv,noheader,nounits",
    ]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert free.free_gpu() == 2000 * MiB
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-5d2c")  # a UUID: all of them
    assert free.free_gpu() == 3000 * MiB
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert free.free_gpu() is None


@pytest.mark.parametrize(
    "script",
    [
        "exit 9",
        'echo "No devices were found"',
        'printf "[N/A]\\n"',
        "sleep 5",
    ],
)
def test_an_nvidia_smi_that_fails_is_unknown_gpu_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str
) -> None:
    fake_nvidia_smi(tmp_path, script)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(free, "NVIDIA_SMI_TIMEOUT_S", 0.3)
    assert free.free_gpu() is None


def test_parse_gpu_free_refuses_what_is_not_a_count() -> None:
    assert free.parse_gpu_free("81000\n") == 81000 * MiB
    assert free.parse_gpu_free("") is None
    assert free.parse_gpu_free("٣٣\n") is None  # digits, but not ASCII ones
    assert free.parse_gpu_free("100\n200\n", "5") is None  # no such GPU


# ---------------------------------------------------------------- moot models info


def test_models_info_shows_the_memory_line(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    path = model(tmp_path, arch="qwen2", **LLAMA_7B)
    shown = cli("models", "info", str(path))
    assert shown.returncode == 0, shown.stderr
    line = next(ln for ln in shown.stdout.splitlines() if ln.split()[:1] == ["memory"])
    assert line.split(None, 1)[1].strip() == (
        f"weights {path.stat().st_size} B, KV cache 512 MiB at n_ctx 4096 (trained context 32,768)"
    )
    details = json.loads(cli("models", "info", str(path), "--json", "--n-ctx", "8192").stdout)
    assert details["memory"] == {
        "n_ctx": 8192,
        "trained_context": 32768,
        "weights": path.stat().st_size,
        "kv_cache": 1 << 30,
        "kv_cache_known": True,
        "compute": compute(embedding=4096),
        "total": path.stat().st_size + (1 << 30) + compute(embedding=4096),
        "notes": [],
    }


def test_models_info_says_an_unknown_cache_and_a_short_trained_context(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    path = model(tmp_path, arch="qwen2", context=2048, heads=8)
    shown = cli("models", "info", str(path))
    assert shown.returncode == 0, shown.stderr
    assert "KV cache unknown (counted as " in shown.stdout
    assert "at n_ctx 2048 (trained context 2,048)" in shown.stdout  # never past the trained one
    assert "lacks qwen2.block_count" in shown.stdout
    bad = cli("models", "info", str(path), "--n-ctx", "100")
    assert bad.returncode == 2 and "--n-ctx 100" in bad.stderr


def test_a_debate_that_cannot_fit_is_refused_before_any_model_loads(
    tmp_path: Path, moot_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.debates.runner import DebateRun
    from moot.debates.settings import prepare, settings
    from moot.inference import pool

    template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    path = write_gguf(
        tmp_path / "big.gguf", chat_template=template, extra=shape("llama", **LLAMA_7B)
    )
    loaded: list[str] = []
    monkeypatch.setattr(pool.ModelPool, "get", lambda self, ref: loaded.append(ref))
    monkeypatch.setattr(memory, "free_memory", lambda gpu=False: Free(ram=64 * MiB, gpu=None))
    chosen = settings(motion="cities should ban cars", models=(str(path),), seed=1)
    with pytest.raises(NotEnoughMemoryError) as caught:
        DebateRun(prepare(chosen, out_dir=tmp_path / "out")).run()
    assert caught.value.message.startswith("the debate's model needs ")
    assert "64 MiB is free" in caught.value.message and loaded == []


def test_the_context_is_what_the_rulebook_needs_within_the_trained_one() -> None:
    from moot.debates.runner import DebateRun
    from moot.debates.settings import prepare, settings
    from moot.formats import get_format
    from moot.formats.base import context_need

    oxford = get_format("oxford")
    short, long = (oxford.params_type(max_rounds=n) for n in (3, 8))
    assert context_need(oxford, short, "en") < context_need(oxford, long, "en")
    assert context_need(oxford, short, "en") < context_need(oxford, short, "zh")
    for name, params in {
        "challenge": {"rounds": 5, "effort": "max"},
        "decision": {"rounds": 6},
        "adversarial": {"rounds": 6, "participants": ("a", "b", "c", "d")},
    }.items():
        fmt = get_format(name)
        assert context_need(fmt, fmt.params_type(**params), "en") > context_need(oxford, long, "en")
    debate = DebateRun(prepare(settings(motion="cities should ban cars", params={"max_rounds": 5})))
    assert debate.n_ctx is None  # no --n-ctx: sized when the models are known
    assert debate._needed_ctx([8192, 32768]) == 6400  # 6,176 tokens, to llama.cpp's 256
    assert debate._needed_ctx([2048]) == 2048  # never past what the model was trained on
    assert debate._needed_ctx([0]) == 6400  # a header without one: the need alone
