"""`moot judge`: saved debates of every format re-judged by other judges, no speech generated."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import moot
import moot.debates.rejudge
from conftest import REAL_HOME, Cli
from moot.debates.rejudge import compared_fields, file_name
from moot.debates.runner import DebateRun
from moot.debates.settings import DebateSetup
from moot.errors import CallTimeoutError
from moot.formats import NAMES, get_format
from moot.formats.base import RunOptions
from moot.formats.decision.flow import FORMAT as DECISION
from moot.inference.protocol import ChatRequest
from moot.inference.scripted import ScriptedModel, _minimal

# The API tests name their scripted models freely; the command line checks references.
pytestmark = pytest.mark.usefixtures("moot_home")
named_freely = pytest.mark.usefixtures("any_model_name")

DEBATES: dict[str, dict[str, Any]] = {
    "oxford": {"motion": "cats are better than dogs", "max_rounds": 3},
    "challenge": {"motion": "Should we rewrite the billing service in Rust?", "rounds": 2},
    "decision": {"motion": "Postgres vs MySQL for a small analytics app", "rounds": 1},
    "adversarial": {
        "motion": "Is nuclear power safer per TWh than wind?",
        "rounds": 2,
        "model": ["alpha", "beta"],
    },
}


class Pool:
    """Scripted models by reference, each made once on first use; what was asked is kept."""

    def __init__(self, make: Callable[[str], ScriptedModel] | None = None) -> None:
        self.models: dict[str, ScriptedModel] = {}
        self._make = make or (lambda ref: ScriptedModel(model_id=ref))

    def get(self, ref: str) -> ScriptedModel:
        if ref not in self.models:
            self.models[ref] = self._make(ref)
        return self.models[ref]


def saved_debate(folder: Path, fmt: str, pool: Pool | None = None) -> tuple[Path, Pool]:
    """A debate of FMT on scripted models, saved in FOLDER, its judge a model of its own."""
    pool = pool or Pool()
    params = dict(DEBATES[fmt])
    motion, model = params.pop("motion"), params.pop("model", "speaker")
    moot.debate(
        motion,
        format=fmt,
        model=model,
        roles={"judge": "original-judge"},
        seed=5,
        out=folder,
        pool=pool,
        **params,
    )
    return folder / "transcript.json", pool


def judging_turns(path: Path) -> list[dict[str, Any]]:
    judging = get_format(json.loads(path.read_text())["format"]).judging
    assert judging is not None
    turns = json.loads(path.read_text())["turns"]
    return [t for t in turns if t["role"] == judging.role and t["step"] in judging.steps]


def contrary(request: ChatRequest, *, only: int | None = None) -> str:
    """A valid reply that answers every yes/no question yes and every choice with its last
    option (the scripted judges answer no and the first option); ONLY: just that many fields."""
    assert request.reply_schema is not None
    reply = _minimal(request.reply_schema)
    props = request.reply_schema.model_json_schema()["properties"]
    for name in compared_fields(request.reply_schema)[:only]:
        reply[name] = True if props[name].get("type") == "boolean" else props[name]["enum"][-1]
    return json.dumps(reply)


def test_every_judging_step_is_a_step_of_its_format() -> None:
    for name in NAMES:
        fmt = get_format(name)
        judging = fmt.judging  # declared by the format: each of the four re-judges
        assert judging is not None, name
        assert judging.steps and set(judging.steps) <= set(fmt.steps), name
        assert "judge" in fmt.steps or judging.role == "judge"


@named_freely
@pytest.mark.parametrize("fmt", NAMES)
def test_a_judge_that_agrees_is_asked_only_the_judging_with_the_original_prompts(
    tmp_path: Path, fmt: str
) -> None:
    path, original = saved_debate(tmp_path / fmt, fmt)
    before = path.read_bytes()
    judged = judging_turns(path)
    pool = Pool()

    [result] = moot.judge(path, judges=["new-judge"], pool=pool)

    assert list(pool.models) == ["new-judge"]  # no speaker's model was even made
    new = pool.models["new-judge"].requests
    assert len(new) == len(judged) >= 1
    assert all(r.reply_schema is not None for r in new)
    # The new judge was sent what the original judge was sent at each judging step.
    seat = [t for t in json.loads(before)["turns"] if t["role"] == "judge"]
    sent = original.models["original-judge"].requests
    assert len(sent) == len(seat)
    at_judging = [r for r, t in zip(sent, seat, strict=True) if t in judged]
    assert [(r.messages, r.sampling) for r in new] == [(r.messages, r.sampling) for r in at_judging]
    assert [r.reply_schema for r in new] == [r.reply_schema for r in at_judging]

    assert path.read_bytes() == before  # the saved debate is left as it was
    file = path.parent / "judged" / "new-judge.json"
    assert result.file == str(file)
    data = json.loads(file.read_text())
    assert data["format"] == fmt and data["judge"] == "new-judge"
    assert data["original_model"] == "original-judge"
    assert data["agreement"] == 1.0 and data["same_verdict"] == 1.0 and data["same_prompts"]
    assert [t["index"] for t in data["turns"]] == [t["index"] for t in judged]
    for turn, saved in zip(data["turns"], judged, strict=True):
        assert turn["original"] == saved["data"] and turn["new"] == saved["data"]
        assert turn["agreement"]["share"] == 1.0 and all(turn["agreement"]["fields"].values())
        assert turn["agreement"]["fields"]  # something was compared


@named_freely
@pytest.mark.parametrize("fmt", NAMES)
def test_a_judge_that_disagrees_on_everything_agrees_nowhere(tmp_path: Path, fmt: str) -> None:
    path, _ = saved_debate(tmp_path / fmt, fmt)
    pool = Pool(lambda ref: ScriptedModel([contrary] * 20, model_id=ref))

    [result] = moot.judge(path, judges="contrarian", pool=pool)

    assert result.agreement == 0.0
    for turn in result.turns:
        assert turn.agreement is not None and turn.new != turn.original
        assert not any(turn.agreement.fields.values())
    if fmt == "oxford":  # every rubric item met now: the score code derives from it rose
        assert result.score_difference is not None and result.score_difference > 0
        assert all(t.agreement and t.agreement.score_difference for t in result.turns)
    else:  # another winner, another recommendation
        assert result.same_verdict == 0.0
    data = json.loads((path.parent / "judged" / "contrarian.json").read_text())
    assert data["agreement"] == 0.0


@named_freely
def test_a_judge_that_reads_probabilities_decides_by_them_and_keeps_them(tmp_path: Path) -> None:
    """A new judge whose backend reads probabilities decides each checklist item by them,
    whatever its reply writes (the reply here answers every item no), and the re-judged
    turn keeps what was read, as a debate's judging step does."""
    path, _ = saved_debate(tmp_path / "oxford", "oxford")
    pool = Pool(lambda ref: ScriptedModel(model_id=ref, chooser=lambda r: {"yes": 0.9, "no": 0.1}))

    [result] = moot.judge(path, judges="reader", pool=pool)

    assert result.turns and all(turn.choices for turn in result.turns if turn.step == "judge")
    for turn in result.turns:
        if turn.step != "judge":
            continue
        assert turn.new is not None and turn.choices is not None
        read = turn.choices["proposition_argued_for_motion"]
        assert read["method"] == "scripted" and read["probabilities"]["yes"] == 0.9
        assert turn.new["proposition_argued_for_motion"] is True  # read yes; the reply said no
    saved = json.loads((path.parent / "judged" / "reader.json").read_text())
    assert any(t.get("choices") for t in saved["turns"])


@named_freely
def test_a_judge_that_differs_on_one_rubric_item_agrees_on_four_in_five(tmp_path: Path) -> None:
    path, _ = saved_debate(tmp_path / "oxford", "oxford")
    pool = Pool(lambda ref: ScriptedModel([lambda r: contrary(r, only=1)] * 20, model_id=ref))

    [result] = moot.judge(path, judges="picky", pool=pool, save=False)

    assert result.agreement == 0.8
    assert result.file is None and not (path.parent / "judged").exists()
    fields = result.turns[0].agreement.fields  # type: ignore[union-attr]
    assert list(fields.values()) == [False, True, True, True, True]


@named_freely
def test_a_judge_that_never_answers_validly_is_recorded_as_failing(tmp_path: Path) -> None:
    path, _ = saved_debate(tmp_path / "challenge", "challenge")
    pool = Pool(lambda ref: ScriptedModel(["no json here"] * 10, model_id=ref))

    [result] = moot.judge(path, judges="mute", pool=pool)

    [turn] = result.turns
    assert turn.new is None and turn.original is not None
    assert turn.error and turn.error.startswith("PARSE_ERROR")
    assert result.agreement == 0.0 and result.same_verdict == 0.0


@named_freely
def test_a_judging_turn_the_original_judge_lost_is_judged_anew(tmp_path: Path) -> None:
    def times_out(request: ChatRequest) -> str:
        raise CallTimeoutError(seconds=1, model="original-judge")

    original = Pool(
        lambda ref: ScriptedModel([times_out] if ref == "original-judge" else [], model_id=ref)
    )
    path, _ = saved_debate(tmp_path / "adversarial", "adversarial", original)
    saved = json.loads(path.read_text())
    assert [f["role"] for f in saved["result"]["failures"]] == ["judge"]
    pool = Pool()

    [result] = moot.judge(path, judges="new-judge", pool=pool)

    lost, kept = result.turns
    assert (lost.round, lost.original, lost.agreement) == (1, None, None)
    assert lost.new is not None  # the new judge judged round 1, where the original failed
    assert kept.round == 2 and kept.agreement and kept.agreement.share == 1.0
    assert result.agreement == 1.0
    assert len(pool.models["new-judge"].requests) == 2


@named_freely
def test_a_decision_is_replayed_with_the_plan_the_user_corrected(tmp_path: Path) -> None:
    model = ScriptedModel(model_id="m")
    asked: list[str] = []

    def ask(proposal: str) -> str:
        asked.append(proposal)
        return "positions: Postgres | MySQL | SQLite" if len(asked) == 1 else ""

    setup = DebateSetup(
        format=DECISION,
        motion="Postgres vs MySQL for a small analytics app",
        language="en",
        seed=3,
        params=DECISION.params(RunOptions(rounds=0)),
        out_dir=tmp_path / "decision",
    )
    DebateRun(setup, model_factory=lambda ref: model, ask=ask).run()
    pool = Pool()

    [result] = moot.judge(tmp_path / "decision" / "transcript.json", judges="j", pool=pool)

    assert result.agreement == 1.0
    [request] = pool.models["j"].requests
    assert "SQLite" in request.messages[-1].content  # the corrected plan, not the topic's two


def test_file_names_are_short_and_safe() -> None:
    assert file_name("smollm2-135m") == "smollm2-135m"
    assert file_name("echo:/tmp/x/a.gguf") == "echo_a"
    assert file_name("/home/u/models/tiny.Q4.gguf") == "tiny.Q4"
    assert file_name("hf:owner/repo/model-q8.gguf") == "hf_model-q8"
    assert file_name("http://127.0.0.1:8080/v1#qwen") == "http_127.0.0.1_8080_v1_qwen"
    assert file_name("../..") == "judge"


# -- through the command line ------------------------------------------------------------------


@pytest.fixture
def dry_debate(tmp_path: Path, cli: Cli) -> Path:
    """A dry-run oxford debate saved by `moot run`: its transcript."""
    out = tmp_path / "debate"
    args = ["cats are better than dogs", "--dry-run", "--max-rounds", "3", "--seed", "1"]
    proc = cli("run", *args, "--out", str(out), "--quiet", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return out / "transcript.json"


def test_moot_judge_dry_run_prints_a_row_per_judge_and_writes_their_files(
    cli: Cli, tmp_path: Path, dry_debate: Path, dry_models: tuple[str, str]
) -> None:
    a, b = dry_models
    proc = cli("judge", str(dry_debate), "--judge", a, "--judge", b, "--dry-run", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # Each judge by its short label (its file's name); judged/ names it in full.
    rows = [line for line in proc.stdout.splitlines() if line.split()[:1] in (["a"], ["b"])]
    assert len(rows) == 2 and all("100%" in row for row in rows), proc.stdout
    for name in ("echo_a", "echo_b"):
        data = json.loads((dry_debate.parent / "judged" / f"{name}.json").read_text())
        assert data["agreement"] == 1.0 and len(data["turns"]) == 2
        assert "file" not in data

    proc = cli("judge", str(dry_debate), "--judge", a, "--dry-run", "--json", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    [result] = json.loads(proc.stdout)
    assert result["model"] == f"echo:{a}" and result["agreement"] == 1.0
    assert result["file"] == str(dry_debate.parent / "judged" / "echo_a.json")


def _hostile(kind: str, tmp_path: Path, saved: Path) -> str:
    path = tmp_path / "input"
    if kind == "text":
        path.write_text("not json at all")
    elif kind == "not-a-transcript":
        path.write_text('{"motion": "x", "turns": []}')
    elif kind == "empty-folder":
        path.mkdir()
    elif kind == "newer-moot":
        data = json.loads(saved.read_text())
        path.write_text(json.dumps({**data, "moot_version": "99.0"}))
    elif kind == "no-judging":
        data = json.loads(saved.read_text())
        kept = [t for t in data["turns"] if t["step"] != "judge"]
        turns = [{**t, "index": n} for n, t in enumerate(kept)]  # numbered as moot numbers them
        path.write_text(json.dumps({**data, "turns": turns}))
    elif kind == "fifo":
        os.mkfifo(path)
    return str(path)


@pytest.mark.parametrize(
    ("kind", "needle"),
    [
        ("text", "not valid JSON"),
        ("not-a-transcript", "moot_version"),
        ("missing", "does not exist"),
        ("empty-folder", "is not a saved debate"),
        ("newer-moot", "newer than this moot"),
        ("no-judging", "no judge's turn"),
        ("fifo", "not a regular file"),
    ],
)
def test_what_is_not_a_saved_debate_is_one_line_and_exit_2(
    cli: Cli, tmp_path: Path, dry_debate: Path, kind: str, needle: str
) -> None:
    given = _hostile(kind, tmp_path, dry_debate)
    proc = cli("judge", given, "--judge", "smollm2-135m", "--dry-run", home=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith("hint:"), proc.stderr
    assert lines[0].startswith("error:") and needle in lines[0]
    assert not (dry_debate.parent / "judged").exists()


@pytest.mark.parametrize(
    ("judges", "needle"),
    [
        (["no-such-model"], "no-such-model"),
        (["a.gguf", "a.gguf"], "named twice"),
        (["a.gguf", "no-such-model"], "no-such-model"),
        ([], "--judge"),
    ],
)
def test_a_bad_judge_is_one_line_and_exit_2(
    cli: Cli,
    tmp_path: Path,
    dry_debate: Path,
    dry_models: tuple[str, str],
    judges: list[str],
    needle: str,
) -> None:
    given = [dry_models[0] if j == "a.gguf" else j for j in judges]
    args = [a for j in given for a in ("--judge", j)]
    proc = cli("judge", str(dry_debate), *args, "--dry-run", home=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("error:") and needle in lines[0], proc.stderr
    assert lines[1].startswith("hint:") and "Traceback" not in proc.stderr
    assert not (dry_debate.parent / "judged").exists()


def test_a_format_with_no_judging_is_refused(
    cli: Cli, tmp_path: Path, dry_debate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import moot.formats.oxford as oxford

    monkeypatch.setattr(oxford, "FORMAT", replace(oxford.FORMAT, judging=None))
    proc = cli("judge", str(dry_debate), "--judge", "smollm2-135m", "--dry-run", home=tmp_path)
    assert proc.returncode == 2
    assert "the oxford format has no judging" in proc.stderr.splitlines()[0]


def test_a_debate_whose_flow_diverges_is_reported_not_judged(
    cli: Cli, tmp_path: Path, dry_debate: Path, dry_models: tuple[str, str]
) -> None:
    data = json.loads(dry_debate.read_text())
    data["turns"][3]["step"] = "rebuttal"  # not what the format asks for at that turn
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(data))
    proc = cli("judge", str(changed), "--judge", dry_models[0], "--dry-run", home=tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and "does not replay: at turn 3" in lines[0], proc.stderr
    assert not (tmp_path / "judged").exists()


@pytest.mark.real
def test_a_saved_debate_re_judged_by_the_real_tiny_model(
    cli: Cli, tmp_path: Path, dry_debate: Path
) -> None:
    proc = cli.subprocess(
        "judge",
        str(dry_debate),
        "--judge",
        "smollm2-135m",
        "--json",
        env={"MOOT_HOME": str(REAL_HOME)},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    [result] = json.loads(proc.stdout)
    assert result["model"] == "smollm2-135m" and result["sha256"]
    assert len(result["turns"]) == 2  # rounds 2 and 3 were judged
    for turn in result["turns"]:
        assert turn["original"] is not None
        assert turn["new"] is not None or turn["error"]
        assert turn["new"] is None or set(turn["new"]) == set(turn["original"])
    # Under the grammar the tiny model answers: a judgement that always errored fails here.
    assert any(turn["new"] is not None and not turn["error"] for turn in result["turns"])
    assert 0.0 <= result["agreement"] <= 1.0
    saved = json.loads((dry_debate.parent / "judged" / "smollm2-135m.json").read_text())
    assert saved["turns"] == result["turns"]
