"""The debates and tournaments started from the page: each runs in a worker thread, one per
model at a time (a job whose models are busy waits, in the order it came), and each keeps
its events, so a page opened later, or opened again, is shown the job where it is."""

from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from moot.errors import MootError
from moot.inference.human import SeatLeft
from moot.web.evidence import WebEvidence
from moot.web.seat import WebSeat
from moot.words import words

Wire = dict[str, Any]
Listener = Callable[[Wire], None]
Work = Callable[["Job"], None]

END: Wire = {"type": "end"}  # after a job's last event: nothing more will come
OVER = ("finished", "stopped", "failed")


def shown(error: MootError | dict[str, str], language: str) -> dict[str, str]:
    """An error (a MootError, or a message and hint in moot's English) as a debate in
    LANGUAGE shows it."""
    if isinstance(error, MootError):
        return words(language).error(error)
    said = words(language).shown
    return {key: said(text) for key, text in error.items()}


class Job:
    """One debate or tournament: its state, its events so far, who is listening."""

    def __init__(
        self,
        work: Work,
        *,
        kind: str,
        title: str,
        holds: Iterable[str],
        language: str = "en",
        format: str = "",
        dry_run: bool = False,
    ) -> None:
        self.id = secrets.token_hex(6)
        self.work = work
        self.kind = kind  # "debate" | "tournament"
        self.title = title
        self.holds = frozenset(holds)  # the models it uses: no other job uses them meanwhile
        self.language = language
        self.format = format
        self.dry_run = dry_run
        self.state = "queued"
        self.folder: str | None = None  # the saved debate (or tournament) once it has one
        self.waiting: list[str] = []  # the busy models a queued job waits for
        self.error: dict[str, str] | None = None
        self.created = time.time()
        self.stop_requested = False
        self._lock = threading.Lock()
        self._backlog: list[Wire] = []
        self._listeners: list[Listener] = []
        self._turn_at: int | None = None  # where the turn now speaking starts in the backlog
        self._on_stop: list[Callable[[], None]] = []
        self.seat: WebSeat | None = None  # a person's seat, answered from the page
        self.evidence: WebEvidence | None = None  # evidence asked for, supplied from the page

    @property
    def over(self) -> bool:
        return self.state in OVER

    def info(self) -> Wire:
        return {
            "type": "job",
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "language": self.language,
            "format": self.format,
            "dry_run": self.dry_run,
            "state": self.state,
            "folder": self.folder,
            "waiting": self.waiting,
            "error": self.error,
            "seat": self.seat is not None,
        }

    # -- events ---------------------------------------------------------------------------

    def publish(self, item: Wire) -> None:
        """Keep ITEM for later pages and hand it to every page listening now. A finished
        turn carries its whole text, so the tokens it streamed are not kept past it."""
        with self._lock:
            kind = item.get("type")
            if kind == "turn_started":
                self._turn_at = len(self._backlog)
            elif kind == "turn_finished" and self._turn_at is not None:
                start = self._turn_at + 1
                self._backlog[start:] = [e for e in self._backlog[start:] if e["type"] != "token"]
                self._turn_at = None
            if kind in ("seat_done", "evidence_done"):  # answered: a later page is not shown it
                asked, of = item.get("ask"), kind.removesuffix("_done")
                self._backlog = [
                    e for e in self._backlog if not (e["type"] == of and e["ask"] == asked)
                ]
            else:
                self._backlog.append(item)
            listeners = list(self._listeners)
        for listener in listeners:
            listener(item)

    def subscribe(self, listener: Listener) -> list[Wire]:
        """What happened so far (the job's state first); LISTENER gets what comes next. A job
        that is over ends its backlog with END and keeps no listener."""
        with self._lock:
            backlog = [self.info(), *self._backlog]
            if self.over:
                return [*backlog, END]
            self._listeners.append(listener)
            return backlog

    def unsubscribe(self, listener: Listener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def update(self, **changes: Any) -> None:
        """Change the job's state (or its folder) and tell the pages."""
        with self._lock:
            for name, value in changes.items():
                setattr(self, name, value)
            item = self.info()
            listeners = list(self._listeners)
            if self.over:
                self._listeners.clear()
        for listener in listeners:
            listener(item)
            if self.over:
                listener(END)

    # -- stopping -------------------------------------------------------------------------

    def on_stop(self, hook: Callable[[], None]) -> None:
        """HOOK stops the work once it runs; called at once if a stop was asked already."""
        with self._lock:
            self._on_stop.append(hook)
            asked = self.stop_requested
        if asked:
            hook()

    def request_stop(self) -> None:
        with self._lock:
            self.stop_requested = True
            hooks = list(self._on_stop)
        for hook in hooks:
            hook()


class Hub:
    """Every job of this server, and the models in use: a job starts when none of its models
    is held by a running job or wanted by one queued before it."""

    def __init__(self, *, keep: int = 200) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, Job] = {}
        self._queue: list[Job] = []
        self._busy: Counter[str] = Counter()
        self._threads: dict[str, threading.Thread] = {}
        self._keep = keep  # jobs that are over, kept for the pages (the oldest go first)
        self._closed = False

    def submit(self, job: Job) -> Job:
        with self._lock:
            if self._closed:
                raise MootError(key="web.jobs.server_shutting_down")
            self._jobs[job.id] = job
            self._queue.append(job)
            self._forget_old()
        self._dispatch()
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def jobs(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def live_in(self, folder: str) -> Job | None:
        """The job, queued or running, that writes the saved debate FOLDER."""
        with self._lock:
            return next((j for j in self._jobs.values() if j.folder == folder and not j.over), None)

    def stop(self, job: Job) -> None:
        """Take a queued job off the queue, or stop a running one at its next event (its
        finished turns stay in its journal)."""
        with self._lock:
            queued = job in self._queue
            if queued:
                self._queue.remove(job)
        if queued:
            job.stop_requested = True
            job.update(state="stopped", waiting=[])
            self._dispatch()
        else:
            job.request_stop()

    def close(self, *, timeout: float = 5.0) -> None:
        """Stop every job and wait a little for the running ones to end."""
        with self._lock:
            self._closed = True
            jobs = list(self._jobs.values())
            threads = list(self._threads.values())
        for job in jobs:
            if not job.over:
                self.stop(job)
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    # -- scheduling -----------------------------------------------------------------------

    def _dispatch(self) -> None:
        starting: list[Job] = []
        waiting: list[tuple[Job, list[str]]] = []
        with self._lock:
            wanted = set(self._busy)
            for job in list(self._queue):
                if job.holds & wanted:
                    waiting.append((job, sorted(job.holds & set(self._busy))))
                else:
                    self._queue.remove(job)
                    self._busy.update(job.holds)
                    starting.append(job)
                wanted |= job.holds
            for job in starting:
                thread = threading.Thread(
                    target=self._run, args=(job,), name=f"moot-job-{job.id}", daemon=True
                )
                self._threads[job.id] = thread
        for job, busy in waiting:
            if busy != job.waiting:
                job.update(waiting=busy)
        for job in starting:
            job.update(state="running", waiting=[])
            self._threads[job.id].start()

    def _run(self, job: Job) -> None:
        state, error = "finished", None  # type: tuple[str, MootError | dict[str, str] | None]
        try:
            job.work(job)
        except MootError as exc:
            if job.stop_requested:
                state = "stopped"
            else:
                state, error = "failed", exc
        except Exception as exc:
            state = "failed"
            error = MootError(key="web.jobs.unexpected", kind=type(exc).__name__, why=str(exc))
        except SeatLeft as exc:  # a person's seat left waiting: the debate is stopped there
            state = "stopped"
            if not job.stop_requested:
                error = {"message": exc.message, "hint": exc.hint}
        except BaseException:
            state = "stopped" if job.stop_requested else "failed"
            if not job.stop_requested:
                raise
        finally:
            with self._lock:
                self._busy.subtract(job.holds)
                self._busy = +self._busy  # counts at zero go
                self._threads.pop(job.id, None)
            job.update(state=state, error=shown(error, job.language) if error else None)
            self._dispatch()

    def _forget_old(self) -> None:
        over = [j for j in self._jobs.values() if j.over]
        for job in over[: max(0, len(over) - self._keep)]:
            del self._jobs[job.id]
