"""How a model's weights are loaded: read rather than mapped on the CPU of a llama.cpp build
that repacks them (`build.map_weights`), so the process holds them once, as the memory plan
counts them."""

from __future__ import annotations

from pathlib import Path

import pytest

import shapes
from conftest import real_model_path
from moot.inference.llama import LlamaCppModel
from moot.inference.llama import build as builds
from moot.inference.llama.build import Build, map_weights, repacks
from moot.models import store

X86_INFO = (
    "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | AVX512 = 1 | LLAMAFILE = 1 | "
    "OPENMP = 1 | REPACK = 1 | "
)


def test_the_build_says_whether_it_repacks() -> None:
    assert repacks(X86_INFO)
    assert not repacks(X86_INFO.replace("REPACK = 1", "REPACK = 0"))
    assert not repacks("CPU : SSE3 = 1 | AVX = 1 | ")
    assert repacks("CPU : REPACK = 1")  # last, without a closing bar


def test_weights_are_read_only_on_the_cpu_of_a_build_that_repacks() -> None:
    repacking = Build("0.3.36", False, ("CPU",), repacks=True)
    plain = Build("0.3.36", False, ("CPU",), repacks=False)
    gpu = Build("0.3.36", True, ("CUDA", "CPU"), repacks=True)
    assert map_weights(0, repacking) is False  # mapped, they would be resident twice
    assert map_weights(0, plain) is True  # the mapping is their only copy
    assert map_weights(-1, gpu) is True and map_weights(8, gpu) is True  # copied to the device
    assert map_weights(0, gpu) is False


def mapped_kib(path: Path) -> int | None:
    """The resident KiB of this process's mappings of PATH; None where it is not mapped."""
    found: int | None = None
    inside = False
    for line in Path("/proc/self/smaps").read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) >= 6 and "-" in fields[0] and ":" in fields[3]:  # a mapping's header
            inside = fields[5] == str(path)
        elif inside and fields[0] == "Rss:":
            found = (found or 0) + int(fields[1])
    return found


@pytest.mark.real
@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads Linux's /proc")
def test_a_repacked_model_is_not_held_twice(tmp_path: Path) -> None:
    """Llama-3.2-3B's architecture, Q4_0 (a type llama.cpp's x86 CPU backend repacks), at two
    layers: loaded as moot loads it, its file is not mapped where the build repacks, and it
    still answers."""
    tokenizer = real_model_path(shapes.TOKENIZER_MODEL)
    shape = shapes.small(shapes.SHAPES["llama-3.2-3b"], vocab=49152)
    path = shapes.cached(shape, folder=tmp_path, tokenizer=tokenizer)
    model = LlamaCppModel(store.resolve(str(path)), n_ctx=512)
    try:
        resident = mapped_kib(path)
        if builds.build().repacks:
            assert resident is None, f"the weights' file is mapped too: {resident} KiB resident"
        else:
            assert resident is not None
        assert model.text_tokens("Tea is better than coffee") > 0
    finally:
        model.close()
