"""The challenge format on scripted models through the real engine, pack and state file."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, Cli
from moot.debates.runner import DebateResult, DebateRun
from moot.debates.settings import DebateSetup
from moot.errors import CallTimeoutError, MootError, RemoteError, UsageError
from moot.events import Notice, TurnStarted
from moot.formats.base import RunOptions
from moot.formats.challenge.flow import FORMAT
from moot.formats.challenge.schemas import ChallengeParams, effort_model, verdict_schema
from moot.formats.challenge.text import ALL_TIMED_OUT, NO_EXCHANGES, UNCONTESTED
from moot.inference.protocol import ChatRequest, sanitize
from moot.inference.scripted import ScriptedModel

TOPIC = "Should we rewrite the billing service in Rust?"
BODY = (
    "The billing service handles money, so memory safety and predictable latency matter: "
    "the 2023 incident report lists two crashes from null pointers in the Java code, and "
    "benchmarks of comparable Rust services show lower tail latency under the same load."
)
# Each seat in words of its own (a sentence that copies another seat's is cut), in the
# debate's language.
SAID = {
    "en": {
        "proposer": BODY,
        "challenger": (
            "A rewrite stops feature work for a year, and the crashes in that report were "
            "fixed by two null checks; hardening the Java code costs far less than moving "
            "the whole team to a language it does not know."
        ),
        "summariser": (
            "Both sides agree that safety matters; they disagree on whether a full rewrite "
            "is worth its cost when a pilot module could settle the question first."
        ),
    },
    "zh": {
        "proposer": (
            "计费服务处理资金，内存安全和可预测的延迟至关重要；事故报告记录了两次空指针崩溃。"
        ),
        "challenger": (
            "重写会让新功能停滞一年，而那两次崩溃只需两处空值检查就已修复，代价小得多。"
        ),
        "summariser": (
            "双方都同意安全很重要；分歧在于是否值得全面重写，还是先用一个试点模块验证。"
        ),
    },
}
VERDICT = {
    "agreements": [{"point": "safety matters", "evidence": "the incident report"}],
    "disagreements": [
        {"point": "the cost", "proposer": "that a rewrite pays off.", "challenger": "that it won't"}
    ],
    "unresolved": ["what a rewrite costs"],
    "genuine_disagreement": "high",
    "evidence_quality": "medium",
    "challenge_depth": "high",
    "reasoning": "The challenger showed the cost was unsupported.",
    "winner": "challenger",
    "recommendation": "Harden the Java service and rewrite one module as a pilot.",
}
STEPS = {
    "Write your opening position": "opening",
    "Write your response": "response",
    "Write your defence": "defence",
    "Write your follow-up": "follow_up",
    "Write the summary": "summary",
    "开篇立场": "opening",
    "论证的回应": "response",
}

Reply = str | Callable[[ChatRequest], str]


def step_of(request: ChatRequest) -> tuple[str, int]:
    """The step and round a request asks for, read from its prompt."""
    if request.reply_schema is not None:
        return "verdict", 0
    prompt = request.messages[-1].content
    step = next(s for key, s in STEPS.items() if key in prompt)
    found = re.search(r"for round (\d+)", prompt)
    return step, int(found.group(1)) if found else 1


def said(request: ChatRequest) -> str:
    """What the seat asked says, in the language of its prompt."""
    language = "zh" if request.messages[-1].content.startswith("议题") else "en"
    return SAID[language][request.session or "proposer"]


class Script:
    """Scripted speakers: each turn says who it is; `overrides[(step, round)]` replaces it."""

    def __init__(self, overrides: dict[tuple[str, int], Reply] | None = None) -> None:
        self.overrides = overrides or {}
        self.calls: list[tuple[str, int, ChatRequest]] = []
        self.models: dict[str, ScriptedModel] = {}

    def reply(self, request: ChatRequest) -> str:
        step, rnd = step_of(request)
        self.calls.append((step, rnd, request))
        override = self.overrides.get((step, rnd))
        if override is not None:
            return override(request) if callable(override) else override
        if step == "verdict":
            return json.dumps(VERDICT)
        if step == "summary":
            return (
                f"SUMMARY-{len(self.calls)}: the proposer conceded 'cost is high'. {said(request)}"
            )
        return f"{step.upper()}-R{rnd}: {said(request)}"

    def model(self, ref: str) -> ScriptedModel:
        if ref not in self.models:
            self.models[ref] = ScriptedModel([self.reply] * 200, model_id=ref)
        return self.models[ref]

    def prompt(self, step: str, rnd: int) -> str:
        return next(r.messages[-1].content for s, n, r in self.calls if (s, n) == (step, rnd))


def debate(
    tmp_path: Path, script: Script, *, language: str = "en", **params: Any
) -> tuple[DebateResult, list[Any]]:
    setup = DebateSetup(
        format=FORMAT,
        motion=TOPIC if language == "en" else "我们应该用 Rust 重写计费服务吗？",
        language=language,  # type: ignore[arg-type]
        seed=5,
        params=ChallengeParams(**params),
        out_dir=tmp_path / "out",
        role_models={"proposer": "pro-model", "challenger": "con-model"},
    )
    events: list[Any] = []
    result = DebateRun(setup, listeners=[events.append], model_factory=script.model).run()
    return result, events


def state(home: Path, *, dry_run: bool = False) -> dict[str, Any]:
    """The rulebook's `{AI_STATE_DIR}/debate/last-debate.json`, in moot's state directory
    (a dry run's in its own `dry-run/`)."""
    folder = home / "state" / "debate" / ("dry-run" if dry_run else "")
    data: dict[str, Any] = json.loads((folder / "last-debate.json").read_text())
    return data


def warnings(events: list[Any]) -> list[str]:
    return [e.message for e in events if isinstance(e, Notice) and e.level == "warn"]


RULEBOOK_KEYS = [
    "id",
    "topic",
    "proposer",
    "challenger",
    "effort",
    "rounds_completed",
    "max_rounds",
    "status",
    "exchanges",
    "verdict",
    "timestamp",
]


# -- order and context ------------------------------------------------------------------


def test_rounds_follow_the_rulebook_order(tmp_path: Path, moot_home: Path) -> None:
    script = Script()
    result, _ = debate(tmp_path, script, rounds=3)
    got = [(t.round, t.role, t.step) for t in result.transcript.turns]
    assert got == [
        (1, "proposer", "opening"),
        (1, "challenger", "response"),
        (2, "proposer", "defence"),
        (2, "challenger", "follow_up"),
        (3, "summariser", "summary"),  # round 3: rounds 1 … N−2 become a summary
        (3, "proposer", "defence"),
        (3, "challenger", "follow_up"),
        # The synthesis comes after round 3 and carries no round number: 1 … 2, the verdict.
        (None, "summariser", "summary"),
        (None, "judge", "verdict"),
    ]
    assert "None" not in result.markdown
    assert not any("None" in r.messages[-1].content for _, _, r in script.calls)
    assert result.transcript.stop_reason == "completed"
    assert result.transcript.result is not None
    assert result.transcript.result["verdict"]["winner"] == "challenger"


def test_rounds_one_and_two_show_every_earlier_exchange_in_full(
    tmp_path: Path, moot_home: Path
) -> None:
    script = Script()
    debate(tmp_path, script, rounds=2)
    assert "Round 1 - Proposer" not in script.prompt("opening", 1)
    response = script.prompt("response", 1)
    assert f"Round 1 - Proposer (pro-model):\nOPENING-R1: {BODY}" in response
    defence = script.prompt("defence", 2)
    assert f"Round 1 - Proposer (pro-model):\nOPENING-R1: {BODY}" in defence
    assert f"Round 1 - Challenger (con-model):\nRESPONSE-R1: {SAID['en']['challenger']}" in defence
    follow = script.prompt("follow_up", 2)
    assert "OPENING-R1" in follow and "RESPONSE-R1" in follow
    assert f"Round 2 - Proposer (pro-model):\nDEFENCE-R2: {BODY}" in follow
    assert "Summary of" not in defence + follow


def test_from_round_three_a_summary_replaces_all_but_the_last_round(
    tmp_path: Path, moot_home: Path
) -> None:
    script = Script()
    result, _ = debate(tmp_path, script, rounds=4)
    summaries = [t.text for t in result.transcript.turns if t.step == "summary"]
    r3, r4 = script.prompt("defence", 3), script.prompt("defence", 4)
    assert summaries[0] in r3 and "Summary of round 1:" in r3
    assert "OPENING-R1" not in r3 and "RESPONSE-R1" not in r3
    assert "Round 2 - Proposer (pro-model):\nDEFENCE-R2" in r3
    assert "Round 2 - Challenger (con-model):\nFOLLOW_UP-R2" in r3
    assert summaries[1] in r4 and "Summary of rounds 1–2:" in r4
    assert "DEFENCE-R2" not in r4 and "Round 3 - Challenger (con-model):\nFOLLOW_UP-R3" in r4
    assert "Round 4 - Proposer (pro-model):\nDEFENCE-R4" in script.prompt("follow_up", 4)
    # The summariser folds the earlier summary and the next round into a new one.
    second = [r for s, _, r in script.calls if s == "summary"][1].messages[-1].content
    assert summaries[0] in second and "DEFENCE-R2" in second and "OPENING-R1" not in second
    assert "quote every concession word for word" in second


def record(prompt: str) -> str:
    """The part of a prompt before its step's instructions: up to its last quoted text."""
    return prompt[: prompt.rindex('"""')]


def test_each_prompt_extends_the_record_an_earlier_step_saw(
    tmp_path: Path, moot_home: Path
) -> None:
    script = Script()
    debate(tmp_path, script, rounds=3)
    response, defence = script.prompt("response", 1), script.prompt("defence", 2)
    follow_2, follow_3 = script.prompt("follow_up", 2), script.prompt("follow_up", 3)
    defence_3 = script.prompt("defence", 3)
    summary = next(r for s, _, r in script.calls if s == "summary").messages[-1].content
    # A step's prompt opens on the record the step before it saw, and the model only
    # evaluates what was said since: the proposer's defence extends the challenger's
    # response, the follow-up the defence, and so on across the summary.
    assert defence.startswith(record(response)) and "OPENING-R1" in record(response)
    assert follow_2.startswith(record(defence)) and "RESPONSE-R1" in record(defence)
    assert follow_2.startswith(record(summary)) and "RESPONSE-R1" in record(summary)
    assert follow_3.startswith(record(defence_3)) and "Summary of round 1:" in defence_3
    verdict = next(r for s, _, r in script.calls if s == "verdict").messages[-1].content
    assert verdict.index("FOLLOW_UP-R3") < verdict.index("You judge the structured debate")


def test_each_role_is_told_its_rulebook_instructions(tmp_path: Path, moot_home: Path) -> None:
    script = Script()
    debate(tmp_path, script, rounds=2)
    evidence = "back every claim with specific evidence"
    opening = script.prompt("opening", 1)
    assert "take one clear stance" in opening and evidence in opening
    response = script.prompt("response", 1)
    for rule in (
        "no praise before the critique",
        "at least one genuine flaw",
        "concrete alternative",
    ):
        assert rule in response
    assert '"This claim is unsupported."' in response
    assert "concede it explicitly" in script.prompt("defence", 2)
    follow = script.prompt("follow_up", 2)
    assert "reframe your challenges as agreement" in follow and "new weakness" in follow
    verdict = next(r for s, _, r in script.calls if s == "verdict")
    assert verdict.reply_schema is verdict_schema("en")
    assert '"both have merit" is not acceptable' in verdict.messages[-1].content


@pytest.mark.parametrize(
    ("lang", "categories"),
    [
        ("en", "correctness, security implications and other risks, and developer experience"),
        ("zh", "正确性、安全影响及其他风险、开发者体验"),
    ],
)
def test_the_response_asks_for_the_rulebooks_three_categories(
    tmp_path: Path, moot_home: Path, lang: str, categories: str
) -> None:
    script = Script()
    debate(tmp_path, script, rounds=1, language=lang)
    response = script.prompt("response", 1)
    assert categories in response


def test_the_verdict_must_pick_a_side_in_its_grammar() -> None:
    schema = verdict_schema("en").model_json_schema()
    assert schema["properties"]["winner"]["enum"] == ["proposer", "challenger"]
    for key in ("genuine_disagreement", "evidence_quality", "challenge_depth"):
        assert schema["properties"][key]["enum"] == ["high", "medium", "low"]
    assert schema["properties"]["reasoning"]["maxLength"] == 300
    assert set(schema["required"]) == set(schema["properties"])


# -- the state file ---------------------------------------------------------------------


def test_the_state_file_is_written_after_every_exchange(tmp_path: Path, moot_home: Path) -> None:
    seen: list[tuple[int, int, str]] = []

    def peek(step: str, rnd: int) -> Callable[[ChatRequest], str]:
        def reply(request: ChatRequest) -> str:
            data = state(moot_home)
            seen.append((len(data["exchanges"]), data["rounds_completed"], data["status"]))
            return json.dumps(VERDICT) if step == "verdict" else f"{step}-R{rnd}: {said(request)}"

        return reply

    steps = [("response", 1), ("defence", 2), ("follow_up", 2), ("verdict", 0)]
    script = Script({key: peek(*key) for key in steps})
    result, _ = debate(tmp_path, script, rounds=2, effort="high")
    assert seen == [(1, 0, "running"), (2, 1, "running"), (3, 1, "running"), (4, 2, "running")]
    final = state(moot_home)
    assert re.fullmatch(r"debate-\d{8}T\d{6}Z-[0-9a-f]{4}", final["id"])
    own = moot_home / "state" / "debate" / f"{final['id']}.json"
    assert json.loads(own.read_text()) == final
    assert own.stat().st_mode & 0o777 == 0o600
    assert (moot_home / "state" / "debate").stat().st_mode & 0o777 == 0o700
    assert final["topic"] == TOPIC and final["effort"] == "high"
    # The rulebook's keys in its order, and moot's own record under one key more.
    assert list(final) == [*RULEBOOK_KEYS, "moot"]
    assert final["proposer"] == {"tool": "pro-model", "model": "pro-model"}
    assert final["challenger"] == {"tool": "con-model", "model": "con-model"}
    assert (final["rounds_completed"], final["max_rounds"], final["status"]) == (2, 2, "completed")
    assert [(x["round"], x["role"]) for x in final["exchanges"]] == [
        (1, "proposer"),
        (1, "challenger"),
        (2, "proposer"),
        (2, "challenger"),
    ]
    assert list(final["exchanges"][0]) == ["round", "role", "tool", "response", "duration_ms"]
    assert [x["tool"] for x in final["exchanges"]] == ["pro-model", "con-model"] * 2
    assert final["verdict"] == {
        "winner": "con-model",  # the winner's tool
        "reasoning": VERDICT["reasoning"],
        "agreements": ["safety matters (evidence: the incident report)"],
        "disagreements": [
            "the cost: Proposer argues that a rewrite pays off, Challenger argues that it won't"
        ],
        "recommendation": VERDICT["recommendation"],
    }
    extra = final["moot"]
    assert extra["backends"] == {"proposer": "scripted", "challenger": "scripted"}
    assert extra["verdict"] == VERDICT and extra["language"] == "en" and extra["version"] == 2
    assert final["timestamp"].endswith("+00:00")
    assert result.transcript.result is not None
    assert result.transcript.result["state_file"] == str(own)


class Served(ScriptedModel):
    """A scripted stand-in for a model on a server: it knows the server's model name."""

    backend = "openai-compatible"
    model_name = "qwen2.5-7b-instruct"


class Local(ScriptedModel):
    """A scripted stand-in for a GGUF model run in this process."""

    backend = "llama.cpp"
    file_name = "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_each_side_is_its_model_reference_and_the_model_it_ran(
    tmp_path: Path, moot_home: Path
) -> None:
    script = Script()
    url = "http://127.0.0.1:9/v1"
    kinds = {"smollm2-135m": Local, f"{url}#qwen": Served}

    def model(ref: str) -> ScriptedModel:
        return kinds.get(ref, ScriptedModel)([script.reply] * 50, model_id=ref)

    setup = DebateSetup(
        format=FORMAT,
        motion=TOPIC,
        language="en",
        seed=5,
        params=ChallengeParams(rounds=1),
        out_dir=tmp_path / "out",
        role_models={"proposer": "smollm2-135m", "challenger": f"{url}#qwen"},
    )
    result = DebateRun(setup, model_factory=model).run()
    data = state(moot_home)
    assert data["proposer"] == {"tool": "smollm2-135m", "model": Local.file_name}
    assert data["challenger"] == {"tool": url, "model": Served.model_name}
    assert data["verdict"]["winner"] == url  # the challenger won: its tool
    assert data["moot"]["backends"] == {"proposer": "llama.cpp", "challenger": "openai-compatible"}
    assert f"**Proposer:** smollm2-135m (llama.cpp, {Local.file_name})" in result.markdown
    assert f"**Challenger ({url}) had the stronger argument because:**" in result.markdown


def test_a_state_file_of_the_first_shape_is_read_in_the_rulebooks() -> None:
    """Files moot wrote before it kept the rulebook's schema (a fixture written by that
    moot) still read, into the rulebook's shape."""
    from moot.formats.challenge.state import read_state

    old = REPO / "tests" / "fixtures" / "challenge-state-v1.json"
    raw = json.loads(old.read_text())
    assert raw["proposer"] == {"backend": "llama.cpp", "model": "smollm2-135m"}  # the old shape
    read = read_state(old)
    assert read.id == raw["id"] and read.topic == raw["topic"] and read.status == "completed"
    assert read.proposer.model_dump() == {"tool": "smollm2-135m", "model": "smollm2-135m"}
    url = "http://127.0.0.1:8080/v1"
    assert read.challenger.model_dump() == {"tool": url, "model": "qwen2.5-7b"}
    assert [(x.role, x.tool) for x in read.exchanges] == [
        ("proposer", "smollm2-135m"),
        ("challenger", url),
    ]
    assert read.verdict is not None and read.verdict.winner == url
    assert read.verdict.agreements == ["safety matters (evidence: the incident report)"]
    assert read.verdict.disagreements == [
        "Proposer argues rewrite now, Challenger argues harden the Java code first"
    ]
    assert read.moot.version == 1 and read.moot.verdict == raw["verdict"]
    assert read.moot.backends == {"proposer": "llama.cpp", "challenger": "openai-compatible"}
    assert read.timestamp == raw["timestamp"]


def test_a_state_file_of_the_rulebooks_shape_reads_back_as_written(
    tmp_path: Path, moot_home: Path
) -> None:
    from moot.formats.challenge.state import read_state, state_dir

    debate(tmp_path, Script(), rounds=1)
    written = state(moot_home)
    assert read_state(state_dir() / "last-debate.json").model_dump(mode="json") == written
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**written, "proposer": {"tool": "x"}}))
    with pytest.raises(UsageError, match="proposer.model"):
        read_state(bad)


def test_a_seats_tool_and_model_are_known_without_loading_its_model() -> None:
    """What a seat's model is called and where it runs is known without loading it."""
    from types import SimpleNamespace

    from moot.formats.challenge.flow import backend_of, side_of
    from moot.inference.pool import ModelPool, _Turns
    from moot.inference.protocol import ResolvedModel

    class Unloadable(ModelPool):
        def only(self, key: str, resolved: ResolvedModel) -> Any:
            raise AssertionError("the model was loaded")

    resolved = ResolvedModel(
        id="smollm2-135m",
        path=Path("/models/SmolLM2-135M-Instruct.Q4_1.gguf"),
        sha256=None,
        chat_format="chatml",
        context_length=2048,
    )
    seat = _Turns(Unloadable(resolve=lambda ref: resolved), "k", resolved)
    engine = SimpleNamespace(
        roles={"proposer": SimpleNamespace(model=seat)},
        transcript=SimpleNamespace(refs={"proposer": "smollm2-135m"}),
    )
    side = side_of(engine, "proposer")  # type: ignore[arg-type]
    assert side.model_dump() == {"tool": "smollm2-135m", "model": resolved.path.name}
    assert backend_of(seat) == "llama.cpp"


def test_transcript_and_document(tmp_path: Path, moot_home: Path) -> None:
    result, _ = debate(tmp_path, Script(), rounds=1)
    data = json.loads((tmp_path / "out" / "transcript.json").read_text())
    keys = ("format", "motion", "language", "seed", "models", "turns", "scores")
    assert all(k in data for k in (*keys, "stop_reason", "result"))
    assert data["format"] == "challenge" and data["stop_reason"] == "completed"
    verdict = data["result"]["verdict"]
    assert {k: verdict[k] for k in VERDICT} == VERDICT
    md = (tmp_path / "out" / "debate.md").read_text()
    order = [
        "# Debate Summary",
        f"**Topic:** {TOPIC}",
        "**Proposer:** pro-model (scripted)",
        "**Challenger:** con-model (scripted)",
        "**Rounds completed:** 1 of 1",
        "no deterministic verification",
        "**Challenger (con-model) had the stronger argument because:** The challenger showed",
        "## Debate quality",
        "- Genuine disagreement: high",
        "## Key agreements",
        "safety matters (evidence: the incident report)",
        "## Key disagreements",
        "- the cost: Proposer argues that a rewrite pays off, Challenger argues that it won't\n",
        "## Unresolved questions",
        "## Recommendation",
        "### Round 1 - Proposer (pro-model):",
    ]
    assert [md.index(s) for s in order] == sorted(md.index(s) for s in order)


# -- the failure table, row by row ------------------------------------------------------


def timeout(request: ChatRequest) -> str:
    raise CallTimeoutError(seconds=240, model="pro-model")


def backend_down(request: ChatRequest) -> str:
    raise RemoteError("http://127.0.0.1:9/v1 answered 500")


@pytest.mark.parametrize(
    ("reply", "message"),
    [(timeout, ALL_TIMED_OUT), ("", NO_EXCHANGES), (backend_down, NO_EXCHANGES)],
)
def test_the_proposer_failing_in_round_one_aborts(
    tmp_path: Path, moot_home: Path, reply: Reply, message: str
) -> None:
    script = Script({("opening", 1): reply})
    with pytest.raises(MootError) as failed:
        debate(tmp_path, script, rounds=2)
    assert failed.value.message == message
    assert "no debate without an opening position" in failed.value.hint
    data = state(moot_home)
    assert data["status"] == "failed" and data["exchanges"] == []
    assert script.calls and all(step == "opening" for step, _, _ in script.calls)


def test_the_challenger_failing_in_round_one_leaves_the_uncontested_position(
    tmp_path: Path, moot_home: Path
) -> None:
    script = Script({("response", 1): timeout})
    result, events = debate(tmp_path, script, rounds=3)
    assert UNCONTESTED["en"] == "[WARN] Challenger failed. Showing proposer's uncontested position."
    assert UNCONTESTED["en"] in warnings(events)
    assert UNCONTESTED["en"] in result.markdown
    assert f"OPENING-R1: {BODY}" in result.markdown
    assert [s for s, _, _ in script.calls] == ["opening", "response"]
    data = state(moot_home)
    assert data["status"] == "uncontested" and len(data["exchanges"]) == 1
    assert data["verdict"] is None and data["rounds_completed"] == 0
    assert result.transcript.stop_reason == "incomplete"
    failure = result.transcript.result["failures"][0]  # type: ignore[index]
    assert failure["role"] == "challenger" and failure["error"].startswith("timeout:")


@pytest.mark.parametrize(
    ("failing", "reply"),
    [(("follow_up", 2), ""), (("defence", 2), timeout), (("follow_up", 2), backend_down)],
)
def test_a_later_failure_synthesises_from_the_completed_rounds(
    tmp_path: Path, moot_home: Path, failing: tuple[str, int], reply: Reply
) -> None:
    script = Script({failing: reply})
    result, events = debate(tmp_path, script, rounds=3)
    role = "Proposer" if failing[0] == "defence" else "Challenger"
    note = next(w for w in warnings(events) if w.startswith("[WARN] Round 2 is incomplete"))
    assert f"the {role} failed" in note
    assert note in result.markdown
    verdict = next(r for s, _, r in script.calls if s == "verdict").messages[-1].content
    assert "OPENING-R1" in verdict and "RESPONSE-R1" in verdict and "DEFENCE-R2" not in verdict
    assert "Rounds completed: 1" in verdict
    data = state(moot_home)
    assert (data["status"], data["rounds_completed"]) == ("incomplete", 1)
    assert data["verdict"]["winner"] == "con-model"  # the winner's tool
    assert result.transcript.result is not None
    assert result.transcript.result["incomplete_round"] == 2
    assert "defence" not in [s for s, n, _ in script.calls if n == 3]


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("not json {\x07", "PARSE_ERROR:StructuredReplyError:json"),
        (
            json.dumps({**VERDICT, "winner": "both"}),
            "PARSE_ERROR:StructuredReplyError:literal_error",
        ),
        (
            json.dumps({**VERDICT, "reasoning": "x" * 900}),
            "PARSE_ERROR:StructuredReplyError:string_too_long",
        ),
    ],
)
def test_a_verdict_that_fails_to_parse_is_kept_only_as_metadata(
    tmp_path: Path, moot_home: Path, reply: str, code: str
) -> None:
    script = Script({("verdict", 0): reply})
    result, _ = debate(tmp_path, script, rounds=1)
    assert sum(s == "verdict" for s, _, _ in script.calls) == 2  # asked again once
    t = result.transcript.result
    assert t is not None and t["verdict"] is None
    assert t["failures"] == [{"round": None, "role": "judge", "error": code, "timed_out": False}]
    assert f"No verdict: the judge failed ({code})." in result.markdown
    assert f"- after the rounds · judge: {code}" in result.markdown
    assert "None" not in result.markdown
    saved = (tmp_path / "out" / "transcript.json").read_text() + json.dumps(state(moot_home))
    assert "not json" not in saved and "both" not in saved and "x" * 400 not in saved
    assert state(moot_home)["status"] == "incomplete"
    # Every round was held: the rounds did not end early, the verdict is what failed.
    assert result.transcript.stop_reason == "completed"


def test_a_judge_that_times_out_is_a_failure_of_the_synthesis(
    tmp_path: Path, moot_home: Path
) -> None:
    result, _ = debate(tmp_path, Script({("verdict", 0): timeout}), rounds=1)
    assert result.transcript.result is not None
    [failure] = result.transcript.result["failures"]
    assert failure["role"] == "judge" and failure["timed_out"] is True


def test_a_failed_summary_is_announced_and_the_rounds_stay_in_full(
    tmp_path: Path, moot_home: Path
) -> None:
    script = Script({("summary", 1): ""})
    _, events = debate(tmp_path, script, rounds=3)
    assert any(w.startswith("[WARN] The summariser failed") for w in warnings(events))
    r3 = script.prompt("defence", 3)
    assert "OPENING-R1" in r3 and "FOLLOW_UP-R2" in r3 and "Summary of" not in r3


def test_failure_metadata_is_sanitised() -> None:
    assert sanitize("PARSE_ERROR:\x1b[31mX\x00:\ny\x7f") == "PARSE_ERROR:[31mX:y"
    assert len(sanitize("e" * 500)) == 200


# -- effort, models, language -----------------------------------------------------------

INSTALLED = (("big", 900), ("tiny", 100), ("mid", 400))


@pytest.mark.parametrize(
    ("effort", "model"), [("low", "tiny"), ("medium", "mid"), ("high", "mid"), ("max", "big")]
)
def test_effort_picks_an_installed_model(effort: str, model: str) -> None:
    assert effort_model(INSTALLED, effort) == model
    params = FORMAT.params(RunOptions(effort=effort, installed=INSTALLED))
    assert set(FORMAT.cast(params).models.values()) == {model}


def test_an_explicit_model_wins_over_effort() -> None:
    params = FORMAT.params(RunOptions(effort="max", models=("x",), installed=INSTALLED))
    assert FORMAT.cast(params).models == {}
    two = FORMAT.params(RunOptions(effort="max", models=("x", "y"), installed=INSTALLED))
    assert FORMAT.cast(two).models == {"proposer": "x", "challenger": "y"}
    with pytest.raises(UsageError, match="must be different"):
        FORMAT.params(RunOptions(models=("x", "x"), installed=INSTALLED))
    FORMAT.params(RunOptions(models=("x", "x"), installed=(("x", 1),)))  # only one installed


def test_effort_sets_the_token_budget(tmp_path: Path, moot_home: Path) -> None:
    budgets = {}
    for effort in ("low", "max"):
        script = Script()
        debate(tmp_path / effort, script, rounds=1, effort=effort)
        budgets[effort] = script.calls[0][2].sampling.max_tokens
    assert budgets["low"] < budgets["max"]


def test_a_chinese_debate_uses_the_chinese_pack_and_labels(tmp_path: Path, moot_home: Path) -> None:
    script = Script()
    result, events = debate(tmp_path, script, rounds=1, language="zh")
    prompts = [r.messages[-1].content for _, _, r in script.calls]
    assert "议题" in prompts[0] and "第1轮 - 提议方（pro-model）：" in prompts[1]
    labels = [e.label for e in events if isinstance(e, TurnStarted)]
    assert labels[:2] == ["提议方 (pro-model)", "挑战方 (con-model)"]
    assert "# 辩论总结" in result.markdown
    assert "**挑战方 (con-model)的论证更有力，因为：**" in result.markdown
    assert (
        "- the cost：提议方主张that a rewrite pays off，挑战方主张that it won't" in result.markdown
    )
    assert state(moot_home)["verdict"]["disagreements"] == [
        "the cost：提议方主张that a rewrite pays off，挑战方主张that it won't"
    ]


# -- the command line -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--rounds", "0"], "--rounds"),
        (["--rounds", "6"], "--rounds"),
        (["--effort", "huge"], "--effort"),
        (["--model", "a", "--model", "b", "--model", "c"], "at most two --model"),
    ],
)
def test_bad_options_exit_2_with_one_line(
    tmp_path: Path, args: list[str], needle: str, cli: Cli
) -> None:
    proc = cli("run", TOPIC, "--format", "challenge", *args, home=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith("error:") and needle in lines[0] and lines[1].startswith("hint:")


def test_a_dry_run_writes_its_state_file_apart_from_the_real_debates(
    tmp_path: Path, cli: Cli
) -> None:
    """A dry run writes the rulebook's state file as a debate would, in `debate/dry-run/`:
    the last real debate's `last-debate.json`, which other tools read, is left as it was."""
    real = tmp_path / "state" / "debate" / "last-debate.json"
    real.parent.mkdir(parents=True)
    real.write_text('{"id": "the last real debate"}', encoding="utf-8")
    out = tmp_path / "out"
    proc = cli("run", TOPIC, "--format", "challenge", "--dry-run", "--out", str(out), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Debate Summary" in proc.stdout
    assert real.read_text(encoding="utf-8") == '{"id": "the last real debate"}'
    assert [p.name for p in real.parent.glob("*.json")] == ["last-debate.json"]
    data = state(tmp_path, dry_run=True)
    assert data["status"] == "completed" and data["rounds_completed"] == 2
    assert data["proposer"] == {"tool": "smollm2-135m", "model": "echo:smollm2-135m"}
    assert data["verdict"]["winner"] in ("smollm2-135m",)
    assert (tmp_path / "state" / "debate" / "dry-run" / f"{data['id']}.json").is_file()


def test_nothing_saved_writes_no_state_file(tmp_path: Path, cli: Cli) -> None:
    proc = cli("run", TOPIC, "--format", "challenge", "--dry-run", "--no-save", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Debate Summary" in proc.stdout
    assert not (tmp_path / "state").exists() and not (tmp_path / "debates").exists()


# -- the packs --------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_step_renders_in_both_languages_with_its_limits(lang: str) -> None:
    from moot.formats.challenge.flow import STEPS, sample_variables
    from moot.prompts import builtin_root, load_pack

    pack = load_pack(lang, "challenge")  # type: ignore[arg-type]
    variables = sample_variables()
    pack.validate(STEPS, variables)
    assert sorted(p.name for p in pack.dir.glob("*.j2")) == sorted(f"{s}.j2" for s in STEPS)
    assert sorted(p.name for p in (builtin_root() / "en" / "challenge").glob("*.j2")) == sorted(
        p.name for p in pack.dir.glob("*.j2")
    )
    for step in ("opening", "response", "defence", "follow_up"):
        assert "200" in pack.render(step, **variables[step]), step
    summary = pack.render("summary", **variables["summary"])
    assert "350" in summary and "550" in summary


def test_an_interrupted_debate_resumes_from_its_journal(tmp_path: Path, moot_home: Path) -> None:
    from moot.debates.runner import resume_setup

    def interrupt(request: ChatRequest) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        debate(tmp_path, Script({("follow_up", 2): interrupt}), rounds=2, effort="low")
    setup, records = resume_setup(tmp_path / "out")
    assert setup.params == ChallengeParams(rounds=2, effort="low")
    script = Script()
    result = DebateRun(setup, model_factory=script.model, replay=records).run()
    assert [(s, n) for s, n, _ in script.calls] == [
        ("follow_up", 2),
        ("summary", 1),
        ("verdict", 0),
    ]
    assert result.transcript.stop_reason == "completed"
    assert [x["role"] for x in state(moot_home)["exchanges"]] == ["proposer", "challenger"] * 2
    # The resumed debate goes on writing the file it claimed when it began.
    files = sorted((moot_home / "state" / "debate").glob("debate-*.json"))
    assert [f.stem for f in files] == [state(moot_home)["id"]]
    assert json.loads(files[0].read_text())["status"] == "completed"


def test_a_resumed_debate_writes_no_state_file_a_journal_names_by_hand(
    tmp_path: Path, moot_home: Path
) -> None:
    from moot.debates.runner import resume_setup

    def interrupt(request: ChatRequest) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        debate(tmp_path, Script({("defence", 2): interrupt}), rounds=2)
    journal = tmp_path / "out" / "journal.jsonl"
    lines = journal.read_text().splitlines()
    kept = [i for i, line in enumerate(lines) if '"state_id"' in line]
    assert len(kept) == 1
    record = json.loads(lines[kept[0]])
    record["value"] = "../../escaped"
    lines[kept[0]] = json.dumps(record)
    journal.write_text("\n".join(lines) + "\n")
    setup, records = resume_setup(tmp_path / "out")
    DebateRun(setup, model_factory=Script().model, replay=records).run()
    assert (
        not (moot_home / "escaped.json").exists()
        and not (moot_home / "state" / "escaped.json").exists()
    )
    assert len(list((moot_home / "state" / "debate").glob("debate-*.json"))) == 2


# -- a verdict built on degraded turns says so --------------------------------------------

HOLLOW_VERDICT = json.dumps({**VERDICT, "reasoning": "x"})


def test_a_clean_summary_claims_nothing_about_degraded_turns(
    tmp_path: Path, moot_home: Path
) -> None:
    result, _ = debate(tmp_path, Script(), rounds=3)
    assert not [t for t in result.transcript.turns if t.flags or t.note]
    md = (tmp_path / "out" / "debate.md").read_text()
    assert "degraded" not in md and not any(line.startswith(">") for line in md.splitlines())


def test_a_summary_on_degraded_turns_says_so_first_the_verdict_before_all(
    tmp_path: Path, moot_home: Path
) -> None:
    preamble = f"Sure! Here is my response. {SAID['en']['challenger']}"
    script = Script({("response", 1): preamble, ("verdict", 0): HOLLOW_VERDICT})
    result, _ = debate(tmp_path, script, rounds=2)
    flagged = [t for t in result.transcript.turns if t.flags or t.note]
    assert [(t.round, t.step) for t in flagged] == [(1, "response"), (None, "verdict")]
    md = (tmp_path / "out" / "debate.md").read_text()
    title, blank, own, blank2, rest, blank3, topic = md.splitlines()[:7]
    assert title == "# Debate Summary" and blank == blank2 == blank3 == ""
    assert own == (
        "> ⚠️ This verdict comes from a degraded reply: Judge · verdict "
        "(hollow reply: reasoning says nothing: 'x')."
    )
    why = "; ".join(flagged[0].flags)
    assert rest == f"> Also built on 1 degraded turn: round 1 · Challenger · response ({why})."
    assert topic.startswith("- **Topic:**")
    assert "None" not in md


def test_a_chinese_summary_names_its_degraded_verdict_in_chinese(
    tmp_path: Path, moot_home: Path
) -> None:
    result, _ = debate(tmp_path, Script({("verdict", 0): HOLLOW_VERDICT}), rounds=1, language="zh")
    lines = result.markdown.splitlines()
    assert lines[0] == "# 辩论总结"
    assert (
        lines[2] == "> ⚠️ 本裁决出自有缺陷的回答：裁判 · 裁决（空洞的回答：理由没有实际内容：'x'）。"
    )
    assert not lines[4].startswith(">")
