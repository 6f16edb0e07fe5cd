"""Ratings from a tournament's decided debates: Bradley-Terry strengths with bootstrap
intervals, win/loss/draw counts, side bias over swap pairs and judge agreement in panels.

Pure functions over plain records, so every figure can be checked by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

Side = str  # "proposition" | "opposition"; a game's winner may also be "draw"


@dataclass(frozen=True)
class Game:
    """One decided debate: who sat where and which side the judges gave it to."""

    proposition: str
    opposition: str
    winner: str  # "proposition" | "opposition" | "draw"


@dataclass(frozen=True)
class Rating:
    model: str
    strength: float  # log Bradley-Terry strength; the field's mean is 0
    low: float  # bootstrap percentile interval
    high: float
    wins: int
    losses: int
    draws: int

    @property
    def debates(self) -> int:
        return self.wins + self.losses + self.draws


def tally(models: Sequence[str], games: Sequence[Game]) -> tuple[np.ndarray, np.ndarray]:
    """Games played between each pair (symmetric) and each model's score, a draw counting ½."""
    index = {m: i for i, m in enumerate(models)}
    n = np.zeros((len(models), len(models)))
    score = np.zeros(len(models))
    for g in games:
        p, o = index[g.proposition], index[g.opposition]
        n[p, o] += 1
        n[o, p] += 1
        if g.winner == "proposition":
            score[p] += 1
        elif g.winner == "opposition":
            score[o] += 1
        else:
            score[p] += 0.5
            score[o] += 0.5
    return n, score


def bradley_terry(
    n: np.ndarray,
    score: np.ndarray,
    *,
    prior: float = 1.0,
    tol: float = 1e-10,
    max_iter: int = 10_000,
) -> np.ndarray:
    """Log-strengths (mean 0) by Hunter's MM iteration: p_i ← W_i / Σ_j n_ij / (p_i + p_j).

    `prior` adds that many drawn games between every pair of models: without it a model
    that won (or lost) every game has no finite strength. prior=0 gives the plain MLE.
    """
    k = len(score)
    if k == 0:
        return np.zeros(0)
    off_diagonal = 1.0 - np.eye(k)
    n = n + prior * off_diagonal
    w = score + prior * off_diagonal.sum(axis=1) / 2
    p = np.ones(k)
    for _ in range(max_iter):
        denom = (n / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, w / np.where(denom > 0, denom, 1.0), p)
        new = np.maximum(new, 1e-300)
        new /= np.exp(np.log(new).mean())
        done = np.max(np.abs(new - p) / p) < tol
        p = new
        if done:
            break
    logs = np.log(p)
    result: np.ndarray = logs - logs.mean()
    return result


def rate(
    models: Sequence[str],
    games: Sequence[Game],
    *,
    samples: int = 1000,
    seed: int = 0,
    prior: float = 1.0,
    level: float = 0.95,
) -> list[Rating]:
    """Every model's strength, its bootstrap interval (games resampled with replacement,
    `samples` times) and its record; strongest first."""
    n, score = tally(models, games)
    strength = bradley_terry(n, score, prior=prior)
    rng = np.random.default_rng(seed)
    draws = np.empty((samples, len(models)))
    for s in range(samples):
        picked = rng.integers(0, len(games), len(games)) if games else np.zeros(0, dtype=int)
        n_s, score_s = tally(models, [games[int(i)] for i in picked])
        draws[s] = bradley_terry(n_s, score_s, prior=prior)
    tail = (1 - level) / 2 * 100
    low = np.percentile(draws, tail, axis=0) if samples else strength
    high = np.percentile(draws, 100 - tail, axis=0) if samples else strength
    ratings = [
        Rating(m, float(strength[i]), float(low[i]), float(high[i]), *_record(m, games))
        for i, m in enumerate(models)
    ]
    return sorted(ratings, key=lambda r: (-r.strength, r.model))


def _record(model: str, games: Sequence[Game]) -> tuple[int, int, int]:
    wins = losses = draws = 0
    for g in games:
        if model not in (g.proposition, g.opposition):
            continue
        side = "proposition" if g.proposition == model else "opposition"
        if g.winner == "draw":
            draws += 1
        elif g.winner == side:
            wins += 1
        else:
            losses += 1
    return wins, losses, draws


@dataclass(frozen=True)
class SideBias:
    """Over swap pairs (the same two models and motion, sides swapped) that both had a
    winner: how often the same side won both debates. 0 when the judges followed the
    models; 1 when they followed the seat. `proposition_share` is the share of all decided
    debates the proposition won."""

    pairs: int  # swap pairs with a winner in both debates
    same_side: int
    proposition_wins: int
    decided: int  # debates with a winner

    @property
    def rate(self) -> float | None:
        return self.same_side / self.pairs if self.pairs else None

    @property
    def proposition_share(self) -> float | None:
        return self.proposition_wins / self.decided if self.decided else None


def side_bias(pairs: Sequence[tuple[str, str]]) -> SideBias:
    """`pairs`: the winners ("proposition" | "opposition" | "draw") of each swap pair's
    two debates."""
    both = [(a, b) for a, b in pairs if "draw" not in (a, b)]
    winners = [w for pair in pairs for w in pair if w != "draw"]
    return SideBias(
        pairs=len(both),
        same_side=sum(a == b for a, b in both),
        proposition_wins=winners.count("proposition"),
        decided=len(winners),
    )


@dataclass(frozen=True)
class Agreement:
    """How often the judges of a panel agreed: pairwise (every two judges of a debate)
    and unanimous (the whole panel), over debates judged by two or more."""

    debates: int
    judge_pairs: int
    agreeing_pairs: int
    unanimous: int

    @property
    def pairwise(self) -> float | None:
        return self.agreeing_pairs / self.judge_pairs if self.judge_pairs else None

    @property
    def unanimity(self) -> float | None:
        return self.unanimous / self.debates if self.debates else None


def agreement(panels: Sequence[Sequence[str]]) -> Agreement:
    """`panels`: each debate's ballots (the winner each judge named); single-judge
    debates are left out."""
    debates = pairs = agreeing = unanimous = 0
    for ballots in panels:
        if len(ballots) < 2:
            continue
        debates += 1
        for a, b in combinations(ballots, 2):
            pairs += 1
            agreeing += a == b
        unanimous += len(set(ballots)) == 1
    return Agreement(debates, pairs, agreeing, unanimous)
