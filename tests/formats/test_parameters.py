"""Each format parameter is declared once, in its format's options model (`param(...)`):
`moot run`'s and `moot tournament`'s options and `--help`, `moot.debate`'s keywords and
docstring, the page's forms and the terminal's questions are made from the declarations. A
throwaway parameter, added to the Oxford format alone, shows up in every one of them."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

import moot
import moot.formats.oxford
from conftest import Cli
from moot.api.debates import debate_settings, parameters_doc
from moot.debates.settings import prepare
from moot.errors import UsageError
from moot.formats import NAMES, get_format, parameters
from moot.formats.base import Cast, Format, param
from moot.formats.oxford.schemas import OxfordParams

MOTION = "cities should ban cars"


class WithOpening(OxfordParams):
    """The Oxford parameters and one more: what a contributor adds in formats/oxford/."""

    opening_words: int = param(
        120,
        "words an opening speech may take (60–300; 120)",
        ge=60,
        le=300,
        label={"en": "Words of an opening", "zh": "开场字数"},
    )


@pytest.fixture
def opening(monkeypatch: pytest.MonkeyPatch) -> Format:
    """The Oxford format with the throwaway parameter: its declaration changed, nothing else."""
    oxford = get_format("oxford")
    changed = dataclasses.replace(oxford, options=WithOpening, params_type=WithOpening)
    monkeypatch.setattr(moot.formats.oxford, "FORMAT", changed)
    return changed


# -- the throwaway parameter, everywhere ---------------------------------------------------


def helped(cli: Cli, command: str) -> str:
    """`moot COMMAND --help`, each option's help on one line."""
    return cli(command, "--help", env={"COLUMNS": "400"}).stdout


def test_a_new_parameter_is_an_option_of_moot_run_with_its_help(opening: Format, cli: Cli) -> None:
    shown = helped(cli, "run")
    assert "--opening-words" in shown
    assert "oxford: words an opening speech may take (60–300; 120)." in shown
    # Beside the format's other options, before the settings of any run.
    assert shown.index("--judge-rubric") < shown.index("--opening-words") < shown.index("--seed")
    # Oxford is played in tournaments: there too.
    assert "--opening-words" in helped(cli, "tournament")


def test_a_new_parameter_given_on_the_command_line_reaches_the_debate(
    opening: Format, cli: Cli, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    args = ("run", MOTION, "--opening-words", "90", "--max-rounds", "3", "--dry-run")
    done = cli(*args, "--seed", "1", "--out", str(out), home=tmp_path)
    assert done.returncode == 0, done.stderr
    saved = json.loads((out / "transcript.json").read_text(encoding="utf-8"))
    assert saved["params"]["opening_words"] == 90 and saved["params"]["max_rounds"] == 3


def test_a_new_parameter_out_of_range_is_refused_naming_its_option_and_range(
    opening: Format, cli: Cli, tmp_path: Path
) -> None:
    done = cli("run", MOTION, "--opening-words", "500", "--dry-run", home=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: --opening-words 500 is not allowed"), done.stderr
    assert "hint: use a value from 60 to 300" in done.stderr
    args = ("--format", "challenge", "--opening-words", "90", "--dry-run")
    done = cli("run", MOTION, *args, home=tmp_path)
    assert done.returncode == 2
    assert "--opening-words does not apply to the challenge format" in done.stderr


def test_a_new_parameter_is_a_keyword_of_moot_debate(opening: Format, tmp_path: Path) -> None:
    chosen = debate_settings(MOTION, opening_words=90, run={"dry_run": True})
    setup = prepare(chosen)
    assert isinstance(setup.params, WithOpening) and setup.params.opening_words == 90
    assert prepare(debate_settings(MOTION)).params.opening_words == 120  # type: ignore[attr-defined]
    with pytest.raises(UsageError) as caught:
        moot.debate(MOTION, opening_words=1000, run={"dry_run": True}, save=False)
    assert caught.value.field == "params.opening_words"
    assert "--opening-words 1000" in caught.value.message and "60 to 300" in caught.value.hint
    with pytest.raises(UsageError, match="no parameter 'opening_words'"):
        debate_settings(MOTION, format="challenge", opening_words=90)
    assert "- `opening_words` (oxford): words an opening speech may take" in parameters_doc()
    assert "`max_rounds` (oxford" in (moot.tournament.__doc__ or "")  # and a tournament's


def test_a_new_parameter_is_a_field_of_the_pages_forms(opening: Format, tmp_path: Path) -> None:
    from moot.web import forms
    from moot.web import tournament as tournaments

    spec = next(f for f in forms.formats() if f["name"] == "oxford")
    field = next(p for p in spec["params"] if p["name"] == "opening_words")
    assert field["kind"] == "integer" and field["default"] == 120
    assert (field["minimum"], field["maximum"]) == (60, 300)
    assert field["label"] == {"en": "Words of an opening", "zh": "开场字数"}
    assert field["option"] == "--opening-words"
    setup = forms.debate_setup({"motion": MOTION, "params": {"opening_words": "90"}}, dry_run=True)
    assert setup.params.opening_words == 90  # type: ignore[attr-defined]
    with pytest.raises(forms.FormErrors) as caught:
        forms.debate_setup({"motion": MOTION, "params": {"opening_words": "9"}}, dry_run=True)
    assert set(caught.value.fields) == {"params.opening_words"}
    with pytest.raises(forms.FormErrors) as caught:
        tournaments.choose(
            {"models": ["a", "b"], "motions": "x y", "params": {"opening_words": "many"}},
            dry_run=True,
        )
    assert "params.opening_words" in caught.value.fields


def test_a_new_parameter_is_offered_at_a_terminal_under_its_label(
    opening: Format, monkeypatch: pytest.MonkeyPatch
) -> None:
    import typer
    from rich.console import Console

    from moot.cli.confirm import confirm

    asked: list[str] = []

    def prompt(text: str, default: str = "", **kw: Any) -> str:
        asked.append(f"{text} [{default}]")
        return "150" if text.startswith("开场字数") else ""

    monkeypatch.setattr(typer, "prompt", prompt)
    _, chosen = confirm(Console(), opening, MOTION, "zh", {}, from_command_line=False)
    assert "开场字数 (60–300) [120]" in asked
    assert chosen["opening_words"] == 150


# -- the declarations themselves ----------------------------------------------------------


def test_every_parameter_is_an_option_of_moot_run_and_a_keyword_of_moot_debate(
    cli: Cli,
) -> None:
    shown = helped(cli, "run")
    doc = moot.debate.__doc__ or ""
    declared = parameters()
    assert {"min_score", "rounds", "evidence", "continue_from"} <= set(declared)
    for name, shared in declared.items():
        assert f"{shared.first.option} " in shown, name
        assert shared.help() in shown, name
        assert f"- `{name}`" in doc, name


def test_the_options_keep_their_names_and_the_formats_their_parameters() -> None:
    """What users type stays what it was: the options and which format takes each."""
    options = {name: s.first.option for name, s in parameters().items()}
    assert options == {
        "min_score": "--min-score",
        "max_rounds": "--max-rounds",
        "judge_rubric": "--judge-rubric",
        "rounds": "--rounds",
        "preset": "--preset",
        "positions": "--positions",
        "out_of_scope": "--out-of-scope",
        "effort": "--effort",
        "continue_from": "--continue",
        "evidence": "--evidence",
        "keep_sources": "--keep-sources",
    }
    documents = {"evidence", "keep_sources"}
    assert {name: set(get_format(name).reads) for name in NAMES} == {
        "oxford": {"min_score", "max_rounds", "judge_rubric", *documents},
        "decision": {"rounds", "preset", "positions", "out_of_scope", *documents},
        "challenge": {"rounds", "effort", *documents},
        "adversarial": {"rounds", "continue_from", *documents},
    }


def test_a_range_a_help_text_gives_is_the_declared_one() -> None:
    """`(5–10; 7.5)` in a help text: the field's bounds and default, not another copy."""
    checked = 0
    for shared in parameters().values():
        for fmt, p in shared.declared:
            found = re.search(r"\((\S+)–(\S+); (\S+)\)", p.help)
            if found:
                lo, hi, default = (float(x) for x in found.groups())
                assert (lo, hi, default) == (*p.bounds, p.default), (fmt, p.name)
                checked += 1
    assert checked >= 2


def test_the_page_has_a_label_for_every_parameter_in_every_language() -> None:
    from moot.prompts import LANGUAGES
    from moot.web import forms

    offered = [p for spec in forms.formats() for p in spec["params"]]
    assert {p["name"] for p in offered} >= {"min_score", "positions", "evidence"}
    assert "continue_from" not in {p["name"] for p in offered}  # a file named on the command line
    for p in offered:
        assert set(p["label"]) == set(LANGUAGES), p["name"]
        assert all(p["label"][lang] != p["name"] for lang in LANGUAGES), p["name"]


def test_a_tournament_from_the_page_takes_every_parameter_of_its_format(
    moot_home: Path, tmp_path: Path
) -> None:
    from gguf_samples import write_gguf
    from moot.web import tournament as tournaments

    template = "{% for m in messages %}{{ m.content }}{% endfor %}"
    a, b = (str(write_gguf(tmp_path / f"{n}.gguf", chat_template=template)) for n in "ab")
    choice = tournaments.choose(
        {"models": [a, b], "motions": "cats beat dogs", "params": {"judge_rubric": "score"}},
        dry_run=True,
    )
    assert choice.params == {"judge_rubric": "score"}


# -- what a declaration must say ----------------------------------------------------------


def test_a_parameter_without_help_is_refused_when_its_format_is_made() -> None:
    class Bare(BaseModel):
        model_config = ConfigDict(extra="forbid")
        rounds: int = Field(default=2, ge=1)

    oxford = get_format("oxford")
    with pytest.raises(TypeError, match="Bare.rounds has no help"):
        dataclasses.replace(oxford, options=Bare)


def test_two_formats_declaring_one_name_otherwise_is_a_mistake_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Other(BaseModel):
        model_config = ConfigDict(extra="forbid")
        rounds: str = param("two", "rounds, in words")

    challenge = get_format("challenge")
    monkeypatch.setattr(
        moot.formats.challenge,  # type: ignore[attr-defined]
        "FORMAT",
        dataclasses.replace(challenge, options=Other, make_params=lambda g, r: g),
    )
    with pytest.raises(TypeError, match="'rounds' of the challenge format differs"):
        parameters()


def test_a_format_whose_options_are_its_params_needs_nothing_else() -> None:
    """The options, validated, are the params unless the format makes its own."""

    class Plain(BaseModel):
        model_config = ConfigDict(extra="forbid")
        rounds: int = param(2, "number of rounds", ge=1, le=4)

    fmt = Format(
        name="plain",
        steps=(),
        params_type=Plain,
        options=Plain,
        cast=lambda params: Cast(roles=("a",), temperatures={"a": 0.5}),
        run=lambda engine, motion, params: {},
        render=lambda transcript: "",
        sample_variables=dict,
    )
    from moot.formats.base import RunOptions

    assert fmt.params(RunOptions(rounds=3)) == Plain(rounds=3)
    assert fmt.params(RunOptions(rounds=None)) == Plain(rounds=2)  # None: not given
    with pytest.raises(UsageError, match="--rounds 9 is not allowed") as caught:
        fmt.params(RunOptions(rounds=9))
    assert caught.value.hint == "use a value from 1 to 4" and caught.value.field == "params.rounds"
