"""Turning huggingface_hub's download failures into DownloadErrors that name the fix."""

from __future__ import annotations

import importlib

from moot.errors import DownloadError
from moot.models.hub_cache import HubFile

DEFAULT_ENDPOINT = "https://huggingface.co"
_MIRROR = "point moot at another hub or a mirror with --endpoint URL or HF_ENDPOINT"


def download_error(exc: BaseException, f: HubFile, endpoint: str | None) -> DownloadError:
    """A DownloadError saying what went wrong fetching F from ENDPOINT.

    Errors are told apart by class along the cause chain: huggingface_hub's own, and those of
    the HTTP client it raises through (httpx, or httpx2 from huggingface_hub 2 on). Both are
    imported here, after the fact: huggingface_hub is loaded already, since it raised EXC.
    """
    from huggingface_hub import errors as hub

    client = importlib.import_module(hub.HTTPError.__module__.partition(".")[0])
    where = endpoint or DEFAULT_ENDPOINT
    chain = _causes(exc)

    def caught(*classes: type[BaseException]) -> bool:
        return any(isinstance(e, classes) for e in chain)

    status = next((code for e in chain if (code := _status(e)) is not None), None)
    if caught(hub.OfflineModeIsEnabled):
        return DownloadError(
            "the hub is switched off (HF_HUB_OFFLINE is set)", hint="unset HF_HUB_OFFLINE to pull"
        )
    if caught(hub.RepositoryNotFoundError):
        msg = f"repository {f.repo} not found on {where} (or it is private or gated)"
        return DownloadError(msg, hint=f"check the repository name, or {_MIRROR}")
    if caught(hub.RevisionNotFoundError):
        msg = f"revision {f.revision!r} not found in {f.repo} on {where}"
        return DownloadError(msg, hint="check the revision (a branch, tag or commit)")
    if caught(hub.EntryNotFoundError) or status == 404:
        msg = f"file {f.filename} not found in {f.repo} (revision {f.revision}) on {where}"
        return DownloadError(msg, hint="check the file name: it is case-sensitive")
    if status is not None:
        msg = f"the hub at {where} answered HTTP {status} for {f.label}"
        return DownloadError(msg, hint=f"try again later, or {_MIRROR}")
    if caught(client.TimeoutException, client.NetworkError):  # ConnectTimeout, ConnectError too
        msg = f"cannot reach the hub at {where}: {_reason(chain)}"
        return DownloadError(msg, hint=f"check the network, or {_MIRROR}")
    broke_off = any("Consistency check failed" in str(e) for e in chain)
    if broke_off or caught(client.RemoteProtocolError):
        msg = f"the download of {f.label} from {where} broke off before the end"
        return DownloadError(msg, hint="nothing was kept; run the pull again")
    return DownloadError(f"downloading {f.label} from {where} failed: {exc}", hint=_MIRROR)


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _status(exc: BaseException) -> int | None:
    code = getattr(getattr(exc, "response", None), "status_code", None)
    return code if isinstance(code, int) else None


def _reason(chain: list[BaseException]) -> str:
    # The innermost message is the plain one ("[Errno 111] Connection refused").
    for e in reversed(chain):
        if str(e):
            return str(e)
    return type(chain[0]).__name__
