"""The Ray executor: each debate a Ray task, on a local Ray instance or an existing cluster.

A worker plays its debate in a scratch folder and hands the files back, so the cluster
needs no shared disk: the driver writes them into the tournament folder, the verdict
last. Each worker process loads a model once and keeps it for the debates that follow.
Models are loaded by each worker from its own model store, or served by the
OpenAI-compatible endpoints their references name. Ray is imported only here.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any

from moot import config
from moot.errors import MootError, UsageError
from moot.records import files
from moot.records.files import make_private_dir, write_atomic
from moot.tournaments.judge import Verdict
from moot.tournaments.parallel import worker_models
from moot.tournaments.plan import Pairing, TournamentPlan
from moot.tournaments.run import (
    VERDICT,
    DebateBegun,
    DebateDone,
    DebateFailed,
    Emit,
    ModelFactory,
    Tournament,
    play,
    run_settings,
)

# The files of a debate folder a worker gets (to resume) and gives back.
FILES = ("journal.jsonl", "transcript.json", "debate.md", VERDICT)

# Seconds to wait for a cluster's address to answer. Ray itself retries an address where
# nothing listens for many minutes, so moot knocks first.
CONNECT_TIMEOUT_S = 10.0


class RayExecutor:
    """`address`: an existing cluster's (else $RAY_ADDRESS; else a local Ray is started)."""

    def __init__(self, *, address: str | None = None, cpus_per_debate: float = 1) -> None:
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.cpus = cpus_per_debate

    def check(self) -> None:
        """Before a tournament is planned: Ray is installed, and the cluster's address, if
        one is given, answers."""
        _import_ray(self.address)
        if self.address:
            check_address(self.address)

    def run(self, tournament: Tournament, pending: list[Pairing], emit: Emit) -> None:
        ray = _import_ray(self.address)
        if self.address:
            check_address(self.address)
        # A local Ray keeps its session (logs, sockets) in a folder of this run's own, gone
        # when the run ends however it ends; left to itself it leaves $TMPDIR/ray behind.
        scratch = None if self.address else tempfile.mkdtemp(prefix="moot-ray-")
        try:
            _init(ray, self.address, temp_dir=scratch)
            self._play(ray, tournament, pending, emit)
        finally:
            ray.shutdown()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)

    def _play(self, ray: Any, tournament: Tournament, pending: list[Pairing], emit: Emit) -> None:
        gpus = 1 if run_settings(tournament.plan).gpu_layers else 0
        if gpus and ray.cluster_resources().get("GPU", 0) < 1:  # else tasks wait forever
            raise UsageError(key="tournaments.ray.gpu_layers_asks_each_debate")
        # Fewer debates than the cluster has cores: each takes a larger share of them
        # (a resumed tournament's last debate decodes on every core, not one).
        cores = int(ray.cluster_resources().get("CPU", 0))
        cpus = max(self.cpus, cores // max(1, len(pending)))
        task = ray.remote(_play_task).options(num_cpus=cpus, num_gpus=gpus)
        plan = tournament.plan.model_dump(mode="json")
        running = {}
        for pairing in pending:
            emit(DebateBegun(pairing, tournament.plan.motions[pairing.motion].text))
            try:
                files = _read(tournament.debate_dir(pairing))
            except MootError as exc:  # a file that is not moot's fails only its debate
                emit(DebateFailed(pairing, exc.message, exc.hint))
                continue
            ref = task.remote(plan, pairing.model_dump(mode="json"), files, cpus)
            running[ref] = pairing
        while running:
            ready, _ = ray.wait(list(running), num_returns=1)
            pairing = running.pop(ready[0])
            _finish(tournament, pairing, ray.get(ready[0]), emit)


def _import_ray(address: str | None) -> Any:
    # Ray reports usage to its makers unless told not to; a tournament stays offline.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if not address:
        # A local Ray on the loopback address only: left to itself it binds the address
        # it finds by routing towards a public one (read when ray is first imported).
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise UsageError(key="tournaments.ray.executor_ray_needs_ray_which") from None
    return ray


def check_address(address: str, *, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """A cluster's address (HOST:PORT, or ray://HOST:PORT) where something listens, within
    TIMEOUT seconds; a one-line UsageError naming it otherwise. `auto` and `local` are
    Ray's own to find."""
    if address in ("auto", "local"):
        return
    hint = "check --ray-address (or $RAY_ADDRESS): is the cluster up? Or use --executor local"
    host, _, port = address.removeprefix("ray://").rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(key="tournaments.ray.ray_address_not_host_port", address=address, fix=hint)
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except TimeoutError:
        raise UsageError(
            key="tournaments.ray.ray_cluster_at_did_not", address=address, timeout=timeout, fix=hint
        ) from None
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise UsageError(
            key="tournaments.ray.cannot_reach_ray_cluster_at",
            address=address,
            reason=reason.lower(),
            fix=hint,
        ) from None


def _init(ray: Any, address: str | None, *, temp_dir: str | None = None) -> None:
    quiet = {"log_to_driver": False, "logging_level": "ERROR", "configure_logging": True}
    try:
        if address:
            # Joining a cluster, Ray tries its address twenty times, some 40 s each, when
            # something answers there that is no Ray: once is enough to tell.
            os.environ.setdefault("RAY_gcs_server_port_wait_time_s", "1")
            ray.init(address=address, **quiet)
        else:
            ray.init(address="local", include_dashboard=False, _temp_dir=temp_dir, **quiet)
    except (OSError, RuntimeError, ValueError) as exc:
        lines = str(exc).strip().splitlines()
        reason = (lines[0] if lines else type(exc).__name__)[:300]
        if address:
            raise UsageError(
                key="tournaments.ray.could_not_join_ray_cluster", address=address, reason=reason
            ) from None
        # Ray's sockets live under the temporary folder, and a socket's path has at most 107 bytes.
        hint = "use --executor local" + (", or a shorter $TMPDIR" if "AF_UNIX" in reason else "")
        raise MootError(
            key="tournaments.ray.could_not_start_local_ray", reason=reason, fix=hint
        ) from None


def _read(folder: Path) -> dict[str, str]:
    """The debate's files there are, each only the regular file moot wrote (no symlink)."""
    return {
        name: files.read_text(
            folder / name, what="debate file", limit=files.RECORD_LIMIT, follow_symlinks=False
        )
        for name in FILES
        if os.path.lexists(folder / name)
    }


def _finish(tournament: Tournament, pairing: Pairing, result: dict[str, Any], emit: Emit) -> None:
    folder = tournament.debate_dir(pairing)
    files: dict[str, str] = result.get("files", {})
    make_private_dir(folder)
    for name in FILES:  # the verdict last: it marks the debate finished
        if name in files:
            write_atomic(folder / name, files[name])
    if result.get("error"):
        emit(DebateFailed(pairing, result["error"], result.get("hint", "")))
    else:
        emit(DebateDone(pairing, Verdict.model_validate(result["verdict"])))


def _play_task(
    plan_data: dict[str, Any], pairing_data: dict[str, Any], files: dict[str, str], cpus: float
) -> dict[str, Any]:
    """In a Ray worker: play one debate in a scratch folder; its files and verdict, or the
    error that ended it (with the files so far, so a resume keeps the finished turns)."""
    plan = TournamentPlan.model_validate(plan_data)
    pairing = Pairing.model_validate(pairing_data)
    with tempfile.TemporaryDirectory(prefix="moot-debate-") as scratch:
        folder = Path(scratch) / pairing.id
        make_private_dir(folder)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
        try:
            verdict = play(plan, pairing, folder, model_for=_models(plan, cpus))
        except MootError as exc:
            return {"files": _read(folder), "error": exc.message, "hint": exc.hint}
        return {"files": _read(folder), "verdict": verdict.model_dump(mode="json")}


def _models(plan: TournamentPlan, cpus: float) -> ModelFactory:
    threads = max(1, min(int(cpus), config.physical_cores()))  # more threads than cores: slower
    return worker_models(plan, threads)
