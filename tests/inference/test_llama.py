"""LlamaCppModel on the real tiny models: streaming, grammar, overflow, seeds, UTF-8, KV reuse."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from moot.errors import (
    CallTimeoutError,
    ContextOverflowError,
    DegenerateReplyError,
    ModelNotFoundError,
    MootError,
)
from moot.inference.decoding import TextStream
from moot.inference.llama import LlamaCppModel, schema_to_gbnf
from moot.inference.protocol import (
    ChatRequest,
    Completion,
    ResolvedModel,
    Sampling,
    chat_structured,
    messages,
)
from moot.models import store

pytestmark = pytest.mark.real


class JudgeScore(BaseModel):
    score: float = Field(ge=0, le=10)
    # Bounded so that max_tokens (below) cannot cut the string: one token is at least one char.
    reasoning: str = Field(max_length=80)


def resolve_installed(model_id: str) -> ResolvedModel:
    try:
        return store.resolve(model_id)
    except ModelNotFoundError as exc:
        pytest.fail(f"model {model_id} is not installed ({exc.message}): run `make install`")


@pytest.fixture(scope="module")
def smol() -> Iterator[LlamaCppModel]:
    model = LlamaCppModel(resolve_installed("smollm2-135m"), n_ctx=2048)
    yield model
    model.close()


@pytest.fixture(scope="module")
def gemma() -> Iterator[LlamaCppModel]:
    model = LlamaCppModel(resolve_installed("gemma3-270m"), n_ctx=2048)
    yield model
    model.close()


def ask(text: str, *, system: str = "", seed: int | None = 1, **sampling: object) -> ChatRequest:
    return ChatRequest(
        messages=messages(("system", system), ("user", text)),
        sampling=Sampling(seed=seed, max_tokens=sampling.pop("max_tokens", 40), **sampling),  # type: ignore[arg-type]
    )


def test_streamed_pieces_join_to_the_completion(smol: LlamaCppModel) -> None:
    pieces: list[str] = []
    completion = smol.chat(ask("Argue that cats are better than dogs."), on_text=pieces.append)
    assert len(pieces) > 5
    assert "".join(pieces) == completion.text
    assert completion.completion_tokens > 0
    assert completion.prompt_tokens > 10
    assert completion.finish_reason in ("stop", "length")
    assert 0 < completion.ttft_ms <= completion.duration_ms


def test_judge_score_grammar_gives_valid_json_every_time(smol: LlamaCppModel) -> None:
    prompt = "Rate this argument from 0 to 10: cats are cleaner than dogs, so they are better pets."
    for seed in range(20):
        request = ask(prompt, seed=seed, max_tokens=128, temperature=0.8)
        completion = smol.chat(request.model_copy(update={"reply_schema": JudgeScore}))
        JudgeScore.model_validate(json.loads(completion.text))  # raises on any invalid reply
        # The loop stops as soon as the object is complete, not at max_tokens.
        assert completion.finish_reason == "stop", completion.text


def test_chat_structured_returns_the_parsed_reply(smol: LlamaCppModel) -> None:
    score, completion = chat_structured(
        smol, ask("Score this speech: 'Taxes fund schools.'"), JudgeScore
    )
    assert 0 <= score.score <= 10
    assert completion.completion_tokens > 0


def test_a_prompt_that_does_not_fit_raises_before_evaluating(smol: LlamaCppModel) -> None:
    with pytest.raises(ContextOverflowError) as caught:
        smol.chat(ask("debate " * 2100))
    assert caught.value.n_ctx == 2048
    assert caught.value.prompt_tokens > 2048
    # A prompt that fits, but not with the tokens it asks to generate.
    with pytest.raises(ContextOverflowError) as caught:
        smol.chat(ask("debate " * 1500, max_tokens=1000))
    assert caught.value.max_tokens == 1000
    assert caught.value.prompt_tokens + 1000 > 2048 > caught.value.prompt_tokens


def test_the_same_seed_gives_the_same_text_even_after_another_call(smol: LlamaCppModel) -> None:
    request = ask("Give one reason to ban homework.", seed=42, temperature=1.0)
    first = smol.chat(request)
    smol.chat(ask("Name a famous debate.", seed=7))
    again = smol.chat(request)
    assert again.text == first.text
    assert (
        smol.chat(ask("Give one reason to ban homework.", seed=43, temperature=1.0)).text
        != first.text
    )


def test_a_repeated_prompt_reuses_the_kv_cache(smol: LlamaCppModel) -> None:
    request = ask("Say something about the sea.", seed=3)
    smol.chat(request)
    again = smol.chat(request)
    # The last two tokens are evaluated again: never a lone token (see llama.batches).
    assert again.cached_tokens == again.prompt_tokens - 2


def test_a_forgetful_model_starts_as_if_just_loaded(smol: LlamaCppModel) -> None:
    """What a tournament does between debates: the next call evaluates its whole prompt,
    live cache and speakers' snapshots dropped, and says the same."""
    request = ask("Say something about the sea.", seed=3).model_copy(update={"session": "prop"})
    smol.forget()  # whatever the tests before left
    first = smol.chat(request)
    smol.forget()
    again = smol.chat(request)
    assert first.cached_tokens == again.cached_tokens == 0 and again.text == first.text


def test_a_speaker_session_survives_other_speakers(smol: LlamaCppModel) -> None:
    history = "The motion: cities should ban cars. " * 20
    # DRY keeps the model from echoing the repetitive history (a degenerate reply raises).
    prop = ask(history + "Open for the proposition.", system="You are the proposition.", dry=1.0)
    smol.chat(prop.model_copy(update={"session": "prop"}))
    opp = ask(history + "Open for the opposition.", system="You are the opposition. " * 5, dry=1.0)
    assert smol.chat(opp.model_copy(update={"session": "opp"})).cached_tokens < 10
    follow = ask(
        history + "Open for the proposition. Then rebut.",
        system="You are the proposition.",
        dry=1.0,
    )
    reply = smol.chat(follow.model_copy(update={"session": "prop"}))
    # The proposition's snapshot covers its system prompt and the history; "opp" differed early.
    assert reply.cached_tokens > reply.prompt_tokens - 15 > 100


def test_stop_strings_end_the_reply_and_are_not_shown(smol: LlamaCppModel) -> None:
    free = smol.chat(ask("List three fruits, one per line.", seed=5, max_tokens=48))
    word = next(w for w in free.text.split() if len(w) > 3)
    pieces: list[str] = []
    stopped = smol.chat(
        ask("List three fruits, one per line.", seed=5, max_tokens=48, stop=(word,)),
        on_text=pieces.append,
    )
    # The reply's answer is trimmed of the whitespace before the stop; the stop is never shown.
    assert stopped.text == free.text[: free.text.index(word)].strip()
    assert "".join(pieces).strip() == stopped.text and word not in "".join(pieces)
    assert stopped.finish_reason == "stop"


def test_chinese_streams_intact(smol: LlamaCppModel) -> None:
    pieces: list[str] = []
    completion = smol.chat(
        ask("请用中文回答：猫为什么喜欢睡觉？", seed=3, max_tokens=48, dry=1.0),
        on_text=pieces.append,
    )
    assert "".join(pieces) == completion.text
    # Bytes the model sampled that form no character are dropped, not shown as U+FFFD (this
    # seed writes the first bytes of one character, then another character).
    assert "\ufffd" not in completion.text and "什意思" in completion.text
    # SmolLM2's byte-level tokens split CJK characters; the stream must rejoin them.
    text = "本院认为城市应当禁止私家车。辩论很有趣！"
    rt = smol._runtime
    tokens = smol._llm.tokenize(text.encode(), add_bos=False, special=False)
    assert len(tokens) > len(text) // 2
    shown: list[str] = []
    stream = TextStream((), shown.append)
    for token in tokens:
        stream.feed(rt.piece(token))
    assert stream.finish() == text
    assert shown and all("\ufffd" not in piece for piece in shown)


def test_candidates_pair_every_logit_with_its_token_after_a_sampler_sorted_them(
    smol: LlamaCppModel,
) -> None:
    import ctypes

    import numpy as np

    smol.chat(ask("Name a colour.", max_tokens=2))
    rt = smol._runtime
    lc = rt.lc
    top_k = lc.llama_sampler_init_top_k(5)
    try:
        lc.llama_sampler_apply(top_k, ctypes.byref(rt.candidates()))  # sorts in place
    finally:
        lc.llama_sampler_free(top_k)
    data = np.ctypeslib.as_array(rt.candidates().data, shape=(rt.n_vocab,))
    logits = np.ctypeslib.as_array(lc.llama_get_logits_ith(rt.ctx, -1), shape=(rt.n_vocab,))
    assert (data["id"] == np.arange(rt.n_vocab)).all()
    assert (data["logit"] == logits).all()


def test_gemma_answers_two_chats_in_a_row(gemma: LlamaCppModel) -> None:
    first_request = ask("What is the capital of France?", system="Answer briefly.", max_tokens=32)
    first = gemma.chat(first_request)
    try:
        second = gemma.chat(ask("Name three colours.", system="Answer briefly.", max_tokens=32))
    except DegenerateReplyError as exc:  # a base model may answer "?" over and over: this
        assert isinstance(exc.completion, Completion)  # test is about the cache, not the words
        second = exc.completion
    assert first.text.strip() and second.text.strip()
    assert second.cached_tokens > 0  # the shared "<bos><start_of_turn>user\n…" prefix
    # The sliding-window cache came back to a usable state: same seed, same answer.
    assert gemma.chat(first_request).text == first.text


def test_gemma_keeps_the_system_prompt(gemma: LlamaCppModel) -> None:
    # llama-cpp-python's gemma format drops system messages; moot folds them into the user turn.
    bare = gemma.count_tokens(ask("Hello."))
    with_system = gemma.count_tokens(ask("Hello.", system="You are the opposition's whip."))
    assert with_system > bare + 5


def test_gemma_grammar_reply_is_valid(gemma: LlamaCppModel) -> None:
    score, _ = chat_structured(gemma, ask("Rate: 'The sky is green.'", max_tokens=128), JudgeScore)
    assert 0 <= score.score <= 10


def test_an_unknown_chat_format_is_refused() -> None:
    resolved = dataclasses.replace(resolve_installed("smollm2-135m"), chat_format="no-such-format")
    with pytest.raises(MootError, match="unknown chat format 'no-such-format'") as caught:
        LlamaCppModel(resolved, n_ctx=256)
    assert "chatml" in caught.value.hint


def test_a_file_without_a_template_cannot_use_template_format() -> None:
    resolved = dataclasses.replace(resolve_installed("gemma3-270m"), chat_format="template")
    with pytest.raises(MootError, match="no chat template"):
        LlamaCppModel(resolved, n_ctx=256)


def test_a_schema_the_converter_cannot_handle_is_an_error() -> None:
    class Weird(BaseModel):
        @classmethod
        def model_json_schema(cls, *args: object, **kwargs: object) -> dict[str, object]:
            return {"type": "no-such-type"}

    with pytest.raises(MootError, match="cannot build a grammar for Weird"):
        schema_to_gbnf(Weird)


def test_the_grammar_bounds_numbers_and_forbids_raw_control_characters() -> None:
    grammar = schema_to_gbnf(JudgeScore)
    assert '"10" ("." "0" "0"?)?' in grammar
    assert r"\x00-\x1F" in grammar


def test_a_held_grammar_allows_no_more_prose_than_it_was_held_to() -> None:
    class Reasons(BaseModel):
        why: str = Field(min_length=1, max_length=300)

    def most(grammar: str) -> int:  # the characters the `why` rule spells out at most
        rule = next(line for line in grammar.splitlines() if line.startswith("why ::="))
        return rule.count("prose-first") + rule.count("prose-char")

    assert most(schema_to_gbnf(Reasons)) == 300
    assert most(schema_to_gbnf(Reasons, 60)) == 60


def test_dry_keeps_a_speaker_from_copying_the_speech_it_was_shown(smol: LlamaCppModel) -> None:
    shown = (
        "Remote work saves every worker an hour of commuting each day, and a study of a "
        "call centre found remote staff thirteen percent more productive than office staff."
    )
    ask = f'The other side said:\n"""\n{shown}\n"""\nRepeat what the other side said.'
    words = shown.split()

    def copies(dry: float) -> int:
        n = 0
        for seed in (1, 2, 3):
            sampling = Sampling(temperature=0.3, max_tokens=40, seed=seed, dry=dry)
            text = smol.chat(ChatRequest(messages=messages(("user", ask)), sampling=sampling)).text
            n += any(" ".join(words[i : i + 8]) in text for i in range(len(words) - 8))
        return n

    assert copies(0.0) >= 1  # the model does copy when nothing stops it
    assert copies(1.0) == 0


def test_a_call_past_its_time_limit_raises_the_typed_error(smol: LlamaCppModel) -> None:
    req = ChatRequest(
        messages=messages(("user", "Tell a long story about a lighthouse.")),
        sampling=Sampling(temperature=0.0, max_tokens=400, seed=1),
        timeout_s=0.05,
    )
    with pytest.raises(CallTimeoutError):
        smol.chat(req)
    # The model stays usable after a timed-out call.
    ok = smol.chat(req.model_copy(update={"timeout_s": None, "sampling": Sampling(max_tokens=8)}))
    assert ok.completion_tokens > 0


@pytest.mark.parametrize("model_id", ["smollm2-135m", "gemma3-270m"])
def test_a_redraw_picks_what_masking_the_whole_vocabulary_would(model_id: str) -> None:
    """The grammar redraw narrows the vocabulary first; the draw must not change."""
    import ctypes

    from moot.inference.decoding import plan_decode
    from moot.inference.llama.sampler import Sampler

    model = LlamaCppModel(resolve_installed(model_id), n_ctx=512)
    rt, lc = model._runtime, model._runtime.lc
    reply = '{ "score": 7.5, "reasoning": "Cars pollute 城市的空气 and \\"streets\\"." }'
    prompt = model._tokenize("Judge the speech: cars pollute.", False)
    model._prepare_kv(prompt, [False] * len(prompt), None)
    redraws = 0
    for temperature, dry in ((0.8, 0.0), (0.8, 1.0), (0.0, 0.0)):
        request = ask("x", temperature=temperature, dry=dry, seed=3)
        plan = plan_decode(request, grammar=schema_to_gbnf(JudgeScore))
        whole, narrowed = Sampler(rt, plan), Sampler(rt, plan)
        for token in model._llm.tokenize(reply.encode(), add_bos=False, special=False):
            cur = rt.candidates()
            lc.llama_sampler_apply(whole.grammar, ctypes.byref(cur))
            lc.llama_sampler_apply(whole.chain, ctypes.byref(cur))
            expected = int(cur.data[cur.selected].id)  # before the redraw reuses the array
            assert narrowed._redraw() == expected
            redraws += 1
            for sampler in (whole, narrowed):
                sampler.accept(token)
                lc.llama_sampler_accept(sampler.chain, token)
            model._llm.eval([token])
        whole.free()
        narrowed.free()
    model.close()
    assert redraws > 40


# A ChatML template that opens a think block for the model, as DeepSeek-R1's and QwQ's do.
OPENS_THINKING = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}"
)


class OpensThinking(LlamaCppModel):
    """SmolLM2 under a template that opens a think block in every reply; its thinking kept
    short (a 135M model would ramble to the end of its room), every request kept."""

    def __init__(self, resolved: ResolvedModel) -> None:
        from moot.inference.llama.model import _TemplateFormatter

        super().__init__(resolved, n_ctx=4096)  # the brief's grammar may take 1,800 tokens
        self._formatter = _TemplateFormatter(OPENS_THINKING, eos_token="<|im_end|>", bos_token="")
        self.requests: list[ChatRequest] = []

    def chat(self, request: ChatRequest, *, on_text: object = None) -> Completion:  # type: ignore[override]
        self.requests.append(request)
        if request.think_budget:
            request = request.model_copy(update={"think_budget": 24})
        return super().chat(request, on_text=on_text)  # type: ignore[arg-type]


def test_a_template_that_opens_a_think_block_keeps_the_reasoning_from_every_other_seat(
    tmp_path: Path,
) -> None:
    from moot.debates.runner import DebateRun
    from moot.debates.settings import prepare, settings

    model = OpensThinking(resolve_installed("smollm2-135m"))
    try:
        chosen = settings(
            motion="cities should ban cars",
            format="challenge",  # its shortest debate: one round, low effort
            seed=3,
            params={"rounds": 1, "effort": "low"},
            # A small model in a think block it did not open may think to the end of its
            # budget every turn: a short budget and short speeches keep the test short.
            run={"think_budget": 24, "max_tokens": 32},
        )
        setup = prepare(chosen, out_dir=tmp_path / "out")
        result = DebateRun(setup, model_factory=lambda ref: model).run()
    finally:
        model.close()
    turns = result.transcript.turns
    judged = [t for t in turns if t.role == "judge"]
    assert judged and all(t.data for t in judged)  # the grammar holds after a closed block
    speeches = [t for t in turns if t.data is None]
    assert {t.role for t in speeches} >= {"proposer", "challenger"}
    thought = [t for t in speeches if t.reasoning and len(t.reasoning) >= 20]
    assert thought, [t.reasoning for t in speeches]
    sent = [m.content for r in model.requests for m in r.messages]
    for turn in speeches:
        assert "<think>" not in turn.text and "</think>" not in turn.text
    for turn in thought:
        assert turn.reasoning is not None
        assert not any(turn.reasoning in content for content in sent)
    first = speeches[0]
    opponent = next(r for r in model.requests if r.session == "challenger")
    if first.text:
        assert first.text in opponent.messages[-1].content


@pytest.mark.parametrize(("lang", "limit"), [("en", 15), ("en", 2), ("zh", 15), ("zh", 4)])
def test_the_question_grammar_is_one_llama_cpp_takes(lang: str, limit: int) -> None:
    from llama_cpp import LlamaGrammar

    from moot.engine.rules import question_grammar

    assert LlamaGrammar.from_string(question_grammar(limit, lang), verbose=False) is not None


POI_PROMPTS = {
    "en": "You oppose the motion 'Cities should ban private cars from their centres'. The "
    "proposition just said: 'Banning cars makes streets safer and the air cleaner.' Offer "
    "a point of information: one short question to the speaker.",
    "zh": "你反对辩题“城市应当禁止私家车进入市中心”。正方刚才说：“禁止汽车会让街道更安全、"
    "空气更干净。”请提出一个质询：向发言者提一个简短的问题。",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_point_of_information_held_to_its_grammar_is_one_question_kept_whole(
    smol: LlamaCppModel, gemma: LlamaCppModel, lang: str
) -> None:
    from moot.engine.rules import fit_question, length_units, question_grammar

    model = smol if lang == "en" else gemma
    for seed in (1, 2, 3):
        request = ask(POI_PROMPTS[lang], seed=seed, max_tokens=60, temperature=0.7)
        request = request.model_copy(update={"grammar": question_grammar(15, lang)})
        completion = model.chat(request)
        text = completion.text.strip()
        assert completion.finish_reason == "stop", text
        assert text.endswith("?" if lang == "en" else "？"), text
        assert length_units(text) <= 15, text
        fitted = fit_question(text, 15, ended=True)
        assert (fitted.text, fitted.cut, fitted.flag) == (text, False, None)


def test_a_question_at_its_word_limit_ends_where_its_next_word_would_start(
    smol: LlamaCppModel,
) -> None:
    """With its grammar alone, a question the model would go on with is held to its last
    word, and the model glues its next words onto it; with the grammar's closer it ends
    with its mark where the next word would have started."""
    from moot.engine.rules import length_units, question_grammar

    prompt = (
        "Ask the speaker one question about the claim 'Banning cars makes streets safer "
        "and the air cleaner.' Start with 'Why'."
    )
    glued = 0
    for seed in (1, 2, 3):
        request = ask(prompt, seed=seed, max_tokens=60, temperature=0.7)
        request = request.model_copy(update={"grammar": question_grammar(6, "en")})
        held = smol.chat(request).text.strip()
        closed = smol.chat(request.model_copy(update={"closer": "?"})).text.strip()
        assert closed.endswith("?") and length_units(closed) <= 6, closed
        said = closed[:-1]
        assert held.startswith(said), (held, closed)  # the same draws up to the end
        run_on = held[len(said) :]
        glued += run_on[:1] not in ("?", "")
    assert glued, "no question here ran into its word limit"


class Agreed(BaseModel):
    agreed: bool
    reasoning: str = Field(min_length=1, max_length=120)


def test_the_grammar_leaves_a_reason_no_room_to_be_one_word(smol: LlamaCppModel) -> None:
    from moot.inference.protocol import PROSE_MIN_CHARS

    prompt = 'Is the sky blue? Reply in JSON: {"agreed": true, "reasoning": "yes"}'
    for seed in (1, 2, 3):
        reply, _ = chat_structured(smol, ask(prompt, seed=seed, max_tokens=120), Agreed)
        assert len(reply.reasoning) >= PROSE_MIN_CHARS, reply.reasoning


AGAINST = "Now give the strongest argument against a ban, in two sentences."


@pytest.mark.parametrize("name", ["smol", "gemma"])
def test_a_reply_quoted_after_its_own_prompt_reuses_what_generating_it_computed(
    name: str, request: pytest.FixtureRequest
) -> None:
    """A step that goes on an earlier step's conversation: the reply, an assistant message
    with the tokens generated for it, is not evaluated again; and a model that did not
    generate it (a resumed debate), given the same tokens, says the same as the one that
    did."""
    model: LlamaCppModel = request.getfixturevalue(name)
    model.forget()
    opening = ask(
        "Argue, in three sentences, that cities should ban private cars.", seed=5, dry=1.0
    )
    first = model.chat(opening.model_copy(update={"session": "prop"}), on_text=None)
    assert first.generated is not None and len(first.generated.tokens) > 10
    reply = messages(("assistant", first.text))[0].model_copy(update={"generated": first.generated})
    follow = ChatRequest(
        messages=(*opening.messages, reply, *messages(("user", AGAINST))),
        sampling=Sampling(seed=6, max_tokens=40, dry=1.0),
        session="opp",
    )
    warm = model.chat(follow)
    # Everything before the reply's end was cached: its prompt and the tokens it spoke.
    assert warm.cached_tokens >= first.prompt_tokens + len(first.generated.tokens) - 2
    model.forget()
    cold = model.chat(follow)
    assert cold.cached_tokens == 0
    assert cold.text == warm.text
    # The same conversation with the reply as bare text is another prompt: evaluated, not
    # taken from the cache that generation left.
    bare = follow.model_copy(
        update={
            "messages": (
                *opening.messages,
                messages(("assistant", first.text))[0],
                *follow.messages[-1:],
            )
        }  # fmt: skip
    )
    model.forget()
    model.chat(opening.model_copy(update={"session": "prop"}))
    assert model.chat(bare).cached_tokens <= first.prompt_tokens


def test_the_grammar_holds_prose_to_words_and_llama_cpp_takes_it(smol: LlamaCppModel) -> None:
    from moot.inference.decoding import plan_decode
    from moot.inference.llama.sampler import Sampler

    grammar = schema_to_gbnf(Agreed)
    sampler = Sampler(smol._runtime, plan_decode(ask("x"), grammar=grammar))
    try:
        opened = smol._llm.tokenize(b'{"agreed": true, "reasoning": "', add_bos=False)
        assert sampler._allows_after(opened, [one_token(smol, c) for c in "]}"]) == [False] * 2
        assert sampler._allows_after(opened, [one_token(smol, c) for c in "T7 "]) == [
            True,
            False,  # prose opens on a word, not a count
            False,  # nor a space
        ]
        words = opened + smol._llm.tokenize(b"The sky", add_bos=False)
        brackets = [one_token(smol, c) for c in "[]{}"]
        assert sampler._allows_after(words, brackets) == [False] * 4
        assert sampler._allows_after(words, [one_token(smol, ",")]) == [True]
    finally:
        sampler.free()


def one_token(model: LlamaCppModel, text: str) -> int:
    (token,) = model._llm.tokenize(text.encode(), add_bos=False, special=False)
    return int(token)


def test_a_reply_invited_to_write_brackets_holds_prose(smol: LlamaCppModel) -> None:
    prompt = 'Is the sky blue? Reply in JSON: {"agreed": true, "reasoning": "] }, { } } {"}'
    for seed in (1, 2):
        reply, _ = chat_structured(smol, ask(prompt, seed=seed, max_tokens=160), Agreed)
        first = reply.reasoning[0]
        assert first.isalnum() or not first.isascii(), reply.reasoning
        assert not set("[]{}") & set(reply.reasoning), reply.reasoning


def test_each_tiny_model_attends_the_way_its_head_width_asks(
    smol: LlamaCppModel, gemma: LlamaCppModel
) -> None:
    # SmolLM2's heads are 64 wide (576 / 9), Gemma 3's 256: read from the headers.
    assert (smol._resolved.head_dim, gemma._resolved.head_dim) == (64, 256)
    assert not smol.flash_attention
    assert gemma.flash_attention


def test_the_attention_override_reaches_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOOT_FLASH_ATTENTION", "on")
    model = LlamaCppModel(resolve_installed("smollm2-135m"), n_ctx=512)
    try:
        assert model.flash_attention
        reply = model.chat(ask("Say hello.", max_tokens=8, temperature=0.0))
        assert reply.completion_tokens > 0
    finally:
        model.close()
