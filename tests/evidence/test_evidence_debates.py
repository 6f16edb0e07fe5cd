"""Debates given documents, in every format and both languages, on a scripted model that
cites a passage it was shown and quotes it exactly, plants a quotation the passage does not
hold, and cites an id no passage has: the checks keep the first and find the other two."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from moot.debates.runner import DebateRun, resume_setup
from moot.debates.settings import prepare, settings
from moot.events import Event, Notice, TurnFinished
from moot.evidence import open_library
from moot.inference.protocol import ChatRequest, Completion, OnText
from moot.inference.scripted import ScriptedModel
from moot.records.transcript import Turn

# A passage as the engine's evidence step lists it: its id in brackets at a line's start.
_SHOWN = re.compile(r"^\[([^\]\n]*¶[^\]\n]*)\] (.+)$", re.MULTILINE)
# Words for a planted quotation that differs at every turn (the voice rules would remove a
# sentence one seat repeats of another's).
_WORDS = "amber basalt cobalt dune ember fjord garnet harbour iris jasper kelp lagoon".split()
_HAN = "甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉"


class Citing(ScriptedModel):
    """Speaks, wherever it is shown passages, three sentences: the first passage quoted
    exactly and cited; a quotation it does not hold, cited to it; an id no passage has."""

    def __init__(self, model_id: str = "scripted") -> None:
        super().__init__(model_id=model_id)
        self.planted: list[dict[str, str]] = []  # each speech's (id, exact quote) as written

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        last = request.messages[-1].content if request.messages else ""
        shown = _SHOWN.findall(last)
        if request.reply_schema is None and request.closer is None and shown:
            # Words of the turn's own (its seed), so a resumed debate speaks as the whole one.
            self.queue(self.speech(*shown[0], n=request.sampling.seed % 997 + 1))
        return super().chat(request, on_text=on_text)

    def speech(self, pid: str, text: str, *, n: int) -> str:
        if re.search(r"[\u4e00-\u9fff]", text):
            quote = text[:12]
            made = "".join(_HAN[(n * 3 + i) % len(_HAN)] for i in range(6)) + "号决议已经批准"
            self.planted.append({"id": pid, "quote": quote, "made": made})
            said = f"文件支持本方：“{quote}”[{pid}]。文件还写道“{made}”[{pid}]。"
            said += f"另一份附件也同意[附件{n}.pdf p.{n + 40} ¶9]。"
        else:
            quote = " ".join(text.split()[:6]).rstrip(".,;:")
            made = " ".join(_WORDS[(n * 5 + i) % len(_WORDS)] for i in range(5)) + " were promised"
            self.planted.append({"id": pid, "quote": quote, "made": made})
            said = f'The documents back this side: "{quote}" [{pid}]. '
            said += f'They also report that "{made}" [{pid}]. '
            said += f"Annex {n} agrees [annex-{n}.pdf p.{n + 40} ¶9]."
        return said


MOTIONS = {
    "en": "Northwind Logistics should hedge its diesel purchases",
    "zh": "本公司应当在华东地区新建冷链仓库",
}
PARAMS: dict[str, dict[str, Any]] = {
    "oxford": {"max_rounds": 3},
    "decision": {"rounds": 1, "positions": ("build", "wait")},
    "challenge": {"rounds": 1},
    "adversarial": {"rounds": 1},
}


def run(
    tmp_path: Path,
    fmt: str,
    lang: str,
    documents: Path,
    *,
    listeners: list[Any] | None = None,
    each_its_own: bool = False,
    **params: Any,
) -> tuple[Any, Citing]:
    """A debate of FMT given DOCUMENTS on Citing models: one for every seat, or with
    EACH_ITS_OWN one of its own for each model reference (named by it)."""
    models = ("a", "b") if fmt == "adversarial" else ()
    chosen = settings(
        motion=MOTIONS[lang], format=fmt, lang=lang, seed=5, models=models,
        params={**PARAMS[fmt], "evidence": [str(documents)], **params},
        run={"dry_run": True},
    )  # fmt: skip
    setup = prepare(chosen, out_dir=tmp_path / "out", check_models=False)
    model, own = Citing(), {}

    def factory(ref: str) -> Citing:
        return own.setdefault(ref, Citing(model_id=ref)) if each_its_own else model

    result = DebateRun(setup, model_factory=factory, listeners=listeners).run()
    return result, model


def checked(turn: Turn) -> list[tuple[str, str | None, str]]:
    assert turn.evidence is not None
    return [(c.cited, c.quote, c.check) for c in turn.evidence.citations]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", ["oxford", "decision", "challenge", "adversarial"])
def test_the_checks_keep_a_true_quotation_and_find_the_planted_ones(
    tmp_path: Path, documents: Path, fmt: str, lang: str
) -> None:
    events: list[Event] = []
    result, model = run(tmp_path, fmt, lang, documents, listeners=[events.append])
    transcript = result.transcript
    cited = [t for t in transcript.turns if t.evidence and t.evidence.citations]
    assert cited and model.planted, "no speech was shown passages"
    whole = 0
    for turn in cited:
        found = {c.cited: c for c in turn.evidence.citations}  # type: ignore[union-attr]
        for c in turn.evidence.citations:  # type: ignore[union-attr]
            if c.cited.startswith(("annex-", "附件")):
                assert (c.check, c.id) == ("unknown_id", None)
            elif c.quote in {p["made"] for p in model.planted}:
                assert c.check == "quote_not_found", c
            else:
                assert c.check == "ok", c
                assert c.id in turn.evidence.shown  # type: ignore[union-attr]
        checks = [c.check for c in turn.evidence.citations]  # type: ignore[union-attr]
        whole += checks == ["ok", "quote_not_found", "unknown_id"]
        assert found  # each cited id once at least
    assert whole >= 1, [checked(t) for t in cited]
    # The live view was told of each citation that does not hold, in the debate's language.
    said = [e.message for e in events if isinstance(e, Notice)]
    flagged = [m for m in said if ("annex-" in m or "附件" in m)]
    assert len(flagged) == sum(
        c.check == "unknown_id"
        for t in cited
        for c in t.evidence.citations  # type: ignore[union-attr]
    )
    # The record keeps every passage used and nothing else of the documents.
    record = transcript.evidence
    assert record is not None and record.files
    used = {i for t in transcript.turns if t.evidence for i in t.evidence.shown}
    used |= {c.id for t in cited for c in t.evidence.citations if c.id}  # type: ignore[union-attr]
    assert set(record.passages) == used
    saved = json.loads((tmp_path / "out" / "transcript.json").read_text())
    assert saved["evidence"]["passages"] == record.passages
    kept = json.dumps(saved, ensure_ascii=False)
    unused = [p.text for p in open_library(documents).passages if p.id not in used]
    assert unused and not [text for text in unused if text in kept]


def test_a_judge_is_told_which_citations_held(tmp_path: Path, documents: Path) -> None:
    result, model = run(tmp_path, "oxford", "en", documents)
    told_checks = "was checked against the documents"
    judged = [
        r for r in model.requests
        if r.reply_schema is not None and told_checks in r.messages[-1].content
    ]  # fmt: skip
    assert judged
    told = judged[-1].messages[-1].content
    assert "supported: the passage exists and says this" in told
    assert "unsupported: no such passage" in told
    assert "unsupported: the passage does not say this" in told
    # The chair's verdict, a speech of no side, is told them too; a side's speech never is.
    speeches = [r for r in model.requests if r.reply_schema is None]
    chair = [r for r in speeches if r.session == "chair"]
    assert chair and told_checks in chair[-1].messages[-1].content
    sides = [r for r in speeches if r.session in ("proposition", "opposition", "devil")]
    assert sides and not any(told_checks in r.messages[-1].content for r in sides)


def test_a_resumed_debate_reuses_the_cached_index_and_shows_the_same_passages(
    tmp_path: Path, documents: Path
) -> None:
    whole, _ = run(tmp_path / "whole", "oxford", "en", documents)

    class Crash(Exception):
        pass

    def crash(event: Event) -> None:
        if isinstance(event, TurnFinished) and event.turn.index == 4:
            raise Crash

    with pytest.raises(Crash):
        run(tmp_path / "cut", "oxford", "en", documents, listeners=[crash], keep_sources=True)
    folder = tmp_path / "cut" / "out"
    cache = folder / "evidence"
    kept = {p.name: p.stat().st_mtime_ns for p in (cache / "paragraphs").iterdir()}
    again, records = resume_setup(folder)
    assert again.evidence == (documents.absolute(),)
    resumed = DebateRun(again, model_factory=lambda ref: Citing(), replay=records).run()
    # Nothing read again: every document's paragraphs came from the cache.
    assert {p.name: p.stat().st_mtime_ns for p in (cache / "paragraphs").iterdir()} == kept
    turns = resumed.transcript.turns
    assert [t.evidence.shown if t.evidence else None for t in turns] == [
        t.evidence.shown if t.evidence else None for t in whole.transcript.turns
    ]
    # The turns before the cut were replayed with their ledgers, the passages they used kept.
    assert turns[0].evidence and turns[0].evidence.citations
    record = resumed.transcript.evidence
    assert record is not None and set(turns[0].evidence.shown) <= set(record.passages)


def test_a_changed_document_is_read_again_on_resume(tmp_path: Path, documents: Path) -> None:
    memo = documents / "notes" / "memo.md"
    result, _ = run(tmp_path, "challenge", "en", documents, keep_sources=True)
    cache = tmp_path / "out" / "evidence" / "paragraphs"
    before = {p.name for p in cache.iterdir()}
    memo.write_text(memo.read_text() + "\nDiesel hedging was discussed at length.\n")
    again, _ = resume_setup(tmp_path / "out")
    DebateRun(replace(again, out_dir=tmp_path / "out")).documents()  # read before any model
    after = {p.name for p in cache.iterdir()}
    assert len(after) == len(before) and after != before  # the memo's entry replaced


def test_without_documents_nothing_changes(tmp_path: Path) -> None:
    chosen = settings(motion=MOTIONS["en"], seed=5, params={"max_rounds": 3}, run={"dry_run": True})
    setup = prepare(chosen, out_dir=tmp_path / "out", check_models=False)
    model = Citing()
    result = DebateRun(setup, model_factory=lambda ref: model).run()
    assert result.transcript.evidence is None
    assert all(t.evidence is None for t in result.transcript.turns)
    saved = json.loads((tmp_path / "out" / "transcript.json").read_text())
    assert "evidence" not in saved and all("evidence" not in t for t in saved["turns"])
    assert not model.planted and not (tmp_path / "out" / "evidence").exists()


@pytest.mark.parametrize("given", ["missing", "empty", "notes.csv"])
def test_documents_with_nothing_to_read_exit_2_in_one_line_and_leave_nothing(
    cli: Any, tmp_path: Path, given: str
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    out = tmp_path / "out"
    proc = cli(
        "run", MOTIONS["en"], "--dry-run", "--yes", "--quiet", "--max-rounds", "3",
        "--evidence", str(tmp_path / given), "--out", str(out), home=tmp_path / "home",
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith("hint:"), lines
    assert str(tmp_path / given) in lines[0]
    assert not out.exists()  # no folder, no cache


class _Pool:
    """Scripted models by reference: the speakers cite, each judge is a model of its own."""

    def __init__(self) -> None:
        self.models: dict[str, ScriptedModel] = {}

    def get(self, ref: str) -> ScriptedModel:
        if ref not in self.models:
            self.models[ref] = Citing() if ref == "speaker" else ScriptedModel(model_id=ref)
        return self.models[ref]


@pytest.mark.usefixtures("moot_home", "any_model_name")
def test_moot_judge_asks_a_new_judge_what_the_first_was_told_though_the_documents_be_gone(
    tmp_path: Path, documents: Path
) -> None:
    import shutil

    import moot

    pool = _Pool()
    moot.debate(
        MOTIONS["en"], model="speaker", roles={"judge": "original-judge"}, seed=5,
        out=tmp_path / "debate", pool=pool, max_rounds=3, evidence=[str(documents)],
    )  # fmt: skip
    shutil.rmtree(documents)
    again = _Pool()
    moot.judge(tmp_path / "debate" / "transcript.json", judges=["new-judge"], pool=again)
    first = [r.messages for r in pool.models["original-judge"].requests]
    new = again.models["new-judge"].requests
    assert new and all(r.messages in first for r in new)
    assert any("was checked against the documents" in r.messages[-1].content for r in new)


class _Small(Citing):
    """A model whose context leaves no room for passages beside the prompt and the reply."""

    n_ctx = 64


def test_no_passage_is_shown_where_the_models_context_leaves_no_room(
    tmp_path: Path, documents: Path
) -> None:
    chosen = settings(
        motion=MOTIONS["en"], seed=5, run={"dry_run": True},
        params={"max_rounds": 3, "evidence": [str(documents)]},
    )  # fmt: skip
    setup = prepare(chosen, out_dir=tmp_path / "out", check_models=False)
    result = DebateRun(setup, model_factory=lambda ref: _Small()).run()
    assert all(t.evidence is None or not t.evidence.shown for t in result.transcript.turns)
    roomy = type("Roomy", (Citing,), {"n_ctx": 100_000})
    setup = prepare(chosen, out_dir=tmp_path / "again", check_models=False)
    result = DebateRun(setup, model_factory=lambda ref: roomy()).run()
    shown = [t.evidence.shown for t in result.transcript.turns if t.evidence and t.evidence.shown]
    assert shown  # a context with room: the debate's budget, 600 tokens, holds several


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_dry_run_cites_a_passage_in_every_speech_shown_one_and_each_holds(
    tmp_path: Path, documents: Path, lang: str
) -> None:
    chosen = settings(
        motion=MOTIONS[lang], lang=lang, seed=5, run={"dry_run": True},
        params={"max_rounds": 3, "evidence": [str(documents)]},
    )  # fmt: skip
    result = DebateRun(prepare(chosen, out_dir=tmp_path / "out", check_models=False)).run()
    shown = [t for t in result.transcript.turns if t.evidence and t.evidence.shown]
    assert shown
    for turn in shown:
        assert [c.check for c in turn.evidence.citations] == ["ok"]  # type: ignore[union-attr]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_transcript_and_history_show_count_each_seats_and_each_models_citations(
    tmp_path: Path, documents: Path, cli: Any, lang: str
) -> None:
    result, _ = run(tmp_path, "adversarial", lang, documents, each_its_own=True)
    turns = result.transcript.turns
    saved = json.loads((tmp_path / "out" / "transcript.json").read_text(encoding="utf-8"))
    summary = saved["evidence"]["summary"]
    for by, key in (("seats", "role"), ("models", "model")):
        expected: dict[str, dict[str, int]] = {}
        for t in turns:
            if t.evidence is None:
                continue
            tally = expected.setdefault(
                getattr(t, key),
                dict.fromkeys(
                    ("cited", "supported", "unsupported", "unknown_id", "quote_not_found"), 0
                ),
            )
            for c in t.evidence.citations:
                tally["cited"] += 1
                tally["supported" if c.check == "ok" else "unsupported"] += 1
                if c.check != "ok":
                    tally[c.check] += 1
        assert summary[by] == expected
    # Two participants on two models, each speech citing a passage, misquoting it and
    # citing one that no passage is (the voice rules may take a sentence out).
    assert set(summary["models"]) == {"a", "b"}
    for tally in summary["models"].values():
        assert tally["unknown_id"] >= 1 and tally["quote_not_found"] >= 1
        assert tally["unsupported"] == tally["unknown_id"] + tally["quote_not_found"]
        assert tally["cited"] == tally["supported"] + tally["unsupported"]
    assert sum(t["supported"] for t in summary["models"].values()) >= 1
    # The journal's header, written before any turn, has no summary.
    header = json.loads((tmp_path / "out" / "journal.jsonl").read_text().splitlines()[0])
    assert "summary" not in header["evidence"]

    shown = cli("history", "show", str(tmp_path / "out"), home=tmp_path / "home")
    assert shown.returncode == 0, shown.stderr
    a, b = summary["models"]["a"], summary["models"]["b"]
    if lang == "en":
        assert "By model" in shown.stdout
        for name, t in (("a", a), ("b", b)):
            assert (
                f"  {name}: {t['cited']} cited, {t['supported']} supported, "
                f"{t['unsupported']} unsupported ({t['unknown_id']} to no such passage, "
                f"{t['quote_not_found']} misquoted)"
            ) in shown.stdout
    else:
        assert "按模型" in shown.stdout
        assert f"  a：引用{a['cited']}处，{a['supported']}处有据，{a['unsupported']}处无据" in (
            shown.stdout
        )
    seat_lines = [line for line in shown.stdout.splitlines() if line.startswith("  ")]
    assert len(seat_lines) >= len(summary["seats"]) + 2


SOURCES = {"en": ("## Sources", "No citation"), "zh": ("## 来源", "没有一处")}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("fmt", ["oxford", "decision", "challenge", "adversarial"])
def test_the_document_ends_with_the_passages_cited_and_supported_and_history_show_lists_them(
    tmp_path: Path, documents: Path, cli: Any, fmt: str, lang: str
) -> None:
    from moot.formats import get_format

    result, _ = run(tmp_path, fmt, lang, documents)
    cited = [c for t in result.transcript.turns if t.evidence for c in t.evidence.citations]
    held = list(dict.fromkeys(c.id for c in cited if c.check == "ok"))
    # The ids no passage has, and the passages only ever misquoted: none is a source.
    wrong = {c.cited for c in cited if c.check == "unknown_id"}
    wrong |= {c.id for c in cited if c.check == "quote_not_found" and c.id not in held}
    assert held and wrong
    saved = (tmp_path / "out" / get_format(fmt).document).read_text(encoding="utf-8")
    brief = saved.split("<!-- moot: every speech -->")[0]
    heading, _ = SOURCES[lang]
    assert brief.count(heading) == 1
    listed = brief.split(heading)[1]
    assert listed.rstrip().endswith(f"`{held[-1]}`")  # the brief's last section
    for pid in held:
        assert f"`{pid}`" in listed
        colon = "：" if lang == "zh" else ": "
        assert f"`{pid.split(' ')[0]}`{colon}" in listed  # under its document's name
    for bad in wrong:
        assert bad not in listed
    assert result.markdown.count(heading) == 1  # what moot run shows, and moot.debate gives

    shown = cli("history", "show", str(tmp_path / "out"), home=tmp_path / "home")
    assert shown.returncode == 0, shown.stderr
    assert heading.removeprefix("## ") in shown.stdout
    for pid in held:
        assert pid in shown.stdout


def test_a_debate_whose_citations_all_fail_says_so_under_its_sources(
    tmp_path: Path, documents: Path
):
    class Inventing(Citing):
        def speech(self, pid: str, text: str, *, n: int) -> str:
            return f"Annex {n} agrees [annex-{n}.pdf p.{n + 40} ¶9]."

    chosen = settings(
        motion=MOTIONS["en"], format="challenge", seed=5, run={"dry_run": True},
        params={**PARAMS["challenge"], "evidence": [str(documents)]},
    )  # fmt: skip
    setup = prepare(chosen, out_dir=tmp_path / "out", check_models=False)
    result = DebateRun(setup, model_factory=lambda ref: Inventing()).run()
    assert "## Sources\n\nNo citation of the documents was checked as supported." in (
        result.markdown
    )


def test_a_debate_without_documents_has_no_sources_section(tmp_path: Path) -> None:
    chosen = settings(motion=MOTIONS["en"], seed=5, params={"max_rounds": 3}, run={"dry_run": True})
    result = DebateRun(prepare(chosen, out_dir=tmp_path / "out", check_models=False)).run()
    assert "## Sources" not in result.markdown
