"""Several debates of a tournament at once (`moot tournament --parallel N`).

Debates on local models run in worker processes: each loads its models once, keeps them for
the debates it plays after, and decodes on its share of the cores (cores // workers threads),
as a Ray task does. A debate is decoded alone in its process, so what it says depends on the
seed and those threads only; its transcript records them (`config.Decoding`), and a replay
decodes on as many threads. Debates whose models load nothing here (every model a server,
a dry run's stand-ins, a caller's factory) run in threads of this process instead: N requests
in flight. With `--batch` the local models' debates run in threads here too, on models
loaded once, each step of a model decoding every debate's next tokens on it in one batch
(`inference.llama.batch`); what a debate says then depends on the debates beside it, and
its transcript records that. Either way a worker plays its debate in the tournament's
folder, its verdict written last, before the debate is reported finished.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import signal
from collections.abc import Callable
from pathlib import Path
from threading import Lock
from typing import Any

from moot import config
from moot.config import MAX_PARALLEL, Decoding
from moot.errors import MootError, UsageError
from moot.inference.remote import is_remote_ref
from moot.tournaments.judge import Verdict
from moot.tournaments.plan import Pairing, TournamentPlan
from moot.tournaments.run import (
    DebateBegun,
    DebateDone,
    DebateFailed,
    Emit,
    InDebate,
    ModelFactory,
    Tournament,
    TournamentEvent,
    echo_models,
    local_models,
    plan_n_ctx,
    play,
    run_settings,
)

_POOL: Any = None  # per worker process: the ModelPool its debates share


def check_parallel(parallel: int, *, api: bool = False) -> None:
    """PARALLEL debates at once: from 1 to MAX_PARALLEL, else a one-line UsageError naming
    it as the command line (or, API, the library) spells it."""
    if not 1 <= parallel <= MAX_PARALLEL:
        given = f"parallel={parallel}" if api else f"--parallel {parallel}"
        raise UsageError(
            key="tournaments.parallel.not_allowed_at_most_debates",
            given=given,
            max_parallel=MAX_PARALLEL,
        )


def check_batch(batch: bool, parallel: int, *, api: bool = False) -> None:
    """BATCH goes with two debates at once or more: else a one-line UsageError."""
    if batch and parallel < 2:
        given, more = ("batch=True", "parallel=2") if api else ("--batch", "--parallel 2")
        raise UsageError(
            key="tournaments.parallel.decodes_debates_played_at_once",
            given=given,
            more=more,
            value=given.split("=")[0],
        )


def loads_nothing(plan: TournamentPlan) -> bool:
    """Whether the plan's debates load no model here: a dry run, or every model a server."""
    refs = (*plan.models, *plan.judges)
    return run_settings(plan).dry_run or all(is_remote_ref(r) for r in refs)


class ParallelExecutor:
    """Runs up to PARALLEL of the pending debates at once (`model_for`: a caller's models,
    played in threads here). BATCH: the local models' debates in threads of this process
    too, each model loaded once and every step of it one batch of the debates' tokens."""

    def __init__(
        self, parallel: int, *, model_for: ModelFactory | None = None, batch: bool = False
    ) -> None:
        check_parallel(parallel)
        self.parallel = parallel
        self.batch = batch
        self._model_for = model_for

    def run(self, tournament: Tournament, pending: list[Pairing], emit: Emit) -> None:
        lock = Lock()

        def said(event: TournamentEvent) -> None:  # from any thread, one at a time
            with lock:
                emit(event)

        workers = min(self.parallel, len(pending))
        if self._model_for is not None or loads_nothing(tournament.plan):
            self._in_threads(tournament, pending, said, workers)
        elif self.batch:
            self._in_batches(tournament, pending, said, workers)
        else:
            self._in_processes(tournament, pending, said, workers)

    def _in_threads(
        self, tournament: Tournament, pending: list[Pairing], emit: Emit, workers: int
    ) -> None:
        with (
            local_models(tournament, self._model_for) as (model_for, _),
            cf.ThreadPoolExecutor(workers, thread_name_prefix="moot-debate") as pool,
        ):

            def start(pairing: Pairing) -> cf.Future[dict[str, Any]]:
                listeners = [lambda e: emit(InDebate(pairing, e))]
                folder = tournament.debate_dir(pairing)
                return pool.submit(_play, tournament.plan, pairing, folder, model_for, listeners)

            try:
                dispatch(tournament, pending, emit, workers, start)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)  # the running debates end first
                raise

    def _in_batches(
        self, tournament: Tournament, pending: list[Pairing], emit: Emit, workers: int
    ) -> None:
        from moot.inference.pool import OWN_CONTEXT, BatchPool, ModelPool
        from moot.models import store

        plan = tournament.plan
        decoding = Decoding(parallel=workers, threads=config.physical_cores(), batch=True)
        plan = plan.model_copy(update={"options": {**plan.options, "decoding": decoding}})
        n_ctx = plan_n_ctx(plan)
        gpu_layers = run_settings(plan).gpu_layers
        models = ModelPool(resolve=store.resolve, n_gpu_layers=gpu_layers, n_ctx=OWN_CONTEXT)
        batches = BatchPool(models, workers, n_ctx)
        free = list(range(workers))  # the slots no debate holds; a debate's lane on each model

        def task(pairing: Pairing, folder: Path, listeners: list[Any]) -> dict[str, Any]:
            slot = free.pop()
            try:
                batches.forget(slot)  # said as on models just loaded, whatever ran before
                return _play(plan, pairing, folder, batches.model_for(slot), listeners)
            finally:
                free.append(slot)  # before the debate is reported finished

        with cf.ThreadPoolExecutor(workers, thread_name_prefix="moot-debate") as pool:

            def start(pairing: Pairing) -> cf.Future[dict[str, Any]]:
                listeners = [lambda e: emit(InDebate(pairing, e))]
                return pool.submit(task, pairing, tournament.debate_dir(pairing), listeners)

            try:
                dispatch(tournament, pending, emit, workers, start)
            finally:
                # All played, or Ctrl-C: a debate still running ends at its next token, its
                # finished turns journaled, before the models are freed.
                batches.stop()
                pool.shutdown(wait=True, cancel_futures=True)
                batches.close()

    def _in_processes(
        self, tournament: Tournament, pending: list[Pairing], emit: Emit, workers: int
    ) -> None:
        threads = max(1, config.physical_cores() // workers)
        decoding = Decoding(parallel=workers, threads=threads) if workers > 1 else None
        plan = tournament.plan.model_dump(mode="json")
        # Spawned, not forked: a fork would copy this process's threads and loaded libraries.
        context = multiprocessing.get_context("spawn")
        pool = cf.ProcessPoolExecutor(workers, mp_context=context, initializer=_quiet)

        def start(pairing: Pairing) -> cf.Future[dict[str, Any]]:
            folder = str(tournament.debate_dir(pairing))
            return pool.submit(_play_task, plan, pairing.model_dump(mode="json"), folder, decoding)

        try:
            dispatch(tournament, pending, emit, workers, start)
        except BaseException:
            _stop(pool)  # Ctrl-C: the workers stop where they are; the journals keep the turns
            raise
        pool.shutdown(wait=True)


def dispatch(
    tournament: Tournament,
    pending: list[Pairing],
    emit: Emit,
    workers: int,
    start: Callable[[Pairing], cf.Future[dict[str, Any]]],
) -> None:
    """Play PENDING in order, at most WORKERS at once, each started by START; a debate
    appended to PENDING while others run is played too. Each ending is emitted as it comes."""
    running: dict[cf.Future[dict[str, Any]], Pairing] = {}
    started = 0
    while started < len(pending) or running:
        while started < len(pending) and len(running) < workers:
            pairing = pending[started]
            started += 1
            emit(DebateBegun(pairing, tournament.plan.motions[pairing.motion].text))
            running[start(pairing)] = pairing
        done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
        for future in done:
            pairing = running.pop(future)
            try:
                result = future.result()
            except cf.process.BrokenProcessPool:
                raise MootError(
                    key="tournaments.parallel.worker_process_playing_debates_died"
                ) from None
            if "error" in result:
                emit(DebateFailed(pairing, result["error"], result.get("hint", "")))
            else:
                emit(DebateDone(pairing, Verdict.model_validate(result["verdict"])))


def _play(
    plan: TournamentPlan,
    pairing: Pairing,
    folder: Path,
    model_for: ModelFactory,
    listeners: list[Any] | None = None,
) -> dict[str, Any]:
    """Play one debate in FOLDER: its verdict, or the error that failed only it."""
    try:
        verdict = play(plan, pairing, folder, model_for=model_for, listeners=listeners)
    except MootError as exc:
        return {"error": exc.message, "hint": exc.hint}
    return {"verdict": verdict.model_dump(mode="json")}


def _play_task(
    plan_data: dict[str, Any],
    pairing_data: dict[str, Any],
    folder: str,
    decoding: Decoding | None,
) -> dict[str, Any]:
    """In a worker process: one debate, on the models this worker loaded, its transcript
    recording DECODING."""
    plan = TournamentPlan.model_validate(plan_data)
    if decoding is not None:
        plan = plan.model_copy(update={"options": {**plan.options, "decoding": decoding}})
    threads = decoding.threads if decoding else None
    return _play(
        plan, Pairing.model_validate(pairing_data), Path(folder), worker_models(plan, threads)
    )


def _quiet() -> None:
    """A worker ignores Ctrl-C: the tournament's own process stops it (`_stop`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop(pool: cf.ProcessPoolExecutor) -> None:
    """The workers ended now, mid-debate: each turn is in its journal already, and a
    resume continues from there."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def worker_models(plan: TournamentPlan, threads: int | None) -> ModelFactory:
    """In a worker process (of this executor, or a Ray task): the plan's models, each loaded
    once per process and decoding on THREADS threads (None: every core), their cached
    prompts dropped so that each debate runs as on models just loaded."""
    global _POOL
    echo = echo_models(plan)
    if echo is not None:
        return echo
    if _POOL is not None and _POOL.n_threads != threads:  # a task given another share
        _POOL.close()
        _POOL = None
    if _POOL is None:
        from moot.inference.pool import ModelPool
        from moot.models import store

        run = run_settings(plan)
        _POOL = ModelPool(
            resolve=store.resolve,
            n_gpu_layers=run.gpu_layers,
            n_ctx=plan_n_ctx(plan),
            n_threads=threads,
        )
    _POOL.forget()
    factory: ModelFactory = _POOL.get
    return factory
