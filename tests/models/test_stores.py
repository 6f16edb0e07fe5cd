"""The models Ollama, LM Studio and llama.cpp keep on this machine, found and used in place:
listed from their headers, resolved by `ollama:`, `lmstudio:` and `llamacpp:` references,
run in dry-run debates, never copied, written or re-hashed on every run."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from conftest import Cli
from gguf_samples import make_gguf
from moot.errors import ModelNotFoundError, UsageError
from moot.models import architectures, integrity, listing, locate, store
from moot.models.stores import ollama
from store_layouts import (
    gguf,
    llamacpp_file,
    lmstudio_model,
    ollama_manifest,
    ollama_model,
    place,
)

MOTION = "cities should ban private cars from their centres"


@pytest.fixture
def home(tmp_path: Path, moot_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME, where each tool's store would be; nothing of the user's own is seen."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("COLUMNS", "250")
    for var in ("OLLAMA_MODELS", "LLAMA_CACHE", "XDG_CACHE_HOME", "HF_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    return home


def ollama_root(home: Path) -> Path:
    return home / ".ollama" / "models"


def lmstudio_root(home: Path) -> Path:
    return home / ".lmstudio" / "models"


def llamacpp_root(home: Path) -> Path:
    return home / ".cache" / "llama.cpp"


def rows() -> dict[str, listing.ModelEntry]:
    return {e.id: e for e in listing.list_models()}


def one_line_error(proc: object, *needles: str) -> str:
    err = proc.stderr  # type: ignore[attr-defined]
    assert proc.returncode == 2, err  # type: ignore[attr-defined]
    assert "Traceback" not in err and "unexpected" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("error:") and lines[1].startswith("hint:"), err
    for needle in needles:
        assert needle in err, err
    return str(err)


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ROOT with its size and mtime: what "never modified" is checked by."""
    return {
        str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


# -- Ollama ----------------------------------------------------------------------------------


def test_an_ollama_model_is_listed_and_resolved_in_place(home: Path) -> None:
    blob = ollama_model(ollama_root(home), "qwen3", "8b", data=gguf(arch="qwen3", file_type=7))
    row = rows()["ollama:qwen3:8b"]
    assert row.kind == "ollama" and row.installed and row.usable and row.path == blob
    assert (row.architecture, row.quantisation, row.context_length) == ("qwen3", "Q8_0", 2048)
    assert row.loadable is True and row.size == blob.stat().st_size
    resolved = store.resolve("ollama:qwen3:8b")
    assert resolved.path == blob and resolved.sha256 == blob.name.removeprefix("sha256-")
    assert resolved.chat_format == "template"


def test_ollama_references_take_ollamas_defaults_and_namespaces(home: Path) -> None:
    root = ollama_root(home)
    latest = ollama_model(root, "qwen3", data=gguf(name="latest"))
    mine = ollama_model(root, "mine", "v1", namespace="me", data=gguf(name="mine"))
    hub = ollama_model(root, "Qwen3-GGUF", "Q4_K_M", namespace="owner", registry="hf.co",
                       data=gguf(name="hub"))  # fmt: skip
    assert store.resolve("ollama:qwen3").path == latest
    assert store.resolve("ollama:qwen3:latest").path == latest
    assert store.resolve("ollama:library/qwen3").path == latest
    assert store.resolve("ollama:me/mine:v1").path == mine
    assert store.resolve("ollama:hf.co/owner/Qwen3-GGUF:Q4_K_M").path == hub
    assert {"ollama:qwen3:latest", "ollama:me/mine:v1", "ollama:hf.co/owner/Qwen3-GGUF:Q4_K_M"} <= (
        set(rows())
    )


def test_ollama_models_environment_variable_is_the_only_store_read(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ollama_model(ollama_root(home), "athome", data=gguf(name="home"))
    elsewhere = tmp_path / "disk" / "ollama"
    blob = ollama_model(elsewhere, "there", data=gguf(name="there"))
    monkeypatch.setenv("OLLAMA_MODELS", str(elsewhere))
    listed = rows()
    assert "ollama:there:latest" in listed and "ollama:athome:latest" not in listed
    assert store.resolve("ollama:there").path == blob
    with pytest.raises(ModelNotFoundError, match=str(elsewhere)):
        store.resolve("ollama:athome")


def test_an_ollama_blob_is_hashed_once_then_trusted_by_its_stamp(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ollama_model(ollama_root(home), "qwen3", "8b")
    hashed: list[Path] = []
    real = integrity.sha256_file
    monkeypatch.setattr(integrity, "sha256_file", lambda p: hashed.append(p) or real(p))
    assert store.check("ollama:qwen3:8b") is not None  # a dry run hashes nothing
    assert rows()["ollama:qwen3:8b"].verified is None and hashed == []
    store.resolve("ollama:qwen3:8b")
    store.resolve("ollama:qwen3:8b")
    assert len(hashed) == 1
    assert rows()["ollama:qwen3:8b"].verified is True


def test_a_corrupt_ollama_blob_fails_its_own_name(home: Path, cli: Cli) -> None:
    blob = ollama_model(ollama_root(home), "qwen3", "8b")
    data = blob.read_bytes().replace(b"tiny test model", b"tiny test modem")  # still parses
    blob.write_bytes(data)
    err = one_line_error(cli("models", "info", "ollama:qwen3:8b"), "fails its checksum",
                         "ollama pull qwen3:8b", "damaged")  # fmt: skip
    assert blob.name.removeprefix("sha256-") in err
    one_line_error(cli("run", MOTION, "--max-rounds", "3", "--model", "ollama:qwen3:8b"),
                   "fails its checksum")  # fmt: skip
    assert blob.read_bytes() == data  # said so; left as it is


def test_a_missing_ollama_model_names_the_pull_without_running_it(home: Path, cli: Cli) -> None:
    ollama_model(ollama_root(home), "qwen3", "8b")
    for args in (
        ("run", MOTION, "--dry-run", "--model", "ollama:qwen3:14b"),
        ("models", "info", "ollama:qwen3:14b"),
        ("models", "pull", "ollama:qwen3:14b", "--endpoint", "http://127.0.0.1:9"),
    ):
        one_line_error(cli(*args), "ollama:qwen3:14b is not in Ollama's store",
                       "`ollama pull qwen3:14b`")  # fmt: skip
    # No Ollama on the machine at all: the same line.
    nowhere = {"OLLAMA_MODELS": str(home / "none")}
    proc = cli("run", MOTION, "--dry-run", "--model", "ollama:gemma3", env=nowhere)
    one_line_error(proc, "ollama pull gemma3:latest")


def test_a_manifest_naming_a_missing_blob(home: Path, cli: Cli) -> None:
    blob = ollama_model(ollama_root(home), "qwen3", "8b")
    blob.unlink()
    proc = cli("run", MOTION, "--dry-run", "--model", "ollama:qwen3:8b")
    one_line_error(proc, f"names the blob {blob.name}", "which is not in", "ollama pull qwen3:8b")
    row = rows()["ollama:qwen3:8b"]
    assert not row.installed and not row.usable and blob.name in row.reason


def test_a_manifest_that_is_not_json(home: Path, cli: Cli) -> None:
    root = ollama_root(home)
    ollama_model(root, "qwen3", "8b")
    (root / "manifests" / "registry.ollama.ai" / "library" / "qwen3" / "8b").write_text("{nope")
    one_line_error(cli("run", MOTION, "--dry-run", "--model", "ollama:qwen3:8b"),
                   "Ollama's manifest", "is not valid JSON", "ollama pull qwen3:8b")  # fmt: skip
    row = rows()["ollama:qwen3:8b"]
    assert not row.usable and "not valid JSON" in row.reason
    listed = cli("models", "list")
    assert listed.returncode == 0 and "unusable" in listed.stdout, listed.stderr


@pytest.mark.parametrize(
    ("layers", "says"),
    [
        ([{"mediaType": "application/vnd.ollama.image.tensor", "digest": "sha256:" + "a" * 64,
           "size": 4}] * 3, "3 per-tensor layers, not one GGUF file"),
        ([{"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "a" * 64,
           "size": 4}], "has no model layer"),
        ([{"mediaType": ollama.MODEL_LAYER, "digest": "md5:abc", "size": 4}], "not sha256:<hex>"),
        ("not a list", "lists no layers"),
    ],
)  # fmt: skip
def test_a_manifest_without_one_gguf_is_listed_as_unusable(
    home: Path, cli: Cli, layers: object, says: str
) -> None:
    ollama_manifest(ollama_root(home), "odd", layers=layers)  # type: ignore[arg-type]
    row = rows()["ollama:odd:latest"]
    assert not row.usable and says in row.reason
    one_line_error(cli("run", MOTION, "--dry-run", "--model", "ollama:odd"), says)


def test_a_blob_of_another_size_than_its_manifest_says(home: Path, cli: Cli) -> None:
    blob = ollama_model(ollama_root(home), "qwen3", "8b")
    with blob.open("ab") as fh:
        fh.write(b"\0" * 7)
    one_line_error(cli("run", MOTION, "--dry-run", "--model", "ollama:qwen3:8b"),
                   "where its manifest says", "still downloading")  # fmt: skip
    assert "still downloading" in rows()["ollama:qwen3:8b"].reason


def test_an_ollama_symlink_loop_is_named(home: Path, cli: Cli) -> None:
    root = ollama_root(home)
    ollama_model(root, "good")
    tag = root / "manifests" / "registry.ollama.ai" / "library" / "loop" / "latest"
    tag.parent.mkdir(parents=True)
    tag.symlink_to(tag)
    namespace = root / "manifests" / "registry.ollama.ai" / "circle"
    namespace.symlink_to(namespace)
    one_line_error(cli("run", MOTION, "--dry-run", "--model", "ollama:loop"), "symlink loop")
    listed = rows()
    assert "symlink loop" in listed["ollama:loop:latest"].reason
    assert "symlink loop" in listed["ollama:circle/*"].reason
    assert listed["ollama:good:latest"].usable


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its mode")
def test_an_unreadable_ollama_folder_is_a_row_saying_so(home: Path, cli: Cli) -> None:
    root = ollama_root(home)
    ollama_model(root, "qwen3", "8b")
    folder = root / "manifests" / "registry.ollama.ai" / "library" / "qwen3"
    folder.chmod(0)
    try:
        assert "Permission denied" in rows()["ollama:qwen3:*"].reason
        one_line_error(cli("run", MOTION, "--dry-run", "--model", "ollama:qwen3:8b"),
                       "Permission denied")  # fmt: skip
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize(
    "ref",
    ["ollama:", "ollama:../x", "ollama:a/b/c/d", "ollama:x:", "ollama:x:../y", "ollama:.x",
     "lmstudio:a", "lmstudio:a/../b", "lmstudio:a/b/c", "lmstudio:a/b/../x.gguf",
     "lmstudio:a/b/c/d.gguf", "llamacpp:x", "llamacpp:../x.gguf", "llamacpp:a/b.gguf"],
)  # fmt: skip
def test_a_malformed_store_reference_is_refused(home: Path, cli: Cli, ref: str) -> None:
    one_line_error(cli("run", MOTION, "--dry-run", "--model", ref), "bad ", "reference")


# -- LM Studio -------------------------------------------------------------------------------


def test_an_lmstudio_model_is_named_by_its_folder_or_its_file(home: Path) -> None:
    models = lmstudio_root(home)
    one = lmstudio_model(models, "lmstudio-community", "Qwen3-8B-GGUF", "Qwen3-8B-Q4_K_M.gguf",
                         data=gguf(arch="qwen3"))  # fmt: skip
    lmstudio_model(models, "lmstudio-community", "Qwen3-8B-GGUF", "mmproj-Qwen3-8B-F16.gguf",
                   data=gguf(arch="clip"))  # fmt: skip
    low = lmstudio_model(models, "bartowski", "Two-GGUF", "two-Q4_K_M.gguf")
    high = lmstudio_model(models, "bartowski", "Two-GGUF", "two-Q8_0.gguf")
    listed = rows()
    assert listed["lmstudio:lmstudio-community/Qwen3-8B-GGUF"].path == one
    assert not any("mmproj" in ref for ref in listed)  # a projector is not offered
    assert listed["lmstudio:bartowski/Two-GGUF/two-Q4_K_M.gguf"].path == low
    assert listed["lmstudio:bartowski/Two-GGUF/two-Q8_0.gguf"].path == high
    assert store.resolve("lmstudio:lmstudio-community/Qwen3-8B-GGUF").path == one
    assert store.resolve("lmstudio:bartowski/Two-GGUF/two-Q8_0.gguf").path == high
    with pytest.raises(UsageError, match="holds 2 models: two-Q4_K_M.gguf, two-Q8_0.gguf") as err:
        store.check("lmstudio:bartowski/Two-GGUF")
    assert "lmstudio:bartowski/Two-GGUF/two-Q4_K_M.gguf" in err.value.hint


def test_an_older_lmstudio_folder_is_read_too(home: Path) -> None:
    path = lmstudio_model(home / ".cache" / "lm-studio" / "models", "old", "M-GGUF", "m.gguf")
    assert rows()["lmstudio:old/M-GGUF"].path == path
    assert store.resolve("lmstudio:old/M-GGUF").path == path


def test_a_split_model_is_offered_by_its_first_part(home: Path, cli: Cli) -> None:
    folder = lmstudio_root(home) / "pub" / "Big-GGUF"
    first = place(folder / "big-00001-of-00002.gguf",
                  data=gguf(extra={"split.no": 0, "split.count": 2}))  # fmt: skip
    second = place(folder / "big-00002-of-00002.gguf",
                   data=gguf(extra={"split.no": 1, "split.count": 2}))  # fmt: skip
    row = rows()["lmstudio:pub/Big-GGUF"]
    assert row.path == first and row.size == first.stat().st_size + second.stat().st_size
    assert store.resolve("lmstudio:pub/Big-GGUF").files == (first, second)
    one_line_error(cli("run", MOTION, "--dry-run", "--model", str(second)),
                   "part 2 of 2 of a split model")  # fmt: skip
    second.unlink()
    assert "part 2 of 2 of the split model is missing" in rows()["lmstudio:pub/Big-GGUF"].reason
    one_line_error(cli("run", MOTION, "--dry-run", "--model", "lmstudio:pub/Big-GGUF"),
                   "is missing")  # fmt: skip


def test_an_lmstudio_symlink_loop_and_a_link_to_nothing_are_named(home: Path, cli: Cli) -> None:
    folder = lmstudio_root(home) / "pub" / "M-GGUF"
    folder.mkdir(parents=True)
    (folder / "loop.gguf").symlink_to(folder / "loop.gguf")
    (folder / "gone.gguf").symlink_to(home / "nowhere.gguf")
    (lmstudio_root(home) / "pub" / "Circle").symlink_to(lmstudio_root(home) / "pub" / "Circle")
    listed = rows()
    assert "symlink loop" in listed["lmstudio:pub/M-GGUF/loop.gguf"].reason
    assert "which does not exist" in listed["lmstudio:pub/M-GGUF/gone.gguf"].reason
    assert "symlink loop" in listed["lmstudio:pub/Circle"].reason
    one_line_error(cli("run", MOTION, "--dry-run", "--model", "lmstudio:pub/M-GGUF/loop.gguf"),
                   "symlink loop")  # fmt: skip
    one_line_error(cli("run", MOTION, "--dry-run", "--model", "lmstudio:pub/Circle"),
                   "symlink loop")  # fmt: skip


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its mode")
def test_an_unreadable_lmstudio_folder_is_a_row_saying_so(home: Path, cli: Cli) -> None:
    lmstudio_model(lmstudio_root(home), "pub", "M-GGUF", "m.gguf")
    folder = lmstudio_root(home) / "pub"
    folder.chmod(0)
    try:
        assert "Permission denied" in rows()["lmstudio:pub/*"].reason
        one_line_error(cli("run", MOTION, "--dry-run", "--model", "lmstudio:pub/M-GGUF"),
                       "Permission denied")  # fmt: skip
    finally:
        folder.chmod(0o755)


# -- llama.cpp's cache -----------------------------------------------------------------------


def test_a_flat_llamacpp_cache_file_is_listed_and_resolved(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "bartowski_Qwen_3-GGUF_Qwen_3-Q4_K_M.gguf"  # owner_repo_file: underscores everywhere
    path = llamacpp_file(llamacpp_root(home), name)
    llamacpp_file(llamacpp_root(home), "ggml-org_x_mmproj-f16.gguf", data=gguf(arch="clip"))
    place(llamacpp_root(home) / f"{name}.etag", data=b'"abc"')
    listed = rows()
    assert listed[f"llamacpp:{name}"].path == path
    assert [r for r in listed if r.startswith("llamacpp:")] == [f"llamacpp:{name}"]
    assert store.resolve(f"llamacpp:{name}").path == path
    cache = tmp_path / "xdg"
    moved = llamacpp_file(cache / "llama.cpp", "o_r_f.gguf")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    assert store.resolve("llamacpp:o_r_f.gguf").path == moved
    explicit = llamacpp_file(tmp_path / "explicit", "e.gguf")
    monkeypatch.setenv("LLAMA_CACHE", str(explicit.parent))
    assert store.resolve("llamacpp:e.gguf").path == explicit
    with pytest.raises(ModelNotFoundError, match="not in llama.cpp's cache"):
        store.resolve("llamacpp:o_r_f.gguf")


# -- what is not offered, what is said about each row -----------------------------------------


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (gguf(arch="nomic-bert"), "an embedding model"),
        (gguf(arch="qwen3", extra={"qwen3.pooling_type": 3}), "an embedding model"),
        (gguf(arch="qwen3tts"), "a speech model"),
    ],
)
def test_a_model_that_writes_no_text_is_listed_but_not_offered(
    home: Path, cli: Cli, data: bytes, says: str
) -> None:
    ollama_model(ollama_root(home), "embed", data=data)
    row = rows()["ollama:embed:latest"]
    assert row.installed and not row.usable and says in row.reason
    one_line_error(cli("run", MOTION, "--dry-run", "--model", "ollama:embed"), says)
    listed = cli("models", "list")
    assert f"unusable: {says}" in listed.stdout, listed.stdout
    # A format that picks a model for itself (challenge's --effort) is never offered it.
    from moot.debates.settings import installed_models

    ollama_model(ollama_root(home), "talker", data=gguf(arch="qwen3"))
    picked = dict(installed_models())
    assert "ollama:talker:latest" in picked and "ollama:embed:latest" not in picked


@pytest.mark.parametrize(
    "extra", [{"general.type": "mmproj"}, {"general.type": "adapter"}, {"split.no": 2}]
)
def test_a_part_of_another_model_is_not_listed(home: Path, extra: dict[str, str | int]) -> None:
    llamacpp_file(llamacpp_root(home), "part.gguf", data=gguf(extra=extra))
    assert "llamacpp:part.gguf" not in rows()
    with pytest.raises(locate.ModelFileError, match="not a model|split model"):
        store.check("llamacpp:part.gguf")


def test_an_architecture_the_bundled_llamacpp_lacks_is_said(home: Path, cli: Cli) -> None:
    llamacpp_file(llamacpp_root(home), "new.gguf", data=gguf(arch="qwen99"))
    row = rows()["llamacpp:new.gguf"]
    assert row.architecture == "qwen99" and row.loadable is False
    listed = cli("models", "list")
    assert "qwen99 (llama.cpp cannot load it)" in listed.stdout, listed.stdout


def test_a_blob_that_is_not_gguf_is_a_row_saying_so(home: Path) -> None:
    ollama_model(ollama_root(home), "safetensors", data=b"\x00" * 64)
    row = rows()["ollama:safetensors:latest"]
    assert not row.usable and "not a GGUF model file" in row.reason


def test_hostile_names_in_a_store_are_shown_as_text(home: Path, cli: Cli) -> None:
    lmstudio_model(lmstudio_root(home), "\x1b]0;pwned\x07", "[red]x", "m.gguf")
    listed = cli("models", "list")
    assert listed.returncode == 0, listed.stderr
    assert "\x1b" not in listed.stdout and "\x07" not in listed.stdout
    assert "lmstudio:\\x1b]0;pwned\\x07/[red]x" in listed.stdout


def test_the_bundled_llamacpp_knows_every_architecture_listed() -> None:
    spec = importlib.util.find_spec("llama_cpp")  # found, not imported
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llama-cpp-python is not installed")
    lib = Path(next(iter(spec.submodule_search_locations))) / "lib" / "libllama.so"
    if not lib.is_file():
        pytest.skip(f"no {lib}")
    data = lib.read_bytes()
    missing = [a for a in architectures.LLAMA_CPP_ARCHITECTURES if a.encode() + b"\0" not in data]
    assert missing == []
    assert b"\0not-an-architecture\0" not in data  # the check can fail


# -- used everywhere a model is named, never touched -------------------------------------------


def all_three(home: Path) -> dict[str, Path]:
    return {
        "ollama:qwen3:8b": ollama_model(ollama_root(home), "qwen3", "8b", data=gguf(name="o")),
        "lmstudio:pub/M-GGUF": lmstudio_model(
            lmstudio_root(home), "pub", "M-GGUF", "m.gguf", data=gguf(name="l")
        ),
        "llamacpp:o_r_f.gguf": llamacpp_file(
            llamacpp_root(home), "o_r_f.gguf", data=gguf(name="c")
        ),
    }


def test_each_store_runs_a_dry_run_debate_by_model_role_and_judge(
    home: Path, tmp_path: Path, cli: Cli
) -> None:
    refs = list(all_three(home))
    for i, ref in enumerate(refs):
        out = tmp_path / f"out{i}"
        proc = cli("run", MOTION, "--dry-run", "--model", ref, "--max-rounds", "3",
                   "--out", str(out))  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        transcript = json.loads((out / "transcript.json").read_text())
        assert {t["model"] for t in transcript["turns"]} == {f"echo:{ref}"}  # scripted, as named
    out = tmp_path / "roles"
    proc = cli("run", MOTION, "--dry-run", "--max-rounds", "3", "--out", str(out),
               "--role", f"proposition={refs[0]}", "--role", f"opposition={refs[1]}",
               "--role", f"judge={refs[2]}", "--model", refs[0])  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    by_role = {
        t["role"]: t["model"] for t in json.loads((out / "transcript.json").read_text())["turns"]
    }
    seated = (by_role["proposition"], by_role["opposition"], by_role["judge"])
    assert seated == tuple(f"echo:{ref}" for ref in refs)


def test_a_dry_run_tournament_takes_store_references(home: Path, tmp_path: Path, cli: Cli) -> None:
    a, b, c = all_three(home)
    (tmp_path / "m.txt").write_text("cats are better than dogs\n")
    out = tmp_path / "t"
    motions = ["--motions", str(tmp_path / "m.txt"), "--max-rounds", "3"]
    proc = cli("tournament", "--model", a, "--model", b, "--judge", c, "--dry-run", *motions,
               "--out", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    plan = json.loads((out / "tournament.json").read_text())
    assert {d["proposition"] for d in plan["debates"]} == {a, b}
    assert all(d["judges"] == [c] for d in plan["debates"])
    proc = cli("tournament", "--model", a, "--model", "ollama:nope", "--dry-run", *motions)
    one_line_error(proc, "ollama pull nope:latest")


def test_the_stores_are_read_never_written(home: Path, cli: Cli) -> None:
    refs = all_three(home)
    before = tree(home)
    assert cli("models", "list").returncode == 0
    assert cli("models", "list", "--json").returncode == 0
    for ref in refs:
        assert cli("models", "info", ref).returncode == 0
        assert cli("run", MOTION, "--dry-run", "--model", ref, "--max-rounds", "3").returncode == 0
    assert cli("models", "verify").returncode == 0
    assert tree(home) == before


def test_rm_leaves_another_tools_model_alone(home: Path, cli: Cli) -> None:
    refs = all_three(home)
    hints = {"ollama:qwen3:8b": "ollama rm qwen3:8b", "lmstudio:pub/M-GGUF": "in LM Studio",
             "llamacpp:o_r_f.gguf": "delete it yourself"}  # fmt: skip
    for ref, path in refs.items():
        one_line_error(cli("models", "rm", ref, "--yes"), "moot leaves it alone", hints[ref])
        assert path.is_file()


def test_listing_reads_headers_and_never_hashes(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    all_three(home)

    def no_hashing(path: Path) -> str:
        raise AssertionError(f"{path} was hashed")

    monkeypatch.setattr(integrity, "sha256_file", no_hashing)
    listed = rows()
    assert {"ollama:qwen3:8b", "lmstudio:pub/M-GGUF", "llamacpp:o_r_f.gguf"} <= set(listed)
    store.check("ollama:qwen3:8b")


def test_list_json_and_info_say_where_each_model_lives(home: Path, cli: Cli) -> None:
    refs = all_three(home)
    listed = json.loads(cli("models", "list", "--json").stdout)["models"]
    by_id = {r["id"]: r for r in listed}
    for ref, path in refs.items():
        row = by_id[ref]
        assert row["path"] == str(path) and row["usable"] and row["architecture"] == "llama"
        assert row["quantisation"] == "Q4_K_M" and row["context_length"] == 2048
        assert row["loadable"] is True
        info = json.loads(cli("models", "info", ref, "--json").stdout)
        assert info["path"] == str(path)
    table = cli("models", "list").stdout
    for where in ("Ollama", "LM Studio", "llama.cpp cache"):
        assert where in table


def test_a_store_file_with_a_broken_header_is_bad_input(home: Path, cli: Cli) -> None:
    lmstudio_model(lmstudio_root(home), "pub", "Cut-GGUF", "cut.gguf", data=make_gguf()[:40])
    one_line_error(cli("run", MOTION, "--dry-run", "--model", "lmstudio:pub/Cut-GGUF"),
                   "cut.gguf: GGUF header claims")  # fmt: skip
    assert "GGUF header claims" in rows()["lmstudio:pub/Cut-GGUF"].reason


def test_a_folder_that_cannot_be_listed_is_a_row_even_for_root(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ollama_model(ollama_root(home), "qwen3", "8b")
    lmstudio_model(lmstudio_root(home), "pub", "M-GGUF", "m.gguf")
    llamacpp_file(llamacpp_root(home), "o_r_f.gguf")
    locked = {
        ollama_root(home) / "manifests" / "registry.ollama.ai" / "library",
        lmstudio_root(home) / "pub" / "M-GGUF",
        llamacpp_root(home),
    }
    scandir = os.scandir

    def refusing(path: object) -> object:
        if Path(str(path)) in locked:
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", refusing)
    listed = rows()
    for ref in ("ollama:*", "lmstudio:pub/M-GGUF", "llamacpp:*"):
        assert not listed[ref].usable and "Permission denied" in listed[ref].reason, ref


def test_fifos_in_a_store_are_refused_without_blocking(home: Path, cli: Cli) -> None:
    blob = ollama_model(ollama_root(home), "qwen3", "8b")
    blob.unlink()
    os.mkfifo(blob)
    manifest = ollama_root(home) / "manifests" / "registry.ollama.ai" / "library" / "fifo" / "x"
    manifest.parent.mkdir(parents=True)
    os.mkfifo(manifest)
    os.mkfifo(lmstudio_root(home).parent.parent / "m.gguf")
    lmstudio_root(home).joinpath("pub", "F-GGUF").mkdir(parents=True)
    (lmstudio_root(home) / "pub" / "F-GGUF" / "m.gguf").symlink_to(home / "m.gguf")
    listed = rows()
    assert "not a regular file" in listed["ollama:qwen3:8b"].reason
    assert "not a regular file" in listed["ollama:fifo:x"].reason
    assert "not a regular file" in listed["lmstudio:pub/F-GGUF"].reason
    for ref in ("ollama:qwen3:8b", "ollama:fifo:x", "lmstudio:pub/F-GGUF"):
        one_line_error(cli("run", MOTION, "--dry-run", "--model", ref), "not a regular file")
