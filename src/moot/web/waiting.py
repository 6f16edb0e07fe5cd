"""What a job of `moot serve` puts to its pages and waits for: an ask goes to the job's
pages (kept for a page opened later) and the debate waits for the answer a page posts back;
a debate stopped meanwhile leaves the ask unanswered. A person's seat (web/seat.py) and an
adversarial review's evidence requests (web/evidence.py) are the two kinds."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from moot.inference.human import SeatLeft

Wire = dict[str, Any]
T = TypeVar("T")
_CLOSED = object()


class PageWait(Generic[T]):
    """The asks of one kind a debate puts to its pages, one open at a time (an OPEN T); a
    page's answer is taken by `_give` for the ask it names."""

    def __init__(self, *, stopped: str, hint: str, done: str) -> None:
        self._publish: Callable[[Wire], None] = lambda item: None
        self._answers: queue.Queue[object] = queue.Queue()
        self._lock = threading.Lock()
        self._open: T | None = None
        self._closed = False
        self._stopped, self._hint = stopped, hint  # what the debate is told when it stops
        self._done = done  # the wire type that tells the pages an ask is over

    def attach(self, publish: Callable[[Wire], None]) -> None:
        """Where each ask goes: the job's pages."""
        self._publish = publish

    def close(self) -> None:
        """The debate stops: an ask waiting for its answer is left."""
        with self._lock:
            self._closed = True
        self._answers.put(_CLOSED)

    def _wait(self, number: int, opened: T, shown: Wire) -> Any:
        """Open ask NUMBER (OPENED), show it to the pages as SHOWN and wait for its answer."""
        with self._lock:
            if self._closed:
                raise SeatLeft(self._stopped, hint=self._hint)
            self._open = opened
        self._publish(shown)
        try:
            while True:
                item = self._answers.get()
                if item is _CLOSED:
                    raise SeatLeft(self._stopped, hint=self._hint)
                assert isinstance(item, tuple)
                answered, value = item
                if answered == number:
                    return value
        finally:
            with self._lock:
                self._open = None
            self._publish({"type": self._done, "ask": number})

    def _give(self, number: int, value: object) -> None:
        """The answer to ask NUMBER, with the lock held: the ask closes, and a second answer
        to it is refused."""
        self._open = None
        self._answers.put((number, value))
