"""Rule-keeping: how each model kept the debates' rules over its turns, counted from the
turns a tournament's debates recorded: within the length limit, cut to fit, flagged,
failed. Pure functions over plain records, so every figure can be checked by hand."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, computed_field

from moot.inference.protocol import sanitize
from moot.records.transcript import Transcript, Turn
from moot.tournaments.judge import Verdict


class RuleKeeping(BaseModel):
    """One model's turns, and how many of them kept the rules."""

    turns: int = 0  # every turn it spoke, in any seat
    limited: int = 0  # turns with a length limit
    within_limit: int = 0  # of those, within the limit without a cut
    cut: int = 0  # turns the engine cut to fit their limit
    flagged: int = 0  # turns with a flag ("not a question", "hollow reply: …")
    failed: int = 0  # failed seats: turns with a note, failures the format recorded

    @computed_field  # type: ignore[prop-decorator]
    @property
    def within_share(self) -> float | None:
        """within_limit / limited; None without a limited turn."""
        return round(self.within_limit / self.limited, 4) if self.limited else None


def rule_keeping(turns: Iterable[Turn], failed: Iterable[str] = ()) -> dict[str, RuleKeeping]:
    """Each model's rule-keeping over TURNS, by the model that spoke each (`turn.model`);
    FAILED: the model of each failed seat that left no turn behind."""
    found: dict[str, RuleKeeping] = {}
    for turn in turns:
        r = found.setdefault(turn.model, RuleKeeping())
        r.turns += 1
        if turn.limit is not None:
            r.limited += 1
            fits = turn.length is not None and turn.length <= turn.limit
            r.within_limit += fits and not turn.cut
        r.cut += turn.cut
        r.flagged += bool(turn.flags)
        r.failed += turn.note is not None
    for model in failed:
        found.setdefault(model, RuleKeeping()).failed += 1
    return found


def debate_turns(transcript: Transcript, verdict: Verdict | None) -> tuple[list[Turn], list[str]]:
    """One debate's turns, the debaters' and then its judges', each under the reference its
    seat was given (a turn's own `model` is the loaded model's id, which can differ); and
    the references of the seats whose failure the format's result records without a turn
    of theirs that says so."""
    refs = dict(transcript.refs)
    turns = [_named(t, refs) for t in transcript.turns]
    if verdict is not None:
        judges = {f"judge{i + 1}": b.judge for i, b in enumerate(verdict.ballots)}
        turns += [_named(t, judges) for t in verdict.turns]
    # A degenerate reply is both a turn with a note and a failure the format records with
    # that note as its error: counted once, as the turn.
    noted: Counter[tuple[str, object, object]] = Counter(
        (t.role, t.round, sanitize(t.note)) for t in transcript.turns if t.note
    )
    failed = []
    for key in _failures(transcript):
        if noted[key]:
            noted[key] -= 1
        else:
            failed.append(refs[key[0]])
    return turns, failed


def _named(turn: Turn, refs: dict[str, str]) -> Turn:
    ref = refs.get(turn.role)
    return turn if ref is None else turn.model_copy(update={"model": ref})


def _failures(transcript: Transcript) -> list[tuple[str, object, object]]:
    """The failures a format's result records (challenge, adversarial) as (seat, round,
    error): those naming a seat of the debate."""
    listed = (transcript.result or {}).get("failures")
    if not isinstance(listed, list):
        return []
    return [
        (f["role"], f.get("round"), f.get("error"))
        for f in listed
        if isinstance(f, dict) and isinstance(f.get("role"), str) and f["role"] in transcript.refs
    ]
