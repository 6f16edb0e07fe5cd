"""The adaptive schedule: a tournament's next debate is the pairing where its ranking is
least certain, chosen from the debates finished so far, until adjacent models' intervals
separate or the budget is spent.

Everything here is a pure function of the finished debates' results, so an interrupted
tournament resumes where it stopped: the plan so far is on disk, and the next pairing
follows from the verdicts beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from moot.engine.turns import derive_seed
from moot.errors import UsageError
from moot.tournaments.judge import Winner
from moot.tournaments.plan import MAX_DEBATES, Pairing, TournamentPlan, slug

SCHEDULES = ("round-robin", "adaptive")
# As ratings.rate: one drawn game between every two models keeps every strength finite.
PRIOR = 1.0
Z = 1.959963984540054  # the report's 95 % level, two-sided

# One finished debate: the proposition's index, the opposition's, the proposition's score
# (1 a win, ½ a draw, 0 a loss).
Result = tuple[int, int, float]
SCORE = {"proposition": 1.0, "draw": 0.5, "opposition": 0.0}


@dataclass(frozen=True)
class Standing:
    """Each model's log Bradley-Terry strength (mean 0) and its Wald interval."""

    strength: np.ndarray
    low: np.ndarray
    high: np.ndarray


def standing(k: int, results: Sequence[Result], *, prior: float = PRIOR, z: float = Z) -> Standing:
    """The Bradley-Terry fit of K models (the same estimate as `ratings.bradley_terry` with
    the same prior) by Newton's method, and intervals from its Fisher information.

    Wald intervals, not the report's bootstrap: they are asked for after every debate, and
    a bootstrap there would cost more than the schedule saves.
    """
    games = prior * (1.0 - np.eye(k))
    score = np.full(k, prior * (k - 1) / 2)
    if results:
        prop, opp, points = (np.asarray(column) for column in zip(*results, strict=True))
        np.add.at(games, (prop, opp), 1.0)
        np.add.at(games, (opp, prop), 1.0)
        np.add.at(score, prop, points)
        np.add.at(score, opp, 1.0 - points)
    # The information matrix is singular along equal shifts of every strength: inverted on
    # the strengths of mean 0 (adding and taking away the mean's projection).
    mean = np.full((k, k), 1.0 / k)
    theta = np.zeros(k)
    cov = np.zeros((k, k))
    for _ in range(100):
        win = 1 / (1 + np.exp(theta[None, :] - theta[:, None]))  # P(i beats j)
        weight = games * win * (1 - win)
        cov = np.linalg.inv(np.diag(weight.sum(axis=1)) - weight + mean) - mean
        step = cov @ (score - (games * win).sum(axis=1))
        step *= min(1.0, 2.0 / max(float(np.abs(step).max()), 1e-12))  # damped far from it
        theta = theta + step
        theta -= theta.mean()
        if np.abs(step).max() < 1e-9:
            break
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return Standing(theta, theta - z * se, theta + z * se)


def separated(s: Standing) -> bool:
    """Every two models adjacent in the ranking have intervals that do not overlap."""
    order = np.argsort(-s.strength, kind="stable")
    return all(s.low[a] > s.high[b] for a, b in zip(order, order[1:], strict=False))


def met(k: int, results: Sequence[Result]) -> np.ndarray:
    """How often each two models have debated (symmetric)."""
    count = np.zeros((k, k), dtype=int)
    for p, o, _ in results:
        count[p, o] += 1
        count[o, p] += 1
    return count


def next_pair(k: int, results: Sequence[Result]) -> tuple[int, int] | None:
    """The two models (i < j) whose intervals overlap most; None once adjacent models'
    intervals all separate."""
    return pick(standing(k, results), met(k, results))


def pick(s: Standing, count: np.ndarray) -> tuple[int, int] | None:
    """`next_pair` from a standing and the meetings so far: fewer meetings, then the lower
    indices, break a tie of overlaps."""
    if separated(s):
        return None

    def key(pair: tuple[int, int]) -> tuple[float, int, tuple[int, int]]:
        i, j = pair
        overlap = min(s.high[i], s.high[j]) - max(s.low[i], s.low[j])
        return (-round(float(overlap), 9), int(count[i, j]), pair)

    return min(combinations(range(len(s.strength)), 2), key=key)


def seats(i: int, j: int, results: Sequence[Result]) -> tuple[int, int]:
    """Who of I and J takes the proposition: the one that has held it less often than the
    opposition, counted over all its debates; when even, the one that held the opposition
    when these two last met; when they never met, I."""
    lean = np.zeros(2, dtype=int)
    last: tuple[int, int] | None = None
    for p, o, _ in results:
        for side, model in enumerate((i, j)):
            lean[side] += (p == model) - (o == model)
        if {p, o} == {i, j}:
            last = (p, o)
    if lean[0] != lean[1]:
        return (i, j) if lean[0] < lean[1] else (j, i)
    if last is not None:
        return (last[1], last[0])
    return (i, j)


def opening(k: int) -> list[tuple[int, int]]:
    """The first K debates: a cycle, each model once on each side, every model linked to
    every other through it (two models: one swap pair)."""
    return [(i, (i + 1) % k) for i in range(k)]


# -- the plan -------------------------------------------------------------------------------


def check_schedule(schedule: str, budget: int | None, models: int) -> None:
    """--schedule and --budget together, or a one-line UsageError."""
    if schedule not in SCHEDULES:
        raise UsageError(key="tournaments.adaptive.unknown_schedule", schedule=schedule)
    if budget is None:
        return
    if schedule != "adaptive":
        raise UsageError(key="tournaments.adaptive.budget_applies_only_schedule_adaptive")
    if budget < max(models, 2):
        raise UsageError(
            key="tournaments.adaptive.budget_below_number_models",
            budget=budget,
            models=models,
            models2=max(models, 2),
        )
    if budget > MAX_DEBATES:
        raise UsageError(
            key="tournaments.adaptive.budget_over_limit_debates",
            budget=budget,
            max_debates=MAX_DEBATES,
        )


def check_executor(schedule: str, executor: str, parallel: int = 1) -> None:
    """An adaptive schedule plays one debate after another: each is chosen from those
    finished before it, so it runs on the local executor only, one debate at a time."""
    if schedule == "adaptive" and executor != "local":
        raise UsageError(
            key="tournaments.adaptive.schedule_adaptive_runs_on_executor", executor=executor
        )
    if schedule == "adaptive" and parallel > 1:
        raise UsageError(
            key="tournaments.adaptive.schedule_adaptive_plays_one_debate", parallel=parallel
        )


def adapt(plan: TournamentPlan, *, budget: int | None = None) -> TournamentPlan:
    """A round-robin's PLAN made adaptive: the opening in place of its debates, and a budget,
    by default as many debates as the round-robin holds."""
    check_schedule("adaptive", budget, len(plan.models))
    opened = opening_plan(
        plan.models,
        len(plan.motions),
        seed=plan.seed,
        judges=plan.judges,
        identities=plan.identities,
    )
    most = budget or max(len(plan.debates), len(plan.models))
    return plan.model_copy(update={"debates": opened, "schedule": "adaptive", "budget": most})


def opening_plan(
    models: Sequence[str],
    n_motions: int,
    *,
    seed: int,
    judges: Sequence[str],
    identities: Mapping[str, str],
) -> list[Pairing]:
    """The debates an adaptive tournament starts with: `opening`, on the motions in turn."""
    debates: list[Pairing] = []
    for p, o in opening(len(models)):
        debates.append(
            pairing(models, n_motions, debates, p, o, seed=seed, judges=judges, ids=identities)
        )
    return debates


def next_pairing(plan: TournamentPlan, verdicts: Mapping[str, Winner]) -> Pairing | None:
    """The plan's next debate, from the winners of its finished ones (VERDICTS, by debate
    id; every planned debate finished); None when the budget is spent or adjacent models'
    intervals have separated."""
    if plan.budget is None or len(plan.debates) >= plan.budget:
        return None
    index = {ref: i for i, ref in enumerate(plan.models)}
    results = [
        (index[p.proposition], index[p.opposition], SCORE[verdicts[p.id]])
        for p in plan.debates
        if p.id in verdicts
    ]
    pair = next_pair(len(plan.models), results)
    if pair is None:
        return None
    p, o = seats(*pair, results)
    return pairing(
        plan.models,
        len(plan.motions),
        plan.debates,
        p,
        o,
        seed=plan.seed,
        judges=plan.judges,
        ids=plan.identities,
    )


def pairing(
    models: Sequence[str],
    n_motions: int,
    debates: Sequence[Pairing],
    p: int,
    o: int,
    *,
    seed: int,
    judges: Sequence[str],
    ids: Mapping[str, str],
) -> Pairing:
    """Models P and O (indices) in their seats, after DEBATES: the other half of their open
    swap pair (its motion and seed) when there is one, else a new swap pair on the motion
    the two have argued least, judged by the panel's outsiders as the round-robin's are."""
    prop, opp = models[p], models[o]
    swap, motion = _open_swap(debates, prop, opp)
    if swap is None:
        motion = _least_argued(debates, prop, opp, n_motions)
        low, high = sorted((p, o))
        stem = f"m{motion + 1}-{low + 1}-{high + 1}-"
        swap = f"{stem}{1 + len({d.swap for d in debates if d.swap.startswith(stem)})}"
    identity = [ids.get(ref, ref) for ref in (prop, opp)]
    panel = list(judges) or list(models)
    outside = [ref for ref in panel if ids.get(ref, ref) not in identity]
    return Pairing(
        id=f"{len(debates) + 1:03d}-motion{motion + 1}-{slug(prop)}-vs-{slug(opp)}",
        motion=motion,
        proposition=prop,
        opposition=opp,
        swap=swap,
        seed=derive_seed(seed, "tournament", swap),
        judges=outside or panel,
        self_judged=not outside,
    )


def _open_swap(debates: Sequence[Pairing], prop: str, opp: str) -> tuple[str | None, int]:
    """The swap pair whose one debate so far seated these two the other way round."""
    count: dict[str, int] = {}
    for d in debates:
        count[d.swap] = count.get(d.swap, 0) + 1
    for d in debates:
        if (d.proposition, d.opposition) == (opp, prop) and count[d.swap] == 1:
            return d.swap, d.motion
    return None, 0


def _least_argued(debates: Sequence[Pairing], prop: str, opp: str, n_motions: int) -> int:
    """The motion the two models have argued least (each, then together), the first on a
    tie: so that each model's debates cover the motions."""

    def key(m: int) -> tuple[int, int, int]:
        on = [d for d in debates if d.motion == m]
        each = sum((d.proposition in (prop, opp)) + (d.opposition in (prop, opp)) for d in on)
        both = sum({d.proposition, d.opposition} == {prop, opp} for d in on)
        return (each, both, m)

    return min(range(n_motions), key=key)
