"""The debates and tournaments an MCP server runs: each in a worker thread of the server's
process, saved where `moot run` and `moot tournament` save theirs, at most PARALLEL at once
and never two on the same model."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from moot import history
from moot.api import Debate
from moot.api.debates import DebateStopped, ModelSource
from moot.debates.runner import DebateRun as Runner
from moot.debates.settings import DebateSetup
from moot.errors import MootError, UsageError
from moot.events import Event, TurnFinished, TurnStarted
from moot.mcp import locks
from moot.records.journal import Held
from moot.web.runs import PacedEchoes
from moot.words import words

OVER = ("finished", "stopped", "failed")
SPEECH_LIMIT = 4000  # characters of the last speech a state carries; the rest is in get_debate


W = TypeVar("W", bound="Work")
Update = Callable[[Callable[[], None]], None]  # a change made under the desk's lock


@dataclass(kw_only=True)
class Work:
    """What the desk runs, a debate or a tournament: where it stands, how it ended."""

    id: str  # its saved folder's name
    holds: frozenset[str]  # the models it loads: no other work loads them meanwhile
    state: str = "queued"  # queued → running → finished | stopped | failed
    error: dict[str, str] | None = None  # a failed one's message and hint
    started: float = field(default_factory=time.time)
    changes: int = 0  # how often it changed: a waiter wakes when this moves
    lock: Held | None = None  # its journal's hold (locks.hold) while it is queued or runs

    @property
    def over(self) -> bool:
        return self.state in OVER

    @property
    def language(self) -> str:
        return "en"

    def play(self, update: Update) -> None:
        """Run to the end (DebateStopped: stopped), each change made through UPDATE."""
        raise NotImplementedError

    def halt(self) -> None:
        """Stop a running one at its next event."""

    def give_back(self) -> None:
        """It ended without finishing: what was claimed for it and holds nothing is freed."""

    def done(self) -> float:
        """How far it has gone, for a progress notification."""
        return 0.0

    def total(self) -> float | None:
        """How far it will go, where that is known."""
        return None

    def said(self) -> str:
        """One line on where it stands, for a progress notification."""
        return self.state

    def view(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(kw_only=True)
class Run(Work):
    """One debate of this server: where it stands, what it said last, how it ended."""

    setup: DebateSetup
    debate: Debate
    claim: history.Claim | None  # the folder claimed for it (None: resumed in its own)
    turns: int = 0  # finished turns, replayed ones included
    speaking: dict[str, Any] | None = None  # the turn under way: its role and step
    last: dict[str, Any] | None = None  # the last finished turn: role, step, text
    stop_reason: str | None = None

    @property
    def language(self) -> str:
        return self.setup.language

    def play(self, update: Update) -> None:
        result = self.debate.run(on_event=self._listener(update))
        self.stop_reason = result.stop_reason

    def halt(self) -> None:
        self.debate.stop()

    def give_back(self) -> None:
        if self.claim is not None:
            self.claim.release()  # a debate that wrote nothing leaves nothing behind

    def done(self) -> float:
        return self.turns + (0.5 if self.speaking else 0.0)

    def said(self) -> str:
        if self.speaking:
            return f"turn {self.turns + 1}: {self.speaking['label'] or self.speaking['role']}"
        if self.last:
            return f"{self.turns} turns: {self.last['label'] or self.last['role']} spoke"
        return self.state

    def view(self) -> dict[str, Any]:
        """Where the debate stands, as a tool reports it."""
        return {
            "id": self.id,
            "state": self.state,
            "format": self.setup.format.name,
            "motion": self.setup.motion,
            "language": self.setup.language,
            "dry_run": self.setup.run.dry_run,
            "turns": self.turns,
            "speaking": self.speaking,
            "last_speech": self.last,
            "stop_reason": self.stop_reason,
            "error": self.error,
            "folder": str(self.setup.out_dir) if self.setup.out_dir else None,
        }

    def _listener(self, update: Update) -> Callable[[Event], None]:
        def heard(event: Event) -> None:
            if isinstance(event, TurnStarted):
                speaking = {"role": event.role, "step": event.step, "label": event.label}
                update(lambda: setattr(self, "speaking", speaking))
            elif isinstance(event, TurnFinished):
                turn = event.turn
                last = {
                    "index": turn.index,
                    "role": turn.role,
                    "step": turn.step,
                    "label": event.label,
                    "model": turn.model,
                    "text": turn.text[:SPEECH_LIMIT],
                }

                def finished() -> None:
                    self.turns += 1
                    self.speaking, self.last = None, last

                update(finished)

        return heard


def holds_of(setup: DebateSetup) -> frozenset[str]:
    """The models a debate loads (none in a dry run: its scripted models are its own)."""
    if setup.run.dry_run:
        return frozenset()
    return frozenset(Runner(setup).refs().values())


class Desk:
    """Every debate this server was asked to run; a queued one starts when fewer than
    PARALLEL run and none of its models is loaded by a running one."""

    def __init__(self, *, parallel: int = 1, pace: float = 0.0) -> None:
        self.parallel, self.pace = parallel, pace
        self._lock = threading.Condition()
        self._runs: dict[str, Work] = {}
        self._queue: list[Work] = []
        self._running: list[Work] = []

    # -- asking ---------------------------------------------------------------------------

    def start(self, setup: DebateSetup) -> Run:
        """Claim SETUP's folder (its id) and queue it; it runs when its turn comes."""
        claim = history.claim(None, motion=setup.asked)  # named as `moot run` names it
        setup.out_dir = claim.path
        debate = Debate.from_setup(setup, save=True, pool=self._models(setup))
        run = Run(
            id=claim.path.name, setup=setup, debate=debate, holds=holds_of(setup), claim=claim
        )
        run.lock = locks.hold(claim.path / history.JOURNAL)  # made by the claim: none else
        return self._queued(run)

    def resume(self, saved: history.SavedDebate, *, check: Callable[[DebateSetup], None]) -> Run:
        """The interrupted debate SAVED, going on from its journal (`moot resume`), once
        CHECK has let its setup through; refused while another server runs it."""
        lock = locks.hold(saved.path / history.JOURNAL)
        if lock is None:
            raise UsageError(key="mcp.desk.running_elsewhere", id=saved.id)
        try:
            debate = Debate.resume(saved.path)
            check(debate.setup)
        except BaseException:
            locks.release(lock)
            raise
        debate.pool = self._models(debate.setup)
        holds = holds_of(debate.setup)
        run = Run(id=saved.id, setup=debate.setup, debate=debate, holds=holds, claim=None)
        run.lock = lock
        return self._queued(run)

    def add(self, work: Work) -> Work:
        """Queue WORK (a tournament planned in its folder); it runs when its turn comes."""
        return self._queued(work)

    def get(self, run_id: str) -> Work | None:
        with self._lock:
            return self._runs.get(run_id)

    def live(self, run_id: str) -> Work | None:
        """The work RUN_ID if it is queued or running here."""
        run = self.get(run_id)
        return run if run is not None and not run.over else None

    def runs(self) -> list[Work]:
        with self._lock:
            return list(self._runs.values())

    def stop(self, run: Work) -> None:
        """Take a queued debate off the queue (its folder given back), or stop a running one
        at its next event (its finished turns stay in its journal)."""
        with self._lock:
            queued = run in self._queue
            if queued:
                self._queue.remove(run)
                run.state = "stopped"
                self._changed(run)
        if queued:
            self._let_go(run)
            self._dispatch()
        else:
            run.halt()

    def wait(self, run: Work, seconds: float, *, seen: int) -> int:
        """Block until RUN has changed since SEEN (its `changes` then), it is over, or
        SECONDS pass; its `changes` now."""
        deadline = time.monotonic() + seconds
        with self._lock:
            while run.changes == seen and not run.over:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(left)
            return run.changes

    def close(self, *, timeout: float | None = None) -> None:
        """Wait for every debate asked of this server to end (None: however long)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while any(not r.over for r in self._runs.values()):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._lock.wait(left)

    def abandon(self) -> None:
        """The server is ending: the queued debates are stopped and their folders given back
        (the running ones keep their journals, to be resumed)."""
        with self._lock:
            queued, self._queue = list(self._queue), []
            for run in queued:
                run.state = "stopped"
                self._changed(run)
        for run in queued:
            self._let_go(run)

    # -- running --------------------------------------------------------------------------

    def _models(self, setup: DebateSetup) -> ModelSource | None:
        """Scripted models paced as `--pace` says, for a dry run; None: the debate loads its
        own."""
        return PacedEchoes(self.pace) if setup.run.dry_run and self.pace > 0 else None

    def _queued(self, run: W) -> W:
        with self._lock:
            self._runs[run.id] = run
            self._queue.append(run)
        self._dispatch()
        return run

    def _changed(self, run: Work) -> None:
        """RUN changed (the lock held): wake whoever waits on it."""
        run.changes += 1
        self._lock.notify_all()

    def _dispatch(self) -> None:
        starting = []
        with self._lock:
            busy = {m for r in self._running for m in r.holds}
            for run in list(self._queue):
                if len(self._running) >= self.parallel:
                    break
                if run.holds & busy:
                    continue
                self._queue.remove(run)
                self._running.append(run)
                busy |= run.holds
                run.state = "running"
                starting.append(run)
                self._changed(run)
        for run in starting:
            name = f"moot-mcp-{run.id[:24]}"
            threading.Thread(target=self._run, args=(run,), name=name, daemon=True).start()

    def _update(self, run: Work) -> Update:
        def update(change: Callable[[], None]) -> None:
            with self._lock:
                change()
                self._changed(run)

        return update

    def _let_go(self, run: Work, *, finished: bool = False) -> None:
        """RUN has ended: its journal's lock let go, and unless it FINISHED what was claimed
        for it and holds nothing."""
        locks.release(run.lock)
        run.lock = None
        if not finished:
            run.give_back()

    def _run(self, run: Work) -> None:
        state, error = "finished", None  # type: tuple[str, MootError | None]
        try:
            run.play(self._update(run))
        except DebateStopped:
            state = "stopped"
        except MootError as exc:
            state, error = "failed", exc
        except Exception as exc:
            state = "failed"
            error = MootError(key="mcp.desk.unexpected", kind=type(exc).__name__, why=str(exc))
        finally:
            self._let_go(run, finished=state == "finished")
            with self._lock:
                run.state = state
                if isinstance(run, Run):
                    run.speaking = None
                if error is not None:
                    run.error = words(run.language).error(error)
                self._running.remove(run)
                self._changed(run)
            self._dispatch()
