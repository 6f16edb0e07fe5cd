"""A model of a real architecture's shape, written by benchmarks/shapes.py at a small size, loads
in llama.cpp and debates in `moot run`: the files `make bench-sizes` runs at full size."""

from __future__ import annotations

from pathlib import Path

import pytest

import shapes
from conftest import Cli, real_model_path
from moot.models import gguf_check, memory

pytestmark = pytest.mark.real


@pytest.fixture(scope="module")
def small_qwen(tmp_path_factory: pytest.TempPathFactory) -> tuple[shapes.Shape, Path]:
    """Qwen2.5-1.5B's architecture (biases, six query heads a KV head) at two layers,
    SmolLM2's tokenizer and chat template."""
    tokenizer = real_model_path(shapes.TOKENIZER_MODEL)
    s = shapes.small(shapes.SHAPES["qwen2.5-1.5b"], vocab=49152)
    folder = tmp_path_factory.mktemp("shapes")
    return s, shapes.cached(s, folder=folder, tokenizer=tokenizer)


def test_the_file_carries_the_shape_and_the_tokenizer(
    small_qwen: tuple[shapes.Shape, Path],
) -> None:
    s, path = small_qwen
    header = gguf_check.check(path)
    source = gguf_check.check(real_model_path(shapes.TOKENIZER_MODEL))
    assert header.architecture == "qwen2" and header.block_count == 2
    assert header.vocab_size == source.vocab_size == s.vocab
    assert header.metadata.get("tokenizer.chat_template") == source.metadata.get(
        "tokenizer.chat_template"
    )
    # moot's plan sizes its cache as the shape says, and its weights as written.
    found = memory.shape_of(header)
    assert (found.kv_per_token, found.kv_known) == (s.kv_per_token, True)
    assert s.weight_bytes < path.stat().st_size < s.weight_bytes + (2 << 20)


def test_a_cached_file_is_written_once(small_qwen: tuple[shapes.Shape, Path]) -> None:
    s, path = small_qwen
    stamp = path.stat().st_mtime_ns
    again = shapes.cached(s, folder=path.parent, tokenizer=real_model_path(shapes.TOKENIZER_MODEL))
    assert again == path and path.stat().st_mtime_ns == stamp
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no partial file left


def test_a_short_debate_runs_on_it(
    small_qwen: tuple[shapes.Shape, Path], cli: Cli, tmp_path: Path
) -> None:
    _, path = small_qwen
    done = cli(
        "run",
        "Tea is better than coffee",
        "--model",
        str(path),
        "--format",
        "challenge",
        "--rounds",
        "1",
        "--max-tokens",
        "12",
        "--seed",
        "3",
        "--no-save",
        "--yes",
        home=tmp_path / "home",
    )
    assert done.returncode == 0, done.stderr
    assert path.stem in done.stdout + done.stderr  # the model that spoke: the shape's file


def test_a_shape_that_does_not_fit_in_memory_is_refused_before_it_loads(
    small_qwen: tuple[shapes.Shape, Path],
    cli: Cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from moot.models.free import Free

    _, path = small_qwen
    monkeypatch.setattr(memory, "free_memory", lambda gpu=False: Free(ram=8 << 20))
    done = cli(
        "run", "Tea is better than coffee", "--model", str(path), "--no-save", "--yes",
        home=tmp_path / "home",
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: the debate's model needs "), done.stderr
    assert "8 MiB is free" in done.stderr and "Traceback" not in done.stderr
