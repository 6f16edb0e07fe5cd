"""The Hugging Face cache on disk: listed and pruned by path, a file looked up as huggingface_hub
itself looks it up (the hub client imported only when the repository is in the cache)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from moot.errors import UsageError
from moot.models import integrity
from moot.records import files

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SHARD = re.compile(r"^(?P<stem>.+)-(?P<index>\d{5})-of-(?P<count>\d{5})\.gguf$")


@dataclass(frozen=True)
class HubFile:
    """One file of a Hugging Face repository at a revision."""

    repo: str
    filename: str
    revision: str = "main"

    @property
    def label(self) -> str:
        return f"{self.repo}/{self.filename}@{self.revision}"


def shards(repo: str, filename: str, revision: str = "main") -> tuple[HubFile, ...]:
    """FILENAME's files: every shard when it names the first of a split model, else itself."""
    return tuple(HubFile(repo, name, revision) for name in split_names(filename))


def split_names(filename: str) -> tuple[str, ...]:
    """FILENAME, or every shard's name when it names the first of a split model
    (`…-00001-of-00003.gguf`); the folder part of FILENAME is kept."""
    head, _, name = filename.rpartition("/")
    match = _SHARD.match(name)
    if match is None or int(match["index"]) != 1:
        return (filename,)
    count, stem = int(match["count"]), match["stem"]
    prefix = f"{head}/" if head else ""
    return tuple(f"{prefix}{stem}-{i:05d}-of-{count:05d}.gguf" for i in range(1, count + 1))


def is_later_shard(name: str) -> bool:
    """Whether the file NAME is a split model's part other than the first."""
    match = _SHARD.match(name)
    return match is not None and int(match["index"]) != 1


def cache_dir() -> Path:
    """The hub cache as huggingface_hub would pick it, but from the environment at call time."""
    env = os.environ
    explicit = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(env.get("HF_HOME") or Path(xdg) / "huggingface").expanduser() / "hub"


def repo_dir(repo: str) -> Path:
    """The cache folder of model repository REPO."""
    return cache_dir() / ("models--" + repo.replace("/", "--"))


def cached_file(f: HubFile) -> Path | None:
    """F's copy in the cache, or None: huggingface_hub's own try_to_load_from_cache, so that
    moot finds what the hub client would. `main` is the commit refs/main names, never another
    snapshot that happens to hold the file; a file the cache records as gone (.no_exist) is
    not there. A repository with no folder in the cache is a miss without importing the hub
    client (~0.15 s). The ref file is read here, bounded and only as a regular file holding a
    commit (the hub client would open a FIFO and wait), and the lookup asked for that commit."""
    repo = repo_dir(f.repo)
    if not repo.is_dir():
        return None
    revision = f.revision
    ref = repo / "refs" / f.revision
    if os.path.lexists(ref) and not ref.is_dir():
        revision = _read_ref(ref)
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(
            f.repo, f.filename, cache_dir=cache_dir(), revision=revision, repo_type="model"
        )
    except ValueError:  # a name the hub client refuses is no file of its cache
        return None
    return Path(found) if isinstance(found, str) else None


def _read_ref(ref: Path) -> str:
    """The commit a refs/<revision> file names: 40 hex digits, as huggingface_hub writes it."""
    commit = files.read_text(ref, what="the hub cache's ref file", limit=files.KIB).strip()
    if not _COMMIT.fullmatch(commit):
        raise UsageError(key="models.hub_cache.hub_cache_s_ref_file", ref=ref)
    return commit


def etag_sha256(path: Path) -> str | None:
    """The sha256 the hub announced for a cached file: its blob is named by the LFS ETag."""
    blob = Path(os.path.realpath(path)).name
    return blob if integrity.is_sha256(blob) else None


def remove(path: Path) -> list[Path]:
    """Delete a cached snapshot file, and its blob unless another snapshot still links to it."""
    removed: list[Path] = []
    blob = Path(os.path.realpath(path))
    integrity.drop_stamp(path)
    if path.is_symlink() or path.exists():
        path.unlink()
        removed.append(path)
    if blob.parent.name != "blobs" or not blob.exists():
        return removed
    snapshots = blob.parent.parent / "snapshots"
    if not any(os.path.realpath(p) == str(blob) for p in snapshots.rglob("*") if p.is_symlink()):
        blob.unlink()
        removed.append(blob)
    return removed


def cached_gguf_files() -> dict[str, tuple[HubFile, Path]]:
    """Every GGUF in the cache as `hf:` reference -> (file, path); split models by first shard."""
    found: dict[str, tuple[HubFile, Path]] = {}
    root = cache_dir()
    for folder in sorted(root.glob("models--*")):
        repo = "/".join(folder.name.split("--")[1:])
        for path in sorted((folder / "snapshots").glob("*/**/*.gguf")):
            relative = path.relative_to(folder / "snapshots").parts
            filename = "/".join(relative[1:])
            if is_later_shard(Path(filename).name):
                continue  # listed through its first shard
            found.setdefault(f"hf:{repo}/{filename}", (HubFile(repo, filename), path))
    return found
