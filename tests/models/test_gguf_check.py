"""The GGUF header check: real tiny models, crafted files, and garbage that must never crash it."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from conftest import real_model_path
from gguf_samples import ARRAY, make_gguf, write_gguf
from moot.errors import ModelIntegrityError
from moot.models import gguf_check


@pytest.mark.real
def test_smollm2_header_is_llama_with_its_own_chat_template() -> None:
    info = gguf_check.check(real_model_path("smollm2-135m"))
    assert info.architecture == "llama"
    assert info.context_length == 8192
    assert info.quantisation == "Q4_1"
    assert info.vocab_size == 49152
    assert info.has_chat_template and "<|im_start|>" in (info.chat_template or "")
    assert info.data_end == info.file_size  # every tensor's bytes are there, to the last one


@pytest.mark.real
def test_gemma3_header_has_no_chat_template() -> None:
    info = gguf_check.check(real_model_path("gemma3-270m"))
    assert info.architecture == "gemma3"
    assert info.context_length == 32768
    assert info.quantisation == "Q4_K_M"
    assert info.vocab_size == 262144
    assert info.chat_template is None and not info.has_chat_template
    assert info.data_end == info.file_size


@pytest.mark.real
def test_a_real_model_cut_short_is_truncated(tmp_path: Path) -> None:
    # What an interrupted download leaves: the header is whole, the tensor data is not.
    with real_model_path("smollm2-135m").open("rb") as fh:
        head = fh.read(3_000_000)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(head)
    with pytest.raises(ModelIntegrityError, match="truncated"):
        gguf_check.check(cut)


def test_crafted_file_reports_its_metadata(tmp_path: Path) -> None:
    path = write_gguf(
        tmp_path / "m.gguf", arch="qwen2", context_length=4096, chat_template="{{ x }}"
    )
    info = gguf_check.check(path)
    assert (info.architecture, info.context_length, info.quantisation) == ("qwen2", 4096, "Q4_K_M")
    assert info.name == "tiny test model"
    assert info.chat_template == "{{ x }}"
    assert info.vocab_size == 4
    assert info.version == 3 and info.tensor_count == 0 and info.kv_count == 7


def test_crafted_file_with_tensor_data(tmp_path: Path) -> None:
    data = make_gguf(tensor_floats=64)
    (tmp_path / "full.gguf").write_bytes(data)
    assert gguf_check.check(tmp_path / "full.gguf").data_end == len(data)
    (tmp_path / "short.gguf").write_bytes(data[:-4])
    with pytest.raises(ModelIntegrityError, match="truncated"):
        gguf_check.check(tmp_path / "short.gguf")


def test_every_prefix_of_a_header_is_refused(tmp_path: Path) -> None:
    data = make_gguf(chat_template="t")
    path = tmp_path / "p.gguf"
    for n in range(len(data)):
        path.write_bytes(data[:n])
        with pytest.raises(ModelIntegrityError):
            gguf_check.check(path)


def test_wrong_magic(tmp_path: Path) -> None:
    path = tmp_path / "x.gguf"
    path.write_bytes(b"GGML" + make_gguf()[4:])
    with pytest.raises(ModelIntegrityError, match="not a GGUF"):
        gguf_check.check(path)


@pytest.mark.parametrize("version", [1, 4, 2**31])
def test_unsupported_version(tmp_path: Path, version: int) -> None:
    path = write_gguf(tmp_path / "v.gguf", version=version)
    with pytest.raises(ModelIntegrityError, match="version"):
        gguf_check.check(path)


@pytest.mark.parametrize(("n_tensors", "n_kv"), [(2**40, 1), (1, 2**40), (10**6 + 1, 0), (0, 5000)])
def test_absurd_counts(tmp_path: Path, n_tensors: int, n_kv: int) -> None:
    path = tmp_path / "c.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv) + b"\0" * 1000)
    with pytest.raises(ModelIntegrityError, match="impossible"):
        gguf_check.check(path)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.gguf"
    path.write_bytes(b"")
    with pytest.raises(ModelIntegrityError, match="empty"):
        gguf_check.check(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelIntegrityError, match="cannot read"):
        gguf_check.check(tmp_path / "nope.gguf")


def test_unknown_value_type_and_deep_arrays(tmp_path: Path) -> None:
    one_key = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + b"\x01\0\0\0\0\0\0\0k"
    (tmp_path / "t.gguf").write_bytes(one_key + struct.pack("<I", 99) + b"\0" * 64)
    with pytest.raises(ModelIntegrityError, match="malformed"):
        gguf_check.check(tmp_path / "t.gguf")
    nested = b"".join(struct.pack("<IQ", ARRAY, 1) for _ in range(10))
    (tmp_path / "d.gguf").write_bytes(one_key + struct.pack("<I", ARRAY) + nested + b"\0" * 64)
    with pytest.raises(ModelIntegrityError, match="malformed"):
        gguf_check.check(tmp_path / "d.gguf")


def test_garbage_never_crashes_it(tmp_path: Path) -> None:
    rng = random.Random(1234)
    good = make_gguf(tensor_floats=16, chat_template="{{ messages }}")
    samples = [rng.randbytes(rng.randrange(0, 5000)) for _ in range(50)]
    samples += [b"GGUF" + struct.pack("<I", 3) + rng.randbytes(2000) for _ in range(50)]
    garbage = len(samples)
    for _ in range(300):  # a valid file with a few bytes flipped
        mutated = bytearray(good)
        for _ in range(rng.randrange(1, 6)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        samples.append(bytes(mutated))
    refused = [False] * len(samples)
    for i, sample in enumerate(samples):
        # A path of its own: the check caches what it read by path, size and mtime.
        path = tmp_path / f"g{i}.gguf"
        path.write_bytes(sample)
        try:
            info = gguf_check.check(path)
        except ModelIntegrityError:  # the only error it may raise
            refused[i] = True
        else:  # what it accepts holds every tensor byte it can size
            assert info.data_end is None or info.data_end <= info.file_size, i
    assert sum(refused[:garbage]) == garbage  # every garbage file is refused
    # A flip in a string or in tensor data leaves another valid file: some copies pass.
    assert 0 < sum(refused[garbage:]) < len(samples) - garbage
