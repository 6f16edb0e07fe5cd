"""Pulling from a Hugging Face hub: a mock hub on 127.0.0.1 driven by the real huggingface_hub."""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from gguf_samples import make_gguf
from moot.errors import DownloadError, ModelIntegrityError, ModelNotFoundError, UsageError
from moot.models import listing, store

COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO = "acme/tiny-GGUF"
FILE = "tiny.Q4_K_M.gguf"
REF = f"hf:{REPO}/{FILE}"


@pytest.fixture(scope="session")
def httpserver_listen_address() -> tuple[str, int]:
    return ("127.0.0.1", 0)


@pytest.fixture
def hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moot_home: Path) -> Path:
    """A private hub cache, and no HF_ENDPOINT leaking in from the environment."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "hf-home" / "hub"


class MockHub:
    """Just enough of the hub's `resolve` endpoint for hf_hub_download: HEAD, then GET."""

    def __init__(self, server: HTTPServer) -> None:
        self.server = server
        self.endpoint = server.url_for("").rstrip("/")

    def serve(
        self,
        repo: str,
        filename: str,
        content: bytes,
        *,
        etag: str | None = None,
        cut_at: int | None = None,
        revision: str = "main",
    ) -> str:
        """Serve CONTENT at REVISION; ETAG defaults to its sha256 (an LFS file); CUT_AT breaks
        the GET off."""
        sha = hashlib.sha256(content).hexdigest()
        headers = {
            "X-Repo-Commit": COMMIT,
            "ETag": f'"{etag or sha}"',
            "X-Linked-Etag": f'"{etag or sha}"',
            "X-Linked-Size": str(len(content)),
        }
        path = f"/{repo}/resolve/{revision}/{filename}"
        self.server.expect_request(path, method="HEAD").respond_with_response(
            Response(status=200, headers=headers)
        )

        def get(request: Request) -> Response:
            body = content if cut_at is None else content[:cut_at]
            extra = {"Content-Length": str(len(content)), "Connection": "close"}
            return Response(body, status=200, headers={**headers, **extra})

        self.server.expect_request(path, method="GET").respond_with_handler(get)
        return sha

    def fail(self, repo: str, filename: str, status: int, error_code: str = "") -> None:
        headers = {"X-Error-Code": error_code} if error_code else {}
        for method in ("HEAD", "GET"):
            self.server.expect_request(
                f"/{repo}/resolve/main/{filename}", method=method
            ).respond_with_response(Response(status=status, headers=headers))


@pytest.fixture
def hub(httpserver: HTTPServer, hf_cache: Path) -> MockHub:
    return MockHub(httpserver)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a socket was opened where none may be")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


def test_pull_lands_in_the_hub_cache_and_resolves_offline(
    hub: MockHub, hf_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = hub.serve(REPO, FILE, make_gguf(arch="qwen2", chat_template="{{ messages }}"))
    model = store.pull(REF, endpoint=hub.endpoint, progress=False)
    snapshot = hf_cache / "models--acme--tiny-GGUF" / "snapshots" / COMMIT / FILE
    assert model.path == snapshot
    assert Path(os.path.realpath(snapshot)).name == sha  # the blob is named by its ETag
    assert model.sha256 == sha
    assert model.chat_format == "template" and model.chat_template == "{{ messages }}"
    assert model.context_length == 2048 and model.architecture == "qwen2"

    # Second time: a cache hit, with the hub gone and sockets refused.
    served = len(hub.server.log)
    hub.server.clear()

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("resolve opened a socket")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    assert store.resolve(REF) == model
    assert store.pull(REF, endpoint=hub.endpoint, progress=False) == model
    assert len(hub.server.log) == 0 and served > 0
    [entry] = [e for e in listing.list_models() if e.id == REF]
    assert entry.kind == "hf-cache" and entry.installed and entry.verified


def test_endpoint_is_read_from_hf_endpoint_at_call_time(
    hub: MockHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub.serve(REPO, FILE, make_gguf(arch="gemma3"))
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    model = store.pull(REF, progress=False)
    assert model.chat_format == "gemma"  # no template in the file: from its architecture


def test_a_split_model_pulls_every_shard(hub: MockHub) -> None:
    first, second = "big-00001-of-00002.gguf", "big-00002-of-00002.gguf"
    hub.serve(REPO, first, make_gguf(arch="qwen2", name="shard 1"))
    hub.serve(REPO, second, make_gguf(arch="qwen2", name="shard 2"))
    model = store.pull(f"hf:{REPO}/{first}", endpoint=hub.endpoint, progress=False)
    assert [p.name for p in model.files] == [first, second]
    assert model.path.name == first


def test_checksum_mismatch_is_refused_and_nothing_is_kept(hub: MockHub, hf_cache: Path) -> None:
    content = make_gguf()
    hub.serve(REPO, FILE, content, etag=hashlib.sha256(b"something else").hexdigest())
    with pytest.raises(ModelIntegrityError, match="fails its checksum"):
        store.pull(REF, endpoint=hub.endpoint, progress=False)
    assert not any(p.is_file() for p in hf_cache.rglob("*.gguf"))
    assert not list((hf_cache / "models--acme--tiny-GGUF" / "blobs").iterdir())
    with pytest.raises(ModelNotFoundError, match="not in the local cache"):
        store.resolve(REF)


def _user_catalog(home: Path, sha256: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "catalog.toml").write_text(
        "[[models]]\n"
        f'id = "tiny"\nname = "Tiny"\ncontext_length = 2048\nsha256 = "{sha256}"\n'
        f'sources = [{{ kind = "hf", repo = "{REPO}", files = ["{FILE}"] }}]\n'
    )


def test_catalog_checksum_beats_the_hubs_word(hub: MockHub, moot_home: Path) -> None:
    content = make_gguf(arch="qwen2")
    good = hashlib.sha256(content).hexdigest()
    # The hub announces a git sha1 (not a sha256): only the download itself can be checked.
    hub.serve(REPO, FILE, content, etag="da39a3ee5e6b4b0d3255bfef95601890afd80709")
    _user_catalog(moot_home, "f" * 64)
    with pytest.raises(ModelIntegrityError, match="expected ffff"):
        store.pull("tiny", endpoint=hub.endpoint, progress=False)
    with pytest.raises(ModelNotFoundError, match="'tiny' is not installed") as caught:
        store.resolve("tiny")
    assert "`moot models pull tiny`" in caught.value.hint
    _user_catalog(moot_home, good)
    assert store.pull("tiny", endpoint=hub.endpoint, progress=False).sha256 == good


def test_hub_announcing_another_file_is_refused_before_download(
    hub: MockHub, moot_home: Path
) -> None:
    hub.serve(REPO, FILE, make_gguf())
    _user_catalog(moot_home, "e" * 64)
    with pytest.raises(ModelIntegrityError, match="nothing was downloaded"):
        store.pull("tiny", endpoint=hub.endpoint, progress=False)
    assert not [r for r in hub.server.log if r[0].method == "GET"]


def test_missing_file_is_a_clear_404(hub: MockHub) -> None:
    hub.fail(REPO, "nope.gguf", 404, "EntryNotFound")
    with pytest.raises(DownloadError, match="file nope.gguf not found in acme/tiny-GGUF"):
        store.pull(f"hf:{REPO}/nope.gguf", endpoint=hub.endpoint, progress=False)
    hub.fail("acme/ghost", FILE, 404, "RepoNotFound")
    with pytest.raises(DownloadError, match="repository acme/ghost not found on http://"):
        store.pull(f"hf:acme/ghost/{FILE}", endpoint=hub.endpoint, progress=False)


def test_server_error_is_reported_with_its_status(hub: MockHub) -> None:
    hub.fail(REPO, FILE, 500)
    with pytest.raises(DownloadError, match="answered HTTP 500") as caught:
        store.pull(REF, endpoint=hub.endpoint, progress=False)
    assert "--endpoint" in caught.value.hint


def test_unreachable_endpoint_names_it_and_the_fix(hf_cache: Path) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    with pytest.raises(DownloadError, match=f"cannot reach the hub at {endpoint}") as caught:
        store.pull(REF, endpoint=endpoint, progress=False)
    assert "--endpoint" in caught.value.hint and "HF_ENDPOINT" in caught.value.hint


def test_interrupted_download_leaves_nothing_that_resolves(hub: MockHub, hf_cache: Path) -> None:
    content = make_gguf(tensor_floats=4096)
    hub.serve(REPO, FILE, content, cut_at=len(content) // 2)
    with pytest.raises(DownloadError, match="broke off"):
        store.pull(REF, endpoint=hub.endpoint, progress=False)
    assert not [p for p in hf_cache.rglob("*") if p.is_file() and p.stat().st_size > 1000]
    with pytest.raises(ModelNotFoundError):
        store.resolve(REF)


def test_remove_deletes_snapshot_and_blob(hub: MockHub, hf_cache: Path) -> None:
    hub.serve(REPO, FILE, make_gguf(arch="qwen2"))
    model = store.pull(REF, endpoint=hub.endpoint, progress=False)
    blob = Path(os.path.realpath(model.path))
    removal = store.remove(REF)
    assert set(removal.files) == {model.path, blob}
    assert not blob.exists() and not model.path.exists()
    with pytest.raises(ModelNotFoundError):
        store.remove(REF)


def test_bad_hub_reference(hf_cache: Path) -> None:
    with pytest.raises(UsageError, match="bad hub reference") as caught:
        store.resolve("hf:just-a-repo")
    assert "hf:OWNER/REPO/FILE.gguf" in caught.value.hint


# -- the cache as huggingface_hub itself lays it out and looks in it ---------------------------

LATER = "fedcba9876543210fedcba9876543210fedcba98"


def hub_download(hub: MockHub, hf_cache: Path, revision: str = "main") -> Path:
    """FILE fetched by huggingface_hub itself into the private cache."""
    from huggingface_hub import hf_hub_download

    return Path(
        hf_hub_download(REPO, FILE, revision=revision, endpoint=hub.endpoint, cache_dir=hf_cache)
    )


def hub_lookup(hf_cache: Path, revision: str = "main") -> str | None:
    """What huggingface_hub's own lookup finds: a path, or None (not cached, or cached as gone)."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(REPO, FILE, cache_dir=hf_cache, revision=revision)
    return found if isinstance(found, str) else None


def test_a_file_fetched_only_at_a_commit_is_not_main(hub: MockHub, hf_cache: Path) -> None:
    from moot.models.hub_cache import HubFile, cached_file

    hub.serve(REPO, FILE, make_gguf(arch="qwen2"), revision=COMMIT)
    path = hub_download(hub, hf_cache, revision=COMMIT)
    assert not (hf_cache / "models--acme--tiny-GGUF" / "refs" / "main").exists()
    # No snapshot stands in for `main` because it holds the file: refs/main names none.
    assert cached_file(HubFile(REPO, FILE)) is None and hub_lookup(hf_cache) is None
    at_commit = cached_file(HubFile(REPO, FILE, COMMIT))
    assert at_commit == path and str(at_commit) == hub_lookup(hf_cache, COMMIT)
    with pytest.raises(ModelNotFoundError):
        store.resolve(REF)


def test_a_file_the_cache_records_as_gone_is_not_found(hub: MockHub, hf_cache: Path) -> None:
    from moot.models.hub_cache import HubFile, cached_file

    hub.serve(REPO, FILE, make_gguf(arch="qwen2"))
    first = store.pull(REF, endpoint=hub.endpoint, progress=False)
    assert cached_file(HubFile(REPO, FILE)) == first.path
    # `main` moves on to a commit without the file: huggingface_hub records both.
    hub.server.clear()
    gone = {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": LATER}
    for method in ("HEAD", "GET"):
        hub.server.expect_request(
            f"/{REPO}/resolve/main/{FILE}", method=method
        ).respond_with_response(Response(status=404, headers=gone))
    with pytest.raises(Exception, match="404|not found|Entry"):
        hub_download(hub, hf_cache)
    repo = hf_cache / "models--acme--tiny-GGUF"
    assert (repo / "refs" / "main").read_text() == LATER
    assert (repo / ".no_exist" / LATER / FILE).exists()
    # The older snapshot still holds the file; neither lookup offers it for `main`.
    assert first.path.is_file()
    assert cached_file(HubFile(REPO, FILE)) is None and hub_lookup(hf_cache) is None
    with pytest.raises(ModelNotFoundError):
        store.resolve(REF)
