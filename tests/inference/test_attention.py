"""Flash attention chosen per model: the rule, the header's head width, the memory plan
and the override (the tiny real models' choice is in test_llama)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Cli
from gguf_samples import LLAMA_7B, shape, write_gguf
from moot.errors import UsageError
from moot.inference.attention import flash_attention
from moot.models import gguf_check, memory

MiB = 1 << 20
NARROW = {"layers": 16, "heads": 32, "kv_heads": 8, "embedding": 2048}  # heads 64 wide
TOKENS = 4  # gguf_samples' vocabulary


def model(tmp_path: Path, **dims: object) -> Path:
    return write_gguf(
        tmp_path / "m.gguf",
        arch="llama",
        context_length=8192,
        chat_template="{% for m in messages %}{{ m.content }}{% endfor %}",
        extra=shape(**dims),
    )


@pytest.fixture(autouse=True)
def _no_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOOT_FLASH_ATTENTION", raising=False)


@pytest.mark.parametrize(
    ("head_dim", "gpu_layers", "flash"),
    [
        (64, 0, False),  # narrow heads on the CPU
        (96, 0, False),
        (128, 0, True),
        (256, 0, True),
        (64, -1, True),  # any layer on a GPU
        (64, 8, True),
        (None, 0, True),  # unknown: llama.cpp's default
    ],
)
def test_the_rule(head_dim: int | None, gpu_layers: int, flash: bool) -> None:
    assert flash_attention(head_dim, gpu_layers) is flash


@pytest.mark.parametrize(("said", "flash"), [("on", True), ("OFF", False), ("auto", False)])
def test_the_override_decides_for_every_model(
    monkeypatch: pytest.MonkeyPatch, said: str, flash: bool
) -> None:
    monkeypatch.setenv("MOOT_FLASH_ATTENTION", said)
    assert flash_attention(64, 0) is flash
    assert flash_attention(256, -1) is (said != "OFF")


def test_an_override_that_is_not_on_off_or_auto_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MOOT_FLASH_ATTENTION", "yes")
    with pytest.raises(UsageError, match="MOOT_FLASH_ATTENTION='yes' is not on, off or auto"):
        flash_attention(128, 0)


def test_the_head_width_is_the_key_length_or_the_embedding_split_among_the_heads(
    tmp_path: Path,
) -> None:
    assert gguf_check.check(model(tmp_path, **NARROW)).head_dim == 64
    assert gguf_check.check(model(tmp_path, **LLAMA_7B)).head_dim == 128
    assert gguf_check.check(model(tmp_path, **LLAMA_7B, key_length=256)).head_dim == 256
    assert gguf_check.check(model(tmp_path, heads=[0, 8, 8], embedding=1024)).head_dim == 128
    assert gguf_check.check(model(tmp_path, embedding=1024)).head_dim is None


def test_without_flash_attention_the_plan_holds_a_batchs_attention_scores(tmp_path: Path) -> None:
    path = model(tmp_path, **NARROW)
    (cpu,) = memory.plan([("m", path)], 4096).models
    # n_ctx × heads floats per batch token, which here outgrow the (tiny) vocabulary's logits.
    assert cpu.compute == 512 * 4 * (4096 * 32 + 4 * 2048) + 32 * MiB
    assert memory.plan([("m", path)], 8192).models[0].compute > cpu.compute
    (gpu,) = memory.plan([("m", path)], 4096, gpu_layers=-1).models
    assert gpu.compute == 512 * 4 * (TOKENS + 4 * 2048) + 32 * MiB
    (wide,) = memory.plan([("m", model(tmp_path, **LLAMA_7B))], 4096).models
    assert wide.compute == 512 * 4 * (TOKENS + 4 * 4096) + 32 * MiB


def test_a_bad_override_is_one_line_and_exit_2(tmp_path: Path, cli: Cli) -> None:
    path = model(tmp_path, **NARROW)
    proc = cli("models", "info", str(path), home=tmp_path, env={"MOOT_FLASH_ATTENTION": "maybe"})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert lines[0] == "error: MOOT_FLASH_ATTENTION='maybe' is not on, off or auto", lines
    assert lines[1].startswith("hint: unset MOOT_FLASH_ATTENTION") and len(lines) == 2


def test_heads_the_header_does_not_count_are_as_many_as_the_embedding_holds(
    tmp_path: Path,
) -> None:
    path = model(tmp_path, layers=16, embedding=2048, key_length=64)
    (m,) = memory.plan([("m", path)], 4096).models
    assert m.compute == 512 * 4 * (4096 * 32 + 4 * 2048) + 32 * MiB


def test_flash_attention_turned_off_for_a_header_without_head_width_plans_the_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = model(tmp_path, layers=16, embedding=2048)  # no heads, no key length
    (on,) = memory.plan([("m", path)], 4096).models
    assert on.compute == 512 * 4 * (TOKENS + 4 * 2048) + 32 * MiB
    monkeypatch.setenv("MOOT_FLASH_ATTENTION", "off")
    (off,) = memory.plan([("m", path)], 4096).models
    assert off.compute == 512 * 4 * (4096 * (2048 // 64) + 4 * 2048) + 32 * MiB
