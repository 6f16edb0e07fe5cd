"""Tournaments on scripted models through the real debates, engine, prompts and files:
the schedule, blind judging by outsiders, the report, resume and failures."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from gguf_samples import write_gguf
from moot.errors import MootError, UsageError
from moot.formats import get_format
from moot.formats.base import RunOptions
from moot.formats.oxford.schemas import OxfordParams
from moot.inference.choice import ChoiceRequest
from moot.inference.protocol import ChatRequest, Completion, OnText
from moot.inference.scripted import ScriptedModel
from moot.tournaments.executors import LocalExecutor
from moot.tournaments.judge import Ballot, decide
from moot.tournaments.plan import Motion, make_plan, read_motions, schedule
from moot.tournaments.report import build, write
from moot.tournaments.run import (
    DebateBegun,
    DebateDone,
    DebateFailed,
    InDebate,
    Tournament,
    TournamentEvent,
)

# Tournaments of placeholder model names: how a reference is checked is tested elsewhere.
pytestmark = pytest.mark.usefixtures("any_model_name")

OXFORD = get_format("oxford")
MOTIONS = [
    Motion(text="This House Believes That cats are better than dogs", language="en"),
    Motion(text="本院认为人工智能将是人类最后一项伟大发明", language="zh"),
]
LEVEL = {"strong": 3, "middling": 2, "weak": 1}


class Debater(ScriptedModel):
    """Speaks as itself, so a scripted judge can tell the sides apart; as a judge, gives
    the debate to the side whose speaker is stronger. Other structured steps get minimal
    valid replies. Every request is recorded."""

    def __init__(self, model_id: str, *, bad_ballots: bool = False) -> None:
        super().__init__(model_id=model_id, chooser=stronger)
        self.bad_ballots = bad_ballots

    def choose(self, request: ChoiceRequest) -> Any:
        if self.bad_ballots and request.options == ("A", "B", "draw"):
            raise MootError(f"{self.model_id} gave no reading of its ballot")
        return super().choose(request)

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        if request.reply_schema is None and "as a Point of Information" in (
            request.messages[-1].content
        ):
            self.queue(f"I am {self.model_id}: who pays for that [{len(self.requests)}]?")
        elif request.reply_schema is None:
            self.queue(
                f"I am {self.model_id}, and my case rests on evidence from many studies, "
                f"careful reasoning and examples everyone knows [{len(self.requests)}]"
            )
        return super().chat(request, on_text=on_text)


def stronger(request: ChoiceRequest) -> dict[str, float]:
    """A judge's probabilities that follow the speeches: most on the side (as shown, A or
    B) whose speaker is stronger, most on a draw where they are equal."""
    prompt = request.messages[-1].content
    marker = "Side B argued" if "Side B argued" in prompt else "B 方"
    if marker not in prompt:  # a debate's own judging step: no side is favoured
        return {str(o): 1.0 for o in request.options}
    first, second = prompt.split(marker, 1)
    level = {label: max((v for k, v in LEVEL.items() if f"I am {k}," in text), default=0)
             for label, text in (("A", first), ("B", second))}  # fmt: skip
    if level["A"] == level["B"]:
        return {"A": 0.05, "B": 0.05, "draw": 0.9}
    best = max(level, key=lambda s: level[s])
    return {best: 0.85, "draw": 0.05, ("B" if best == "A" else "A"): 0.1}


class Models:
    """One scripted model per reference, shared by every debate, as the pool shares them."""

    def __init__(self, **kw: Any) -> None:
        self.kw = kw
        self.made: dict[str, Debater] = {}

    def __call__(self, ref: str) -> Debater:
        if ref not in self.made:
            self.made[ref] = Debater(ref, **self.kw.get(ref, {}))
        return self.made[ref]

    def requests(self) -> int:
        return sum(len(m.requests) for m in self.made.values())


def oxford_plan(models: list[str], motions: list[Motion] = MOTIONS[:1], **kw: Any) -> Any:
    return make_plan(
        OXFORD,
        models,
        motions,
        params=OxfordParams(max_rounds=3),
        seed=kw.pop("seed", 11),
        options={"max_tokens": 40},
        **kw,
    )


def run(t: Tournament, models: Models) -> tuple[list[TournamentEvent], list[DebateFailed]]:
    events: list[TournamentEvent] = []
    failed = t.run(LocalExecutor(model_for=models), events.append)
    return events, failed


# -- the schedule --------------------------------------------------------------------------


def test_every_pair_debates_every_motion_twice_with_sides_swapped() -> None:
    models = ["a", "b", "c"]
    plan = schedule(models, 2, seed=5)
    assert len(plan) == 2 * 3 * 2  # motions × pairs × both orders
    assert len({p.id for p in plan}) == len(plan)
    for m in range(2):
        seats = Counter((p.proposition, p.opposition) for p in plan if p.motion == m)
        # every ordered pair once: each model argues both sides against each opponent
        assert seats == Counter((x, y) for x in models for y in models if x != y)
    by_swap: dict[str, list[Any]] = {}
    for p in plan:
        by_swap.setdefault(p.swap, []).append(p)
    assert len(by_swap) == 6
    for first, second in by_swap.values():
        assert (first.proposition, first.opposition) == (second.opposition, second.proposition)
        assert first.seed == second.seed  # a pair differs only in who sits where
    assert len({p.seed for p in plan}) == 6
    assert schedule(models, 2, seed=5) == plan  # reproducible
    assert schedule(models, 2, seed=6)[0].seed != plan[0].seed


def test_more_swap_pairs_repeat_each_pairing_with_its_own_seed() -> None:
    plan = schedule(["a", "b"], 1, seed=5, swaps=2)
    assert [(p.proposition, p.opposition) for p in plan] == [("a", "b"), ("b", "a")] * 2
    assert [p.swap for p in plan] == ["m1-1-2-1", "m1-1-2-1", "m1-1-2-2", "m1-1-2-2"]
    assert plan[0].seed == plan[1].seed != plan[2].seed == plan[3].seed
    assert len({p.id for p in plan}) == 4
    with pytest.raises(UsageError, match="--swaps"):
        oxford_plan(["a", "b"], swaps=0)


def test_a_judge_never_judges_a_debate_it_took_part_in_while_another_is_left() -> None:
    plan = schedule(["a", "b", "c"], 1, seed=1)  # the models judge each other
    assert len(plan) == 6
    for p in plan:
        assert p.judges == sorted({"a", "b", "c"} - {p.proposition, p.opposition})
        assert not p.self_judged
    two = schedule(["a", "b"], 1, seed=1)  # nobody else: both judge, and it is said
    assert len(two) == 2 and all(p.judges == ["a", "b"] and p.self_judged for p in two)
    panel = schedule(["a", "b", "c"], 1, seed=1, judges=["a", "x", "y"])
    ab = next(p for p in panel if {p.proposition, p.opposition} == {"a", "b"})
    bc = next(p for p in panel if {p.proposition, p.opposition} == {"b", "c"})
    assert ab.judges == ["x", "y"] and bc.judges == ["a", "x", "y"]


def test_two_spellings_of_one_model_count_as_the_same_judge() -> None:
    same = {"a": "A", "/models/a.gguf": "A", "b": "B", "c": "C"}
    plan = schedule(["a", "b"], 1, seed=1, judges=["/models/a.gguf", "c"], identity=same.get)
    assert len(plan) == 2 and all(p.judges == ["c"] for p in plan)
    with pytest.raises(UsageError, match="same model"):
        make_plan(OXFORD, ["a", "/models/a.gguf"], MOTIONS, params=OxfordParams(), seed=1,
                  identify=same.__getitem__)  # fmt: skip


def test_a_plan_needs_two_models_and_a_two_sided_format() -> None:
    with pytest.raises(UsageError, match="two or more"):
        oxford_plan(["a"])
    decision = get_format("decision")
    with pytest.raises(UsageError, match="no two opposing sides"):
        make_plan(decision, ["a", "b"], MOTIONS, params=OxfordParams(), seed=1)


def test_motions_file_one_a_line_worded_in_its_own_language(tmp_path: Path) -> None:
    path = tmp_path / "motions.txt"
    path.write_text("# ours\ncats are better than dogs\n\n  人工智能将是人类最后一项伟大发明 \n")
    motions = read_motions(path, OXFORD)
    assert motions == [
        Motion(text="This House Believes That cats are better than dogs", language="en"),
        Motion(text="本院认为人工智能将是人类最后一项伟大发明", language="zh"),
    ]
    (tmp_path / "empty.txt").write_text("\n# nothing\n")
    with pytest.raises(UsageError, match="holds no motion"):
        read_motions(tmp_path / "empty.txt", OXFORD)


def test_a_panel_decides_by_plurality_and_a_tie_is_a_draw() -> None:
    def b(winner: str, margin: str = "clear") -> Ballot:
        return Ballot(proposition_best="p", opposition_best="o", reasons="r",
                      winner=winner, margin=margin)  # type: ignore[arg-type]  # fmt: skip

    assert decide([b("proposition", "decisive")]) == ("proposition", "decisive")
    assert decide([b("proposition"), b("opposition")]) == ("draw", None)
    assert decide([b("opposition", "narrow"), b("opposition", "clear"), b("proposition")]) == (
        "opposition",
        "narrow",  # margins tied: the narrower
    )
    assert decide([b("proposition"), b("draw"), b("draw")]) == ("draw", None)


# -- running ---------------------------------------------------------------------------------


def test_a_tournament_runs_every_debate_blind_judged_by_outsiders(tmp_path: Path) -> None:
    names = ["weak", "strong", "middling"]
    t = Tournament.create(oxford_plan(names, MOTIONS), tmp_path / "t")
    models = Models()
    events, failed = run(t, models)
    assert failed == []
    done = [e for e in events if isinstance(e, DebateDone)]
    assert len(done) == len(t.plan.debates) == 12 and t.pending() == []
    for p in t.plan.debates:
        folder = t.debate_dir(p)
        data = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
        speakers = {x["role"]: x["model"] for x in data["turns"] if x["step"] == "speech"}
        assert speakers == {"proposition": p.proposition, "opposition": p.opposition}
        assert data["language"] == MOTIONS[p.motion].language
        assert (folder / "journal.jsonl").is_file() and (folder / "debate.md").is_file()
        verdict = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
        [judge] = {b["judge"] for b in verdict["ballots"]}
        assert judge not in (p.proposition, p.opposition)
        stronger = max((p.proposition, p.opposition), key=LEVEL.__getitem__)
        assert verdict["winner"] == ("proposition" if stronger == p.proposition else "opposition")
    # The judges were shown both sides' speeches in both orders, no filled-in answer to copy.
    # (The debates' own Completeness Judge reads its checklist too: yes/no, not a side.)
    ballots = [r for m in models.made.values() for r in m.choices if "A" in r.options]
    assert len(ballots) == 24 and {r.options for r in ballots} == {("A", "B", "draw")}
    for request in ballots:
        prompt = request.messages[-1].content
        assert prompt.count("evidence from many studies") >= 2
        assert '"winner":' not in prompt
        assert 'winner: "A"' in prompt or "winner：" in prompt
    verdicts = t.verdicts()
    report = build(t.plan, verdicts, samples=200, transcripts=t.transcripts(verdicts))
    assert [r.model for r in report.models] == ["strong", "middling", "weak"]
    assert [(r.wins, r.losses, r.draws) for r in report.models] == [(8, 0, 0), (4, 4, 0), (0, 8, 0)]
    assert report.side_bias.rate == 0.0 and report.side_bias.proposition_share == 0.5
    assert report.judge_agreement.panels == 0 and report.self_judged == 0
    # Every turn, the ballots' too, belongs to one of the ranked models, who judged each other.
    turns = sum(len(v.turns) for v in verdicts.values())
    for p in t.plan.debates:
        turns += len(json.loads((t.debate_dir(p) / "transcript.json").read_text())["turns"])
    assert sum(r.rule_keeping.turns for r in report.models) == turns and report.judges == []
    paths = write(report, t.folder)
    assert json.loads(paths[0].read_text())["models"][0]["model"] == "strong"
    assert paths[1].read_text().splitlines()[1].startswith("1,strong,")
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_challenge_format_seats_the_models_as_proposer_and_challenger(
    tmp_path: Path, moot_home: Path
) -> None:
    challenge = get_format("challenge")
    params = challenge.params(RunOptions(rounds=1))
    plan = make_plan(challenge, ["weak", "strong"], MOTIONS[:1], params=params, seed=3,
                     judges=["middling"])  # fmt: skip
    t = Tournament.create(plan, tmp_path / "t")
    _, failed = run(t, Models())
    assert failed == [] and len(t.plan.debates) == 2
    for p in t.plan.debates:
        data = json.loads((t.debate_dir(p) / "transcript.json").read_text(encoding="utf-8"))
        speakers = {x["role"]: x["model"] for x in data["turns"] if x["role"] != "judge"}
        assert speakers == {"proposer": p.proposition, "challenger": p.opposition}
        verdict = t.verdicts()[p.id]
        assert verdict.winner == ("proposition" if p.proposition == "strong" else "opposition")


def test_a_panel_of_two_self_judging_models_reports_their_agreement(tmp_path: Path) -> None:
    t = Tournament.create(oxford_plan(["weak", "strong"]), tmp_path / "t")
    run(t, Models())
    verdicts = t.verdicts()
    report = build(t.plan, verdicts, samples=50, transcripts=t.transcripts(verdicts))
    assert report.self_judged == 2
    assert report.judge_agreement.panels == 2
    assert report.judge_agreement.pairwise == 1.0  # both judges follow the same evidence
    assert report.models[0].model == "strong"


def test_resume_runs_only_what_did_not_finish(tmp_path: Path) -> None:
    t = Tournament.create(oxford_plan(["weak", "strong", "middling"]), tmp_path / "t")

    class Interrupting(Models):
        calls = 0

        def __call__(self, ref: str) -> Debater:
            model = super().__call__(ref)
            chat = model.chat

            def counted(request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
                Interrupting.calls += 1
                if Interrupting.calls == 75:  # a few turns into the third debate
                    raise KeyboardInterrupt
                return chat(request, on_text=on_text)

            model.chat = counted  # type: ignore[method-assign]
            return model

    with pytest.raises(KeyboardInterrupt):
        run(t, Interrupting())
    finished = t.verdicts()
    assert 0 < len(finished) < len(t.plan.debates)
    kept = {d: (t.debate_dir(p) / "verdict.json").read_bytes()
            for p in t.plan.debates if (d := p.id) in finished}  # fmt: skip
    pending = Tournament.open(t.folder).pending()
    journal = t.debate_dir(pending[0]) / "journal.jsonl"
    turns_before = [json.loads(x)["type"] for x in journal.read_text().splitlines()].count("turn")
    assert turns_before > 0  # the interrupted debate kept its finished turns

    models = Models()
    again = Tournament.open(t.folder)
    events, failed = run(again, models)
    assert failed == [] and again.pending() == []
    assert {e.pairing.id for e in events if isinstance(e, DebateDone)} == {p.id for p in pending}
    for d, data in kept.items():  # finished debates are left as they were
        assert (t.folder / "debates" / d / "verdict.json").read_bytes() == data
    expected = 0
    for p in pending:
        transcript = json.loads((t.debate_dir(p) / "transcript.json").read_text())
        expected += len(transcript["turns"])
    # Only the turns still missing were asked for: none of the kept ones again.
    assert models.requests() == expected - turns_before


def test_a_failed_debate_does_not_stop_the_others_and_a_resume_judges_it(
    tmp_path: Path,
) -> None:
    t = Tournament.create(oxford_plan(["weak", "strong", "middling"]), tmp_path / "t")
    # 'middling' judges the weak-strong debates and gives no valid ballot.
    events, failed = run(t, Models(middling={"bad_ballots": True}))
    assert {f.pairing.id for f in failed} == {
        p.id for p in t.plan.debates if p.judges == ["middling"]
    }
    assert all("no judge could read debate" in f.message for f in failed)
    assert all("gave no reading of its ballot" in f.message for f in failed)
    assert len([e for e in events if isinstance(e, DebateDone)]) == 4
    for f in failed:  # debated, only the judging is missing
        assert (t.debate_dir(f.pairing) / "transcript.json").is_file()
        assert not (t.debate_dir(f.pairing) / "verdict.json").exists()
    models = Models()
    _, failed_again = run(Tournament.open(t.folder), models)
    assert failed_again == [] and t.pending() == []
    # Only the judging was asked again: each debate's ballot, in both orders.
    assert [r for m in models.made.values() for r in m.requests] == []
    assert len([c for m in models.made.values() for c in m.choices]) == 4


def test_create_refuses_a_folder_that_holds_a_tournament(tmp_path: Path) -> None:
    Tournament.create(oxford_plan(["a", "b"]), tmp_path)
    with pytest.raises(UsageError, match="already holds a tournament"):
        Tournament.create(oxford_plan(["a", "b"]), tmp_path)
    with pytest.raises(UsageError, match="holds no tournament.json"):
        Tournament.open(tmp_path / "nothing")


# -- through the CLI, on scripted models ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--model", "a"], "two or more"),
        (["--model", "a", "--model", "b", "--format", "decision"], "no two opposing sides"),
        (["--model", "a", "--model", "b", "--executor", "spark"], "unknown executor"),
        (["--model", "a", "--model", "b", "--max-rounds", "2"], "--max-rounds"),
        (["--resume", "x", "--model", "a"], "--resume"),
    ],
)
def test_bad_input_is_one_line_with_a_hint_and_exit_2(
    tmp_path: Path, args: list[str], needle: str, cli: Cli
) -> None:
    (tmp_path / "m.txt").write_text("cats are better than dogs\n")
    proc = cli("tournament", "--motions", str(tmp_path / "m.txt"), "--dry-run", *args,
               home=tmp_path)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("error:") and needle in lines[0], proc.stderr
    assert lines[1].startswith("hint:") and "Traceback" not in proc.stderr


def test_a_dry_run_tournament_reports_and_resumes_to_nothing_left(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "m.txt").write_text("cats are better than dogs\n")
    out = tmp_path / "t"
    args = ["--motions", str(tmp_path / "m.txt"), "--max-rounds", "3", "--seed", "4"]
    proc = cli("tournament", "--model", "a", "--model", "b", "--dry-run", "--out", str(out),
               *args, home=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Tournament (oxford, 2 debates)" in proc.stdout and "side bias" in proc.stdout
    assert {p.name for p in out.iterdir()} >= {"ratings.json", "ratings.csv", "ratings.png"}
    # The length-controlled rating beside the raw one, and the length effect fitted with it.
    rated = json.loads((out / "ratings.json").read_text())
    assert all(isinstance(m["length_controlled"], float) for m in rated["models"])
    assert rated["models"] and set(rated["length_effect"]) == {"effect", "low", "high"}
    assert "length-ctl" in proc.stdout
    plan = json.loads((out / "tournament.json").read_text())
    assert [d["proposition"] for d in plan["debates"]] == ["a", "b"]
    stamp = (out / "debates" / plan["debates"][0]["id"] / "verdict.json").stat().st_mtime_ns
    again = cli("tournament", "--resume", str(out), home=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "2 of 2 debates already finished" in again.stdout
    assert (out / "debates" / plan["debates"][0]["id"] / "verdict.json").stat().st_mtime_ns == stamp


def test_a_quiet_tournament_prints_the_report_alone(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.events import Notice
    from moot.tournaments import run as tournament_run

    # Each debate warns once, and the first is said to fail too: what a run of real models
    # shows on the way; --quiet shows none of it on stdout, and the failure on stderr.
    played = tournament_run.Tournament.run

    def noisy(self: Tournament, executor: Any, emit: Any) -> Any:
        def show(event: Any) -> None:
            if isinstance(event, DebateBegun):
                emit(InDebate(event.pairing, Notice(level="warn", message="a turn was flagged")))
                if event.pairing.id.startswith("001"):
                    emit(DebateFailed(event.pairing, "it broke", hint="retry"))
            emit(event)

        return played(self, executor, show)

    monkeypatch.setattr(tournament_run.Tournament, "run", noisy)
    (tmp_path / "m.txt").write_text("cats are better than dogs\nthis house would ban homework\n")
    args = ["--model", "a", "--model", "b", "--dry-run", "--motions", str(tmp_path / "m.txt"),
            "--max-rounds", "3", "--seed", "4", "--bootstrap", "20"]  # fmt: skip
    loud = cli("tournament", *args, "--out", str(tmp_path / "loud"), home=tmp_path)
    assert loud.returncode == 0, loud.stderr
    assert loud.stdout.count("a turn was flagged") == 4 and loud.stdout.count("✓ 00") == 4
    assert "✗ 001" in loud.stdout

    quiet = cli("tournament", *args, "--out", str(tmp_path / "q"), "--quiet", home=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    lines = quiet.stdout.splitlines()
    assert "Tournament (oxford, 4 debates)" in lines[0] and "side bias" in quiet.stdout
    assert "a turn was flagged" not in quiet.stdout
    assert not any(line.startswith(("✓", "✗")) for line in lines)
    assert quiet.stderr.count("✗ 001") == 1 and "it broke (retry)" in quiet.stderr
    assert "saved: " in quiet.stdout and "ratings.json" in quiet.stdout


@pytest.mark.real  # a real local Ray instance
def test_a_dry_run_on_a_local_ray_instance_brings_every_debate_home(
    tmp_path: Path, cli: Cli
) -> None:
    (tmp_path / "m.txt").write_text("cats are better than dogs\n")
    out = tmp_path / "t"
    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    a, b, c = (str(write_gguf(tmp_path / f"{n}.gguf", chat_template=template)) for n in "abc")
    # A process of its own: Ray starts its workers and is shut down with it.
    proc = cli.subprocess("tournament", "--model", a, "--model", b, "--model", c,
                          "--dry-run", "--executor", "ray", "--motions", str(tmp_path / "m.txt"),
                          "--max-rounds", "3", "--out", str(out), home=tmp_path, clean=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    plan = json.loads((out / "tournament.json").read_text())
    assert len(plan["debates"]) == 6
    for debate in plan["debates"]:  # the workers' files, written here by the driver
        folder = out / "debates" / debate["id"]
        names = {"journal.jsonl", "transcript.json", "debate.md", "verdict.json"}
        assert {p.name for p in folder.iterdir()} == names
        verdict = json.loads((folder / "verdict.json").read_text())
        assert [b["judge"] for b in verdict["ballots"]] == debate["judges"]
    assert json.loads((out / "ratings.json").read_text())["debates_decided"] == 6


class FakeRay:
    """Stands in for the ray module: records how it was started, offers no GPU."""

    def __init__(self) -> None:
        self.inits: list[dict[str, Any]] = []
        self.shut = False

    def init(self, **kw: Any) -> None:
        self.inits.append(kw)

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2.0}

    def shutdown(self) -> None:
        self.shut = True


def test_the_ray_executor_starts_a_quiet_loopback_ray_or_joins_the_given_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.tournaments.ray import RayExecutor

    fake = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    for name in ("RAY_ADDRESS", "RAY_USAGE_STATS_ENABLED", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"):
        monkeypatch.setenv(name, "")  # so that the test's own setting is undone after it
        monkeypatch.delenv(name)
    plan = oxford_plan(["a", "b"])
    plan.options["gpu_layers"] = -1
    t = Tournament.create(plan, tmp_path / "t")
    with pytest.raises(UsageError, match="has none"):  # a GPU asked for and none there
        RayExecutor().run(t, t.pending(), lambda e: None)
    assert fake.inits[0]["address"] == "local" and fake.inits[0]["include_dashboard"] is False
    assert fake.shut
    assert os.environ["RAY_USAGE_STATS_ENABLED"] == "0"  # no usage report leaves
    assert os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"  # loopback only
    with socket.socket() as cluster:  # where the cluster's address answers
        cluster.bind(("127.0.0.1", 0))
        cluster.listen()
        address = f"127.0.0.1:{cluster.getsockname()[1]}"
        monkeypatch.setenv("RAY_ADDRESS", address)
        with pytest.raises(UsageError):
            RayExecutor().run(t, t.pending(), lambda e: None)
    assert fake.inits[1]["address"] == address
