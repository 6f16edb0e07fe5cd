"""Several debates of a tournament at once (`--parallel N`): they overlap, every verdict is
saved, a resume finishes what an interrupted run left, and each transcript says how it was
decoded. On scripted models, in threads and in worker processes."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import REAL_HOME, Cli
from moot import config
from moot.errors import UsageError
from moot.inference.protocol import ChatRequest, Completion, OnText
from moot.tournaments.executors import LocalExecutor, make_executor
from moot.tournaments.parallel import ParallelExecutor
from moot.tournaments.run import (
    DebateBegun,
    DebateDone,
    DebateFailed,
    Tournament,
    TournamentEvent,
)
from test_tournament import MOTIONS, Debater, Models, oxford_plan

pytestmark = pytest.mark.usefixtures("any_model_name")


class PerThread:
    """Scripted models made afresh in each thread (a scripted model is not shared between
    threads); each thread's first call waits until TOGETHER threads have made theirs:
    debates played one after another never get past it."""

    def __init__(self, together: int) -> None:
        self.barrier = threading.Barrier(together, timeout=20)
        self.local = threading.local()
        self.models: list[Models] = []
        self.lock = threading.Lock()

    def __call__(self, ref: str) -> Debater:
        if not hasattr(self.local, "models"):
            self.local.models = Models()
            with self.lock:
                self.models.append(self.local.models)
            self.local.waited = False
        model = self.local.models(ref)
        chat, local, barrier = model.chat, self.local, self.barrier

        def first_waits(request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
            if not local.waited:
                local.waited = True
                barrier.wait()
            return chat(request, on_text=on_text)

        model.chat = first_waits  # type: ignore[method-assign]
        return model


def test_two_debates_run_at_once_and_every_verdict_is_saved(tmp_path: Path) -> None:
    plan = oxford_plan(["weak", "strong"], MOTIONS)  # 4 debates
    t = Tournament.create(plan, tmp_path / "t")
    events: list[TournamentEvent] = []
    failed = t.run(ParallelExecutor(2, model_for=PerThread(2)), events.append)
    assert failed == []
    kinds = [type(e).__name__ for e in events if type(e).__name__ != "InDebate"]
    # Two debates begin before the first ends, and every debate begins once and ends once.
    assert kinds[:2] == ["DebateBegun", "DebateBegun"]
    done = [e for e in events if isinstance(e, DebateDone)]
    assert sorted(e.pairing.id for e in done) == sorted(p.id for p in plan.debates)
    assert Tournament.open(t.folder).pending() == []
    for e in done:  # on disk as reported, and the stronger side wins every one
        saved = json.loads((t.debate_dir(e.pairing) / "verdict.json").read_text())
        assert saved["winner"] == e.verdict.winner
        strong = "proposition" if e.pairing.proposition == "strong" else "opposition"
        assert e.verdict.winner == strong
        transcript = json.loads((t.debate_dir(e.pairing) / "transcript.json").read_text())
        assert "decoding" not in transcript["params"]  # in threads: nothing decodes here


def test_a_resume_with_another_parallel_finishes_an_interrupted_run(tmp_path: Path) -> None:
    t = Tournament.create(oxford_plan(["weak", "strong", "middling"]), tmp_path / "t")  # 6

    def stop_after_two(event: TournamentEvent) -> None:
        if isinstance(event, DebateDone) and len(t.verdicts()) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        t.run(ParallelExecutor(2, model_for=PerThread(2)), stop_after_two)
    kept = {p.id: (t.debate_dir(p) / "verdict.json").read_bytes() for p in t.plan.debates
            if (t.debate_dir(p) / "verdict.json").exists()}  # fmt: skip
    assert 2 <= len(kept) < 6  # the debate running beside the second ended first
    again = Tournament.open(t.folder)
    events: list[TournamentEvent] = []
    assert again.run(ParallelExecutor(3, model_for=PerThread(1)), events.append) == []
    begun = {e.pairing.id for e in events if isinstance(e, DebateBegun)}
    assert begun == {p.id for p in t.plan.debates} - set(kept)  # only what was left
    assert again.pending() == []
    for d, data in kept.items():  # finished debates are left as they were
        assert (t.folder / "debates" / d / "verdict.json").read_bytes() == data


def test_worker_processes_play_a_dry_run_and_record_their_decoding(tmp_path: Path) -> None:
    plan = oxford_plan(["a", "b"])
    plan = plan.model_copy(update={"options": {**plan.options, "dry_run": True}})
    t = Tournament.create(plan, tmp_path / "t")
    events: list[TournamentEvent] = []
    executor = ParallelExecutor(2)
    executor._in_processes(t, list(t.plan.debates), events.append, 2)
    assert not [e for e in events if isinstance(e, DebateFailed)]
    assert len([e for e in events if isinstance(e, DebateDone)]) == 2
    threads = max(1, config.physical_cores() // 2)
    for p in t.plan.debates:
        transcript = json.loads((t.debate_dir(p) / "transcript.json").read_text())
        assert transcript["params"]["decoding"] == {"parallel": 2, "threads": threads}
    # A sequential run records nothing of the kind: its transcripts are as before.
    alone = Tournament.create(plan, tmp_path / "alone")
    alone.run(LocalExecutor(), lambda e: None)
    transcript = json.loads((alone.debate_dir(plan.debates[0]) / "transcript.json").read_text())
    assert "decoding" not in transcript["params"]


def test_ctrl_c_ends_the_worker_processes_and_a_resume_finishes(tmp_path: Path) -> None:
    import multiprocessing

    plan = oxford_plan(["a", "b", "c"])  # 6 debates
    plan = plan.model_copy(update={"options": {**plan.options, "dry_run": True}})
    t = Tournament.create(plan, tmp_path / "t")

    def interrupt(event: TournamentEvent) -> None:
        if isinstance(event, DebateDone):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ParallelExecutor(2)._in_processes(t, list(plan.debates), interrupt, 2)
    assert multiprocessing.active_children() == []  # no worker left running
    left = Tournament.open(t.folder).pending()
    assert 0 < len(left) < 6
    events: list[TournamentEvent] = []
    assert Tournament.open(t.folder).run(LocalExecutor(), events.append) == []
    assert {e.pairing.id for e in events if isinstance(e, DebateDone)} == {p.id for p in left}


def test_the_plan_never_records_how_many_ran_at_once(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "m.txt").write_text("cats are better than dogs\n")
    out = tmp_path / "t"
    proc = cli("tournament", "--model", "a", "--model", "b", "--dry-run", "--out", str(out),
               "--motions", str(tmp_path / "m.txt"), "--parallel", "2", home=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "parallel" not in (out / "tournament.json").read_text()
    assert "decoding" not in (out / "tournament.json").read_text()
    again = cli("tournament", "--resume", str(out), "--parallel", "3", home=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "2 of 2 debates already finished" in again.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--parallel", "0"], "--parallel 0 is not allowed"),
        (["--parallel", "10000"], "--parallel 10000 is not allowed"),
        (["--parallel", "2", "--executor", "ray"], "--parallel applies only to --executor local"),
        (["--parallel", "2", "--schedule", "adaptive"], "one debate at a time"),
        (["--batch"], "--batch decodes debates played at once together"),
        (["--parallel", "1", "--batch"], "--batch decodes debates played at once together"),
        (["--parallel", "2", "--batch", "--executor", "ray"], "only to --executor local"),
    ],
)
def test_bad_parallel_is_one_line_with_a_hint_and_exit_2(
    tmp_path: Path, args: list[str], needle: str, cli: Cli
) -> None:
    (tmp_path / "m.txt").write_text("cats are better than dogs\n")
    proc = cli("tournament", "--motions", str(tmp_path / "m.txt"), "--dry-run", "--model", "a",
               "--model", "b", "--out", str(tmp_path / "t"), *args, home=tmp_path)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("error:") and needle in lines[0], proc.stderr
    assert lines[1].startswith("hint:")
    assert not (tmp_path / "t").exists()  # refused before anything was written


def test_the_library_checks_parallel_as_the_command_does() -> None:
    import moot

    with pytest.raises(UsageError, match="parallel=0 is not allowed"):
        moot.tournament(["a", "b"], ["cats are better than dogs"], parallel=0)
    with pytest.raises(UsageError, match="one debate at a time"):
        moot.tournament(["a", "b"], ["x y z"], parallel=2, schedule="adaptive")
    with pytest.raises(UsageError, match="batch=True decodes debates played at once together"):
        moot.tournament(["a", "b"], ["cats are better than dogs"], batch=True)
    assert isinstance(make_executor("local", None, 1), LocalExecutor)
    assert isinstance(make_executor("local", None, 4), ParallelExecutor)
    assert make_executor("local", None, 2, batch=True).batch  # type: ignore[attr-defined]


def two_challenge_debates(tmp_path: Path, *extra: str) -> tuple[Any, Path]:
    """A real two-model challenge tournament of one swap pair, two debates at once (and
    EXTRA), audited: it succeeds and its own process opens no connection."""
    from test_offline import run_audited

    motions = tmp_path / "motions.txt"
    motions.write_text("remote work is better than office work\n", encoding="utf-8")
    out = tmp_path / "t"
    args = ["tournament", "--model", "smollm2-135m", "--model", "gemma3-270m", "--motions",
            str(motions), "--out", str(out), "--format", "challenge", "--rounds", "1",
            "--max-tokens", "16", "--seed", "7", "--controls", "0", "--bootstrap", "0",
            "--parallel", "2", *extra]  # fmt: skip
    proc, connections = run_audited(args, tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert connections == []  # the tournament's own process opened none
    return proc, out


@pytest.mark.real
def test_two_real_debates_at_once_each_in_a_worker_of_its_own(tmp_path: Path, cli: Cli) -> None:
    """Two challenge debates, each in a worker of its own: each transcript says how it was
    decoded, and `moot replay` of one, on those threads, says the same words."""
    proc, out = two_challenge_debates(tmp_path)
    plan = json.loads((out / "tournament.json").read_text())
    assert len(plan["debates"]) == 2 and "decoding" not in plan["options"]
    threads = max(1, config.physical_cores() // 2)
    for debate in plan["debates"]:
        folder = out / "debates" / debate["id"]
        transcript = json.loads((folder / "transcript.json").read_text())
        assert transcript["params"]["decoding"] == {"parallel": 2, "threads": threads}
        sides = [t["text"] for t in transcript["turns"] if t["role"] in ("proposer", "challenger")]
        assert len(sides) == 2 and all(sides)  # an opening, a response
        verdict = json.loads((folder / "verdict.json").read_text())
        assert verdict["winner"] in ("proposition", "opposition", "draw", "undecided")
    assert "Tournament (challenge, 2 debates)" in proc.stdout

    first = out / "debates" / plan["debates"][0]["id"] / "transcript.json"
    replay = cli.subprocess("replay", str(first), env={"MOOT_HOME": str(REAL_HOME)}, timeout=600)
    assert replay.returncode == 0, replay.stderr[-3000:]
    said = " ".join(replay.stdout.split())
    turns = len(json.loads(first.read_text())["turns"])
    # On the threads it was decoded on, in a process of its own, as in its worker: the same
    # words (a sequential run decodes on every core, and so may choose others).
    assert f"all {turns} turns match" in said, said


@pytest.mark.real
def test_two_real_debates_decoded_together_in_one_batch(tmp_path: Path, cli: Cli) -> None:
    """Two challenge debates in this process, each step of a model one llama.cpp batch of
    both debates' tokens (`--batch`): every turn is spoken, each transcript records how it
    was decoded, nothing reaches beyond the machine, and a journal cut after a turn resumes
    with its finished turns word for word."""
    _, out = two_challenge_debates(tmp_path, "--batch")
    plan = json.loads((out / "tournament.json").read_text())
    assert len(plan["debates"]) == 2 and "decoding" not in plan["options"]
    cores = config.physical_cores()
    folders = [out / "debates" / debate["id"] for debate in plan["debates"]]
    for folder in folders:
        transcript = json.loads((folder / "transcript.json").read_text())
        decoding = transcript["params"]["decoding"]
        assert decoding == {"parallel": 2, "threads": cores, "batch": True}
        sides = [t["text"] for t in transcript["turns"] if t["role"] in ("proposer", "challenger")]
        assert len(sides) == 2 and all(s.strip() for s in sides)  # an opening, a response
        verdict = json.loads((folder / "verdict.json").read_text())
        assert verdict["winner"] in ("proposition", "opposition", "draw", "undecided")

    # The journal of a batched debate, cut after its second turn, resumes from there.
    saved = json.loads((folders[0] / "transcript.json").read_text())["turns"]
    cut = tmp_path / "cut"
    cut.mkdir()
    lines = (folders[0] / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    kept, turns = [], 0
    for line in lines:
        turns += json.loads(line).get("type") == "turn"
        if turns > 2:
            break
        kept.append(line)
    (cut / "journal.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    resumed = cli.subprocess("resume", str(cut), "--quiet", env={"MOOT_HOME": str(REAL_HOME)},
                             timeout=600)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    again = json.loads((cut / "transcript.json").read_text())
    assert again["params"]["decoding"] == decoding  # still says how its turns were decoded
    assert [t["text"] for t in again["turns"][:2]] == [t["text"] for t in saved[:2]]
    assert len(again["turns"]) == len(saved)


# -- replaying a debate that was decoded beside others --------------------------------------


@pytest.fixture(scope="module")
def decoded_beside_others(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A saved dry-run debate whose record says it was decoded two at a time, one thread."""
    root = tmp_path_factory.mktemp("replay")
    done = Cli()("run", "cats are better than dogs", "--dry-run", "--seed", "5", "--quiet",
                 "--max-rounds", "3", "--out", str(root / "d"), home=root / "home")  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads((root / "d" / "transcript.json").read_text())
    data["params"]["decoding"] = {"parallel": 2, "threads": 1}
    return data


def replayed(data: dict[str, Any], tmp_path: Path, cli: Cli) -> Any:
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(data))
    return cli("replay", str(path), home=tmp_path / "home")


def test_a_replay_of_a_debate_decoded_beside_others_matches_it(
    decoded_beside_others: dict[str, Any], tmp_path: Path, cli: Cli
) -> None:
    done = replayed(decoded_beside_others, tmp_path, cli)
    assert done.returncode == 0, done.stderr
    assert "turns match" in done.stdout and "note:" not in done.stdout


def test_where_its_words_differ_the_replay_explains_instead_of_failing(
    decoded_beside_others: dict[str, Any], tmp_path: Path, cli: Cli
) -> None:
    data = copy.deepcopy(decoded_beside_others)
    data["turns"][2]["text"] = "words another decoding chose"
    done = replayed(data, tmp_path, cli)
    assert done.returncode == 0, done.stderr
    assert "turn 2 differs" in done.stdout
    note = " ".join(done.stdout.split())
    assert "decoded beside 1 other(s)" in note and "on 1 thread(s)" in note
    # The same difference in a debate decoded alone is a failed replay, as before.
    del data["params"]["decoding"]
    alone = replayed(data, tmp_path, cli)
    assert alone.returncode == 1 and "turn 2 differs" in alone.stdout
    assert "note:" not in alone.stdout


def test_a_batched_debate_whose_words_differ_is_explained_as_batched(
    decoded_beside_others: dict[str, Any], tmp_path: Path, cli: Cli
) -> None:
    data = copy.deepcopy(decoded_beside_others)
    data["params"]["decoding"] = {"parallel": 3, "threads": 2, "batch": True}
    data["turns"][2]["text"] = "words another batch chose"
    done = replayed(data, tmp_path, cli)
    assert done.returncode == 0, done.stderr
    note = " ".join(done.stdout.split())
    assert "turn 2 differs" in note
    assert "together with up to 2 other(s)" in note and "--parallel 3 --batch" in note
    assert "in a process of its own" not in note  # not the note of a worker process's debate


@pytest.mark.parametrize(
    ("decoding", "says"),
    [({"parallel": 1, "threads": 1}, "params.decoding"), ("2", "params.decoding"),
     ({"parallel": 2, "threads": "1"}, "params.decoding")],
)  # fmt: skip
def test_a_replay_refuses_a_decoding_record_that_is_not_one(
    decoded_beside_others: dict[str, Any], tmp_path: Path, cli: Cli, decoding: Any, says: str
) -> None:
    data = copy.deepcopy(decoded_beside_others)
    data["params"]["decoding"] = decoding
    done = replayed(data, tmp_path, cli)
    assert done.returncode == 2, done.stdout
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error:") and says in lines[0] and "Traceback" not in done.stderr
