"""Rule-keeping in a tournament's report: each model's turns within their length limit, cut
to fit, flagged and failed, counted over every seat it held, beside its rating in the
printed table, ratings.json, ratings.csv and moot.tournament's result."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import moot
from conftest import Cli
from moot.inference.protocol import ChatRequest, Completion, OnText, sanitize
from moot.inference.scripted import ScriptedModel
from moot.records.transcript import Transcript, Turn
from moot.tournaments.judge import Ballot, JudgeBallot, Verdict
from moot.tournaments.report import build
from moot.tournaments.rules import RuleKeeping, debate_turns, rule_keeping
from moot.tournaments.run import Tournament
from test_tournament import Debater, Models, oxford_plan, run

pytestmark = pytest.mark.usefixtures("any_model_name")


def turn(model: str, role: str = "proposition", *, round: int | None = 1, **kw: Any) -> Turn:
    return Turn(index=0, round=round, role=role, step="speech", model=model, temperature=0.7,
                text="words", **kw)  # fmt: skip


# -- the counting ----------------------------------------------------------------------------


def test_each_models_turns_are_counted_within_cut_flagged_and_failed() -> None:
    turns = [
        turn("alpha", limit=150, length=120),  # within
        turn("alpha", limit=150, length=150, cut=True),  # cut to fit
        turn("beta", limit=15, length=22),  # over, not cut
        turn("beta", limit=15, length=9, flags=["not a question"]),  # within, but flagged
        turn("beta", note="degenerate reply: the reply is empty"),  # no limit; failed
        turn("alpha"),  # no limit, nothing wrong
    ]
    counted = rule_keeping(turns, failed=["alpha"])
    assert counted == {
        "alpha": RuleKeeping(turns=3, limited=2, within_limit=1, cut=1, flagged=0, failed=1),
        "beta": RuleKeeping(turns=3, limited=2, within_limit=1, cut=0, flagged=1, failed=1),
    }
    assert counted["alpha"].within_share == 0.5 and counted["beta"].within_share == 0.5
    assert RuleKeeping().within_share is None  # no limited turn: no share
    assert rule_keeping([turn("gamma", limit=10, length=10)])["gamma"].within_share == 1.0


def test_a_debates_turns_go_to_the_references_their_seats_were_given() -> None:
    """The loaded model's id is not the tournament's name for it; a degenerate reply the
    format also records as a failure is counted once; a failure with no turn counts too."""
    degenerate = "degenerate reply: the reply is empty"
    transcript = Transcript(
        format="challenge",
        motion="m",
        language="en",
        seed=1,
        models={},
        refs={"proposer": "a.gguf", "challenger": "b.gguf", "judge": "j.gguf"},
        turns=[
            turn("echo:a.gguf", "proposer", limit=100, length=40),
            turn("echo:b.gguf", "challenger", note=degenerate),
            turn("echo:a.gguf", "proposer", round=2, limit=100, length=100, cut=True),
        ],
        result={
            "failures": [
                {"round": 1, "role": "challenger", "error": sanitize(degenerate)},
                {"round": 2, "role": "challenger", "error": "timeout: no reply in 240 s"},
                {"round": 2, "role": "nobody", "error": "x"},  # no seat of this debate
                "not a failure",
            ]
        },
    )
    ballot = Ballot(proposition_best="p", opposition_best="o", reasons="r",
                    winner="proposition", margin="clear")  # fmt: skip
    verdict = Verdict(
        debate="d",
        winner="proposition",
        margin="clear",
        votes={"proposition": 1},
        self_judged=False,
        ballots=[JudgeBallot(judge="k.gguf", ballot=ballot)],
        turns=[turn("echo:k.gguf", "judge1", round=0, flags=["hollow reply: says nothing"])],
    )
    turns, failed = debate_turns(transcript, verdict)
    assert [t.model for t in turns] == ["a.gguf", "b.gguf", "a.gguf", "k.gguf"]
    assert failed == ["b.gguf"]  # the timeout; the degenerate reply is its turn
    counted = rule_keeping(turns, failed)
    assert counted["a.gguf"] == RuleKeeping(turns=2, limited=2, within_limit=1, cut=1)
    assert counted["b.gguf"] == RuleKeeping(turns=1, failed=2)
    assert counted["k.gguf"] == RuleKeeping(turns=1, flagged=1)
    assert "j.gguf" not in counted  # a seat that never spoke


# -- a tournament ----------------------------------------------------------------------------


class Rambler(Debater):
    """Talks far past every limit: each of its speeches is cut to fit."""

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        if request.reply_schema is None:
            self.queue(" ".join(f"I am rambler, and point {n} stands." for n in range(80)))
        return super().chat(request, on_text=on_text)


class Mute(Debater):
    """Says nothing when it should speak: each of its speeches is a degenerate reply."""

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        if request.reply_schema is None:
            return ScriptedModel(("",), model_id=self.model_id).chat(request, on_text=on_text)
        return super().chat(request, on_text=on_text)


class Cast(Models):
    def __call__(self, ref: str) -> Debater:
        kinds = {"rambler": Rambler, "mute": Mute}
        if ref not in self.made:
            self.made[ref] = kinds.get(ref, Debater)(ref)
        return self.made[ref]


def test_the_report_gives_each_model_its_rule_keeping_over_every_seat(tmp_path: Path) -> None:
    t = Tournament.create(oxford_plan(["rambler", "mute"], judges=["strong"]), tmp_path / "t")
    _, failed = run(t, Cast())
    assert failed == []
    verdicts = t.verdicts()
    report = build(t.plan, verdicts, samples=20, transcripts=t.transcripts(verdicts))
    kept = {r.model: r.rule_keeping for r in report.models}
    # The judge also chairs and plays the devil's advocate: those turns are its own.
    rambler, mute = kept["rambler"], kept["mute"]
    assert rambler.cut > 0 and rambler.within_limit < rambler.limited and rambler.failed == 0
    assert mute.failed == mute.turns > 0 and mute.cut == 0  # every speech of it is empty
    [judge] = report.judges
    assert judge.model == "strong" and judge.rule_keeping.turns > 0
    # Every turn of every debate, its ballots included, is someone's, once.
    turns = 0
    for p in t.plan.debates:
        data = json.loads((t.debate_dir(p) / "transcript.json").read_text(encoding="utf-8"))
        turns += len(data["turns"]) + len(verdicts[p.id].turns)
    assert rambler.turns + mute.turns + judge.rule_keeping.turns == turns


def turns_by_ref(out: Path) -> dict[str, Counter[str]]:
    """Each model's figures, read straight from the debates' files."""
    found: dict[str, Counter[str]] = {}
    for folder in sorted((out / "debates").iterdir()):
        data = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
        verdict = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
        judges = {f"judge{i + 1}": b["judge"] for i, b in enumerate(verdict["ballots"])}
        spoken = [(data["refs"][x["role"]], x) for x in data["turns"]]
        spoken += [(judges[x["role"]], x) for x in verdict["turns"]]
        for ref, x in spoken:
            c = found.setdefault(ref, Counter())
            c["turns"] += 1
            c["limited"] += x["limit"] is not None
            c["within_limit"] += (
                x["limit"] is not None and not x["cut"] and x["length"] <= x["limit"]
            )
            c["cut"] += x["cut"]
            c["flagged"] += bool(x["flags"])
            c["failed"] += x["note"] is not None
    return found


def test_a_dry_run_tournament_prints_and_saves_each_models_rule_keeping(
    tmp_path: Path, cli: Cli
) -> None:
    (tmp_path / "m.txt").write_text("cats are better than dogs\n")
    out = tmp_path / "t"
    proc = cli("tournament", "--model", "a", "--model", "b", "--judge", "j", "--dry-run",
               "--motions", str(tmp_path / "m.txt"), "--max-rounds", "3", "--seed", "4",
               "--bootstrap", "20", "--quiet", "--out", str(out), home=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    expected = turns_by_ref(out)
    assert set(expected) == {"a", "b", "j"}
    # A dry run keeps every rule (its points of information are questions): limited turns,
    # none flagged; the figures of models that break rules are the scripted ones' above.
    assert all(c["limited"] > 0 and c["flagged"] == 0 for m, c in expected.items() if m != "j")

    lines = proc.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if "Rule-keeping" in line)
    end = next(i for i in range(head, len(lines)) if lines[i].startswith("└"))
    header = [cell.strip() for cell in lines[head + 2].split("┃")[1:-1]]
    assert header == ["#", "model", "turns", "within limit", "cut", "flagged", "failed"]
    shown = {}
    for line in lines[head + 4 : end]:
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        shown[cells[1]] = cells[0:1] + cells[2:]
    report = json.loads((out / "ratings.json").read_text())
    ranked = {r["model"]: str(r["rank"]) for r in report["models"]}
    for model, c in expected.items():
        within = (
            f"{c['within_limit']}/{c['limited']} ({100 * c['within_limit'] / c['limited']:.0f} %)"
        )
        figures = [str(c["turns"]), within, str(c["cut"]), str(c["flagged"]), str(c["failed"])]
        assert shown[model] == [ranked.get(model, "judge"), *figures], proc.stdout

    fields = ("turns", "limited", "within_limit", "cut", "flagged", "failed")
    for row in report["models"]:
        kept = row["rule_keeping"]
        c = expected[row["model"]]
        assert {k: kept[k] for k in fields} == {k: c[k] for k in fields}
        assert kept["within_share"] == round(c["within_limit"] / c["limited"], 4)
    assert [(j["model"], j["rule_keeping"]["turns"]) for j in report["judges"]] == [
        ("j", expected["j"]["turns"])
    ]
    rows = list(csv.DictReader(io.StringIO((out / "ratings.csv").read_text())))
    assert [r["model"] for r in rows] == [r["model"] for r in report["models"]]
    for r in rows:
        assert {k: int(r[k]) for k in fields} == {k: expected[r["model"]][k] for k in fields}


def test_moot_tournament_returns_the_rule_keeping_as_typed_fields(
    tmp_path: Path, moot_home: Path
) -> None:
    done = moot.tournament(["a", "b"], ["cats are better than dogs"], seed=4, max_rounds=3,
                           run={"dry_run": True}, bootstrap=0, out=tmp_path / "t")  # fmt: skip
    expected = turns_by_ref(done.folder)
    for row in done.report.models:
        assert isinstance(row.rule_keeping, RuleKeeping)
        c = expected[row.model]
        assert row.rule_keeping.turns == c["turns"] > 0
        assert row.rule_keeping.limited == c["limited"] > 0
        assert (row.rule_keeping.flagged, row.rule_keeping.failed) == (c["flagged"], c["failed"])
    assert done.report.judges == []  # the ranked models judged each other


@pytest.mark.parametrize("damage", ["missing", "crafted"])
def test_a_decided_debate_without_its_own_transcript_is_named_in_one_line(
    tmp_path: Path, cli: Cli, damage: str
) -> None:
    (tmp_path / "m.txt").write_text("cats are better than dogs\n")
    out = tmp_path / "t"
    first = cli("tournament", "--model", "a", "--model", "b", "--dry-run", "--quiet",
                "--motions", str(tmp_path / "m.txt"), "--max-rounds", "3", "--bootstrap", "5",
                "--out", str(out), home=tmp_path)  # fmt: skip
    assert first.returncode == 0, first.stderr
    saved = sorted((out / "debates").iterdir())[0] / "transcript.json"
    if damage == "missing":
        saved.unlink()
    else:
        saved.write_text("[" * 100_000)
    proc = cli("tournament", "--resume", str(out), home=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    error, hint = proc.stderr.strip().splitlines()
    assert error.startswith("error:") and "transcript" in error and saved.parent.name in error
    assert hint.startswith("hint:") and "verdict.json" in hint and "--resume" in hint
    assert "Traceback" not in proc.stdout + proc.stderr
