"""Prompt packs: every step in both languages renders, user text is never a template."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from moot.errors import PromptPackError
from moot.formats import NAMES, get_format
from moot.formats.oxford import flow as oxford
from moot.formats.oxford.flow import sample_variables
from moot.prompts import builtin_root, detect_language, load_pack


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_oxford_step_renders_in_both_languages(lang: str) -> None:
    pack = load_pack(lang, "oxford")  # type: ignore[arg-type]
    pack.validate(oxford.STEPS, sample_variables())
    assert set(sample_variables()) == set(oxford.STEPS)  # every step is rendered
    for step, variables in sample_variables().items():
        text = pack.render(step, **variables)
        assert len(text) > 40, step


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_length_limit_reaches_its_step(lang: str) -> None:
    pack = load_pack(lang, "oxford")  # type: ignore[arg-type]
    v = sample_variables()
    limits = {
        "speech": "150",
        "poi_question": "15",
        "poi_answer": "25",
        "devil_attack": "120",
        "round_summary": "120",
        "rebuttal": "120",
        "verdict": "100",
    }
    for step, number in limits.items():
        assert number in pack.render(step, **v[step]), (lang, step)


@pytest.mark.parametrize("fmt", NAMES)
def test_both_packs_have_the_same_steps(fmt: str) -> None:
    root = builtin_root()
    en = sorted(p.name for p in (root / "en" / fmt).glob("*.j2"))
    zh = sorted(p.name for p in (root / "zh" / fmt).glob("*.j2"))
    assert en == zh == sorted(f"{s}.j2" for s in get_format(fmt).steps)


@pytest.mark.parametrize("fmt", NAMES)
def test_the_packs_readme_lists_every_step_and_its_variables(fmt: str) -> None:
    readme = (builtin_root() / "README.md").read_text(encoding="utf-8")
    section = readme.split(f"\n## {fmt}\n")[1].split("\n## ")[0]
    common = {"language", "round", "limits"}
    samples = get_format(fmt).sample_variables()
    assert set(samples) == set(get_format(fmt).steps)  # every step is looked for
    for step, variables in samples.items():
        assert f"`{step}`" in section, step
        missing = [v for v in variables if v not in common and f"`{v}`" not in section]
        assert not missing, (step, missing)


def test_user_text_is_never_rendered_as_a_template() -> None:
    pack = load_pack("en", "oxford")
    v = sample_variables()["persona_proposition"]
    hostile = "{{ 7*7 }} {% for x in range(3) %}loop{% endfor %} \u202e\x07 🎉"
    text = pack.render("persona_proposition", **{**v, "motion": hostile})
    assert hostile in text and "49" not in text


def test_undefined_variables_fail_loudly() -> None:
    pack = load_pack("en", "oxford")
    with pytest.raises(PromptPackError, match="undefined") as failed:
        pack.render("speech", motion="m")
    # The hint points at the list of each step's variables, wherever moot is installed.
    assert Path(failed.value.hint.rsplit(" in ", 1)[1]).is_file()


def _copy_pack(tmp_path: Path) -> Path:
    root = tmp_path / "pack"
    shutil.copytree(builtin_root() / "en", root / "en")
    return root


def test_a_user_pack_missing_a_step_is_refused(tmp_path: Path) -> None:
    root = _copy_pack(tmp_path)
    (root / "en" / "oxford" / "judge.j2").unlink()
    pack = load_pack("en", "oxford", root=root)
    with pytest.raises(PromptPackError, match="judge"):
        pack.validate(oxford.STEPS, sample_variables())


def test_a_user_pack_cannot_reach_python_internals(tmp_path: Path) -> None:
    root = _copy_pack(tmp_path)
    (root / "en" / "oxford" / "judge.j2").write_text(
        "{{ motion.__class__.__mro__[1].__subclasses__() }}"
    )
    pack = load_pack("en", "oxford", root=root)
    with pytest.raises(PromptPackError, match="unsafe"):
        pack.validate(oxford.STEPS, sample_variables())


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("This House Believes That cats are better", "en"),
        ("本院认为人工智能将是人类最后一项伟大发明", "zh"),
        ("人工智能 AI will win", "zh"),
        ("The 2024 AI act (人工) is good policy overall", "en"),
    ],
)
def test_language_follows_the_motions_script(text: str, lang: str) -> None:
    assert detect_language(text) == lang


@pytest.mark.parametrize(
    ("text", "lang", "motion"),
    [
        (
            "remote work is better than office work",
            "en",
            "This House Believes That remote work is better than office work",
        ),
        ("This House Would ban cars", "en", "This House Would ban cars"),
        ("人工智能将是人类最后一项伟大发明", "zh", "本院认为人工智能将是人类最后一项伟大发明"),
        ("本院对现任政府表示不信任", "zh", "本院对现任政府表示不信任"),
    ],
)
def test_a_bare_topic_becomes_a_motion(text: str, lang: str, motion: str) -> None:
    assert oxford.normalise_motion(text, lang) == motion
