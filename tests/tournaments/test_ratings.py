"""Bradley-Terry, bootstrap intervals, side bias and judge agreement on hand-checked cases."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from moot.tournaments.ratings import (
    Game,
    agreement,
    bradley_terry,
    bradley_terry_length,
    length_difference,
    rate,
    rate_length_controlled,
    side_bias,
    tally,
)


def games(a: str, b: str, a_wins: int, b_wins: int, draws: int = 0) -> list[Game]:
    """a_wins + b_wins + draws games between a and b, alternating who is proposition."""
    results = ["a"] * a_wins + ["b"] * b_wins + ["draw"] * draws
    out = []
    for i, r in enumerate(results):
        prop, opp = (a, b) if i % 2 == 0 else (b, a)
        if r == "draw":
            out.append(Game(prop, opp, "draw"))
        else:
            winner = a if r == "a" else b
            out.append(Game(prop, opp, "proposition" if prop == winner else "opposition"))
    return out


def test_tally_counts_games_both_ways_and_a_draw_as_half() -> None:
    n, score = tally(["a", "b"], games("a", "b", 2, 1, draws=1))
    assert n.tolist() == [[0, 4], [4, 0]]
    assert score.tolist() == [2.5, 1.5]


def test_three_models_match_the_hand_computed_strengths() -> None:
    # A beats B 2 of 3, B beats C 2 of 3, A beats C 4 of 5. The likelihood equations
    # W_i = sum_j n_ij p_i / (p_i + p_j) hold for p = (4, 2, 1):
    #   A: 3·4/6 + 5·4/5 = 2 + 4 = 6 = W_A;  B: 3·2/6 + 3·2/3 = 1 + 2 = 3 = W_B;
    #   C: 3·1/3 + 5·1/5 = 1 + 1 = 2 = W_C.
    played = games("A", "B", 2, 1) + games("B", "C", 2, 1) + games("A", "C", 4, 1)
    n, score = tally(["A", "B", "C"], played)
    assert score.tolist() == [6, 3, 2]
    strength = bradley_terry(n, score, prior=0)
    expected = np.log([4, 2, 1]) - np.log([4, 2, 1]).mean()
    assert strength == pytest.approx(expected, abs=1e-8)
    assert strength.sum() == pytest.approx(0, abs=1e-12)


def test_two_models_ratio_of_strengths_is_the_ratio_of_scores() -> None:
    # With ties as half: A scores 2.5 of 4, B 1.5 → p_A / p_B = 2.5 / 1.5.
    n, score = tally(["A", "B"], games("A", "B", 2, 1, draws=1))
    s = bradley_terry(n, score, prior=0)
    assert s[0] - s[1] == pytest.approx(math.log(2.5 / 1.5), abs=1e-8)


def test_the_prior_keeps_an_unbeaten_model_finite() -> None:
    # 4 wins of 4, plus one virtual drawn game: 4.5 against 0.5 → ratio 9.
    n, score = tally(["A", "B"], games("A", "B", 4, 0))
    s = bradley_terry(n, score, prior=1.0)
    assert s[0] - s[1] == pytest.approx(math.log(9), abs=1e-8)


def test_rate_orders_counts_and_brackets_each_strength() -> None:
    played = games("A", "B", 2, 1) + games("B", "C", 2, 1) + games("A", "C", 4, 1)
    rated = rate(["C", "B", "A"], played, samples=300, seed=1, prior=0.5)
    assert [r.model for r in rated] == ["A", "B", "C"]
    a, b, c = rated
    assert (a.wins, a.losses, a.draws) == (6, 2, 0)
    assert (b.wins, b.losses) == (3, 3) and (c.wins, c.losses) == (2, 6)
    assert [r.debates for r in rated] == [8, 6, 8]
    for r in rated:
        assert r.low <= r.strength <= r.high and r.low < r.high
    # The same seed gives the same intervals.
    again = rate(["C", "B", "A"], played, samples=300, seed=1, prior=0.5)
    assert [(r.low, r.high) for r in again] == [(r.low, r.high) for r in rated]


def test_side_bias_counts_pairs_won_by_the_same_seat() -> None:
    bias = side_bias(
        [
            ("proposition", "proposition"),  # the seat won both: bias
            ("proposition", "opposition"),  # the same model won both
            ("opposition", "opposition"),  # bias
            ("opposition", "proposition"),  # the same model won both
            ("draw", "proposition"),  # not a decided pair
        ]
    )
    assert (bias.pairs, bias.same_side) == (4, 2)
    assert bias.rate == 0.5
    assert (bias.proposition_wins, bias.decided) == (5, 9)
    assert bias.proposition_share == pytest.approx(5 / 9)
    assert side_bias([]).rate is None


def test_agreement_is_pairwise_and_unanimous_over_panels_only() -> None:
    figure = agreement(
        [
            ["proposition", "proposition", "opposition"],  # 1 of 3 pairs agree
            ["opposition", "opposition"],  # 1 of 1, unanimous
            ["draw"],  # one judge: left out
        ]
    )
    assert (figure.debates, figure.judge_pairs, figure.agreeing_pairs) == (2, 4, 2)
    assert figure.pairwise == 0.5
    assert (figure.unanimous, figure.unanimity) == (1, 0.5)
    assert agreement([["proposition"]]).pairwise is None


def test_the_chart_draws_an_interval_that_does_not_hold_its_estimate(tmp_path: Path) -> None:
    """A percentile interval of few debates can sit to one side of the estimate."""
    from moot.tournaments.report import (
        AgreementFigure,
        ModelRating,
        Report,
        SideBiasFigure,
        draw,
    )

    rows = [
        ModelRating(rank=1, model="a", strength=0.4, ci_low=0.5, ci_high=0.9, wins=2, losses=0,
                    draws=0, debates=2),
        ModelRating(rank=2, model="b", strength=-0.4, ci_low=-0.9, ci_high=-0.5, wins=0, losses=2,
                    draws=0, debates=2),
    ]  # fmt: skip
    report = Report(
        format="oxford",
        models=rows,
        debates_planned=2,
        debates_decided=2,
        self_judged=0,
        side_bias=SideBiasFigure(
            swap_pairs=1, same_side_both=0, rate=0.0, proposition_wins=1, decided=2,
            proposition_share=0.5,
        ),
        judge_agreement=AgreementFigure(
            panels=0, judge_pairs=0, agreeing_pairs=0, pairwise=None, unanimous=0, unanimity=None
        ),
        bootstrap_samples=10,
        seed=1,
    )  # fmt: skip
    draw(report, tmp_path / "ratings.png")
    assert (tmp_path / "ratings.png").read_bytes()[:4] == b"\x89PNG"


def _verbose_field() -> list[Game]:
    """Two short-spoken equals whose judges gave each debate to the longer side, and a
    padded loser that speaks twice as long as anyone and loses every debate."""
    games = []
    for i in range(8):  # s1 and s2: the side that spoke half as much again won
        longer = 0.2 if i % 2 == 0 else -0.2
        winner = "proposition" if longer > 0 else "opposition"
        games.append(
            Game("s1", "s2", winner, longer) if i < 4 else Game("s2", "s1", winner, longer)
        )
    for other in ("s1", "s2"):
        for _ in range(2):  # twice as long: (2 − 1) / 3 in the padded side's favour
            games.append(Game("padded", other, "opposition", 1 / 3))
            games.append(Game(other, "padded", "proposition", -1 / 3))
    return games


def test_the_length_controlled_rating_ranks_a_padded_loser_no_higher_than_the_raw_one() -> None:
    models = ["s1", "s2", "padded"]
    games = _verbose_field()
    n, score = tally(models, games)
    raw = dict(zip(models, bradley_terry(n, score), strict=True))
    strength, effect = bradley_terry_length(models, games)
    controlled = dict(zip(models, strength, strict=True))
    # The judges favour length (the equals' debates say so), so losing while twice as long
    # says the padded side is weaker still than its record alone.
    assert effect > 1.0
    assert controlled["padded"] < raw["padded"] - 0.1
    assert min(controlled, key=controlled.__getitem__) == "padded"


def test_a_side_that_wins_by_length_alone_loses_that_lead_under_length_control() -> None:
    models = ["short", "verbose", "other"]
    games = []
    for _ in range(3):  # the judges give every debate to the longer side
        games += [
            Game("verbose", "short", "proposition", 0.3),
            Game("short", "verbose", "opposition", -0.3),
            Game("other", "short", "proposition", 0.3),
            Game("short", "other", "proposition", 0.3),
            Game("verbose", "other", "opposition", -0.2),
            Game("other", "verbose", "opposition", -0.2),
        ]
    n, score = tally(models, games)
    raw = dict(zip(models, bradley_terry(n, score), strict=True))
    strength, effect = bradley_terry_length(models, games)
    controlled = dict(zip(models, strength, strict=True))
    assert effect > 1.0
    assert raw["verbose"] - raw["short"] > controlled["verbose"] - controlled["short"]


def test_with_even_lengths_the_controlled_rating_is_the_raw_one() -> None:
    models = ["a", "b", "c"]
    games = [
        Game("a", "b", "proposition"),
        Game("b", "c", "draw"),
        Game("c", "a", "opposition"),
        Game("b", "a", "proposition"),
    ]
    n, score = tally(models, games)
    strength, effect = bradley_terry_length(models, games)
    assert effect == 0.0
    assert np.allclose(strength, bradley_terry(n, score), atol=1e-8)
    fitted = rate_length_controlled(models, games, samples=50, seed=1)
    for m in models:
        value, low, high = fitted.strength[m]
        assert low <= value + 1e-9 and value - 1e-9 <= high
    assert length_difference(200, 100) == pytest.approx(1 / 3)
    assert length_difference(0, 0) == 0.0
