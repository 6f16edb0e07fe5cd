"""llama.cpp's raw rates by context, and the rate at any context between those measured: what
bench_roofline measures and bench_floor, bench_parallel and bench_attention price with."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Rates:
    """Tokens per second by context: (context, rate) pairs, the context at each run's middle."""

    eval: tuple[tuple[float, float], ...]
    decode: tuple[tuple[float, float], ...]


def interpolate(points: Sequence[tuple[float, float]], x: float) -> float:
    """The rate at context X, linear between measured points, flat beyond the ends."""
    pts = sorted(points)
    xs = [p[0] for p in pts]
    if x <= xs[0]:
        return pts[0][1]
    if x >= xs[-1]:
        return pts[-1][1]
    i = bisect_left(xs, x)
    (x0, y0), (x1, y1) = pts[i - 1], pts[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
