"""The least any prompt layout must evaluate under the Oxford rulebook's visibility.

Each step's sequence may hold only what the step's row of the rulebook says it sees
(docs/formats/oxford.md; instructions are scaffolding and are not counted here). A reply's
tokens were computed, while it was generated, after everything its speaker saw. A later
step that quotes the reply but may not see all of that cannot take those tokens: the
reply must be evaluated again, in a sequence that holds only what that step may see.
Counting each such reply once (once at least: one evaluation can serve several readers),
and nothing else — no instruction, no chat-template token, not the motion — is a lower
bound on what any layout of moot's prompts evaluates for the same debate.

The seconds it allows are a lower bound too: those tokens evaluated at the fastest batch
rate measured, and every kept token decoded at the rate of the shortest context its step
can have (the replies it sees and half its own).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from bench_rates import Rates, interpolate

Item = tuple[Any, ...]  # a reply a later step may quote: ("speech", side, round), …


def item(turn: Any) -> Item | None:
    """The reply TURN adds to what later steps may see (None: a reply no step quotes but
    one that goes on its conversation, or none at all)."""
    if turn.step == "speech":
        return ("speech", turn.role, turn.round)
    if turn.step == "devil_attack":
        return ("devil", turn.round)
    if turn.step == "round_summary":
        return ("summary", turn.round)
    if turn.step == "rebuttal":
        return ("rebuttal", turn.role)
    return None


def sees(turn: Any, rounds: int) -> set[Item]:
    """What TURN's step may see of the debate (its rulebook row), ROUNDS rounds held.
    Points of information are left out: only the answer sees a question, and it goes on
    the question's conversation."""
    r = turn.round
    before = {("summary", r - 1)} if r is not None and r >= 2 else set()
    prop, opp = ("speech", "proposition", r), ("speech", "opposition", r)
    final = ("summary", rounds)
    rebuttals = {("rebuttal", "proposition"), ("rebuttal", "opposition")}
    asked_of_proposition = {"poi_question": "opposition", "poi_answer": "proposition"}
    if turn.step == "speech":
        return before | ({prop} if turn.role == "opposition" else set())
    if turn.step in asked_of_proposition:
        # The Opposition asks, and the Proposition answers, after the Proposition's speech;
        # the other way round after the Opposition's, which came after both.
        first = asked_of_proposition[turn.step] == turn.role
        return before | ({prop} if first else {prop, opp})
    if turn.step == "devil_attack":
        return before | {prop, opp}
    if turn.step == "round_summary":
        return {prop, opp, ("devil", r)}
    if turn.step == "judge":
        return {prop, opp}
    if turn.step == "rebuttal":
        return {final} | ({("rebuttal", "proposition")} if turn.role == "opposition" else set())
    if turn.step == "verdict":
        return rebuttals
    if turn.step == "brief":
        return {final} | rebuttals | {("devil", k) for k in range(1, rounds + 1)}
    raise ValueError(f"no rulebook row for {turn.role}/{turn.step}")


def floor(turns: Sequence[Any], count: Callable[[str], int], rates: Rates) -> dict[str, Any]:
    """The visibility floor of an Oxford debate's TURNS: the tokens any layout evaluates
    (COUNT: a text's tokens in the model), per kept generated token, and the seconds per
    generated token it allows at RATES."""
    rounds = max((t.round for t in turns if t.round is not None), default=0)
    seen = {id(t): sees(t, rounds) for t in turns}
    tokens = {item(t): count(t.text) for t in turns if item(t) is not None}
    evaluated: dict[str, int] = {}
    for t in turns:
        key = item(t)
        if key is None:
            continue
        readers: Iterable[Any] = (u for u in turns if key in seen[id(u)])
        if any(not seen[id(t)] <= seen[id(u)] for u in readers):
            evaluated["/".join(str(part) for part in key)] = tokens[key]
    floor_tokens = sum(evaluated.values())
    generated = sum(t.completion_tokens for t in turns)
    eval_s = floor_tokens / max(rate for _, rate in rates.eval)
    decode_s = sum(
        t.completion_tokens
        / interpolate(
            rates.decode,
            sum(tokens.get(k, 0) for k in seen[id(t)]) + t.completion_tokens / 2,
        )
        for t in turns
    )
    return {
        "evaluated": floor_tokens,
        "evaluated_per_generated": round(floor_tokens / generated, 3) if generated else None,
        "s_per_token": round((eval_s + decode_s) / generated, 4) if generated else None,
        "replies_evaluated_again": evaluated,
    }
