"""The decision format's orchestration, on scripted models through the real engine and pack."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import Cli
from moot.debates.runner import DebateResult, DebateRun
from moot.debates.settings import DebateSetup
from moot.errors import CallTimeoutError, MootError, UsageError
from moot.events import Notice, TurnFinished
from moot.formats.base import RunOptions
from moot.formats.decision import flow as decision
from moot.formats.decision.document import FRONTMATTER_KEYS, SECTIONS, render_frontmatter
from moot.formats.decision.flow import FORMAT, rotation
from moot.formats.decision.framing import Plan, Seat, apply_corrections, parse_positions
from moot.formats.decision.schemas import sections_schema, token_budget, verdict_schema
from moot.inference.protocol import ChatRequest
from moot.inference.scripted import ScriptedModel
from moot.prompts import builtin_root, load_pack
from moot.speeches import brief

TOPIC = "Postgres vs MySQL vs SQLite for a small analytics app"
HEADINGS = [
    "## Decision",
    "## Confidence",
    "## Key reasoning",
    "## Irreducible trade-offs",
    "## What would change this decision",
    "## Dissenting position",
]


def verdict(recommendation: str = "Postgres", axis: str = "simplicity") -> str:
    return json.dumps(
        {
            "recommendation": recommendation,
            "axis": axis,
            "decision": "Postgres handles analytics queries best at this size.",
            "confidence": "medium",
            "confidence_reason": "Postgres answered more of the objections.",
        }
    )


def sections(dissent: str = "MySQL") -> str:
    return json.dumps(
        {
            "key_reasoning": ["window functions", "JSON support", "mature extensions"],
            "trade_offs": ["more to operate than SQLite", "fewer managed hosts than MySQL"],
            "what_would_change": "A single-user app with no concurrent writers.",
            "dissent_position": dissent,
            "dissent": "MySQL is simpler to host and fast enough for small analytics.",
        }
    )


def choices(schema: type[Any], name: str) -> list[str]:
    node = schema.model_json_schema()["properties"][name]
    return list(node.get("enum", [node.get("const")]))


class Room:
    """Scripted debaters who say something distinct every turn, and a scripted judge."""

    def __init__(self, **overrides: Callable[[ChatRequest], str]) -> None:
        self.counter = 0
        self.overrides = overrides  # role → reply function for that role's free-text turns
        self.verdict = ""  # "": the first position wins, the second dissents
        self.sections = ""
        self.model = ScriptedModel(model_id="scripted")
        self.model.queue(*[self.reply] * 500)

    def reply(self, request: ChatRequest) -> str:
        self.counter += 1
        schema = request.reply_schema
        if schema is not None:
            if schema.__name__ == "Verdict":
                return self.verdict or verdict(choices(schema, "recommendation")[0])
            if schema.__name__ == "DecisionSections":
                return self.sections or sections(choices(schema, "dissent_position")[0])
            return json.dumps(
                {"contested": True, "positions": ["cats", "dogs"], "out_of_scope": []}
            )
        role = request.session or "?"
        if role in self.overrides:
            return self.overrides[role](request)
        return f"Speech number {self.counter} by {role}: a distinct argument with evidence."

    def requests(self, step_marker: str) -> list[ChatRequest]:
        return [r for r in self.model.requests if step_marker in r.messages[-1].content]


def run_decision(
    tmp_path: Path | None,
    room: Room,
    *,
    topic: str = TOPIC,
    language: str = "en",
    ask: Callable[[str], str] | None = None,
    events: list[Any] | None = None,
    **options: Any,
) -> DebateResult:
    params = FORMAT.params(RunOptions(**options))
    setup = DebateSetup(
        format=FORMAT,
        motion=FORMAT.motion(topic, language),
        language=language,  # type: ignore[arg-type]
        seed=5,
        params=params,
        out_dir=tmp_path / "out" if tmp_path else None,
    )
    listeners = [events.append] if events is not None else []
    debate = DebateRun(setup, listeners=listeners, model_factory=lambda ref: room.model, ask=ask)
    return debate.run()


def steps(result: DebateResult) -> list[tuple[str, str]]:
    return [(t.role, t.step) for t in result.transcript.turns]


def expected(debaters: int, rounds: int) -> list[tuple[str, str]]:
    roles = [f"debater_{s}" for s in "abcd"[:debaters]]
    out = [(r, "opening") for r in roles]
    for _ in range(rounds):
        out += [(r, "rebut") for r in roles]
    if rounds:
        out += [(r, "steelman") for r in roles]
    return out + [("judge", "judge_decision"), ("judge", "judge_document")]


# -- phases -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "rounds", "preset"),
    [
        ({"preset": "quick"}, 0, "quick"),
        ({}, 1, "standard"),
        ({"preset": "standard"}, 1, "standard"),
        ({"preset": "deep"}, 2, "deep"),
        ({"preset": "deep", "rounds": 3}, 3, "deep"),
        ({"rounds": 0}, 0, "custom"),
        ({"rounds": 1}, 1, "custom"),
        ({"rounds": 3}, 3, "custom"),
    ],
)
def test_phase_order_for_each_preset_and_rounds(
    options: dict[str, Any], rounds: int, preset: str
) -> None:
    result = run_decision(None, Room(), **options)
    assert steps(result) == expected(3, rounds)
    fm = result.transcript.result["frontmatter"]  # type: ignore[index]
    assert (fm["rounds"], fm["preset"]) == (rounds, preset)
    assert result.transcript.stop_reason == "completed"


@pytest.mark.parametrize("rounds", [0, 2])
def test_the_judge_comes_after_the_rounds_and_carries_no_round_number(
    tmp_path: Path, rounds: int
) -> None:
    room = Room()
    result = run_decision(tmp_path, room, rounds=rounds)
    numbered = [(t.step, t.round) for t in result.transcript.turns if t.step != "framing"]
    last = rounds + 2 if rounds else 1  # the steelman swap, or the openings
    assert [r for step, r in numbered if step.startswith("judge")] == [None, None]
    assert {r for step, r in numbered if not step.startswith("judge")} == set(range(1, last + 1))
    md = (tmp_path / "out" / "decision.md").read_text()
    assert f"round {last + 1}" not in md.lower() and "None" not in md
    assert not any("None" in r.messages[-1].content for r in room.model.requests)


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"preset": "quick", "rounds": 2}, "--preset quick"),
        ({"preset": "standard", "rounds": 3}, "--preset standard"),
        ({"preset": "fast"}, "--preset"),
        ({"rounds": -1}, "--rounds"),
        ({"rounds": 7}, "--rounds"),
        ({"positions": ("A",)}, "1 position"),
        ({"positions": ("A", "B", "C", "D", "E")}, "5 positions"),
        ({"positions": ("A", "a")}, "repeat"),
        ({"positions": ("A", "none")}, "tie"),
    ],
)
def test_bad_options_are_refused_before_anything_runs(options: dict[str, Any], needle: str) -> None:
    with pytest.raises(UsageError, match=needle) as err:
        FORMAT.params(RunOptions(**options))
    assert err.value.hint


def test_openings_see_no_other_opening() -> None:
    room = Room()
    result = run_decision(None, room, preset="quick")
    openings = [t for t in result.transcript.turns if t.step == "opening"]
    requests = [r for r in room.model.requests if r.session and r.session.startswith("debater")]
    assert len(openings) == len(requests) == 3
    for turn, request in zip(openings, requests, strict=True):
        prompt = "\n".join(m.content for m in request.messages)
        assert turn.text not in prompt
        assert not any(o.text in prompt for o in openings if o is not turn)
        assert "Your position:" in prompt and request.sampling.temperature == 0.5
        # The first speech: a system persona and this step's prompt, nothing else.
        assert [m.role for m in request.messages] == ["system", "user"]


def test_each_rebuttal_round_shows_the_others_previous_round_verbatim() -> None:
    room = Room()
    result = run_decision(None, room, rounds=3)
    turns = result.transcript.turns
    by_round: dict[int, dict[str, str]] = {}
    for t in turns:
        if t.step in ("opening", "rebut"):
            by_round.setdefault(t.round, {})[t.role] = t.text
    rebut_requests = [
        r for r in room.model.requests if "rebuttal for round" in r.messages[-1].content
    ]
    assert len(rebut_requests) == 9
    for i, request in enumerate(rebut_requests):
        k, me = i // 3 + 1, request.session or ""
        new = request.messages[-1].content  # what this step adds to the debater's conversation
        previous = by_round[k]  # round k (1-based rebuttal) is stored as round k+1
        for role, text in previous.items():
            assert (text in new) == (role != me), (k, me, role)
        older = [text for r, speeches in by_round.items() if r < k for text in speeches.values()]
        assert not any(text in new for text in older)
        assert f'"""\n{previous[next(r for r in previous if r != me)]}\n"""' in new


def test_each_debater_keeps_its_own_history() -> None:
    """The rulebook's debaters are persistent: a rebuttal and the steelman go on the
    debater's own conversation, its opening and earlier rebuttals in it as its replies."""
    room = Room()
    result = run_decision(None, room, rounds=2)
    for role in ("debater_a", "debater_b", "debater_c"):
        own = [t for t in result.transcript.turns if t.role == role]
        assert [t.step for t in own] == ["opening", "rebut", "rebut", "steelman"]
        asked = [r for r in room.model.requests if r.session == role]
        for n, request in enumerate(asked):
            roles = [m.role for m in request.messages]
            assert roles == ["system"] + ["user", "assistant"] * n + ["user"], (role, n)
            replies = [m.content for m in request.messages if m.role == "assistant"]
            assert replies == [t.text for t in own[:n]]  # its own speeches, in order
            persona = request.messages[0].content
            assert persona.startswith(f"You are Debater {role[-1].upper()}")
        # A step that goes on the conversation does not repeat its header.
        rebut = asked[1].messages[-1].content
        assert "Decision:" not in rebut and "going on from your own earlier speeches" in rebut
        steelman = asked[3].messages[-1].content
        assert "The position you now argue:" in steelman and "Your own position" not in steelman


def test_a_failed_speech_is_left_out_of_the_debaters_history() -> None:
    calls = {"n": 0}

    def second_fails(request: ChatRequest) -> str:
        calls["n"] += 1
        return "" if calls["n"] in (2, 3) else f"MySQL speech {calls['n']} is simple and fast."

    room = Room(debater_b=second_fails)
    result = run_decision(None, room, rounds=2)
    own = [t for t in result.transcript.turns if t.role == "debater_b"]
    assert own[1].note and own[1].note.startswith("degenerate reply")
    second = [r for r in room.model.requests if r.session == "debater_b"][-2]  # round 2
    assert "rebuttal for round 2" in second.messages[-1].content
    assert [m.content for m in second.messages if m.role == "assistant"] == [own[0].text]


def test_the_steelman_rotation_with_three_and_four_positions() -> None:
    room = Room()
    run_decision(None, room, positions=("Postgres", "MySQL", "SQLite", "DuckDB"))
    got = {r.session: r.messages[-1].content for r in room.requests("steelman:")}
    assert "now argue: MySQL" in got["debater_a"] and "now argue: SQLite" in got["debater_b"]
    assert "now argue: DuckDB" in got["debater_c"] and "now argue: Postgres" in got["debater_d"]
    room = Room()
    run_decision(None, room)
    got = {r.session: r.messages[-1].content for r in room.requests("steelman:")}
    assert "now argue: MySQL" in got["debater_a"] and "now argue: SQLite" in got["debater_b"]
    assert "now argue: Postgres" in got["debater_c"] and "debater_d" not in got


def test_rotation_of_two_and_one_seats() -> None:
    a, b = Seat("A", "debater_a", "x"), Seat("B", "debater_b", "y")
    assert rotation([a, b]) == [(a, b), (b, a)]
    assert rotation([a]) == []


def test_a_binary_question_gets_the_pragmatist_as_slot_c() -> None:
    room = Room()
    result = run_decision(None, room, topic="monorepo vs polyrepo")
    assert steps(result) == expected(3, 1)
    persona = next(r for r in room.model.requests if r.session == "debater_c").messages[0].content
    assert "Pragmatist" in persona and "middle ground between monorepo and polyrepo" in persona
    steelmen = {r.session: r.messages[-1].content for r in room.requests("steelman:")}
    assert "now argue: a middle ground between monorepo and polyrepo" in steelmen["debater_b"]
    assert "now argue: monorepo" in steelmen["debater_c"]
    assert result.transcript.result["frontmatter"]["positions"] == ["monorepo", "polyrepo"]  # type: ignore[index]


def test_the_judge_sees_the_whole_record_with_scope_and_preset() -> None:
    room = Room()
    result = run_decision(None, room, out_of_scope=("hosting costs",))
    speeches = [t.text for t in result.transcript.turns if t.role != "judge"]
    assert speeches
    for request in room.model.requests[-2:]:
        prompt = request.messages[-1].content
        assert all(s in prompt for s in speeches)
        assert "hosting costs" in prompt and "standard, 1 rebuttal round" in prompt
        assert request.sampling.temperature == 0.2 and request.messages[0].role == "user"
    schemas = [r.reply_schema for r in room.model.requests[-2:]]
    assert [s.__name__ for s in schemas if s] == ["Verdict", "DecisionSections"]


# -- Phase 0 ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("topic", "language", "positions"),
    [
        (TOPIC, "en", ("Postgres", "MySQL", "SQLite")),
        ("monorepo vs polyrepo", "en", ("monorepo", "polyrepo")),
        ("Should we use Postgres or MySQL?", "en", ("Postgres", "MySQL")),
        ("React, Vue or Svelte for our dashboard", "en", ("React", "Vue", "Svelte")),
        ("Choose between Kafka and RabbitMQ", "en", ("Kafka", "RabbitMQ")),
        ("tabs versus spaces", "en", ("tabs", "spaces")),
        ("What is the meaning of life?", "en", None),
        ("Postgres 还是 MySQL", "zh", ("Postgres", "MySQL")),
        ("PostgreSQL 还是 MySQL 适合小型分析应用？", "zh", ("PostgreSQL", "MySQL")),
        ("A 与 B", "zh", ("A", "B")),
        ("A和B哪个", "zh", ("A", "B")),
        ("我们应该用单体仓库还是多仓库？", "zh", ("单体仓库", "多仓库")),
        ("Python、Go 还是 Rust 更适合写命令行工具", "zh", ("Python", "Go", "Rust")),
        ("租房还是买房", "zh", ("租房", "买房")),
        ("人生的意义是什么？", "zh", None),
        ("小型分析和报表应用的数据库选型", "zh", None),
    ],
)
def test_positions_read_off_the_topic(
    topic: str, language: str, positions: tuple[str, ...] | None
) -> None:
    assert parse_positions(topic, language) == positions


def test_a_parsed_topic_needs_no_model_call_and_a_free_one_asks_the_judge() -> None:
    room = Room()
    run_decision(None, room, preset="quick")
    assert not any("framing" in r.messages[-1].content for r in room.model.requests)
    room = Room()
    result = run_decision(None, room, topic="Which pet suits a small flat?", preset="quick")
    framing = room.model.requests[0]
    assert framing.session == "judge" and framing.reply_schema.__name__ == "Framing"  # type: ignore[union-attr]
    assert result.transcript.result["frontmatter"]["positions"] == ["cats", "dogs"]  # type: ignore[index]


def test_an_uncontested_topic_is_refused_with_the_reason() -> None:
    room = Room()
    room.model._replies = [
        json.dumps({"contested": False, "positions": ["a", "b"], "out_of_scope": []})
    ]
    with pytest.raises(UsageError, match="not a contested choice") as err:
        run_decision(None, room, topic="What is the meaning of life?")
    assert "--positions" in err.value.hint


def test_an_uncontested_topic_can_still_be_given_positions_when_asked() -> None:
    room = Room()
    room.model._replies = [
        json.dumps({"contested": False, "positions": ["a", "b"], "out_of_scope": []}),
        *room.model._replies,
    ]
    replies = ["positions: rent | buy"]
    events: list[Any] = []
    result = run_decision(
        None,
        room,
        topic="Where should I live?",
        preset="quick",
        events=events,
        ask=lambda proposal: replies.pop(0) if replies else "",
    )
    assert any(isinstance(e, Notice) and "not a contested choice" in e.message for e in events)
    assert result.transcript.result["frontmatter"]["positions"] == ["rent", "buy"]  # type: ignore[index]


def test_too_many_positions_in_the_topic_are_refused_unless_corrected() -> None:
    topic = "A vs B vs C vs D vs E"
    with pytest.raises(UsageError, match="5 positions"):
        run_decision(None, Room(), topic=topic)
    replies = ["positions: A | B | C | D"]
    result = run_decision(
        None, Room(), topic=topic, preset="quick", ask=lambda p: replies.pop(0) if replies else ""
    )
    assert steps(result) == expected(4, 0)


def test_corrections_through_ask_change_the_positions_and_scope() -> None:
    shown: list[str] = []
    replies = [
        "positions: Postgres | MySQL",
        "gibberish",
        "out of scope: hosting | cost; rounds: 0",
    ]

    def ask(proposal: str) -> str:
        shown.append(proposal)
        return replies.pop(0) if replies else ""

    room, events = Room(), []
    result = run_decision(None, room, ask=ask, events=events)
    assert len(shown) == 4
    for part in (
        "Postgres | MySQL | SQLite",
        "Team",
        "Debater C",
        "standard",
        "Protocol",
        "Output",
    ):
        assert part in shown[0]
    assert "printed here only" in shown[0] and "positions: A | B | C" in shown[0]
    assert "Postgres | MySQL" in shown[1] and "Pragmatist" in shown[1]
    assert any(isinstance(e, Notice) and "gibberish" in e.message for e in events)
    fm = result.transcript.result["frontmatter"]  # type: ignore[index]
    assert fm["positions"] == ["Postgres", "MySQL"] and fm["out_of_scope"] == ["hosting", "cost"]
    assert (fm["rounds"], fm["preset"]) == (0, "custom")
    assert steps(result) == expected(3, 0)  # two positions + the pragmatist
    assert "hosting; cost" in room.model.requests[0].messages[-1].content


def test_a_proposal_never_accepted_stops_the_debate() -> None:
    with pytest.raises(UsageError, match="not accepted"):
        run_decision(None, Room(), ask=lambda proposal: "positions: only-one")


def test_correction_syntax() -> None:
    plan = Plan("t", ("a", "b"), ("x",), "standard", 1)
    assert apply_corrections(plan, "positions: A, B, C").positions == ("A", "B", "C")
    assert apply_corrections(plan, "立场：甲 | 乙；范围外：无").out_of_scope == ()
    assert apply_corrections(plan, "preset: deep") == Plan("t", ("a", "b"), ("x",), "deep", 2)
    with pytest.raises(UsageError):
        apply_corrections(plan, "rounds: many")


# -- the document -----------------------------------------------------------------------


def split_document(markdown: str) -> tuple[dict[str, Any], str]:
    assert markdown.startswith("---\n")
    head, _, body = markdown[4:].partition("\n---\n")
    data = yaml.safe_load(head)
    assert isinstance(data, dict)
    return data, body


def test_front_matter_has_exactly_the_nine_keys_and_parses() -> None:
    result = run_decision(None, Room(), out_of_scope=("hosting costs",))
    data, body = split_document(result.markdown)
    assert list(data) == list(FRONTMATTER_KEYS)
    assert data["topic"] == TOPIC and data["positions"] == ["Postgres", "MySQL", "SQLite"]
    assert data["recommendation"] == "Postgres" and data["tied_on_axis"] is None
    assert (data["confidence"], data["rounds"], data["preset"]) == ("medium", 1, "standard")
    assert data["out_of_scope"] == ["hosting costs"]
    assert "recommendation: Postgres\n" in result.markdown
    assert [body.index(h) for h in HEADINGS] == sorted(body.index(h) for h in HEADINGS)
    assert "**Recommendation: Postgres.**" in body and "- window functions" in body
    assert "**MySQL** — MySQL is simpler" in body


@pytest.mark.parametrize(
    "text",
    ['say "no": #1', "yes", "null", "- dash", "a\nb: c", "line\u2028break", "控制\x85字符", "1.5"],
)
def test_front_matter_survives_hostile_strings(text: str) -> None:
    fm = dict.fromkeys(FRONTMATTER_KEYS, text)
    fm |= {"positions": [text, "x"], "out_of_scope": [], "rounds": 2, "tied_on_axis": None}
    data = yaml.safe_load(render_frontmatter(fm).strip("-\n"))
    assert data["topic"] == text and data["positions"] == [text, "x"]
    assert data["out_of_scope"] == [] and data["rounds"] == 2 and data["tied_on_axis"] is None


def test_a_tie_is_a_valid_result() -> None:
    room = Room()
    room.verdict = verdict("none", axis="team familiarity")
    room.sections = sections("SQLite")
    result = run_decision(None, room)
    data, body = split_document(result.markdown)
    assert data["recommendation"] == "none" and data["tied_on_axis"] == "team familiarity"
    assert "**No clear winner on axis team familiarity.**" in body
    schema = room.model.requests[-1].reply_schema
    assert schema is sections_schema(("Postgres", "MySQL", "SQLite"), "en")


def test_model_text_cannot_break_the_sections() -> None:
    room = Room()
    room.sections = json.dumps(
        {
            "key_reasoning": ["## Decision", "---", "a\n## b"],
            "trade_offs": ["# x", "> y"],
            "what_would_change": "## Confidence\nnothing",
            "dissent_position": "MySQL",
            "dissent": "p",
        }
    )
    result = run_decision(None, room)
    _, body = split_document(result.markdown)
    assert [line for line in body.splitlines() if line.startswith("#")] == [
        next(line for line in body.splitlines() if line.startswith("# ")),
        *HEADINGS,
    ]


def test_judge_budgets_let_the_longest_valid_reply_close() -> None:
    for lang in ("en", "zh"):
        for schema in (verdict_schema(("a", "b"), lang), sections_schema(("a",), lang)):
            js = schema.model_json_schema()
            longest = sum(
                p.get("maxLength", 0)
                + p.get("maxItems", 0) * p.get("items", {}).get("maxLength", 0)
                for p in js["properties"].values()
            )
            assert longest > 0  # the schema bounds its strings
            assert token_budget(schema) >= longest  # a token per character


def test_a_record_too_long_for_the_context_is_shortened_with_a_notice() -> None:
    # About 4,500 characters a speech, nine speeches: more than a 4,096-token context holds.
    long = " ".join(f"word{i}" for i in range(600))

    room, events = Room(**{f"debater_{s}": (lambda request: long) for s in "abc"}), []
    run_decision(None, room, events=events)
    assert any(isinstance(e, Notice) and "the record is long" in e.message for e in events)
    prompt = room.model.requests[-1].messages[-1].content
    assert long not in prompt and long[:300] in prompt and prompt.count("word") > 9 * 50


def test_the_result_holds_the_front_matter_and_the_six_sections(tmp_path: Path) -> None:
    result = run_decision(tmp_path, Room())
    data = json.loads((tmp_path / "out" / "transcript.json").read_text())
    assert data["format"] == "decision"
    assert set(data["result"]) >= {"frontmatter", *SECTIONS}
    # The format's document, then every speech after it.
    assert brief((tmp_path / "out" / "decision.md").read_text()) == result.markdown
    assert not (tmp_path / "out" / "debate.md").exists()


# -- failures ---------------------------------------------------------------------------


def test_a_debater_that_times_out_is_dropped_and_the_judge_is_told() -> None:
    calls = {"n": 0}

    def flaky(request: ChatRequest) -> str:
        calls["n"] += 1
        if calls["n"] == 2:  # its first rebuttal
            raise CallTimeoutError(seconds=1, model="slow")
        return "MySQL is simple to run and fast enough for this app."

    room, events = Room(debater_b=flaky), []
    result = run_decision(None, room, events=events)
    assert [s for r, s in steps(result) if r == "debater_b"] == ["opening"]
    # Two seats remain for the swap: A and C steelman each other.
    steelmen = {r.session: r.messages[-1].content for r in room.requests("steelman:")}
    assert set(steelmen) == {"debater_a", "debater_c"}
    assert (
        "now argue: SQLite" in steelmen["debater_a"]
        and "now argue: Postgres" in steelmen["debater_c"]
    )
    judge_prompt = room.model.requests[-1].messages[-1].content
    assert "this debater failed here: slow did not finish" in judge_prompt
    assert any(isinstance(e, Notice) and "Debater B failed" in e.message for e in events)
    failures = result.transcript.result["failures"]  # type: ignore[index]
    assert [f["slot"] for f in failures] == ["B"]  # once: it takes no later turns
    assert "Debater B failed" in result.markdown


def test_an_empty_reply_fails_the_slot_but_not_the_debate() -> None:
    room = Room(debater_c=lambda request: "")
    result = run_decision(None, room)
    empty = [t for t in result.transcript.turns if t.role == "debater_c"]
    assert empty and all(t.note and t.note.startswith("degenerate reply") for t in empty)
    rebut_a = next(r for r in room.requests("rebuttal for round") if r.session == "debater_a")
    assert "(no usable reply: degenerate reply: the reply is empty)" in rebut_a.messages[-1].content
    assert result.transcript.result["frontmatter"]["recommendation"] == "Postgres"  # type: ignore[index]


def test_no_usable_opening_at_all_stops_with_a_reason() -> None:
    room = Room(**{f"debater_{s}": (lambda request: "") for s in "abc"})
    with pytest.raises(MootError, match="no debater gave a usable opening"):
        run_decision(None, room)


# -- language, pack, live view ----------------------------------------------------------


def test_a_chinese_debate_uses_the_chinese_pack_and_labels() -> None:
    room, events = Room(), []
    room.verdict = verdict("PostgreSQL")
    room.sections = sections("MySQL")
    topic = "PostgreSQL 还是 MySQL 适合小型分析应用？"
    result = run_decision(None, room, topic=topic, language="zh", events=events)
    assert "你的立场：PostgreSQL" in room.model.requests[0].messages[-1].content
    labels = [e.label for e in events if isinstance(e, TurnFinished)]
    assert "开篇陈述 · 🔵 辩手A · PostgreSQL" in labels and "开篇陈述 · 🟢 辩手C · 务实派" in labels
    data, body = split_document(result.markdown)
    assert data["positions"] == ["PostgreSQL", "MySQL"] and data["topic"] == topic
    for heading in ("## 决定", "## 置信度", "## 关键理由", "## 无法消解的权衡", "## 异议立场"):
        assert heading in body


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_decision_template_renders_in_both_languages(lang: str) -> None:
    pack = load_pack(lang, "decision")  # type: ignore[arg-type]
    pack.validate(decision.STEPS, decision.sample_variables())
    assert set(decision.sample_variables()) == set(decision.STEPS)  # every step is rendered
    for step, variables in decision.sample_variables().items():
        text = pack.render(step, **variables)
        assert len(text) > 40, step
    assert decision.LIMITS
    for step, number in decision.LIMITS.items():
        assert str(number) in pack.render(step, **decision.sample_variables()[step])


def test_both_packs_have_the_same_steps() -> None:
    root = builtin_root()
    en = sorted(p.name for p in (root / "en" / "decision").glob("*.j2"))
    zh = sorted(p.name for p in (root / "zh" / "decision").glob("*.j2"))
    assert en == zh == sorted(f"{s}.j2" for s in decision.STEPS)


# -- the CLI ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--positions", "A"], "1 position"),
        ([f"--positions={p}" for p in "ABCDE"], "5 positions"),
        (["--preset", "quick", "--rounds", "2"], "--preset quick"),
    ],
)
def test_cli_refuses_bad_positions_with_one_line_and_a_hint(
    tmp_path: Path, extra: list[str], needle: str, cli: Cli
) -> None:
    proc = cli("run", TOPIC, "--format", "decision", *extra, home=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("error:") and needle in lines[0]
    assert lines[1].startswith("hint:") and (
        "split the question" in lines[1] or "--preset" in lines[1]
    )


def test_cli_dry_run_is_ephemeral(tmp_path: Path, cli: Cli) -> None:
    home, tmp, cwd = tmp_path / "home", tmp_path / "tmp", tmp_path / "cwd"
    for d in (home, tmp, cwd):
        d.mkdir()

    def listing() -> list[str]:
        return sorted(str(p) for d in (home, tmp, cwd) for p in d.rglob("*"))

    before = listing()
    # A process of its own, so that its temporary folder and working directory are these.
    run = ["run", TOPIC, "--format", "decision", "--dry-run"]
    proc = cli.subprocess(*run, home=home, env={"TMPDIR": str(tmp)}, clean=True, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    assert listing() == before
    assert "recommendation: Postgres" in proc.stdout and "Key reasoning" in proc.stdout
    assert "saved:" not in proc.stdout
    # The rulebook's ephemeral run says so, and how to keep one (the proposal is not shown
    # without a terminal).
    assert "printed only, nothing saved (add --out DIR to keep the debate)" in proc.stdout


def test_an_empty_topic_at_a_terminal_asks_for_a_decision(tmp_path: Path, cli: Cli) -> None:
    from moot.formats.decision.document import ASK_TOPIC, EXAMPLE_TOPICS

    run = ("--format", "decision", "--dry-run")
    # An example's number picks it; Enter then accepts the proposal.
    code, out, err = cli.at_a_terminal(tmp_path, "2\n\n", *run)
    assert code == 0, err
    assert ASK_TOPIC["en"] in out and "This House" not in out
    assert f"  2. {EXAMPLE_TOPICS['en'][1]}" in out
    assert f"topic: {EXAMPLE_TOPICS['en'][1]}" in out  # the document's front matter
    # Enter alone chooses nothing for the user: the topic is empty, with a hint.
    code, out, err = cli.at_a_terminal(tmp_path, "\n", *run)
    assert code == 2 and "error: the topic is empty" in err
    assert '--format decision "Postgres vs MySQL vs SQLite' in err
    # In Chinese the question and the examples are Chinese.
    code, out, err = cli.at_a_terminal(tmp_path, "\n", *run, "--lang", "zh")
    assert code == 2 and ASK_TOPIC["zh"] in out and EXAMPLE_TOPICS["zh"][0] in out


def test_cli_dry_run_saves_only_with_out(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    proc = cli(
        "run",
        "monorepo vs polyrepo",
        "--format",
        "decision",
        "--dry-run",
        "--out",
        str(out),
        "--preset",
        "quick",
        home=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(out)) == ["decision.md", "journal.jsonl", "transcript.json"]
    data, _ = split_document((out / "decision.md").read_text())
    assert list(data) == list(FRONTMATTER_KEYS)


# -- a document built on degraded turns says so -------------------------------------------


def hollow_sections() -> str:
    return json.dumps({**json.loads(sections("MySQL")), "what_would_change": "x"})


def opening_fails(role: str) -> Callable[[ChatRequest], str]:
    """ROLE's opening is empty (a degenerate reply, asked twice); its later turns are fine."""
    said = iter(range(1, 100))

    def reply(request: ChatRequest) -> str:
        if "opening statement" in request.messages[-1].content:
            return ""
        return f"Argument {next(said)} of {role}, with its evidence and a reason."

    return reply


def test_a_clean_decision_document_claims_nothing_about_degraded_turns(tmp_path: Path) -> None:
    result = run_decision(tmp_path, Room())
    assert not [t for t in result.transcript.turns if t.flags or t.note]
    data, body = split_document((tmp_path / "out" / "decision.md").read_text())
    assert data["degraded"] == []
    assert not any(line.startswith(">") for line in body.splitlines())


def test_a_decision_document_on_degraded_turns_says_so_first_the_judge_before_all(
    tmp_path: Path,
) -> None:
    room = Room(debater_b=opening_fails("debater_b"))
    room.sections = hollow_sections()
    run_decision(tmp_path, room)
    data, body = split_document((tmp_path / "out" / "decision.md").read_text())
    degraded = data["degraded"]
    assert [(d["round"], d["role"], d["step"]) for d in degraded] == [
        (1, "debater_b", "opening"),
        (None, "judge", "judge_document"),
    ]
    assert degraded[0]["why"].startswith("degenerate reply")
    assert degraded[1]["why"].startswith("hollow reply: what_would_change says nothing")
    title, blank, own, blank2, rest = body.strip().splitlines()[:5]
    assert title.startswith("# ⚖️ Decision:") and blank == blank2 == ""
    assert own == (
        "> ⚠️ This decision document comes from a degraded reply: Judge · decision document "
        f"({degraded[1]['why']})."
    )
    assert rest == (
        f"> Also built on 1 degraded turn: round 1 · Debater B · opening ({degraded[0]['why']})."
    )
    assert body.index(rest) < body.index("## Decision")
    assert "round 4" not in body.lower() and "None" not in body


ZH_SPEECH = "论据{n}：{who}的理由有证据支持，适合小型分析应用的规模。"


def test_a_chinese_decision_document_names_its_degraded_turns_in_chinese() -> None:
    said = iter(range(1, 100))

    def speaks(who: str) -> Callable[[ChatRequest], str]:
        return lambda request: ZH_SPEECH.format(n=next(said), who=who)

    room = Room(debater_a=speaks("甲"), debater_b=speaks("乙"), debater_c=speaks("丙"))
    room.verdict = verdict("PostgreSQL")
    room.sections = json.dumps({**json.loads(sections("MySQL")), "what_would_change": "x"})
    topic = "PostgreSQL 还是 MySQL 适合小型分析应用？"
    result = run_decision(None, room, topic=topic, language="zh")
    assert [t.step for t in result.transcript.turns if t.flags or t.note] == ["judge_document"]
    _, body = split_document(result.markdown)
    own = body.strip().splitlines()[2]
    assert own.startswith("> ⚠️ 本决策文档出自有缺陷的回答：评审 · 决策文档（空洞的回答：")
    assert own.endswith("）。") and "另基于" not in body
