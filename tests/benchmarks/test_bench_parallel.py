"""The arithmetic of the parallel-sequences ceiling (benchmarks/bench_parallel.py) on
made-up rates and turns."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import bench_parallel
from bench_roofline import Rates

ONE = Rates(eval=((0.0, 1.0),), decode=((0, 50.0), (2000, 50.0)))
TWO = Rates(eval=((0.0, 1.0),), decode=((0, 80.0), (2000, 80.0)))


def turn(role: str, step: str, rnd: int | None, completion: int, prompt: int = 500):
    return SimpleNamespace(
        role=role, step=step, round=rnd, completion_tokens=completion, prompt_tokens=prompt
    )


def test_pairs_are_found_within_one_round_or_the_closing_only() -> None:
    turns = [
        turn("chair", "round_summary", 1, 100),
        turn("chair", "round_summary", 2, 100),
        turn("judge", "judge", 2, 80),
        turn("chair", "verdict", None, 90),
        turn("judge", "brief", None, 300),
        turn("opposition", "speech", 3, 150),  # its point of information is in no turn
    ]
    found = [(kind, a.round) for kind, a, _ in bench_parallel.pairs(turns)]
    assert found == [("round_summary+judge", 2), ("verdict+brief", None)]


def test_a_pair_saves_what_decoding_its_shorter_reply_twice_together_saves() -> None:
    # 80 tokens each: apart 80/50 + 80/50 = 3.2 s; together 160/80 = 2.0 s.
    k, saved = bench_parallel.overlap(turn("a", "x", 1, 80), turn("b", "y", 1, 200), ONE, TWO)
    assert k == 80
    assert saved == pytest.approx(1.2)


def test_savings_add_up_by_kind_of_pair() -> None:
    turns = [
        turn("chair", "verdict", None, 80),
        turn("judge", "brief", None, 80),
        turn("chair", "round_summary", 2, 40),
        turn("judge", "judge", 2, 50),
    ]
    total, by = bench_parallel.savings(turns, ONE, TWO)
    assert by["verdict+brief"] == {"pairs": 1, "tokens": 80, "s": 1.2}
    assert by["round_summary+judge"] == {"pairs": 1, "tokens": 40, "s": 0.6}
    assert total == pytest.approx(1.8)


def test_divergence_is_the_first_step_a_run_leaves_the_reference() -> None:
    assert bench_parallel.divergence([1, 2, 3], [[1, 2, 3], [1, 2, 3]]) is None
    assert bench_parallel.divergence([1, 2, 3], [[1, 9, 3], [1, 2, 8]]) == 1
