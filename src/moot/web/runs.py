"""The work of the page's jobs: a debate, a resumed debate, a tournament, each through the
library the command line uses (`moot.Debate`, `moot.tournament`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from moot import history
from moot.api import Debate, Result
from moot.api.debates import ModelSource
from moot.debates.runner import DebateRun as Runner
from moot.debates.settings import DebateSetup
from moot.inference.human import is_human_ref
from moot.inference.protocol import ChatModel, ChatRequest, Completion, OnText
from moot.inference.scripted import EchoModel
from moot.web import wire
from moot.web.evidence import WebEvidence
from moot.web.jobs import Job
from moot.web.seat import WebSeat

PACE = 0.01  # seconds between the words of a scripted speaker: a dry run a person can follow


class PacedModel:
    """A scripted stand-in that speaks word by word, as a small model would."""

    def __init__(self, model: ChatModel, pace: float) -> None:
        self._model, self._pace = model, pace

    @property
    def model_id(self) -> str:
        return self._model.model_id

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        if on_text is None or self._pace <= 0:
            return self._model.chat(request, on_text=on_text)
        speak = on_text

        def paced(piece: str) -> bool | None:
            time.sleep(self._pace)
            return speak(piece)

        return self._model.chat(request, on_text=paced)


class PacedEchoes:
    """The models of a dry run from the page: `--dry-run`'s scripted ones, paced."""

    def __init__(self, pace: float = PACE) -> None:
        self.pace = pace

    def get(self, ref: str) -> ChatModel:
        return PacedModel(EchoModel(model_id=f"echo:{ref}"), self.pace)


def models_of(setup: DebateSetup) -> set[str]:
    """The model references the debate seats: what it holds while it runs."""
    return set(Runner(setup).refs().values())


def models_for(setup: DebateSetup, pace: float) -> ModelSource | None:
    """Paced scripted models for a dry run; None (the debate loads its own) for a real one."""
    return PacedEchoes(pace) if setup.run.dry_run else None


def debate_job(setup: DebateSetup, *, pace: float = PACE) -> Job:
    """A new debate, saved in a fresh folder of moot's data directory (as `moot run` saves
    one), whatever its format."""
    pool = models_for(setup, pace)

    def work(job: Job) -> None:
        claim = history.claim(None, motion=setup.asked)  # named as `moot run` names it
        setup.out_dir = claim.path
        job.update(folder=claim.path.name)
        debate = Debate.from_setup(setup, save=True, pool=pool, ask=_asker(job))
        try:
            _run(job, debate)
        except BaseException:
            claim.release()  # a debate that wrote nothing leaves nothing behind
            raise

    return _job(setup, work)


def resume_job(saved: history.SavedDebate, *, pace: float = PACE) -> Job:
    """The interrupted debate SAVED, going on from its journal (`moot resume`): with the
    models its journal names, scripted ones if it was a dry run; a person's seat is asked
    again on the page for the turn it was on."""
    debate = Debate.resume(saved.path)
    debate.pool = models_for(debate.setup, pace)
    job = _job(debate.setup, lambda job: _run(job, debate))
    job.folder = saved.id
    debate.ask = _asker(job)  # what was supplied before it stopped is in its journal
    return job


def _job(setup: DebateSetup, work: Callable[[Job], None]) -> Job:
    job = Job(
        work,
        kind="debate",
        title=setup.motion,
        holds=models_of(setup),  # "human" among them: one person, one debate at a time
        language=setup.language,
        format=setup.format.name,
        dry_run=setup.run.dry_run,
    )
    if any(is_human_ref(ref) for ref in Runner(setup).refs().values()):
        seat = WebSeat()
        seat.attach(job.publish)
        job.seat = setup.human = seat
        job.on_stop(seat.close)
    evidence = WebEvidence()
    evidence.attach(job.publish)
    job.evidence = evidence
    job.on_stop(evidence.close)
    return job


def _asker(job: Job) -> Callable[[str], str] | None:
    """Who answers the debate's proposals: the page, where an adversarial review's requests
    for evidence are put (any other proposal is taken as it is, as when no one is asked)."""
    return job.evidence.ask if job.evidence is not None else None


def _run(job: Job, debate: Debate) -> None:
    job.on_stop(debate.stop)
    language = debate.setup.language
    result = debate.run(on_event=lambda ev: job.publish(wire.event(ev, language)))
    job.publish(done(result))


def done(result: Result) -> dict[str, Any]:
    """The end of a debate: where it is saved, its document, why its rounds ended."""
    folder = result.folder.name if result.folder is not None else None
    files, unjudged = [], history.ended_unjudged(result.transcript)  # saved or not (a decision)
    if result.folder is not None:
        saved = history.find(str(result.folder), readable=False)
        files, unjudged = wire.downloads(saved), saved.unjudged
    return {
        "type": "done",
        "folder": folder,
        "unjudged": unjudged,  # finished, but the judge did not answer
        "stop_reason": result.stop_reason,
        "document": wire.document_html(result.markdown),
        "files": files,
    }
