"""Re-judging a saved debate from Python, as `moot judge` does."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from moot.api.debates import ModelSource
from moot.debates.rejudge import Rejudged, rejudge


def judge(
    transcript: str | Path,
    *,
    judges: str | Sequence[str],
    dry_run: bool = False,
    save: bool = True,
    pool: ModelSource | None = None,
) -> list[Rejudged]:
    """The saved debate TRANSCRIPT (its transcript.json) re-judged by each of JUDGES.

    No speech is generated: every judging step is asked again of each judge with the
    prompt the original judge saw, and its reply is set beside the original one with
    their agreement. Each judge's result is written to `judged/<judge>.json` beside the
    transcript unless `save=False`; `dry_run` uses scripted judges; `pool` lends models.

    >>> for r in moot.judge("debate/transcript.json", judges=["gemma3-270m"]):
    ...     print(r.model, r.agreement, r.same_verdict)
    """
    refs = (judges,) if isinstance(judges, str) else tuple(judges)
    factory = pool.get if pool is not None else None
    return rejudge(
        Path(transcript).expanduser(), refs, dry_run=dry_run, save=save, model_factory=factory
    )
