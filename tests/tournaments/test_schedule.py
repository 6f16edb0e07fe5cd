"""The adaptive schedule: its choices on made-up results, its simulation against the
round-robin, an adaptive tournament interrupted and resumed on scripted models, and the
command line's refusals."""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from conftest import REPO, Cli
from moot.errors import UsageError
from moot.events import TurnStarted
from moot.tournaments import adaptive, ratings
from moot.tournaments.executors import LocalExecutor
from moot.tournaments.run import InDebate, Tournament, TournamentEvent
from test_tournament import MOTIONS, Models, oxford_plan

pytestmark = pytest.mark.usefixtures("any_model_name")

BENCH = REPO / "benchmarks" / "bench_schedule.py"


def bench() -> ModuleType:
    """benchmarks/bench_schedule.py, loaded from its file."""
    spec = importlib.util.spec_from_file_location("bench_schedule", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def wins(winner: int, loser: int, times: int) -> list[adaptive.Result]:
    """WINNER beats LOSER TIMES times, sides alternating."""
    return [(winner, loser, 1.0) if t % 2 == 0 else (loser, winner, 0.0) for t in range(times)]


# -- the scheduler's choices ------------------------------------------------------------------


def test_the_fit_is_the_reports_bradley_terry_estimate() -> None:
    rng = np.random.default_rng(3)
    results = [(int(p), int(o), float(rng.random() < 0.6)) for p, o in rng.integers(0, 5, (80, 2))]
    results = [r for r in results if r[0] != r[1]] + [(0, 1, 0.5)]
    names = [str(i) for i in range(5)]
    outcome = {1.0: "proposition", 0.0: "opposition", 0.5: "draw"}
    games = [ratings.Game(str(p), str(o), outcome[s]) for p, o, s in results]
    expected = ratings.bradley_terry(*ratings.tally(names, games))
    s = adaptive.standing(5, results)
    assert np.allclose(s.strength, expected, atol=1e-6)
    assert np.all(s.low < s.strength) and np.all(s.strength < s.high)


def test_the_pair_whose_intervals_overlap_most_debates_next() -> None:
    # 0 clearly above 1, 1 clearly above 2; 2 and 3 split their two debates: only 2 and 3
    # are in doubt.
    results = wins(0, 1, 12) + wins(1, 2, 12) + wins(0, 2, 4) + [(2, 3, 1.0), (3, 2, 1.0)]
    results += wins(1, 3, 4)
    assert adaptive.next_pair(4, results) == (2, 3)
    # Once 2 has beaten 3 often enough, the doubt moves elsewhere, never to a settled pair.
    settled = results + wins(2, 3, 30)
    assert adaptive.next_pair(4, settled) not in ((2, 3), (0, 3))


def test_it_stops_once_adjacent_models_intervals_separate() -> None:
    results = wins(0, 1, 60) + wins(1, 2, 60) + wins(0, 2, 60)
    s = adaptive.standing(3, results)
    assert s.low[0] > s.high[1] and s.low[1] > s.high[2]
    assert adaptive.next_pair(3, results) is None
    # Still close after fewer debates: it goes on.
    assert adaptive.next_pair(3, wins(0, 1, 3) + wins(1, 2, 3)) is not None


def test_sides_are_balanced() -> None:
    # 0 has held the proposition three times more than the opposition: it opposes now.
    assert adaptive.seats(0, 1, wins(0, 2, 1) * 3) == (1, 0)
    assert adaptive.seats(1, 0, wins(0, 2, 1) * 3) == (1, 0)
    # Even: the two sit the other way round from their last meeting; first meeting: as asked.
    assert adaptive.seats(0, 1, [(0, 1, 1.0)]) == (1, 0)
    assert adaptive.seats(0, 1, [(0, 1, 1.0), (1, 0, 1.0), (1, 0, 0.0), (0, 1, 0.0)]) == (1, 0)
    assert adaptive.seats(2, 3, []) == (2, 3)
    # Over a whole simulated tournament no model leans to one side by more than two debates.
    sim = bench()
    rng = np.random.default_rng(0)
    truth = sim.STRENGTHS
    results = [(p, o, sim.debate(truth, 0.9, rng, p, o)) for p, o in adaptive.opening(6)]
    for _ in range(150):
        pair = adaptive.next_pair(6, results)
        assert pair is not None
        p, o = adaptive.seats(*pair, results)
        results.append((p, o, sim.debate(truth, 0.9, rng, p, o)))
        lean = Counter(p for p, _, _ in results)
        lean.subtract(Counter(o for _, o, _ in results))
        assert max(abs(v) for v in lean.values()) <= 2


def test_the_opening_is_a_cycle_each_model_once_on_each_side() -> None:
    assert adaptive.opening(2) == [(0, 1), (1, 0)]
    assert adaptive.opening(4) == [(0, 1), (1, 2), (2, 3), (3, 0)]


def test_the_plan_opens_with_a_cycle_and_grows_within_its_budget() -> None:
    plan = adaptive.adapt(oxford_plan(["a", "b", "c"], MOTIONS), budget=5)
    assert plan.schedule == "adaptive" and plan.budget == 5
    assert [(p.proposition, p.opposition) for p in plan.debates] == [
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
    ]
    assert [p.motion for p in plan.debates] == [0, 1, 0]  # b argues both motions
    assert all(p.judges == sorted({"a", "b", "c"} - {p.proposition, p.opposition})
               for p in plan.debates)  # fmt: skip
    winners = {p.id: "proposition" for p in plan.debates}
    nxt = adaptive.next_pairing(plan, winners)
    assert nxt is not None and nxt.id.startswith("004-")
    full = plan.model_copy(update={"debates": [*plan.debates, nxt, nxt.model_copy()]})
    assert adaptive.next_pairing(full, winners) is None  # the budget is spent
    # Its default budget is the round-robin's size.
    assert adaptive.adapt(oxford_plan(["a", "b", "c"], MOTIONS)).budget == 12
    assert oxford_plan(["a", "b", "c"], MOTIONS).budget is None


def test_a_pair_meeting_again_the_other_way_round_completes_its_swap_pair() -> None:
    plan = adaptive.adapt(oxford_plan(["a", "b"], MOTIONS), budget=4)
    first, second = plan.debates
    assert (second.proposition, second.opposition) == (first.opposition, first.proposition)
    assert second.swap == first.swap and second.seed == first.seed


@pytest.mark.parametrize(
    ("schedule", "budget", "needle"),
    [
        ("swiss", None, "unknown schedule 'swiss'"),
        ("adaptive", 2, "--budget 2 is below the number of models (3)"),
        ("round-robin", 6, "--budget applies only to --schedule adaptive"),
        ("adaptive", 10_001, "over the limit"),
    ],
)
def test_bad_schedules_and_budgets_are_refused(schedule: str, budget: int, needle: str) -> None:
    with pytest.raises(UsageError, match=re.escape(needle)):
        adaptive.check_schedule(schedule, budget, 3)


# -- the simulation ---------------------------------------------------------------------------


def test_kendalls_tau() -> None:
    sim = bench()
    assert sim.kendall_tau([3, 2, 1], [30, 20, 10]) == 1.0
    assert sim.kendall_tau([1, 2, 3], [30, 20, 10]) == -1.0
    assert sim.kendall_tau([2, 3, 1], [30, 20, 10]) == pytest.approx(1 / 3)
    assert sim.needed([30, 60, 90], [0.5, 0.8, 0.9], 0.8) == 60
    assert sim.needed([30, 60], [0.5, 0.7], 0.8) is None


def test_adaptive_reaches_the_true_order_in_at_most_60_percent_of_round_robins_debates() -> None:
    sim = bench()
    found = sim.simulate(trials=24, rounds=8, seed=7)
    assert found["round_robin_needs"] is not None and found["adaptive_needs"] is not None
    assert found["ratio"] <= 0.6, found
    # Both played the same tournaments' worth of debates.
    assert list(found["round_robin_in_order"]) == list(found["adaptive_in_order"])


# -- a tournament -------------------------------------------------------------------------------


def _plan() -> Any:
    return adaptive.adapt(oxford_plan(["weak", "strong", "middling"], MOTIONS), budget=7)


def _seats(t: Tournament) -> list[tuple[str, str, str, int, int]]:
    return [(p.id, p.proposition, p.opposition, p.motion, p.seed) for p in t.plan.debates]


def test_an_adaptive_tournament_resumes_to_the_same_debates(tmp_path: Path) -> None:
    straight = Tournament.create(_plan(), tmp_path / "straight")
    assert straight.run(LocalExecutor(model_for=Models()), lambda e: None) == []
    assert len(straight.plan.debates) == 7  # the opening's 3, then 4 chosen
    on_disk = json.loads((straight.folder / "tournament.json").read_text())
    assert len(on_disk["debates"]) == 7 and on_disk["schedule"] == "adaptive"

    # Interrupted in the fifth debate's third turn.
    t = Tournament.create(_plan(), tmp_path / "t")
    turns = 0

    def stop(event: TournamentEvent) -> None:
        nonlocal turns
        if isinstance(event, InDebate) and event.pairing.id.startswith("005-"):
            turns += isinstance(event.event, TurnStarted)
            if turns == 3:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        t.run(LocalExecutor(model_for=Models()), stop)
    again = Tournament.open(t.folder)
    assert len(again.plan.debates) == 5 and [p.id[:3] for p in again.pending()] == ["005"]
    assert again.run(LocalExecutor(model_for=Models()), lambda e: None) == []
    assert _seats(again) == _seats(straight)
    winners = {k: v.winner for k, v in again.verdicts().items()}
    assert winners == {k: v.winner for k, v in straight.verdicts().items()}
    # Nothing is left: a further resume plays nothing.
    played: list[TournamentEvent] = []
    Tournament.open(t.folder).run(LocalExecutor(model_for=Models()), played.append)
    assert played == []


def test_a_failed_debate_stops_the_schedule_until_a_resume_retries_it(tmp_path: Path) -> None:
    t = Tournament.create(_plan(), tmp_path / "t")
    # "strong" judges only the opening's third debate, and its ballots are not JSON.
    failed = t.run(LocalExecutor(model_for=Models(strong={"bad_ballots": True})), lambda e: None)
    assert [f.pairing.id[:3] for f in failed] == ["003"]
    assert len(Tournament.open(t.folder).plan.debates) == 3  # nothing chosen after it
    again = Tournament.open(t.folder)
    assert again.run(LocalExecutor(model_for=Models()), lambda e: None) == []
    assert len(again.plan.debates) == 7 and again.pending() == []


def test_an_adaptive_tournament_from_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import moot

    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))  # nothing of the user's own
    done = moot.tournament(
        ["a", "b", "c"],
        ["cats are better than dogs"],
        seed=4,
        max_rounds=3,
        run={"dry_run": True},
        bootstrap=0,
        schedule="adaptive",
        budget=4,
        out=tmp_path / "t",
    )
    assert done.failed == [] and done.report.debates_decided == 4
    assert done.report.schedule == "adaptive" and done.report.budget == 4
    with pytest.raises(UsageError, match="below the number of models"):
        moot.tournament(["a", "b", "c"], ["x"], schedule="adaptive", budget=2)
    with pytest.raises(UsageError, match="its plan fixes budget"):
        moot.tournament(resume=done.folder, budget=9)


# -- the command line ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--schedule", "swiss"], "unknown schedule 'swiss'"),
        (["--schedule", "adaptive", "--budget", "2"], "--budget 2 is below the number of models"),
        (["--schedule", "adaptive", "--budget", "-1"], "--budget -1 is below"),
        (["--budget", "5"], "--budget applies only to --schedule adaptive"),
        (["--schedule", "adaptive", "--executor", "ray"], "runs on --executor local"),
        (["--resume", "x", "--budget", "9"], "its plan fixes --budget"),
    ],
)
def test_bad_schedule_options_are_one_line_and_exit_2(
    tmp_path: Path, args: list[str], needle: str, cli: Cli
) -> None:
    (tmp_path / "m.txt").write_text("cats are better than dogs\n")
    proc = cli("tournament", "--motions", str(tmp_path / "m.txt"), "--dry-run",
               "--model", "a", "--model", "b", "--model", "c", *args, home=tmp_path)  # fmt: skip
    if args[0] == "--resume":  # the plan's own options are refused beside --resume
        proc = cli("tournament", *args, home=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("error:") and needle in lines[0], proc.stderr
    assert lines[1].startswith("hint:") and "Traceback" not in proc.stderr


def test_a_dry_run_adaptive_tournament_says_where_it_stopped(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "m.txt").write_text("cats are better than dogs\n")
    out = tmp_path / "t"
    proc = cli("tournament", "--model", "a", "--model", "b", "--model", "c", "--dry-run",
               "--motions", str(tmp_path / "m.txt"), "--max-rounds", "3", "--seed", "4",
               "--schedule", "adaptive", "--budget", "4", "--out", str(out),
               home=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "adaptive schedule: 4 of at most 4 debates" in proc.stdout
    report = json.loads((out / "ratings.json").read_text())
    assert report["schedule"] == "adaptive" and report["budget"] == 4
    assert report["debates_decided"] == 4
    # Its plan holds the schedule: resumed, it still plays on this machine only.
    again = cli("tournament", "--resume", str(out), "--executor", "ray", home=tmp_path)
    assert again.returncode == 2 and "runs on --executor local" in again.stderr


def test_an_adaptive_plan_without_a_budget_is_refused(tmp_path: Path) -> None:
    t = Tournament.create(adaptive.adapt(oxford_plan(["a", "b", "c"]), budget=4), tmp_path / "t")
    data = json.loads((t.folder / "tournament.json").read_text())
    data["budget"] = None
    (t.folder / "tournament.json").write_text(json.dumps(data))
    with pytest.raises(UsageError, match="budget: fewer debates than the plan's models"):
        Tournament.open(t.folder)
