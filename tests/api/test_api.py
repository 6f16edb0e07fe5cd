"""moot as a library: `moot.debate`, `moot.Debate`, `moot.tournament`, `moot.models`, and the
Python API page's "From Python" section (docs/python.md, whose first example the README
shows), run as written."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import moot
from conftest import REAL_HOME, REPO
from moot.events import Token, TurnFinished, TurnStarted

ROOT = REPO
DRY = {"dry_run": True}


@pytest.fixture
def home(moot_home: Path) -> Path:
    """A private moot home that still finds the installed tiny models (read in place)."""
    moot_home.mkdir(parents=True)
    if (REAL_HOME / "models").is_dir():
        (moot_home / "models").symlink_to(REAL_HOME / "models", target_is_directory=True)
    else:  # nothing installed: the dry runs need no model
        (moot_home / "models").mkdir()
    return moot_home


def test_importing_moot_loads_neither_llama_cpp_nor_the_hub_client() -> None:
    code = (
        "import sys, moot; moot.debate; moot.Debate; moot.models; moot.events; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('llama_cpp', 'huggingface_hub', 'httpx')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("settings", "names", "field"),
    [
        ({"roles": {"king": "smollm2-135m"}}, ["roles", "king"], "roles.king"),
        ({"temperatures": {"judge": 5}}, ["temperatures.judge"], "temperatures.judge"),
        ({"temperatures": {"jester": 0.5}}, ["temperatures", "jester"], "temperatures.jester"),
        ({"max_rounds": 99}, ["max-rounds"], "params.max_rounds"),
        ({"rounds": 2}, ["oxford", "rounds"], "params.rounds"),
        ({"colour": "red"}, ["colour"], "colour"),
        ({"run": {"n_ctx": 5}}, ["run.n_ctx"], "run.n_ctx"),
        ({"run": {"call_timeout_s": 0}}, ["run.call_timeout_s"], "run.call_timeout_s"),
        ({"run": {"threads": 2}}, ["run.threads"], "run.threads"),
        ({"lang": "fr"}, ["lang"], "lang"),
        ({"format": "parliament"}, ["parliament"], "format"),
        # A role's setting given as pairs or as the command line's ROLE=VALUE texts: a role
        # given twice is refused, not its last value taken.
        ({"roles": [("judge", "a"), ("judge", "b")]}, ["'judge'", "twice"], "roles.judge"),
        ({"temperatures": [("devil", 0), ("devil", 1)]}, ["twice"], "temperatures.devil"),
        ({"temperatures": ["devil=0.1", "Devil=0.9"]}, ["'devil'", "twice"], "temperatures.devil"),
        ({"roles": ["judge:a.gguf"]}, ["roles.0", "KEY=VALUE"], "roles.0"),
        ({"roles": "judge=a.gguf"}, ["roles", "not a mapping"], "roles"),
        ({"temperatures": [("devil",)]}, ["temperatures.0"], "temperatures.0"),
    ],
)  # fmt: skip
def test_a_bad_setting_is_named_before_any_model_loads(
    home: Path,
    settings: dict[str, object],
    names: list[str],
    field: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Named in the message, and by its path among the keywords (`field`), for a front end
    to place the error beside its own field."""
    from moot.models import store

    def no_model(ref: str) -> None:
        raise AssertionError(f"{ref} was resolved before the settings were checked")

    monkeypatch.setattr(store, "resolve", no_model)
    with pytest.raises(moot.MootError) as caught:
        moot.debate("cities should ban cars", model="no-such-model", **settings)  # type: ignore[arg-type]
    assert caught.value.exit_code == 2
    for name in names:
        assert name in caught.value.message
    assert caught.value.field == field
    assert caught.value.hint


def test_str_of_an_error_says_its_hint_as_moot_prints_it(home: Path) -> None:
    with pytest.raises(moot.UsageError) as caught:
        moot.debate("  ", run=DRY)
    assert str(caught.value) == "the motion is empty\nhint: give a motion or a topic"
    assert caught.value.message == "the motion is empty"  # each part still on its own


@pytest.mark.parametrize(
    ("run", "near"),
    [({"dryrun": True}, "dry_run"), ({"max_token": 9}, "max_tokens"), ({"colour": 1}, None)],
)
def test_an_unknown_run_setting_is_answered_with_the_closest(
    home: Path, run: dict[str, object], near: str | None
) -> None:
    with pytest.raises(moot.UsageError) as caught:
        moot.debate("cities should ban cars", run={**DRY, **run})
    (key,) = run
    assert caught.value.field == f"run.{key}" and caught.value.near == near
    said = str(caught.value).splitlines()
    assert said[0] == f"unknown setting 'run.{key}'"
    if near is None:
        assert said[1] == "hint: see help(moot.debate)"
    else:
        assert said[1] == f"hint: did you mean {near}? see help(moot.debate)"
    if key == "dryrun":  # the Python API page shows this one as it reads
        page = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
        assert f"UsageError: {said[0]}\n{said[1]}\n" in page


@pytest.mark.parametrize(
    ("motion", "lang", "message", "hint"),
    [
        ("", "zh", "辩题是空的", "请给出辩题或话题"),
        ("猫" * 5000, None, "辩题有5,000个字符，超过了4,000个字符的上限", "用一句话说明辩题"),
        ("?!", "zh", "辩题 '?!' 里没有文字", "请给出辩题"),
    ],
)
def test_a_chinese_debates_motion_is_refused_in_chinese(
    home: Path, motion: str, lang: str | None, message: str, hint: str
) -> None:
    with pytest.raises(moot.UsageError) as caught:
        moot.debate(motion, lang=lang, run=DRY)
    first, second = str(caught.value).splitlines()
    assert first == message and caught.value.message == message
    assert second.startswith("提示：") and hint in second and hint in caught.value.hint
    assert caught.value.key.startswith("debates.settings.motion_")  # still known by its key
    assert caught.value.field == "motion"


def test_the_repr_of_a_result_is_one_short_line(home: Path) -> None:
    result = moot.debate("cities should ban cars", seed=3, max_rounds=3, run=DRY)
    shown = repr(result)
    assert "\n" not in shown and len(shown) <= 300, shown
    assert shown.startswith("Result(format='oxford', motion='This House Believes That cities")
    assert f"turns={len(result.turns)}" in shown and repr(str(result.folder)) in shown
    assert "outcome=" in shown and "Verdict" in shown
    assert not any(t.text[:40] in shown for t in result.turns if len(t.text) > 40)
    unsaved = moot.debate("tea is better", run=DRY, save=False, max_rounds=3)
    assert repr(unsaved).endswith("folder=None)")


def test_a_roles_setting_may_be_pairs_or_role_value_texts(home: Path) -> None:
    server = "http://127.0.0.1:9/v1"  # a server URL: checked as text, never called
    debate = moot.Debate(
        "cities should ban cars",
        roles=[f"Judge={server}"],  # type: ignore[arg-type]
        temperatures=[("devil", 0.5)],  # type: ignore[arg-type]
        save=False,
        run=DRY,
    )
    assert debate.setup.role_models == {"judge": server}
    assert debate.setup.temperatures == {"devil": 0.5}


def test_debate_returns_the_result_and_saves_it_where_moot_run_would(home: Path) -> None:
    result = moot.debate("cities should ban cars", seed=3, max_rounds=3, run=DRY)
    assert result.transcript.motion == "This House Believes That cities should ban cars"
    assert result.stop_reason == "hard_cap"
    assert max(t.round for t in result.turns if t.step == "speech") == 3
    assert result.folder is not None and result.folder.parent == home / "debates"
    # The file holds the brief the result carries, then every speech.
    saved_document = (result.folder / "debate.md").read_text(encoding="utf-8")
    assert saved_document.startswith(result.markdown.rstrip() + "\n\n")
    assert saved_document.count("\n### ") == len(result.turns)
    saved = json.loads((result.folder / "transcript.json").read_text(encoding="utf-8"))
    assert saved["seed"] == 3 and len(saved["turns"]) == len(result.turns)
    assert set(result.document) >= {"pro", "con", "balance"}


def test_save_false_writes_nothing(home: Path, tmp_path: Path) -> None:
    events: list[object] = []
    result = moot.debate("tea is better", run=DRY, save=False, on_event=events.append)
    assert result.folder is None
    assert not (home / "debates").exists()
    finished = [e for e in events if isinstance(e, TurnFinished)]
    assert [e.turn.text for e in finished] == [t.text for t in result.turns]
    with pytest.raises(moot.UsageError):
        moot.debate("tea is better", run=DRY, save=False, out=tmp_path / "x")


def test_iterating_a_debate_yields_its_events_in_order_then_its_result(home: Path) -> None:
    debate = moot.Debate("tea is better than coffee", seed=5, run=DRY, save=False)
    events = list(debate)
    starts = [e for e in events if isinstance(e, TurnStarted)]
    finished = [e for e in events if isinstance(e, TurnFinished)]
    assert starts and len(starts) == len(finished)
    assert [e.index for e in starts] == list(range(len(starts)))
    assert any(isinstance(e, Token) for e in events)
    assert debate.result is not None
    assert [e.turn for e in finished] == debate.result.turns


def test_a_stopped_debate_resumes_into_the_uninterrupted_one(home: Path, tmp_path: Path) -> None:
    whole = moot.debate("tea is better", seed=9, run=DRY, out=tmp_path / "whole")
    debate = moot.Debate("tea is better", seed=9, run=DRY, out=tmp_path / "cut")
    seen = 0
    for event in debate:
        seen += isinstance(event, TurnFinished)
        if seen == 4:
            break  # leaving the loop stops the debate
    assert debate.result is None
    assert debate.folder == tmp_path / "cut"
    journal = (tmp_path / "cut" / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    assert sum('"type": "turn"' in line or '"type":"turn"' in line for line in journal) >= 4
    assert not (tmp_path / "cut" / "transcript.json").exists()

    resumed = moot.Debate.resume(tmp_path / "cut").run()
    assert [t.text for t in resumed.turns] == [t.text for t in whole.turns]
    with pytest.raises(moot.UsageError, match="finished"):
        moot.Debate.resume(tmp_path / "cut")


def test_stop_from_a_listener_raises_debate_stopped(home: Path, tmp_path: Path) -> None:
    debate = moot.Debate("tea is better", seed=9, run=DRY, out=tmp_path / "d")

    def stop_after_first_turn(event: object) -> None:
        if isinstance(event, TurnFinished):
            debate.stop()

    with pytest.raises(moot.DebateStopped) as caught:
        debate.run(on_event=stop_after_first_turn)
    assert "Debate.resume" in caught.value.hint


def test_every_format_runs_from_python(home: Path, dry_models: tuple[str, str]) -> None:
    runs = {
        "decision": {"positions": ["ban cars", "keep cars"], "rounds": 0},
        "challenge": {"rounds": 1},
        "adversarial": {"model": list(dry_models), "rounds": 1},
    }
    for name, params in runs.items():
        result = moot.debate("cars in cities", format=name, run=DRY, save=False, **params)
        assert result.transcript.format == name
        assert result.turns and result.markdown.strip()
    assert sorted(p.name for p in home.iterdir()) == ["models"]  # nothing saved, not even state


def test_a_dry_run_handed_a_pool_loads_no_model(home: Path, dry_models: tuple[str, str]) -> None:
    """The pool is for real runs: a dry run's models are scripted whatever it is handed (a
    file of no weights would fail to load)."""
    with moot.ModelPool() as pool:
        result = moot.debate("cars in cities", model=dry_models[0], pool=pool, run=DRY, save=False)
    assert result.turns
    assert {m.id for m in result.transcript.models.values()} == {f"echo:{dry_models[0]}"}


def test_a_tournament_from_python(home: Path, tmp_path: Path) -> None:
    from gguf_samples import write_gguf

    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    alpha, beta, gamma = (
        str(write_gguf(tmp_path / f"{n}.gguf", name=n, chat_template=template))
        for n in ("alpha", "beta", "gamma")
    )
    events: list[object] = []
    done = moot.tournament(
        [alpha, beta],
        ["cats are better than dogs"],
        judges=[gamma],
        seed=4,
        max_rounds=3,
        run=DRY,
        bootstrap=0,
        on_event=events.append,
    )
    assert done.failed == []
    assert done.report.debates_decided == 2
    assert sorted(r.model for r in done.report.models) == [alpha, beta]
    assert (done.folder / "ratings.json").is_file()
    with pytest.raises(moot.UsageError, match="two or more"):
        moot.tournament([alpha], ["x"], run=DRY)
    # A dry run loads no model, so a catalog model not installed here stands for its id; a
    # name that is no model anywhere can only be a mistake, and is refused.
    with pytest.raises(moot.MootError, match="nosuchmodel"):
        moot.tournament([alpha, "nosuchmodel"], ["x"], run=DRY)


@pytest.mark.real
def test_models_lists_and_resolves_offline(home: Path) -> None:
    listed = {m.id: m for m in moot.models.list()}
    assert listed["smollm2-135m"].installed
    resolved = moot.models.resolve("smollm2-135m")
    assert resolved.path.is_file() and resolved.sha256
    with pytest.raises(moot.ModelNotFoundError):
        moot.models.resolve("no-such-model")


@pytest.mark.real
def test_a_debate_releases_the_models_it_loaded(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.inference.llama import LlamaCppModel

    closed: list[str] = []
    close = LlamaCppModel.close

    def spy(self: LlamaCppModel) -> None:
        closed.append(self.model_id)
        close(self)

    monkeypatch.setattr(LlamaCppModel, "close", spy)
    short = {"format": "challenge", "rounds": 1, "seed": 1, "save": False}
    moot.debate("Tea or coffee?", **short, run={"max_tokens": 16})  # type: ignore[arg-type]
    assert closed == ["smollm2-135m"]

    closed.clear()
    with moot.ModelPool(n_ctx=2048) as pool:
        for topic in ("Tea or coffee?", "Cats or dogs?"):
            moot.debate(topic, **short, pool=pool, run={"max_tokens": 16})  # type: ignore[arg-type]
        assert closed == []  # held across debates
        assert len(pool.loaded) == 1
    assert closed == ["smollm2-135m"]


def python_examples(page: str = "docs/python.md") -> list[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_python_page_shows_python_code() -> None:
    blocks = python_examples()
    assert len(blocks) == 2
    assert len(blocks[0].strip().splitlines()) <= 5  # import, blank, the call, a print
    assert python_examples("README.md") == blocks[:1]  # the README's example is run below


@pytest.mark.real
@pytest.mark.parametrize("block", range(2))
def test_the_python_page_runs_as_written(home: Path, block: int) -> None:
    code = python_examples()[block]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=home
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip()
    if block == 0:
        reason, turns, folder = done.stdout.split()
        assert reason in ("converged", "hard_cap") and int(turns) > 10
        assert Path(folder, "transcript.json").is_file()


def test_a_person_takes_a_seat_from_python(home: Path, tmp_path: Path) -> None:
    from moot.inference.human import ScriptedConsole

    def answer(ask: Any) -> str:
        return "decline" if ask.kind == "decision" else f"Offices build trust, {ask.number}?"

    console = ScriptedConsole([answer] * 40)
    result = moot.debate(
        "tea is better than coffee",
        roles={"opposition": "human"},
        human=console,
        run={"dry_run": True},
        out=tmp_path / "d",
    )
    said = [t for t in result.turns if t.role == "opposition"]
    assert said and all(t.model == "human" for t in said)
    assert said[0].text.startswith("Offices build trust")
    assert console.asks and console.asks[0].role == "opposition"
