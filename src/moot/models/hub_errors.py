"""Turning huggingface_hub's download failures into DownloadErrors that name the fix."""

from __future__ import annotations

import importlib

from moot.errors import DownloadError
from moot.models.hub_cache import HubFile

DEFAULT_ENDPOINT = "https://huggingface.co"


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
        return DownloadError(key="models.hub_errors.offline")
    if caught(hub.RepositoryNotFoundError):
        return DownloadError(key="models.hub_errors.no_repository", repo=f.repo, where=where)
    if caught(hub.RevisionNotFoundError):
        return DownloadError(
            key="models.hub_errors.no_revision", revision=f.revision, repo=f.repo, where=where
        )
    if caught(hub.EntryNotFoundError) or status == 404:
        return DownloadError(
            key="models.hub_errors.no_file",
            filename=f.filename,
            repo=f.repo,
            revision=f.revision,
            where=where,
        )
    if status is not None:
        return DownloadError(
            key="models.hub_errors.http_status", where=where, status=status, label=f.label
        )
    if caught(client.TimeoutException, client.NetworkError):  # ConnectTimeout, ConnectError too
        return DownloadError(key="models.hub_errors.unreachable", where=where, why=_reason(chain))
    broke_off = any("Consistency check failed" in str(e) for e in chain)
    if broke_off or caught(client.RemoteProtocolError):
        return DownloadError(key="models.hub_errors.broke_off", label=f.label, where=where)
    return DownloadError(key="models.hub_errors.failed", label=f.label, where=where, why=str(exc))


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
