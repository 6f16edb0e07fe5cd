"""How a tournament's debates are played: one after another in this process, or each a Ray
task. Apart from the tournament itself (`run`), so that it never imports Ray's executor,
which imports it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from moot.tournaments import controls
from moot.tournaments.controls import ControlEvent, ControlFailed
from moot.tournaments.plan import Pairing
from moot.tournaments.run import (
    Emit,
    Executor,
    ModelFactory,
    Tournament,
    echo_models,
    plan_n_ctx,
    run_one,
    run_settings,
)

if TYPE_CHECKING:
    from moot.inference.pool import ModelPool


@contextmanager
def local_models(
    tournament: Tournament, model_for: ModelFactory | None = None
) -> Iterator[tuple[ModelFactory, ModelPool | None]]:
    """The models here: MODEL_FOR if given, the dry run's stand-ins, else a pool that
    loads each model once, closed at the end."""
    model_for = model_for or echo_models(tournament.plan)
    if model_for is not None:
        yield model_for, None
        return
    from moot.inference.pool import ModelPool
    from moot.models import store

    run = run_settings(tournament.plan)
    pool = ModelPool(
        resolve=store.resolve, n_gpu_layers=run.gpu_layers, n_ctx=plan_n_ctx(tournament.plan)
    )
    try:
        yield pool.get, pool
    finally:
        pool.close()


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


def make_executor(name: str, address: str | None) -> Executor:
    """The executor NAME ("local" or "ray"), checked: for Ray, that it is installed and the
    cluster at ADDRESS answers."""
    if name == "ray":
        from moot.tournaments.ray import RayExecutor

        ray = RayExecutor(address=address)
        ray.check()
        return ray
    return LocalExecutor()
