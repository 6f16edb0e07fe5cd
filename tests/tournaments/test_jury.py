"""A jury pools its judges' probabilities by their measured accuracy, and may abstain."""

from __future__ import annotations

import pytest

from moot.tournaments.jury import Judgement, outcome_of, pool, weight


def test_a_judge_at_chance_weighs_nothing_and_a_better_one_more() -> None:
    assert weight(0.5) == 0.0 and weight(0.3) == 0.0
    assert weight(None) == 1.0
    assert 0 < weight(0.7) < weight(0.9)


def test_the_pooled_probability_is_weighted_and_a_flip_is_left_out() -> None:
    strong = Judgement(outcome="proposition", p_proposition=0.9)
    weak = Judgement(outcome="opposition", p_proposition=0.2)
    flipped = Judgement(outcome="undecided", p_proposition=0.0, flipped=True)
    jury = pool([(strong, 3.0), (weak, 1.0), (flipped, 5.0)])
    assert jury.p_proposition == pytest.approx((0.9 * 3 + 0.2) / 4)
    assert jury.outcome == "proposition"


def test_close_to_even_or_nobody_left_is_undecided() -> None:
    assert outcome_of(0.55) == "undecided" and outcome_of(0.61) == "proposition"
    assert outcome_of(0.2) == "opposition"
    assert pool([]).outcome == "undecided"
    sampled = Judgement(outcome="proposition")
    assert pool([(sampled, 1.0)]).outcome == "undecided"
    at_chance = Judgement(outcome="proposition", p_proposition=0.9)
    assert pool([(at_chance, weight(0.5))]).outcome == "undecided"
