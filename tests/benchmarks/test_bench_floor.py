"""The arithmetic of benchmarks/bench_floor.py on a made-up two-round Oxford debate."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import bench_floor
from bench_rates import Rates

FLAT = Rates(eval=((0.0, 100.0), (1000.0, 50.0)), decode=((0.0, 10.0),))


def turn(rnd: int | None, role: str, step: str, words: int) -> SimpleNamespace:
    return SimpleNamespace(
        round=rnd, role=role, step=step, text=" ".join(["w"] * words), completion_tokens=words
    )


def debate() -> list[SimpleNamespace]:
    turns = []
    for rnd in (1, 2):
        turns += [
            turn(rnd, "proposition", "speech", 100 + rnd),
            turn(rnd, "opposition", "poi_question", 10),
            turn(rnd, "proposition", "poi_answer", 20),
            turn(rnd, "opposition", "speech", 110 + rnd),
            turn(rnd, "proposition", "poi_question", 11),
            turn(rnd, "devil", "devil_attack", 80 + rnd),
            turn(rnd, "chair", "round_summary", 90 + rnd),
        ]
    turns.append(turn(2, "judge", "judge", 30))
    turns += [
        turn(None, "proposition", "rebuttal", 70),
        turn(None, "opposition", "rebuttal", 75),
        turn(None, "chair", "verdict", 60),
        turn(None, "judge", "brief", 200),
    ]
    return turns


def count(text: str) -> int:
    return len(text.split())


def test_a_reply_is_counted_once_where_a_reader_may_not_see_what_its_speaker_saw() -> None:
    f = bench_floor.floor(debate(), count, FLAT)
    assert f["replies_evaluated_again"] == {
        # Round 1's speeches were spoken on the motion and each other: every reader sees
        # that much. The attack goes to the brief, which does not see the speeches.
        "devil/1": 81,
        "summary/1": 91,  # the next round's speakers do not see the speeches it summed up
        # From round 2 the speakers saw the summary, which the Chair and judge may not.
        "speech/proposition/2": 102,
        "speech/opposition/2": 112,
        "devil/2": 82,
        "summary/2": 92,  # the final summary: the rebuttals see it, not the speeches
        "rebuttal/proposition": 70,  # the verdict does not see the final summary
        "rebuttal/opposition": 75,
    }
    assert f["evaluated"] == sum(f["replies_evaluated_again"].values())
    generated = sum(t.completion_tokens for t in debate())
    assert f["evaluated_per_generated"] == round(f["evaluated"] / generated, 3)
    # The fastest batch rate (100/s), and every token decoded at the flat 10/s.
    assert f["s_per_token"] == round((f["evaluated"] / 100 + generated / 10) / generated, 4)


def test_a_step_without_a_rulebook_row_is_refused() -> None:
    with pytest.raises(ValueError, match="no rulebook row"):
        bench_floor.sees(turn(1, "chair", "opening", 5), 1)


def test_what_each_step_sees_is_what_the_oxford_flow_shows_it(tmp_path: Path) -> None:
    """The floor's table of what each step may see, against a scripted three-round
    debate: a reply is in a step's rows exactly where its text is in the step's prompt
    (the conversation it goes on included)."""
    from test_oxford import Chamber, run_debate

    chamber = Chamber()  # never satisfied: all three rounds run
    result, _ = run_debate(tmp_path, chamber, max_rounds=3)
    turns = result.transcript.turns
    requests = chamber.model.requests
    assert len(requests) == len(turns)  # one draw a turn: a request lines up with its turn
    replies = {bench_floor.item(t): t.text for t in turns if bench_floor.item(t) is not None}
    assert len(replies) == 3 * 4 + 2  # per round two speeches, an attack, a summary
    checked = 0
    for turn, request in zip(turns, requests, strict=True):
        prompt = "\n".join(m.content for m in request.messages)
        own = bench_floor.item(turn)
        shown = {key for key, text in replies.items() if key != own and text in prompt}
        assert bench_floor.sees(turn, 3) & replies.keys() == shown, (turn.role, turn.step)
        checked += bool(shown)
    assert checked > 20
