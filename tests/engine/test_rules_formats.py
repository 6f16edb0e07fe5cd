"""The rulebooks' guarantees, whatever the model: a scripted model that breaks every rule it
can — it overruns each limit, opens with a chatbot's preamble and a placeholder, narrates,
changes language and gives one-word reasons — runs through every format, and what the
debate shows, journals and passes on keeps the rules or says where it does not."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from moot.debates.runner import DebateRun
from moot.debates.settings import prepare, settings
from moot.engine.audit import check_debate
from moot.engine.rules import length_units, voice_for
from moot.inference.protocol import ChatRequest, Completion, OnText
from moot.inference.scripted import ScriptedModel, _minimal
from moot.records.journal import load
from test_voice import shown_by_turn

EN = [
    f"Remote work saved worker {n} about {n + 40} minutes of travel on day {n}." for n in range(60)
]
ZH = [f"第{n}位员工每天节省了{n + 40}分钟的通勤时间。" for n in range(60)]


class Rulebreaker(ScriptedModel):
    """Every free-text reply: a chatbot's preamble, a placeholder, a narrated sentence, then
    far more than any limit (in Chinese debates, a sentence of English in the middle); every
    prose field of a structured reply: "yes"."""

    def __init__(self, language: str) -> None:
        super().__init__((), model_id="rulebreaker")
        self.language = language

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        if request.reply_schema is None:
            body = EN if self.language == "en" else ZH[:4] + EN[:1] + ZH[4:]
            opening = "Sure! Here is my speech. I am [Your Name]. "
            narration = "In this debate, both sides spoke well. "
            self.queue(opening + narration + " ".join(body))
        else:
            reply = json.dumps(_minimal(request.reply_schema))
            self.queue(reply.replace("a scripted reply with a reason", "yes"))
        return super().chat(request, on_text=on_text)


RUNS: list[tuple[str, str, dict[str, Any]]] = [
    ("oxford", "en", {"params": {"max_rounds": 3}}),
    ("oxford", "zh", {"params": {"max_rounds": 3}}),
    ("challenge", "en", {"params": {"rounds": 2}}),
    ("decision", "en", {"params": {"positions": ("ban cars", "keep cars")}}),
    ("adversarial", "en", {"models": ("alpha", "beta"), "params": {"rounds": 2}}),
    ("adversarial", "zh", {"models": ("alpha", "beta"), "params": {"rounds": 2}}),
]


@pytest.mark.parametrize(("fmt", "lang", "options"), RUNS, ids=[f"{f}-{g}" for f, g, _ in RUNS])
def test_a_model_that_breaks_every_rule_is_kept_to_them(
    tmp_path: Path, any_model_name: None, fmt: str, lang: str, options: dict[str, Any]
) -> None:
    motion = "cities should ban private cars" if lang == "en" else "城市应当禁止私家车"
    chosen = settings(motion=motion, format=fmt, lang=lang, seed=4, **options)
    setup = prepare(chosen, out_dir=tmp_path / "out")
    events: list[Any] = []
    model = Rulebreaker(lang)
    DebateRun(setup, listeners=[events.append], model_factory=lambda ref: model).run()
    transcript, _ = load(tmp_path / "out" / "transcript.json")

    sides = setup.format.cast(setup.params).sides
    report = check_debate(transcript, sides)
    assert report.limited, "every format limits its speeches"
    assert report.over == 0  # nothing longer than its limit, in the file
    assert not report.broken, [t for t in report.turns if t.undeclared]

    shown = shown_by_turn(events)
    speeches = [t for t in transcript.turns if t.data is None]
    for turn in speeches:
        assert turn.limit is not None and length_units(turn.text) <= turn.limit
        assert shown[turn.index].strip() == turn.text  # shown as kept, nothing taken back
        assert not turn.text.startswith("Sure") and "[Your Name]" not in turn.text
        if voice_for(sides.get(turn.role, ()), lang).speaks_for_a_side:  # a chair may narrate
            assert "In this debate" not in turn.text
        if lang == "zh":
            assert not re.search(r"[A-Za-z]{3,}", turn.text), turn.text
    for turn in transcript.turns:
        if turn.data is not None and "yes" in json.dumps(turn.data):
            assert any(f.startswith("hollow reply") for f in turn.flags), turn.step
