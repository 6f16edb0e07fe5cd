"""The arithmetic of the speed benchmarks (benchmarks/bench_peer.py, bench_roofline.py) on
made-up rates and turns, and what each of the peer's prompts shows."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import bench_peer
import bench_roofline
from bench_rates import Rates

RATES = Rates(eval=((0, 200.0), (1000, 100.0)), decode=((0, 50.0), (2000, 25.0)))


def turn(prompt: int, cached: int, completion: int, ms: int, *, ttft: int = 0, **kw: object):
    fields = {"role": "proposition", "step": "speech", "round": 1, **kw}
    return SimpleNamespace(
        prompt_tokens=prompt,
        cached_tokens=cached,
        completion_tokens=completion,
        duration_ms=ms,
        ttft_ms=ttft,
        **fields,
    )


def test_interpolate_is_linear_between_points_and_flat_beyond() -> None:
    points = ((1000, 100.0), (0, 200.0))  # unsorted on purpose
    assert bench_roofline.interpolate(points, 500) == pytest.approx(150.0)
    assert bench_roofline.interpolate(points, 250) == pytest.approx(175.0)
    assert bench_roofline.interpolate(points, -5) == 200.0
    assert bench_roofline.interpolate(points, 4000) == 100.0


def test_a_turn_is_priced_at_the_contexts_its_work_happens() -> None:
    # 400 uncached tokens from context 600: eval middle 800 → 120 tok/s; decoding 100
    # tokens from 1000: middle 1050 → 50 - 25 × 1050/2000 = 36.875 tok/s.
    eval_s, decode_s = bench_roofline.priced(turn(1000, 600, 100, 0), RATES)
    assert eval_s == pytest.approx(400 / 120)
    assert decode_s == pytest.approx(100 / 36.875)


def test_a_fully_cached_prompt_costs_no_evaluation() -> None:
    eval_s, decode_s = bench_roofline.priced(turn(500, 500, 0, 0), RATES)
    assert (eval_s, decode_s) == (0.0, 0.0)


def test_efficiency_is_roofline_over_measured_time() -> None:
    # Each turn: 200 tokens from 0 (middle 100: 190 tok/s) and 50 decoded (middle 225).
    one = turn(200, 0, 50, 4000, ttft=2000)
    eval_s, decode_s = bench_roofline.priced(one, RATES)
    figures = bench_roofline.efficiency([one, one], RATES)
    assert figures["implementation_efficiency"] == round((eval_s + decode_s) / 4, 3)
    assert figures["prompt_efficiency"] == round(eval_s / 2, 3)
    assert figures["decode_efficiency"] == round(decode_s / 2, 3)
    assert figures["turn_s"] == 8.0


def test_steps_are_listed_by_the_time_they_lose() -> None:
    turns = [
        turn(100, 0, 10, 1000, role="chair", step="round_summary"),
        turn(100, 0, 10, 9000, role="judge", step="brief"),
        turn(100, 0, 10, 2000, role="chair", step="round_summary"),
    ]
    rows = bench_roofline.by_step(turns, RATES)
    assert [r["step"] for r in rows] == ["judge/brief", "chair/round_summary"]
    assert rows[1]["turns"] == 2
    assert rows[1]["turn_s"] == 3.0


def test_work_counts_what_the_cache_did_not_serve() -> None:
    turns = [
        turn(1000, 600, 100, 0, role="chair", step="round_summary"),
        turn(500, 100, 300, 0, role="devil", step="devil_attack"),
        turn(300, 250, 10, 0, role="chair", step="round_summary"),
    ]
    figures = bench_roofline.work(turns)
    assert figures["prompt_evaluated"] == 850
    assert figures["evaluated_per_generated"] == round(850 / 410, 3)
    assert figures["cache_share"] == round(950 / 1800, 3)
    assert list(figures["evaluated_by_step"].items()) == [
        ("chair/round_summary", 450),
        ("devil/devil_attack", 400),
    ]
    # A refused draw's prompt was evaluated too; its tokens were generated, not kept.
    refused = {"prompt_tokens": 300, "cached_tokens": 0, "completion_tokens": 50}
    again = bench_roofline.work([*turns[:2], turn(300, 250, 10, 0, discarded=refused)])
    assert again["prompt_evaluated"] == 850 + 300
    assert again["completion_tokens"] == 410 and again["refused_draws_completion_tokens"] == 50


def test_moot_and_the_peer_are_compared_per_generated_token() -> None:
    ours = bench_peer.moot_figures(bench_peer.Run((turn(1000, 600, 100, 5000),), 20.0))
    assert ours["evaluated_tokens"] == 400
    assert ours["s_per_token"] == 0.2
    assert ours["turn_s"] == 5.0  # the other 15 s of the wall were spent outside the turns
    call = bench_peer.Call(1, "chair", "verdict", 900, 200, 24.0, "text")
    theirs = bench_peer.peer_figures(bench_peer.Run((call,), 25.0))
    assert theirs["evaluated_tokens"] == 900  # stateless: every prompt token
    assert theirs["turn_s"] == 24.0
    both = bench_peer.compare(ours, theirs)
    assert both["spt_ratio"] == round(0.2 / 0.125, 3)
    assert both["wall_ratio"] == 0.8


def test_rounds_are_read_from_the_numbered_turns() -> None:
    turns = (turn(1, 0, 1, 0, round=1), turn(1, 0, 1, 0, round=3), turn(1, 0, 1, 0, round=None))
    assert bench_peer.Run(turns, 1.0).rounds == 3


def test_the_summary_names_each_target_and_whether_it_is_met() -> None:
    results = {
        "peer": {"a": {"spt_ratio": 0.4, "wall_ratio": 1.2}},
        "roofline": {"a": {"implementation_efficiency": 0.79}},
        "work": {"a": {"evaluated_per_generated": 2.18}},
    }
    lines = bench_roofline.summary(results)
    assert lines == [
        "peer spt ratio ≤ 0.5: a 0.4 (met)",
        "peer wall ratio ≤ 1: a 1.2 (not met)",
        "implementation_efficiency ≥ 0.90: a 0.79 (not met)",
        "evaluated per generated ≤ 0.5: a 2.18 (not met)",
    ]


# -- what the peer's steps see: the rulebook's visibility ----------------------------------

M = "This House Believes That tea beats coffee"


def test_the_opening_speeches_see_no_summary_and_only_the_opposition_sees_a_speech() -> None:
    prop = bench_peer.speech_prompt(M, "proposition", 1, summary="SUM", prop=None)
    opp = bench_peer.speech_prompt(M, "opposition", 1, summary="SUM", prop="PROP")
    assert "SUM" not in prop and "opening speech" in prop and "FOR the motion" in prop
    assert "PROP" in opp and "SUM" not in opp and "AGAINST" in opp
    later = bench_peer.speech_prompt(M, "proposition", 2, summary="SUM", prop="PROP")
    assert "SUM" in later and "PROP" not in later and "Develop your case further" in later


def test_the_chair_sees_the_three_speeches_but_not_the_summary_so_far() -> None:
    text = bench_peer.summary_prompt(M, prop="P", opp="O", devil="D")
    assert all(f"speech:\n{x}" in text for x in "POD")
    assert "summary so far" not in text


def test_the_devil_sees_the_previous_summary_from_round_two() -> None:
    first = bench_peer.devil_prompt(M, 1, summary="SUM", prop="P", opp="O")
    second = bench_peer.devil_prompt(M, 2, summary="SUM", prop="P", opp="O")
    assert "SUM" not in first and "SUM" in second


def test_the_rebuttals_and_the_brief_see_what_the_rulebook_gives_them() -> None:
    prop = bench_peer.rebuttal_prompt(M, "proposition", summary="SUM", prop=None)
    opp = bench_peer.rebuttal_prompt(M, "opposition", summary="SUM", prop="PR")
    assert "SUM" in prop and "Counter" not in prop
    assert "PR" in opp and "Counter the Proposition's rebuttal" in opp
    brief = bench_peer.brief_prompt(M, summary="SUM", prop="PR", opp="OR", attacks=["A1", "A2"])
    assert "A1\n---\nA2" in brief and "SUM" in brief and "OR" in brief


def test_a_persona_goes_into_the_user_turn_where_the_format_has_no_system_role() -> None:
    assert bench_peer.chat_messages("P", "U", system_role=True) == [
        {"role": "system", "content": "P"},
        {"role": "user", "content": "U"},
    ]
    assert bench_peer.chat_messages("P", "U", system_role=False) == [
        {"role": "user", "content": "P\n\nU"}
    ]
    assert bench_peer.chat_messages(None, "U", system_role=True) == [
        {"role": "user", "content": "U"}
    ]


def test_the_points_of_information_are_drawn_as_moot_draws_them() -> None:
    from moot.engine.turns import Engine

    engine = SimpleNamespace(seed=7)
    for rnd in (1, 2, 3):
        for asker in ("proposition", "opposition"):
            moot_draw = Engine.draw(engine, 0.6, "poi", rnd, asker)  # type: ignore[arg-type]
            assert bench_peer.accepted(7, rnd, asker) == moot_draw
