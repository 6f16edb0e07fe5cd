"""How many debates each schedule needs to rank six models in their true order: a
simulation with known strengths and a judge of known accuracy, no model loaded.

Each simulated debate is won by the stronger debater with the Bradley-Terry chance of its
strengths, and the judge names that winner with its accuracy (else the other side). The
ranking is the Bradley-Terry fit the tournament's report makes (with its prior); it is in
the true order when Kendall's tau against the true strengths is at least 0.9 (with six
models, only the true order itself). A schedule needs N debates when, after N, at least
SHARE of the simulated tournaments are in the true order.

Round-robin is counted in whole rounds (every pair, both sides: 30 debates for six models),
the unit `moot tournament` plans in (motions × --swaps); adaptive after every debate, as
any --budget stops it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from moot.tournaments import adaptive

STRENGTHS = (2.5, 1.5, 0.5, -0.5, -1.5, -2.5)  # adjacent models: the better wins 73 %
ACCURACY = 0.9  # the judge names the debate's true winner 9 times in 10
TAU = 0.9
SHARE = 0.8
TRIALS = 100
ROUNDS = 10  # round-robin's horizon in rounds; adaptive's is as many debates
SEED = 2026


def kendall_tau(estimate: Sequence[float], truth: Sequence[float]) -> float:
    """Concordant minus discordant pairs over all pairs (ties count neither)."""
    e, t = np.asarray(estimate), np.asarray(truth)
    i, j = np.triu_indices(len(t), 1)
    return float((np.sign(e[i] - e[j]) * np.sign(t[i] - t[j])).mean())


def debate(
    truth: Sequence[float], accuracy: float, rng: np.random.Generator, p: int, o: int
) -> float:
    """The proposition's score as the judge gives it: the true winner with `accuracy`."""
    stronger_won = rng.random() < 1 / (1 + np.exp(truth[o] - truth[p]))
    judged_right = rng.random() < accuracy
    return 1.0 if stronger_won == judged_right else 0.0


def round_robin(
    truth: Sequence[float], accuracy: float, rng: np.random.Generator, rounds: int
) -> list[float]:
    """Kendall's tau after each whole round, in the plan's order (every pair, both sides)."""
    k, results, taus = len(truth), [], []
    for _ in range(rounds):
        for i, j in combinations(range(k), 2):
            for p, o in ((i, j), (j, i)):
                results.append((p, o, debate(truth, accuracy, rng, p, o)))
        taus.append(kendall_tau(adaptive.standing(k, results).strength, truth))
    return taus


def adaptive_run(
    truth: Sequence[float], accuracy: float, rng: np.random.Generator, budget: int
) -> tuple[list[float], int | None]:
    """Kendall's tau after each debate (1 … budget; the opening's too) and the number of
    debates after which the schedule stopped by itself (None: the budget stopped it)."""
    k = len(truth)
    results: list[adaptive.Result] = []
    for p, o in adaptive.opening(k)[:-1]:
        results.append((p, o, debate(truth, accuracy, rng, p, o)))
    taus = [0.0] * len(results)  # before the opening is whole, no ranking is claimed
    pending: tuple[int, int] | None = adaptive.opening(k)[-1]
    while pending is not None:
        results.append((*pending, debate(truth, accuracy, rng, *pending)))
        s = adaptive.standing(k, results)
        taus.append(kendall_tau(s.strength, truth))
        if len(results) == budget:
            return taus, None
        pair = adaptive.pick(s, adaptive.met(k, results))
        pending = None if pair is None else adaptive.seats(*pair, results)
    return taus + [taus[-1]] * (budget - len(taus)), len(results)


def needed(counts: Sequence[int], shares: Sequence[float], share: float) -> int | None:
    """The first count whose share of tournaments in the true order reaches `share`."""
    return next((n for n, s in zip(counts, shares, strict=True) if s >= share), None)


def simulate(
    strengths: Sequence[float] = STRENGTHS,
    *,
    accuracy: float = ACCURACY,
    trials: int = TRIALS,
    rounds: int = ROUNDS,
    share: float = SHARE,
    seed: int = SEED,
) -> dict[str, Any]:
    """Both schedules on the same strengths and judge, TRIALS tournaments each."""
    rng = np.random.default_rng(seed)
    k = len(strengths)
    per_round = k * (k - 1)
    budget = rounds * per_round
    start = time.perf_counter()
    rr = np.array([round_robin(strengths, accuracy, rng, rounds) for _ in range(trials)])
    runs = [adaptive_run(strengths, accuracy, rng, budget) for _ in range(trials)]
    ad = np.array([taus for taus, _ in runs])
    stops = [stop for _, stop in runs if stop is not None]
    rr_counts = [per_round * (r + 1) for r in range(rounds)]
    rr_shares = [float(x) for x in (rr >= TAU).mean(axis=0)]
    ad_shares = [float(x) for x in (ad >= TAU).mean(axis=0)]
    rr_needs = needed(rr_counts, rr_shares, share)
    ad_needs = needed(range(1, budget + 1), ad_shares, share)
    return {
        "models": k,
        "strengths": list(strengths),
        "judge_accuracy": accuracy,
        "trials": trials,
        "true_order": f"Kendall's tau >= {TAU} in at least {share:.0%} of the tournaments",
        "round_robin_needs": rr_needs,
        "adaptive_needs": ad_needs,
        "ratio": round(ad_needs / rr_needs, 3) if rr_needs and ad_needs else None,
        "round_robin_in_order": dict(zip(rr_counts, rr_shares, strict=True)),
        "adaptive_in_order": {n: ad_shares[n - 1] for n in rr_counts},
        "adaptive_stopped_itself": len(stops),
        "adaptive_mean_stop": round(float(np.mean(stops)), 1) if stops else None,
        "seconds": round(time.perf_counter() - start, 1),
    }


def run(results: dict[str, Any]) -> None:
    results["schedule"] = simulate()


if __name__ == "__main__":
    import json

    out: dict[str, Any] = {}
    run(out)
    print(json.dumps(out, indent=2))
