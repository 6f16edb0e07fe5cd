"""The arithmetic of benchmarks/bench_attention.py on made-up rates and turns."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import bench_attention
from bench_roofline import Rates

FAST = Rates(eval=((0.0, 100.0),), decode=((0.0, 50.0),))
SLOW_DECODE = Rates(eval=((0.0, 100.0),), decode=((0.0, 25.0),))


def turn(prompt: int, cached: int, completion: int) -> SimpleNamespace:
    return SimpleNamespace(prompt_tokens=prompt, cached_tokens=cached, completion_tokens=completion)


def test_a_debate_is_priced_as_its_evaluating_and_its_decoding() -> None:
    turns = [turn(300, 100, 50), turn(500, 400, 100)]
    # (200 + 100) / 100 evaluated, (50 + 100) / 50 decoded.
    assert bench_attention.debate_seconds(turns, FAST) == pytest.approx(3.0 + 3.0)
    assert bench_attention.debate_seconds(turns, SLOW_DECODE) == pytest.approx(3.0 + 6.0)


@pytest.mark.parametrize(
    ("on_s", "off_s", "moot_takes", "faster", "holds"),
    [
        (60.0, 40.0, False, "off", True),
        (60.0, 40.0, True, "off", False),
        (40.0, 60.0, True, "on", True),
        (40.0, 60.0, False, "on", False),
        (50.0, 51.0, False, "tie", True),  # within NOISE: either choice holds
        (50.0, 51.0, True, "tie", True),
    ],
)
def test_the_verdict_says_which_is_faster_and_whether_moot_takes_it(
    on_s: float, off_s: float, moot_takes: bool, faster: str, holds: bool
) -> None:
    v = bench_attention.verdict(on_s, off_s, moot_takes)
    assert v["faster"] == faster
    assert v["moot_takes_the_faster"] is holds
    assert v["moot_loads_with"] == ("on" if moot_takes else "off")
    assert v["off_over_on"] == round(off_s / on_s, 3)
