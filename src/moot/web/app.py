"""The ASGI app of `moot serve`: the page, its API and its event streams, behind the guard.

Starlette for the routes (small, typed, and already what llama.cpp's server extra brings),
sse-starlette for the event streams (pings, disconnects, shutdown handled), the page as
plain ES modules: nothing to build, nothing fetched from elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from moot import history
from moot._version import __version__
from moot.config import tournaments_dir
from moot.errors import MootError, UsageError
from moot.inference.human import HUMAN
from moot.prompts import LANGUAGES
from moot.records import files
from moot.web import finished, forms, runs, wire
from moot.web import tournament as tournaments
from moot.web.evidence import NotAsked
from moot.web.guard import Guard
from moot.web.jobs import END, Hub, Job, shown

STATIC = Path(__file__).parent / "static"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
BODY_LIMIT = 256 * 1024  # a form is a few kilobytes
_ID = re.compile(r"[\w-][\w.-]*")  # a folder name moot made; never a path
DOWNLOAD_TYPES = {
    ".json": "application/json",
    ".md": "text/markdown; charset=utf-8",
    ".jsonl": "application/x-ndjson",
}


class NotFound(MootError):
    """A job, a saved debate or a file the server does not have."""


def build(
    *,
    token: str,
    host: str,
    port: int,
    dry_run: bool,
    pace: float = runs.PACE,
    parallel: int = 1,
    batch: bool = False,
) -> tuple[Guard, Hub]:
    """The app behind its guard, and the hub of its jobs (a tournament's debates PARALLEL
    at once, decoded in one batch a step where BATCH)."""
    hub = Hub()
    api = _Api(hub, dry_run=dry_run, pace=pace, parallel=parallel, batch=batch)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await run_in_threadpool(hub.close)

    app = Starlette(routes=api.routes(), lifespan=lifespan)
    return Guard(app, token=token, host=host, port=port), hub


class _Api:
    def __init__(
        self, hub: Hub, *, dry_run: bool, pace: float, parallel: int = 1, batch: bool = False
    ) -> None:
        self.hub, self.dry_run, self.pace = hub, dry_run, pace
        self.parallel, self.batch = parallel, batch
        self.static = {p.name for p in STATIC.iterdir() if p.is_file() and p.suffix in TYPES}

    def routes(self) -> list[Route]:
        return [
            Route("/", self.index),
            Route("/static/{name}", self.asset),
            Route("/api/info", self.info),
            Route("/api/formats", self.formats),
            Route("/api/models", self.models),
            Route("/api/jobs", self.jobs),
            Route("/api/debates", self.start_debate, methods=["POST"]),
            Route("/api/tournaments", self.start_tournament, methods=["POST"]),
            Route("/api/jobs/{job}", self.job),
            Route("/api/jobs/{job}/events", self.events),
            Route("/api/jobs/{job}/stop", self.stop, methods=["POST"]),
            Route("/api/jobs/{job}/seat", self.seat, methods=["POST"]),
            Route("/api/jobs/{job}/evidence", self.evidence, methods=["POST"]),
            Route("/api/history", self.saved_list),
            Route("/api/history/{id}", self.saved, methods=["GET", "DELETE"]),
            Route("/api/history/{id}/resume", self.resume, methods=["POST"]),
            Route("/api/history/{id}/files/{name}", self.download),
            Route("/api/tournaments", self.finished_tournaments),
            Route("/api/tournaments/{id}", self.finished_tournament),
            Route("/api/tournaments/{id}/ratings.png", self.ratings_chart),
        ]

    # -- the page -------------------------------------------------------------------------

    def index(self, request: Request) -> Response:
        return self._file("index.html")

    def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in self.static:
            return _missing("no such file", _page_language(request))
        return self._file(name)

    def _file(self, name: str) -> Response:
        path = STATIC / name
        return Response(path.read_bytes(), media_type=TYPES[path.suffix])

    def info(self, request: Request) -> Response:
        return JSONResponse({"version": __version__, "dry_run": self.dry_run})

    def formats(self, request: Request) -> Response:
        return JSONResponse({"debate": forms.formats(), "tournament": tournaments.formats()})

    def models(self, request: Request) -> Response:
        from moot import models

        try:
            entries = models.list()
        except MootError as exc:
            return _error(exc, _page_language(request))
        listed = [
            {
                "id": m.id,
                "default": bool(getattr(m, "is_default", False)),
                "size": getattr(m, "size", None),
            }
            for m in entries
            # A dry run's scripted models take any name: every model moot knows is offered.
            if (m.installed or self.dry_run) and getattr(m, "usable", True)
        ]
        listed.append({"id": HUMAN, "default": False, "size": None, "human": True})
        return JSONResponse({"models": listed})

    # -- jobs -----------------------------------------------------------------------------

    def jobs(self, request: Request) -> Response:
        return JSONResponse({"jobs": [j.info() for j in reversed(self.hub.jobs())]})

    async def start_debate(self, request: Request) -> Response:
        page = _page_language(request)
        form = await _form(request, page)
        if isinstance(form, Response):
            return form

        def start() -> Job:
            setup = forms.debate_setup(form, dry_run=self.dry_run)
            return self.hub.submit(runs.debate_job(setup, pace=self.pace))

        return await self._start(start, forms.language_of(form, page))

    async def start_tournament(self, request: Request) -> Response:
        page = _page_language(request)
        form = await _form(request, page)
        if isinstance(form, Response):
            return form

        def start() -> Job:
            choice = tournaments.choose(form, dry_run=self.dry_run)
            return self.hub.submit(
                tournaments.tournament_job(choice, parallel=self.parallel, batch=self.batch)
            )

        return await self._start(start, tournaments.language_of(form, page))

    async def _start(self, start: Callable[[], Job], language: str) -> Response:
        """The job START submits, or its form's problems said in LANGUAGE (the debate's)."""
        try:
            job = await run_in_threadpool(start)
        except forms.FormErrors as exc:
            return _field_errors(exc.fields, language)
        except MootError as exc:
            return _error(exc, language)
        return JSONResponse(job.info(), status_code=201)

    def job(self, request: Request) -> Response:
        job = self.hub.get(request.path_params["job"])
        if job is None:
            return _missing("no such debate", _page_language(request))
        return JSONResponse(job.info())

    async def events(self, request: Request) -> Response:
        """The job's events so far, then each as it comes, until it is over."""
        job = self.hub.get(request.path_params["job"])
        if job is None:
            return _missing("no such debate", _page_language(request))
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[wire.Wire] = asyncio.Queue()

        def listener(item: wire.Wire) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: the server stops
                loop.call_soon_threadsafe(queue.put_nowait, item)

        backlog = job.subscribe(listener)

        async def stream() -> AsyncIterator[dict[str, str]]:
            try:
                for item in backlog:
                    yield {"data": json.dumps(item, ensure_ascii=False)}
                if backlog[-1] is END:
                    return
                while True:
                    item = await queue.get()
                    yield {"data": json.dumps(item, ensure_ascii=False)}
                    if item is END:
                        return
            finally:
                job.unsubscribe(listener)

        return EventSourceResponse(stream(), ping=15)

    async def _answer(self, request: Request) -> tuple[Job, dict[str, Any]] | Response:
        """The job a page answers and the form it answers with, or the response refusing it
        (in the job's language: the page shows the debate in it)."""
        job = self.hub.get(request.path_params["job"])
        if job is None:
            return _missing("no such debate", _page_language(request))
        form = await _form(request, job.language)
        if isinstance(form, Response):
            return form
        errors: forms.FieldErrors = {}
        forms.refuse_repeated(form, errors)
        ask = form.get("ask")
        if not isinstance(ask, int) or isinstance(ask, bool):  # true is not ask 1
            forms.wrong_kind(ask, "ask", errors, "a whole number")
        if not isinstance(form.get("skip", False), bool):  # an evidence request's answer
            forms.wrong_kind(form["skip"], "skip", errors, "a boolean")
        return _field_errors(errors, job.language) if errors else (job, form)

    async def seat(self, request: Request) -> Response:
        """A person's answer from the page to what their seat was asked."""
        answering = await self._answer(request)
        if isinstance(answering, Response):
            return answering
        job, form = answering
        if job.seat is None:
            return _conflict(
                "no person holds a seat in this debate", "give a seat the model human", job.language
            )
        try:
            problem = job.seat.answer(form)
        except UsageError as exc:
            return _field_errors({exc.field or "form": exc}, job.language)
        if problem is not None:
            hint = "reload the page: it shows what the seat is asked now"
            return _conflict(problem, hint, job.language)
        return JSONResponse({"answered": form.get("ask")})

    async def evidence(self, request: Request) -> Response:
        """The page's answer to an adversarial review's request for evidence: the text, or
        none; a problem with the text is named beside its field."""
        answering = await self._answer(request)
        if isinstance(answering, Response):
            return answering
        job, form = answering
        if job.evidence is None:
            return _conflict("the debate asks for no evidence", "reload the page", job.language)
        try:
            job.evidence.answer(form)
        except NotAsked as exc:
            return _refusal(409, exc, "", job.language)
        except UsageError as exc:
            error = shown(exc, job.language)
            return JSONResponse({"errors": {"evidence": error}}, status_code=400)
        return JSONResponse({"answered": form.get("ask")})

    def stop(self, request: Request) -> Response:
        job = self.hub.get(request.path_params["job"])
        if job is None:
            return _missing("no such debate", _page_language(request))
        self.hub.stop(job)
        return JSONResponse(job.info())

    # -- saved debates --------------------------------------------------------------------

    def saved_list(self, request: Request) -> Response:
        try:
            saved = history.list_debates()
        except MootError as exc:
            return _error(exc, _page_language(request))
        listed = []
        for debate in reversed(saved):
            item = wire.saved_summary(debate)
            live = self.hub.live_in(debate.id)
            item["job"] = live.id if live else None
            listed.append(item)
        return JSONResponse({"debates": listed})

    def saved(self, request: Request) -> Response:
        try:
            debate = self._saved(request.path_params["id"])
            live = self.hub.live_in(debate.id)
            if request.method == "DELETE":
                if live is not None:
                    raise UsageError(key="web.app.debate_running")
                history.remove(debate)
                return JSONResponse({"deleted": debate.id})
            item = wire.saved_debate(debate)
        except MootError as exc:
            return _error(exc, _page_language(request))
        item["job"] = live.id if live else None
        return JSONResponse(item)

    def resume(self, request: Request) -> Response:
        try:
            debate = self._saved(request.path_params["id"])
            if self.hub.live_in(debate.id) is not None:
                raise UsageError(key="web.app.debate_running_already")
            if debate.finished:
                raise UsageError(key="web.app.debate_finished_already")
            job = self.hub.submit(runs.resume_job(debate, pace=self.pace))
        except MootError as exc:
            return _error(exc, _page_language(request))
        return JSONResponse(job.info(), status_code=201)

    def download(self, request: Request) -> Response:
        try:
            debate = self._saved(request.path_params["id"])
            name = request.path_params["name"]
            if name not in wire.downloads(debate):
                raise NotFound(key="web.app.has_no", id=debate.id, name=name)
            data = files.read_bytes(
                debate.path / name, what=name, limit=files.RECORD_LIMIT, follow_symlinks=False
            )
        except MootError as exc:
            return _error(exc, _page_language(request))
        kind = DOWNLOAD_TYPES.get(Path(name).suffix, "application/octet-stream")
        disposition = f'attachment; filename="{name}"'
        return Response(data, media_type=kind, headers={"content-disposition": disposition})

    def finished_tournaments(self, request: Request) -> Response:
        return JSONResponse({"tournaments": finished.listed()})

    def finished_tournament(self, request: Request) -> Response:
        ident = request.path_params["id"]
        try:
            shown = finished.shown(ident) if _ID.fullmatch(ident) else None
        except MootError as exc:
            return _error(exc, _page_language(request))
        if shown is None:
            return _missing("no such tournament", _page_language(request))
        return JSONResponse(shown)

    def ratings_chart(self, request: Request) -> Response:
        ident = request.path_params["id"]
        root = tournaments_dir()
        try:
            names = {p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink()}
        except OSError:
            names = set()
        if not _ID.fullmatch(ident) or ident not in names:
            return _missing("no such tournament", _page_language(request))
        try:
            data = files.read_bytes(
                root / ident / "ratings.png",
                what="ratings chart",
                limit=files.RECORD_LIMIT,
                follow_symlinks=False,
            )
        except MootError:
            return _missing("the tournament has no ratings chart yet", _page_language(request))
        return Response(data, media_type="image/png")

    def _saved(self, ident: str) -> history.SavedDebate:
        """A saved debate by its id, exactly: a folder of moot's data directory, never a path
        from the request."""
        if _ID.fullmatch(ident):
            for debate in history.list_debates():
                if debate.id == ident:
                    return debate
        raise NotFound(key="web.app.no_saved_debate", ident=ident)


def _page_language(request: Request) -> str:
    """The language the page is shown in, as it says in Accept-Language (its first tag): what
    the server's answers are said in where no debate says otherwise."""
    first = request.headers.get("accept-language", "").split(",")[0].split(";")[0]
    tag = first.strip().lower().split("-")[0]
    return tag if tag in LANGUAGES else "en"


async def _form(request: Request, language: str) -> dict[str, Any] | Response:
    """The request's form, or the response refusing it (said in LANGUAGE)."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return _refusal(415, "send the form as JSON", "reload the page", language)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > BODY_LIMIT:
            return _refusal(413, "the form is too large", "shorten it", language)
    try:
        form = json.loads(body, object_pairs_hook=forms.json_object)
    except (ValueError, RecursionError):
        return _refusal(400, "the form is not JSON", "reload the page", language)
    if not isinstance(form, dict):
        return _refusal(400, "the form is not an object", "reload the page", language)
    return form


def _field_errors(errors: forms.FieldErrors, language: str) -> Response:
    """A request's problems, each named by its field, in LANGUAGE: a 400 the page shows
    beside the fields."""
    said = {name: shown(error, language) for name, error in errors.items()}
    return JSONResponse({"errors": said}, status_code=400)


def _refusal(status: int, message: MootError | str, hint: str, language: str) -> Response:
    """An error the page shows beside what it asked: a MootError, or MESSAGE and HINT
    (moot's English), in LANGUAGE."""
    error = shown(
        message if isinstance(message, MootError) else {"message": message, "hint": hint}, language
    )
    return JSONResponse({"error": error}, status_code=status)


def _error(exc: MootError, language: str) -> Response:
    return _refusal(404 if isinstance(exc, NotFound) else 400, exc, "", language)


def _conflict(message: str, hint: str, language: str) -> Response:
    return _refusal(409, message, hint, language)


def _missing(message: str, language: str) -> Response:
    return _refusal(404, message, "", language)
