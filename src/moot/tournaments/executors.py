"""How a tournament's debates are played: one after another in this process, several at
once (`parallel`), or each a Ray task. Apart from the tournament itself (`run`), so that it
never imports Ray's executor, which imports it."""

from __future__ import annotations

from collections.abc import Callable

from moot.tournaments import controls
from moot.tournaments.controls import ControlEvent, ControlFailed
from moot.tournaments.parallel import ParallelExecutor, check_parallel
from moot.tournaments.plan import Pairing
from moot.tournaments.run import (
    Emit,
    Executor,
    ModelFactory,
    Tournament,
    local_models,
    run_one,
)


class LocalExecutor:
    """Runs the debates one after another in this process, every model loaded once."""

    def __init__(self, *, model_for: ModelFactory | None = None) -> None:
        self._model_for = model_for

    def run(self, tournament: Tournament, pending: list[Pairing], emit: Emit) -> None:
        with local_models(tournament, self._model_for) as (model_for, pool):
            for pairing in pending:
                if pool is not None:  # each debate as on fresh models: as a Ray task plays it
                    pool.forget()
                run_one(tournament, pairing, model_for, emit, forward=True)


def judge_controls(
    tournament: Tournament,
    *,
    on_event: Callable[[ControlEvent], None] | None = None,
    model_for: ModelFactory | None = None,
) -> list[ControlFailed]:
    """The tournament's controls made, once its debates have finished, and decided here by
    each of its judges (whichever executor played the debates); the judges that failed."""
    record = controls.prepare(tournament)
    if record is None or not controls.remaining(tournament.plan, record):
        return []
    with local_models(tournament, model_for) as (factory, _):
        return controls.play(tournament, record, factory, on_event=on_event)


def make_executor(
    name: str, address: str | None, parallel: int = 1, *, batch: bool = False
) -> Executor:
    """The executor NAME ("local" or "ray"), checked: for Ray, that it is installed and the
    cluster at ADDRESS answers; locally, PARALLEL debates at once (1: one after another),
    decoded in one batch per model step where BATCH."""
    check_parallel(parallel)
    if name == "ray":
        from moot.tournaments.ray import RayExecutor

        ray = RayExecutor(address=address)
        ray.check()
        return ray
    if parallel > 1:
        return ParallelExecutor(parallel, batch=batch)
    return LocalExecutor()
