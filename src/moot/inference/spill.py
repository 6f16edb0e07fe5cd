"""When a speaker's KV snapshot is worth keeping on disk: reading it back against evaluating
its tokens again, each at the rate this model and this disk were measured at.

A snapshot the memory budget cannot hold is written to a file rather than dropped when
reading it back would cost less than evaluating the tokens it holds; a spilled snapshot is
read back for a turn only when that costs less than evaluating the tokens it would spare.
Both rates are measured as the debate runs (every prompt evaluation, every file written or
read back); until a rate has been measured, keeping is assumed to pay, as it does for a
snapshot in memory.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

# Fewer tokens than this time the call's overhead more than the evaluation.
MIN_MEASURED_TOKENS = 32
MIN_MEASURED_BYTES = 1 << 20
# Room a spill leaves on its disk for everything else.
DISK_RESERVE = 1 << 30


@dataclass
class RestoreCosts:
    """One model's measured rates: tokens it evaluates a second (prompt evaluation, in
    batches and alone as its prompts ask) and bytes of snapshot a second read back from disk
    and restored (seeded by the first file written until one is read)."""

    eval_rate: float | None = None
    read_rate: float | None = None
    read_measured: bool = False

    def evaluated(self, tokens: int, seconds: float) -> None:
        if tokens >= MIN_MEASURED_TOKENS and seconds > 0:
            self.eval_rate = _mean(self.eval_rate, tokens / seconds)

    def written(self, nbytes: int, seconds: float) -> None:
        """A file written: its rate stands for reading until a read is measured."""
        if not self.read_measured and nbytes >= MIN_MEASURED_BYTES and seconds > 0:
            self.read_rate = _mean(self.read_rate, nbytes / seconds)

    def read(self, nbytes: int, seconds: float) -> None:
        if nbytes >= MIN_MEASURED_BYTES and seconds > 0:
            rate = nbytes / seconds
            self.read_rate = _mean(self.read_rate if self.read_measured else None, rate)
            self.read_measured = True

    def reading_pays(self, nbytes: int, tokens: int) -> bool:
        """Whether reading NBYTES back costs less than evaluating TOKENS again."""
        if self.eval_rate is None or self.read_rate is None:
            return True
        return nbytes / self.read_rate < tokens / self.eval_rate

    def crossover(self, bytes_per_token: float, fixed: int = 0) -> float | None:
        """The prompt length, in tokens, above which reading a snapshot of BYTES_PER_TOKEN
        (and FIXED bytes more: the last position's logits) beats evaluating it; None where
        reading never pays or a rate is unknown."""
        if self.eval_rate is None or self.read_rate is None:
            return None
        per_token = 1 / self.eval_rate - bytes_per_token / self.read_rate
        return fixed / self.read_rate / per_token if per_token > 0 else None


def _mean(old: float | None, new: float) -> float:
    """A running figure: the latest measure weighs as much as all before it."""
    return new if old is None else (old + new) / 2


def disk_has_room(directory: Path, nbytes: int) -> bool:
    """Whether DIRECTORY's disk takes NBYTES and keeps DISK_RESERVE free."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return shutil.disk_usage(directory).free >= nbytes + DISK_RESERVE
    except OSError:
        return False
