"""Reasoning models: a speaker's thinking is told from its answer in every form models write
it, kept beside the turn, shown dimmed in the live view, and never put in front of another
seat; thinking has a budget of its own, and a reply that is all thinking is asked again with
thinking off."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from conftest import REPO, Cli
from moot.config import THINK_BUDGET, RunSettings, validate_params
from moot.debates.runner import DebateRun
from moot.debates.settings import prepare, settings
from moot.engine.rules import length_units
from moot.engine.turns import Engine, Role
from moot.errors import ReasoningOnlyError, UsageError
from moot.events import Notice, Token, TurnStarted
from moot.inference.protocol import ChatRequest, Completion, OnText, Sampling, messages
from moot.inference.reasoning import (
    HARMONY_FINAL,
    Splitter,
    close_in_prompt,
    opens_thinking,
    split,
)
from moot.inference.remote import OpenAICompatModel
from moot.inference.scripted import ScriptedModel, _value
from moot.prompts import PromptPack
from moot.records.journal import read_journal
from moot.records.transcript import Transcript, Turn
from moot.render import LiveView

# -- the splitter --------------------------------------------------------------------------

PLAN = "I will stress the cost and hide our weak flank."
SPEECH = "Cities gain when cars leave. Streets grow calm. Shops see more walkers."

FORMS = {
    "closed": f"<think>\n{PLAN}\n</think>\n\n{SPEECH}",
    "thinking": f"<thinking>{PLAN}</thinking>{SPEECH}",
    "reasoning": f"<reasoning>{PLAN}</reasoning>\n{SPEECH}",
    "opened by the template": f"{PLAN}\n</think>\n\n{SPEECH}",
    "harmony": f"<|channel|>analysis<|message|>{PLAN}<|end|>"
    f"<|start|>assistant<|channel|>final<|message|>{SPEECH}<|return|>",
    # llama.cpp renders <|end|> as nothing: the next message's start ends the last one.
    "harmony without ends": f"<|channel|>analysis<|message|>{PLAN}"
    f"<|start|>assistant<|channel|>final<|message|>{SPEECH}",
}


def fed(text: str, size: int, *, opened: bool = False) -> tuple[list[tuple[str, str]], Splitter]:
    splitter = Splitter(opened=opened)
    events = []
    for i in range(0, len(text), size):
        events += splitter.feed(text[i : i + size])
    events += splitter.finish()
    return events, splitter


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_every_form_is_split_however_its_tags_fall_across_pieces(form: str, size: int) -> None:
    events, splitter = fed(FORMS[form], size)
    assert splitter.reasoning.strip() == PLAN
    assert splitter.answer.strip() == SPEECH
    assert split(FORMS[form]) == (PLAN, SPEECH)
    kinds = [k for k, _ in events]
    if form == "opened by the template" and size < len(PLAN):
        # Given out as the answer until the closing tag showed it was not: retracted then.
        retracted = kinds.index("retract")
        assert set(kinds[:retracted]) == {"answer"}
        assert (PLAN + "\n").startswith(events[retracted][1])
        events = events[retracted + 1 :]
    assert "".join(t for k, t in events if k == "answer") == SPEECH
    assert "retract" not in [k for k, _ in events]


def test_a_reply_the_backend_says_starts_inside_a_block_is_never_taken_for_an_answer() -> None:
    events, splitter = fed(FORMS["opened by the template"], 4, opened=True)
    assert all(kind != "retract" for kind, _ in events)
    assert "".join(t for k, t in events if k == "answer").strip() == SPEECH
    assert split(FORMS["opened by the template"], opened=True) == (PLAN, SPEECH)


def test_an_unclosed_block_is_all_reasoning_and_no_answer() -> None:
    assert split(f"<think>{PLAN} and on and on") == (f"{PLAN} and on and on", "")
    assert split(PLAN, opened=True) == (PLAN, "")


def test_a_plain_reply_is_all_answer_and_a_stray_angle_bracket_is_text() -> None:
    assert split(SPEECH) == ("", SPEECH)
    events, splitter = fed("a < b, and <thin air> matters", 1)
    assert splitter.answer == "a < b, and <thin air> matters"
    assert not splitter.reasoning


def test_the_closer_ends_whatever_reasoning_is_under_way() -> None:
    think = Splitter()
    think.feed("<thinking>hmm")
    assert think.thinking and think.closer() == "</thinking>\n\n"
    think.feed(think.closer() + "Answer.")
    assert not think.thinking and think.answer == "Answer." and think.closer() == ""
    harmony = Splitter()
    harmony.feed("<|channel|>analysis<|message|>hmm")
    assert harmony.thinking and harmony.closer() == HARMONY_FINAL
    harmony.feed(harmony.closer() + "Answer.")
    assert harmony.answer == "Answer." and harmony.reasoning == "hmm"


def test_a_prompt_that_opens_a_block_is_seen_and_can_be_closed() -> None:
    prompt = "<|im_start|>assistant\n<think>\n"
    assert opens_thinking(prompt) == "<think>"
    assert close_in_prompt(prompt) == prompt + "</think>\n\n"
    assert opens_thinking("<|im_start|>assistant\n") is None
    assert close_in_prompt("plain") == "plain"


# -- scripted models that think, through a real debate ------------------------------------


def speech(n: int) -> str:
    """Each reply in words of its own: short sentences, never another seat's ten in a row."""
    return f"Point {n} is plain. Fewer cars mean calmer streets. Shops gain walkers too."


def secret(n: int) -> str:
    return f"SECRETPLAN{n}"


class Thinker(ScriptedModel):
    """Thinks before every speech in the given form, a secret of the reply's own in its plan;
    asked with thinking off, it speaks at once (unless `stubborn` says it never stops)."""

    def __init__(
        self, form: Callable[[str, str], str], *, stubborn: Callable[[int], bool] = lambda n: False
    ) -> None:
        super().__init__((), model_id="thinker")
        self.form = form
        self.stubborn = stubborn
        self.free = 0

    def chat(self, request: ChatRequest, *, on_text: OnText | None = None) -> Completion:
        if request.reply_schema is None:
            self.free += 1
            n = self.free
            plan = f"I plan {secret(n)} quietly."
            if request.think_budget != 0 or self.stubborn(n):
                self.queue(self.form(plan, speech(n)))
            else:
                self.queue(speech(n))
        return super().chat(request, on_text=on_text)


def oxford(tmp_path: Path, model: ScriptedModel) -> tuple[Any, list[Any]]:
    chosen = settings(motion="cities should ban cars", seed=3, params={"max_rounds": 3})
    setup = prepare(chosen, out_dir=tmp_path / "out")
    events: list[Any] = []
    result = DebateRun(setup, listeners=[events.append], model_factory=lambda ref: model).run()
    return result, events


def prompts(model: ScriptedModel) -> list[str]:
    return [m.content for r in model.requests for m in r.messages]


def streamed(events: list[Any]) -> dict[int, tuple[str, str]]:
    """Per turn: the text streamed as reasoning, and as the speech."""
    shown: dict[int, list[str]] = {}
    current = -1
    for event in events:
        if isinstance(event, TurnStarted):
            current = event.index
            shown[current] = ["", ""]
        elif isinstance(event, Token):
            shown[current][0 if event.reasoning else 1] += event.text
    return {i: (r, s) for i, (r, s) in shown.items()}


SCRIPTED_FORMS: dict[str, Callable[[str, str], str]] = {
    "closed": lambda plan, said: f"<think>\n{plan}\n</think>\n\n{said}",
    "opened by the template": lambda plan, said: f"{plan}\n</think>\n\n{said}",
    "harmony": lambda plan, said: (
        f"<|channel|>analysis<|message|>{plan}<|end|>"
        f"<|start|>assistant<|channel|>final<|message|>{said}"
    ),
}


@pytest.mark.parametrize("form", list(SCRIPTED_FORMS))
def test_no_seat_ever_sees_another_speakers_thinking(tmp_path: Path, form: str) -> None:
    model = Thinker(SCRIPTED_FORMS[form])
    result, events = oxford(tmp_path, model)
    speeches = [t for t in result.transcript.turns if t.data is None]
    assert len(speeches) >= 6
    for turn in speeches:
        assert turn.reasoning is not None and "SECRETPLAN" in turn.reasoning
        assert "SECRETPLAN" not in turn.text and "<" not in turn.text
        assert turn.text.startswith("Point ") and turn.text.endswith("walkers too.")
    # Every prompt of every seat (opponents, the judge's rubric and brief) was built from
    # the answers: the speeches reached the others, the plans reached nobody.
    seen = "\n".join(prompts(model))
    assert "SECRETPLAN" not in seen
    first = speeches[0]
    opponent = next(r for r in model.requests if r.session == "opposition")
    # The opponent goes on the Proposition's conversation: the speech is its answer alone.
    assert opponent.messages[1].role == "assistant" and opponent.messages[1].content == first.text
    judge = [r for r in model.requests if r.session == "judge"]
    said = {t.text for t in speeches}
    assert judge and all(any(x in r.messages[-1].content for x in said) for r in judge)
    assert "SECRETPLAN" not in result.markdown
    # The live view got the plans as reasoning, flagged; the speeches as speech.
    for turn in speeches:
        thought, said = streamed(events)[turn.index]
        assert turn.reasoning in thought
        assert "SECRETPLAN" not in said and said.strip() == turn.text
    # The journal keeps each beside the other.
    records = [r for r in read_journal(tmp_path / "out" / "journal.jsonl") if r["type"] == "turn"]
    assert all("SECRETPLAN" not in r["text"] for r in records)
    assert any("SECRETPLAN" in (r.get("reasoning") or "") for r in records)


def test_the_length_limit_counts_the_answer_only(tmp_path: Path) -> None:
    long_plan = " ".join(f"step{i}" for i in range(400))
    model = Thinker(lambda plan, said: f"<think>{plan} {long_plan}</think>{said}")
    result, events = oxford(tmp_path, model)
    first = next(t for t in result.transcript.turns if t.step == "speech")
    assert first.limit == 150
    assert first.text == speech(1)
    assert first.length == length_units(speech(1)) and not first.cut
    assert first.reasoning is not None and first.reasoning.endswith("step399")
    thought, _ = streamed(events)[first.index]
    assert length_units(thought) > 400  # streamed whole: the limit did not stop it


def test_a_reply_that_is_all_thinking_is_asked_again_with_thinking_off(tmp_path: Path) -> None:
    model = Thinker(lambda plan, said: f"<think>{plan} and so on")  # never closed
    result, events = oxford(tmp_path, model)
    first = next(t for t in result.transcript.turns if t.step == "speech")
    assert first.text == speech(2)  # the second draw, with thinking off
    assert first.note is None and first.reasoning is None
    asked = [r for r in model.requests if r.reply_schema is None][:2]
    assert [r.think_budget for r in asked] == [THINK_BUDGET, 0]
    warned = [e.message for e in events if isinstance(e, Notice)]
    assert any("all reasoning and no answer; asking again with thinking off" in w for w in warned)
    assert "SECRETPLAN1" not in "\n".join(prompts(model))


def test_a_model_that_never_stops_thinking_is_stopped_at_its_budget(tmp_path: Path) -> None:
    endless = " ".join(f"w{i}" for i in range(5000))
    model = Thinker(lambda plan, said: f"<think>{plan} {endless}")
    result, events = oxford(tmp_path, model)
    first = next(t for t in result.transcript.turns if t.step == "speech")
    assert first.text == speech(2)
    thought, said = streamed(events)[first.index]
    assert THINK_BUDGET - 5 <= len(thought.split()) <= THINK_BUDGET + 5  # not 5000
    assert said.strip() == speech(2)


def test_a_second_reply_that_is_all_thinking_is_the_turns_failure(tmp_path: Path) -> None:
    model = Thinker(lambda plan, said: f"<think>{plan}", stubborn=lambda n: n <= 2)
    result, events = oxford(tmp_path, model)
    first = next(t for t in result.transcript.turns if t.step == "speech")
    assert first.note == "degenerate reply: the reply is all reasoning and no answer"
    assert first.text == ""
    assert first.reasoning is not None and "SECRETPLAN2" in first.reasoning
    # Asked once with thinking off, then given up: the third reply is the next turn's first.
    free = [r.think_budget for r in model.requests if r.reply_schema is None]
    assert free[:3] == [THINK_BUDGET, 0, THINK_BUDGET]
    warned = [e.message for e in events if isinstance(e, Notice)]
    assert any("all reasoning and no answer; kept as it is" in w for w in warned)
    assert "SECRETPLAN" not in "\n".join(prompts(model))


def test_a_degenerate_reply_that_thinks_keeps_its_reasoning_out_of_the_text() -> None:
    completion = Completion(text="", reasoning="a plan")
    with pytest.raises(ReasoningOnlyError) as caught:
        from moot.inference.protocol import check_not_degenerate

        check_not_degenerate(completion)
    assert caught.value.raw == "" and caught.value.reasoning == "a plan"
    assert "--think-budget" in caught.value.hint


# -- the engine's budget and thinking off -------------------------------------------------


def engine(tmp_path: Path, model: ScriptedModel, **kw: Any) -> Engine:
    (tmp_path / "pack" / "en" / "t").mkdir(parents=True)
    (tmp_path / "pack" / "en" / "t" / "say.j2").write_text("Speak on {{ motion }}.")
    transcript = Transcript(format="t", motion="cars", language="en", seed=1, models={})
    return Engine(
        pack=PromptPack(tmp_path / "pack", "en", "t"),
        roles={"a": Role("a", model, 0.7)},
        transcript=transcript,
        **kw,
    )


def test_the_think_budget_goes_beside_the_speechs_own_and_judges_never_think(
    tmp_path: Path,
) -> None:
    from moot.formats.oxford.schemas import Brief

    model = ScriptedModel([speech(1), speech(2)])
    eng = engine(tmp_path, model, think_budget=300)
    eng.speak("a", "say", round=1, label="A", max_tokens=99, motion="cars")
    eng.speak("a", "say", round=1, label="A", limit=40, motion="cars")
    eng.structured("a", "say", Brief, round=None, label="J", max_tokens=50, motion="cars")
    free, limited, judged = model.requests
    assert (free.think_budget, free.sampling.max_tokens) == (300, 99)
    assert limited.think_budget == 300 and limited.sampling.max_tokens < 300
    # Thinking off; the budget doubled for the longest brief the grammar allows.
    assert (judged.think_budget, judged.sampling.max_tokens) == (0, 100)


def test_a_think_budget_of_zero_turns_thinking_off_for_every_speech(tmp_path: Path) -> None:
    model = ScriptedModel([speech(1)])
    eng = engine(tmp_path, model, think_budget=0)
    turn = eng.speak("a", "say", round=1, label="A", max_tokens=99, motion="cars")
    assert model.requests[0].think_budget == 0
    assert turn.text == speech(1) and turn.reasoning is None


def test_the_think_budget_is_validated_and_named_by_its_option() -> None:
    assert RunSettings().think_budget == THINK_BUDGET
    assert validate_params(RunSettings, think_budget=0).think_budget == 0
    for bad in (-1, 40_000):
        with pytest.raises(UsageError) as caught:
            validate_params(RunSettings, think_budget=bad)
        assert caught.value.message.startswith("--think-budget")
        assert "from 0 to 32768" in caught.value.hint


def test_moot_run_takes_the_think_budget_and_hides_reasoning(tmp_path: Path, cli: Cli) -> None:
    proc = cli("run", "cats", "--dry-run", "--think-budget", "-3", home=tmp_path)
    assert proc.returncode == 2 and "--think-budget" in proc.stderr.splitlines()[0]
    # The example on the reasoning models' page, as written.
    page = (REPO / "docs" / "reasoning.md").read_text(encoding="utf-8")
    example = 'moot run "cities should ban cars" --dry-run --think-budget 256 --hide-reasoning'
    assert f"    {example}\n" in page
    proc = cli(
        "run", "cities should ban cars", "--dry-run", "--think-budget", "256",
        "--hide-reasoning", home=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "thinking…" not in proc.stdout


def test_older_transcripts_load_without_reasoning() -> None:
    turn = Turn.model_validate(
        {"index": 0, "round": 1, "role": "a", "step": "s", "model": "m", "temperature": 0.7,
         "text": "Said."}
    )  # fmt: skip
    assert turn.reasoning is None


# -- the live view ---------------------------------------------------------------------------


def view_of(events: list[Any], **kw: Any) -> str:
    out = io.StringIO()
    view = LiveView(Console(file=out, width=200, color_system=None), **kw)
    for event in events:
        view(event)
    return out.getvalue()


def test_the_live_view_folds_reasoning_into_one_dim_line_or_hides_it() -> None:
    thought = [Token("proposition", f"thought{i} ", reasoning=True) for i in range(120)]
    events = [
        TurnStarted(0, 1, "proposition", "speech", "Proposition", True),
        *thought,
        Token("proposition", "Cars pollute."),
    ]
    shown = view_of(events)
    assert "thinking…" in shown and "120 words" in shown and "thought119" in shown
    assert "thought3 " not in shown  # folded: only its end is shown
    assert shown.index("thought119") < shown.index("Cars pollute.")
    hidden = view_of(events, hide_reasoning=True)
    assert "thought" not in hidden and "thinking" not in hidden and "Cars pollute." in hidden
    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system="standard").print("[dim]x[/]")
    dim = out.getvalue().split("x")[0]
    colour = io.StringIO()
    view = LiveView(Console(file=colour, width=200, force_terminal=True, color_system="standard"))
    for event in events:
        view(event)
    assert dim + "thinking…" in colour.getvalue()


# -- a real OpenAI-compatible server on 127.0.0.1 that returns reasoning_content ----------


class ThinkingServer:
    """Speaks the OpenAI chat-completions API: speeches streamed as server-sent events with
    the model's reasoning in `reasoning_content` (`reasoning` on every other reply, as newer
    vLLM names it); structured replies as one JSON body, reasoning in the message. Thinking
    asked off (chat_template_kwargs), it speaks at once. Every request body is kept."""

    def __init__(self, *, endless: bool = False) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.endless = endless
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._send("application/json", json.dumps({"data": [{"id": "qwen3-think"}]}))

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.bodies.append(body)
                self._send(*server.reply(body, len(server.bodies)))

            def _send(self, kind: str, text: str) -> None:
                data = text.encode()
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def reply(self, body: dict[str, Any], n: int) -> tuple[str, str]:
        off = (body.get("chat_template_kwargs") or {}).get("enable_thinking") is False
        thought = f"The judge must not know {secret(n)}."
        fmt = body.get("response_format")
        if fmt is not None:
            schema = fmt["json_schema"]["schema"]
            message = {"content": json.dumps(_value(schema, schema.get("$defs", {})))}
            if not off:
                message["reasoning_content"] = thought
            data = {"choices": [{"message": message, "finish_reason": "stop"}]}
            return "application/json", json.dumps(data)
        field = "reasoning_content" if n % 2 else "reasoning"
        chunks: list[dict[str, Any]] = []
        if not off:
            words = ["hmm"] * 3000 if self.endless else thought.split()
            chunks += [{field: w + " "} for w in words]
        if off or not self.endless:
            chunks += [{"content": w + " "} for w in speech(n).split()]
        events = [{"choices": [{"delta": c}]} for c in chunks]
        events.append({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 99}})
        return "text/event-stream", "".join(f"data: {json.dumps(e)}\n\n" for e in events) + (
            "data: [DONE]\n\n"
        )


@pytest.fixture
def thinking_server() -> Iterator[ThinkingServer]:
    server = ThinkingServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_a_server_that_thinks_apart_keeps_its_reasoning_out_of_every_prompt(
    tmp_path: Path, thinking_server: ThinkingServer
) -> None:
    model = OpenAICompatModel(thinking_server.url)
    assert model.model_name == "qwen3-think"
    chosen = settings(motion="cities should ban cars", seed=3, params={"max_rounds": 3})
    setup = prepare(chosen, out_dir=tmp_path / "out")
    events: list[Any] = []
    result = DebateRun(setup, listeners=[events.append], model_factory=lambda ref: model).run()
    model.close()
    turns = result.transcript.turns
    speeches = [t for t in turns if t.data is None]
    assert speeches and all(t.text.startswith("Point ") for t in speeches)
    assert all(t.reasoning and "SECRETPLAN" in t.reasoning for t in speeches)
    judged = [t for t in turns if t.data is not None]
    assert judged and all(t.reasoning is None for t in judged)  # asked with thinking off
    bodies = thinking_server.bodies
    sent = "\n".join(m["content"] for b in bodies for m in b["messages"])
    assert "SECRETPLAN" not in sent
    assert speeches[0].text in sent
    free = [b for b in bodies if "response_format" not in b]
    # (A judge's decision read as a probability asks for one value: not a reply of its own.)
    structured = [b for b in bodies if "response_format" in b and not b.get("logprobs")]
    # The speech's own budget, plus the think budget beside it; judges think not at all.
    assert all(b["max_tokens"] > THINK_BUDGET and "chat_template_kwargs" not in b for b in free)
    assert {b["max_tokens"] - THINK_BUDGET for b in free} >= {309}  # 150 words' worth
    # The judge's and the brief's own budgets (room for their grammars' longest replies),
    # no think budget beside them.
    assert {b["max_tokens"] for b in structured} == {412, 1800}
    for b in structured:
        assert b["chat_template_kwargs"] == {"enable_thinking": False}
        assert b["messages"][-1]["content"].endswith("\n/no_think")  # Qwen3's own switch
    thought = "".join(e.text for e in events if isinstance(e, Token) and e.reasoning)
    assert "SECRETPLAN1" in thought


def test_a_server_that_never_stops_thinking_is_cut_off_and_asked_with_thinking_off(
    tmp_path: Path,
) -> None:
    server = ThinkingServer(endless=True)
    server.thread.start()
    try:
        model = OpenAICompatModel(server.url)
        ask = ChatRequest(
            messages=messages(("user", "Speak.")), sampling=Sampling(max_tokens=50), think_budget=8
        )
        pieces: list[str] = []
        with pytest.raises(ReasoningOnlyError) as caught:
            model.chat(ask, on_text=pieces.append)
        assert len(caught.value.reasoning.split()) == 9  # one past the budget, then closed
        assert server.bodies[-1]["max_tokens"] == 58
        assert "".join(pieces).startswith("<think>hmm")
        eng = engine(tmp_path, ScriptedModel(), think_budget=8)
        eng.roles["a"] = Role("a", model, 0.7)
        turn = eng.speak("a", "say", round=1, label="A", max_tokens=50, motion="cars")
        assert turn.text.startswith("Point ")
        last = server.bodies[-1]
        assert last["chat_template_kwargs"] == {"enable_thinking": False}
        assert last["messages"][-1]["content"] == "Speak on cars.\n/no_think"
        model.close()
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


def test_the_think_budget_a_caller_sets_reaches_every_speech(tmp_path: Path) -> None:
    model = ScriptedModel()
    chosen = settings(
        motion="cities should ban cars", seed=3, params={"max_rounds": 3}, run={"think_budget": 9}
    )
    DebateRun(prepare(chosen, out_dir=tmp_path / "out"), model_factory=lambda ref: model).run()
    free = [r.think_budget for r in model.requests if r.reply_schema is None]
    assert free and set(free) == {9}
    assert {r.think_budget for r in model.requests if r.reply_schema is not None} == {0}


def test_a_turn_has_a_limit_or_a_token_budget_never_both(tmp_path: Path) -> None:
    """A limited turn's budget comes from its limit: a budget beside it would be ignored."""
    eng = engine(tmp_path, ScriptedModel([speech(1)]), think_budget=0)
    with pytest.raises(ValueError, match="comes from its limit"):
        eng.speak("a", "say", round=1, label="A", max_tokens=99, limit=40, motion="cars")
    with pytest.raises(ValueError, match="needs its token budget"):
        eng.speak("a", "say", round=1, label="A", motion="cars")
