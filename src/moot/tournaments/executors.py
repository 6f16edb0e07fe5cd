"""How a tournament's debates are played: one after another in this process, or each a Ray
task. Apart from the tournament itself (`run`), so that it never imports Ray's executor,
which imports it."""

from __future__ import annotations

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


class LocalExecutor:
    """Runs the debates one after another in this process, every model loaded once."""

    def __init__(self, *, model_for: ModelFactory | None = None) -> None:
        self._model_for = model_for

    def run(self, tournament: Tournament, pending: list[Pairing], emit: Emit) -> None:
        pool = None
        model_for = self._model_for or echo_models(tournament.plan)
        if model_for is None:
            from moot.inference.pool import ModelPool
            from moot.models import store

            run = run_settings(tournament.plan)
            pool = ModelPool(
                resolve=store.resolve,
                n_gpu_layers=run.gpu_layers,
                n_ctx=plan_n_ctx(tournament.plan),
            )
            model_for = pool.get
        try:
            for pairing in pending:
                if pool is not None:  # each debate as on fresh models: as a Ray task plays it
                    pool.forget()
                run_one(tournament, pairing, model_for, emit, forward=True)
        finally:
            if pool is not None:
                pool.close()


def make_executor(name: str, address: str | None) -> Executor:
    """The executor NAME ("local" or "ray"), checked: for Ray, that it is installed and the
    cluster at ADDRESS answers."""
    if name == "ray":
        from moot.tournaments.ray import RayExecutor

        ray = RayExecutor(address=address)
        ray.check()
        return ray
    return LocalExecutor()
