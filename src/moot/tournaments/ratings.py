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
    # How much longer the Proposition spoke: (its words − the Opposition's) / (both's), in
    # [−1, 1]; the covariate of the length-controlled rating.
    length: float = 0.0


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


# The length effect's weak prior: a normal of this standard deviation, so a tournament
# whose every debate the longer side won still has a finite effect.
LENGTH_PRIOR_SD = 5.0


def length_difference(proposition_words: int, opposition_words: int) -> float:
    """The covariate: the Proposition's words minus the Opposition's, over both (0: even)."""
    total = proposition_words + opposition_words
    return (proposition_words - opposition_words) / total if total else 0.0


def bradley_terry_length(
    models: Sequence[str],
    games: Sequence[Game],
    *,
    prior: float = 1.0,
    tol: float = 1e-10,
    max_iter: int = 100,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """Log-strengths (mean 0) and the length effect, fitted jointly: P(the Proposition
    wins) = σ(s_p − s_o + β·length). A draw counts ½ a win to each side, and `prior` drawn
    games of even length between every pair keep a model that won everything finite, as in
    `bradley_terry` (which this is with β held at 0). Newton's method on the log-likelihood,
    from START (the strengths, then β) where given."""
    k = len(models)
    if k == 0:
        return np.zeros(0), 0.0
    index = {m: i for i, m in enumerate(models)}
    rows = [
        (index[g.proposition], index[g.opposition], _won(g.winner), g.length, 1.0) for g in games
    ]
    rows += [(i, j, 0.5, 0.0, prior) for i, j in combinations(range(k), 2) if prior > 0]
    p_idx = np.array([r[0] for r in rows], dtype=int)
    o_idx = np.array([r[1] for r in rows], dtype=int)
    y, x, w = (np.array([r[c] for r in rows], dtype=float) for c in (2, 3, 4))
    # Design: +1 for the Proposition's model, −1 for the Opposition's, the length last.
    design = np.zeros((len(rows), k + 1))
    design[np.arange(len(rows)), p_idx] += 1.0
    design[np.arange(len(rows)), o_idx] -= 1.0
    design[:, k] = x
    theta = np.zeros(k + 1) if start is None else start.copy()
    gauge = np.zeros(k + 1)
    gauge[:k] = 1.0  # the strengths' sum, held at 0: they are defined up to a constant
    penalty = np.outer(gauge, gauge)
    penalty[k, k] = 1.0 / LENGTH_PRIOR_SD**2
    for _ in range(max_iter):
        mu = 1.0 / (1.0 + np.exp(-(design @ theta)))
        grad = design.T @ (w * (y - mu)) - penalty @ theta
        hessian = -(design.T * (w * mu * (1 - mu))) @ design - penalty
        step = np.linalg.solve(hessian, grad)
        theta = theta - step
        if np.max(np.abs(step)) < tol:
            break
    strength: np.ndarray = theta[:k] - theta[:k].mean()
    return strength, float(theta[k])


def _won(winner: str) -> float:
    return {"proposition": 1.0, "opposition": 0.0}.get(winner, 0.5)


@dataclass(frozen=True)
class LengthControlled:
    """The length-controlled rating: each model's strength with the length effect fitted
    beside it (by model, in the order given), and that effect, each with its interval."""

    strength: dict[str, tuple[float, float, float]]  # model → (strength, low, high)
    effect: tuple[float, float, float]  # β: log-odds of winning per unit of `Game.length`


def rate_length_controlled(
    models: Sequence[str],
    games: Sequence[Game],
    *,
    samples: int = 1000,
    seed: int = 0,
    prior: float = 1.0,
    level: float = 0.95,
) -> LengthControlled:
    """`bradley_terry_length` on the games, with bootstrap percentile intervals (games
    resampled with replacement, `samples` times)."""
    strength, beta = bradley_terry_length(models, games, prior=prior)
    point = np.append(strength, beta)
    rng = np.random.default_rng(seed)
    draws = np.empty((samples, len(models) + 1))
    for s in range(samples):
        picked = rng.integers(0, len(games), len(games)) if games else np.zeros(0, dtype=int)
        resampled = [games[int(i)] for i in picked]
        st, b = bradley_terry_length(models, resampled, prior=prior, start=point)
        draws[s, :-1], draws[s, -1] = st, b
    tail = (1 - level) / 2 * 100
    low = np.percentile(draws, tail, axis=0) if samples else point
    high = np.percentile(draws, 100 - tail, axis=0) if samples else point
    return LengthControlled(
        strength={
            m: (float(strength[i]), float(low[i]), float(high[i])) for i, m in enumerate(models)
        },
        effect=(beta, float(low[-1]), float(high[-1])),
    )


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
