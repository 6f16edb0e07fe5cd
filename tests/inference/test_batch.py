"""The batcher that decodes several debates' tokens in one llama.cpp batch (`--batch`): the
debates on one model step together, one decode runs at a time, long prompts are split and
never keep a draw waiting, and a stop ends every waiting debate. On a recording stand-in
for a model's shared context: what the batcher hands llama.cpp, not what llama.cpp does
with it (the real tournament test plays real models this way)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import pytest

from moot.errors import MootError
from moot.inference.llama.batch import Batcher, BatchStopped


@dataclass(eq=False)
class Context:
    """Stands in for `batch.Shared`: records each decode's (sequence, tokens, first position,
    whether the lane's submission ends there)."""

    name: str
    n_batch: int = 512
    fail: bool = False
    decodes: list[list[tuple[int, list[int], int, bool]]] = field(default_factory=list)
    log: list[str] | None = None  # every decode of every context, in order
    running: list[int] = field(default_factory=lambda: [0])  # shared by the contexts

    def __post_init__(self) -> None:
        self.lock = threading.Lock()

    def decode(self, work: Any) -> bool:
        self.running[0] += 1
        assert self.running[0] == 1, "two decodes at once"
        for i, chunk in enumerate(work):
            if chunk.last:
                chunk.lane.idx = i
        self.decodes.append([(c.lane.seq, list(c.tokens), c.pos, c.last) for c in work])
        if self.log is not None:
            self.log.append(self.name)
        threading.Event().wait(0.002)  # long enough for another thread to try to decode
        self.running[0] -= 1
        return not self.fail


@dataclass(eq=False)
class Lane:
    shared: Context
    seq: int
    held: list[int] = field(default_factory=list)
    idx: int = -1

    @property
    def n_past(self) -> int:
        return len(self.held)

    def say(self, batcher: Batcher, tokens: list[int]) -> None:
        batcher.submit(self, tokens)  # type: ignore[arg-type]
        self.held += tokens


def in_threads(*jobs: Any) -> None:
    errors: list[BaseException] = []

    def run(job: Any) -> None:
        try:
            job()
        except BaseException as exc:  # noqa: BLE001 - shown by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not [t for t in threads if t.is_alive()], "a lane never came back"
    assert not errors, errors


def speaker(batcher: Batcher, lane: Lane, prompt: list[int], tokens: int, ready: Any) -> Any:
    """A debate's turn: in a call, its prompt evaluated, then one token at a time."""

    def turn() -> None:
        with batcher.taking_part(lane):  # type: ignore[arg-type]
            ready()
            lane.say(batcher, prompt)
            for t in range(tokens):
                lane.say(batcher, [1000 + t])

    return turn


def test_the_debates_on_one_model_step_together() -> None:
    batcher, model = Batcher(), Context("x")
    lanes = [Lane(model, 0), Lane(model, 1)]
    both = threading.Barrier(2).wait  # both in their calls before either hands in a token
    in_threads(*(speaker(batcher, lane, [1, 2, 3], 20, both) for lane in lanes))
    # Every decode held a token of each: the prompts together, then each draw of both.
    assert len(model.decodes) == 21
    assert all(sorted(seq for seq, *_ in d) == [0, 1] for d in model.decodes)
    for lane in lanes:
        assert lane.held == [1, 2, 3, *range(1000, 1020)]
    assert batcher.stats.together == 21 and batcher.stats.by_width == {2: 21}
    # Each token went to its own sequence at the next position of that sequence.
    positions = [pos for d in model.decodes for seq, _, pos, _ in d if seq == 0]
    assert positions == [0, *range(3, 23)]


def test_without_the_wait_for_the_other_lane_they_would_not_step_together() -> None:
    """The same two turns, the second lane's call opened only after the first has ended:
    nothing to step with, so every decode holds one sequence (the test above can fail)."""
    batcher, model = Batcher(), Context("x")
    first, second = Lane(model, 0), Lane(model, 1)
    in_threads(speaker(batcher, first, [1], 5, lambda: None))
    in_threads(speaker(batcher, second, [1], 5, lambda: None))
    assert batcher.stats.by_width == {1: 12} and batcher.stats.together == 0


def test_one_decode_runs_at_a_time_whichever_model_it_is_for() -> None:
    log: list[str] = []
    running = [0]
    x, y = Context("x", log=log, running=running), Context("y", log=log, running=running)
    batcher = Batcher()
    a, b = Lane(x, 0), Lane(y, 0)
    in_threads(
        speaker(batcher, a, [5, 6], 30, lambda: None),
        speaker(batcher, b, [7], 30, lambda: None),
    )  # Context.decode asserts that no two decodes overlap
    assert log.count("x") == 31 and log.count("y") == 31
    assert a.held == [5, 6, *range(1000, 1030)] and b.held == [7, *range(1000, 1030)]


def test_the_model_most_debates_wait_on_goes_first() -> None:
    """While one decode runs, one lane comes to wait on model y and two on model x: when it
    ends, x's two go first, together, then y's."""
    log: list[str] = []
    running = [0]
    x, y = Context("x", log=log, running=running), Context("y", log=log, running=running)
    slow, release = Context("z", log=log, running=running), threading.Event()
    plain = slow.decode

    def held_decode(work: Any) -> bool:
        release.wait(5)
        return plain(work)

    slow.decode = held_decode  # type: ignore[method-assign]
    batcher = Batcher()
    lanes = [Lane(y, 0), Lane(x, 0), Lane(x, 1)]
    threads = [threading.Thread(target=lane.say, args=(batcher, [1])) for lane in lanes]

    def all_waiting() -> None:
        threading.Event().wait(0.2)
        for t in threads:
            t.start()
        threading.Event().wait(0.2)  # each has handed its token in by now
        release.set()

    in_threads(lambda: Lane(slow, 0).say(batcher, [1]), all_waiting)
    for t in threads:
        t.join(5)
    assert log == ["z", "x", "y"], log
    assert len(x.decodes[0]) == 2 and len(y.decodes[0]) == 1


def test_a_long_prompt_is_split_and_a_draw_never_waits_behind_it() -> None:
    batcher, model = Batcher(), Context("x", n_batch=8)
    long, short = Lane(model, 0), Lane(model, 1)
    long.held, short.held = [], [9, 9, 9]
    both = threading.Barrier(2).wait
    prompt = list(range(20))

    def long_turn() -> None:
        with batcher.taking_part(long):  # type: ignore[arg-type]
            both()
            long.say(batcher, prompt)

    def short_turn() -> None:
        with batcher.taking_part(short):  # type: ignore[arg-type]
            both()
            for t in range(3):
                short.say(batcher, [t])

    in_threads(long_turn, short_turn)
    assert long.held == prompt and short.held == [9, 9, 9, 0, 1, 2]
    for d in model.decodes:
        assert sum(len(tokens) for _, tokens, _, _ in d) <= 8  # within n_batch
        if len(d) == 2:
            assert d[0][0] == 1 and d[0][1] in ([0], [1], [2])  # the draw first
    # The prompt's chunks are in order, at their positions, and only the last one is last.
    chunks = [
        (tokens, pos, last) for d in model.decodes for seq, tokens, pos, last in d if seq == 0
    ]
    assert [t for tokens, _, _ in chunks for t in tokens] == prompt
    assert [pos for _, pos, _ in chunks] == [
        sum(len(c[0]) for c in chunks[:i]) for i in range(len(chunks))
    ]
    assert [last for *_, last in chunks] == [False] * (len(chunks) - 1) + [True]


def test_a_stop_ends_every_waiting_debate_and_every_later_one() -> None:
    batcher, model = Batcher(), Context("x")
    waiting, absent = Lane(model, 0), Lane(model, 1)
    raised: list[BaseException] = []
    in_call = threading.Event()

    def turn() -> None:
        # The other lane is in a call and never hands a token in: this one waits for it.
        with batcher.taking_part(waiting):  # type: ignore[arg-type]
            in_call.set()
            try:
                waiting.say(batcher, [1])
            except BatchStopped as exc:
                raised.append(exc)

    with batcher.taking_part(absent):  # type: ignore[arg-type]
        thread = threading.Thread(target=turn)
        thread.start()
        in_call.wait(5)
        threading.Event().wait(0.1)
        assert not raised and model.decodes == []  # still waiting for the other lane
        batcher.stop()
        thread.join(5)
    assert len(raised) == 1 and "--resume" in (raised[0].hint or "")
    with pytest.raises(BatchStopped):
        absent.say(batcher, [2])
    assert model.decodes == []


def test_a_decode_llama_cpp_refuses_fails_the_turns_in_it() -> None:
    batcher, model = Batcher(), Context("x", fail=True)
    lane = Lane(model, 0)
    with pytest.raises(MootError, match="could not evaluate token 1"):
        lane.say(batcher, [1, 2])
    assert lane.held == []
    model.fail = False
    lane.say(batcher, [1, 2])  # the batcher goes on
    assert lane.held == [1, 2]
