"""The model-free parts of local decoding: request translation, range rules, text streams."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from moot.inference.decoding import (
    CLOSE_ROOM,
    RANDOM_SEED,
    TOP_K,
    DecodePlan,
    PrefixIndex,
    ReplyBudget,
    SessionCache,
    Snapshot,
    TextStream,
    common_prefix,
    fit_thinking,
    fold_system,
    partial_stop,
    plan_decode,
    range_rule,
    same_pattern,
    spelled,
)
from moot.inference.protocol import ChatRequest, Sampling, messages
from moot.inference.reasoning import HARMONY_FINAL, split


def request(**sampling: object) -> ChatRequest:
    return ChatRequest(messages=messages(("user", "hi")), sampling=Sampling(**sampling))  # type: ignore[arg-type]


def test_plan_carries_the_sampling_settings() -> None:
    plan = plan_decode(request(temperature=0.3, top_p=0.9, max_tokens=77, seed=5))
    assert (plan.temperature, plan.top_p, plan.max_tokens, plan.seed) == (0.3, 0.9, 77, 5)
    assert plan.top_k == TOP_K
    assert plan.grammar is None


def test_no_seed_means_a_random_one_and_a_seed_never_collides_with_it() -> None:
    assert plan_decode(request()).seed == RANDOM_SEED
    assert plan_decode(request(seed=RANDOM_SEED)).seed != RANDOM_SEED
    assert 0 <= plan_decode(request(seed=-1)).seed < RANDOM_SEED


def test_stops_merge_the_callers_and_the_formats_without_duplicates() -> None:
    plan = plan_decode(request(stop=("\n\n", "END")), format_stops=("END", "<end_of_turn>", ""))
    assert plan.stop == ("\n\n", "END", "<end_of_turn>")


def test_plan_keeps_the_grammar_it_is_given() -> None:
    assert plan_decode(request(), grammar='root ::= "x"').grammar == 'root ::= "x"'


def test_penalties_apply_to_free_text_only() -> None:
    assert not plan_decode(request()).penalises
    assert plan_decode(request(dry=1.0)).penalises
    assert plan_decode(request(repeat_penalty=1.05)).penalises
    # JSON must repeat quotes, keys and braces: never penalised under a grammar.
    assert not plan_decode(request(dry=1.0, repeat_penalty=1.1), grammar='root ::= "x"').penalises


def test_range_rule_enumerates_small_whole_ranges() -> None:
    rule = range_rule({"type": "number", "minimum": 0, "maximum": 10})
    assert rule is not None
    assert '"0" | "1"' in rule and '"9"' in rule and '"10" ("." "0" "0"?)?' in rule
    assert range_rule({"type": "integer", "minimum": 1, "maximum": 5}) == (
        '("1" | "2" | "3" | "4" | "5") space'
    )


def test_range_rule_leaves_what_it_cannot_enumerate() -> None:
    assert range_rule({"type": "number", "minimum": 0}) is None
    assert range_rule({"type": "number", "minimum": -1, "maximum": 1}) is None
    assert range_rule({"type": "number", "minimum": 0.5, "maximum": 1}) is None
    assert range_rule({"type": "number", "minimum": 0, "maximum": 10_000}) is None


def test_fold_system_moves_it_into_the_first_user_turn() -> None:
    msgs = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Again"},
    ]
    folded = fold_system(msgs)
    assert folded[0] == {"role": "user", "content": "Be brief.\n\nHi"}
    assert [m["role"] for m in folded] == ["user", "assistant", "user"]
    assert msgs[1]["content"] == "Hi"  # the caller's list is untouched
    assert fold_system([{"role": "system", "content": "S"}]) == [{"role": "user", "content": "S"}]


def test_text_stream_rejoins_utf8_split_across_tokens() -> None:
    shown: list[str] = []
    stream = TextStream((), shown.append)
    data = "猫é!".encode()
    for i in range(len(data)):
        stream.feed(data[i : i + 1])
    assert stream.finish() == "猫é!"
    assert shown == ["猫", "é", "!"]


def test_text_stream_drops_a_character_cut_off_at_the_end() -> None:
    stream = TextStream((), None)
    stream.feed(b"ab" + "猫".encode()[:2])
    assert stream.finish() == "ab"


def test_text_stream_drops_bytes_that_form_no_character() -> None:
    shown: list[str] = []
    stream = TextStream((), shown.append)
    cat, why = "猫".encode(), "么".encode()
    for piece in (b"a", why[:2], cat, b"\x80", b"b", why[:1], b"c"):
        stream.feed(piece)
    assert stream.finish() == "a猫bc"
    assert "".join(shown) == "a猫bc"


def test_text_stream_stops_at_a_stop_string_split_across_pieces() -> None:
    shown: list[str] = []
    stream = TextStream(("STOP",), shown.append)
    assert not stream.feed(b"one ST")
    assert shown == ["one "]  # "ST" is held back: it may begin the stop string
    assert stream.feed(b"OP two")
    assert stream.finish() == "one "
    assert "".join(shown) == "one "


def test_text_stream_releases_a_false_alarm() -> None:
    shown: list[str] = []
    stream = TextStream(("STOP",), shown.append)
    stream.feed(b"a ST")
    stream.feed(b"ILL b")
    assert stream.finish() == "a STILL b" == "".join(shown)


def test_partial_stop() -> None:
    assert partial_stop("hello <end", ("<end_of_turn>",)) == 4
    assert partial_stop("hello", ("<end_of_turn>",)) == 0


def test_common_prefix() -> None:
    assert common_prefix([1, 2, 3, 4], [1, 2, 9]) == 2
    assert common_prefix([1, 2], [1, 2, 3]) == 2
    assert common_prefix([], [1]) == 0


def test_session_cache_keeps_within_its_budget_dropping_the_oldest() -> None:
    cache = SessionCache(100)
    cache.put("a", Snapshot((1,), None, 40))
    cache.put("b", Snapshot((2,), None, 40))
    cache.best([1])  # "a" is now the most recently used
    cache.put("c", Snapshot((3,), None, 40))
    assert "b" not in cache
    assert "a" in cache and "c" in cache
    assert cache.nbytes == 80
    cache.put("huge", Snapshot((4,), None, 101))
    assert "huge" not in cache
    assert not SessionCache(0).enabled


def test_session_cache_finds_the_longest_shared_prefix_in_any_session() -> None:
    cache = SessionCache(1000)
    cache.put("proposition", Snapshot((1, 2, 3, 4), None, 10))
    cache.put("opposition", Snapshot((1, 2, 9), None, 10))
    cache.put("chair", Snapshot((7, 8), None, 10))
    snap, n = cache.best([1, 2, 3, 5])
    assert snap is not None and snap.tokens == (1, 2, 3, 4) and n == 3
    assert cache.best([5, 6]) == (None, 0)
    cache.put("judge", Snapshot((3,), None, 985))  # the found one was used last: it stays
    assert "proposition" in cache and "opposition" not in cache


def test_a_spilled_cache_holds_its_states_on_disk_until_used(tmp_path: Path) -> None:
    import ctypes

    state = (ctypes.c_uint8 * 6).from_buffer_copy(b"kvdata")
    cache = SessionCache(1000)
    cache.put("proposition", Snapshot((1, 2, 3), state, 5))  # the last byte is not state
    kept = cache.spill(tmp_path / "kv")
    assert "proposition" not in cache and "proposition" in kept
    snap, n = kept.best([1, 2, 3])
    assert snap is not None and n == 3 and snap.state is None and snap.path is not None
    assert snap.path.read_bytes() == b"kvdat" and bytes(snap.data()) == b"kvdat"
    kept.put("proposition", Snapshot((1, 2, 3, 4), state, 6))  # the next turn's replaces it
    assert not snap.path.exists()
    again = kept.spill(tmp_path / "kv")
    [file] = (tmp_path / "kv").iterdir()
    again = again.spill(tmp_path / "kv")  # unloaded again, unused: the same file, no other
    assert list((tmp_path / "kv").iterdir()) == [file] and file.read_bytes() == b"kvdata"
    again.clear()
    assert not file.exists()
    snap.path.write_bytes(b"kv")  # a file cut short is an error, not a half-read cache
    with pytest.raises(OSError, match="shorter"):
        snap.data()


def test_prompt_batches_never_leave_a_lone_token_when_avoidable() -> None:
    from moot.inference.llama.context import batches

    assert batches(0, 10, 512) == [(0, 10)]
    assert batches(0, 513, 512) == [(0, 511), (511, 513)]
    assert batches(5, 1030, 512) == [(5, 517), (517, 1028), (1028, 1030)]
    assert batches(0, 1, 512) == [(0, 1)]  # a one-token prompt has no choice
    assert batches(3, 3, 512) == []


def test_a_prompt_is_evaluated_in_stretches_alone_where_its_tokens_were_generated() -> None:
    from moot.inference.llama.context import runs

    alone = [False, False, True, True, True, False, False]
    assert runs(alone, 0, 7) == [(0, 2, False), (2, 5, True), (5, 7, False)]
    assert runs(alone, 3, 7) == [(3, 5, True), (5, 7, False)]
    assert runs(alone, 7, 7) == []


def test_a_cached_prefix_counts_only_where_it_was_evaluated_the_same_way() -> None:
    assert same_pattern([False, True, True], [False, True, True, False], 3) == 3
    assert same_pattern([False, True, True], [False, False, True], 3) == 1
    assert same_pattern([False, False], [False, False], 1) == 1
    snap = Snapshot((1, 2, 3, 4), None, 10, alone=(False, False, True, True))
    assert snap.common_prefix([1, 2, 3, 4, 5], [False, False, True, True, False]) == 4
    # The same tokens evaluated in a batch are not the ones generation left.
    assert snap.common_prefix([1, 2, 3, 4, 5]) == 2
    cache = SessionCache(1000)
    cache.put("proposition", snap)
    cache.put("opposition", Snapshot((1, 2, 3), None, 10))
    found, n = cache.best([1, 2, 3, 4], [False, False, False, False])
    assert found is not None and found.tokens == (1, 2, 3) and n == 3


def test_a_reply_is_spelled_by_the_tokens_generated_up_to_its_quoted_text() -> None:
    pieces = {1: b"The", 2: b" city", 3: b" wins", 4: b".", 5: b" \xe5", 6: b"\x9f\x8e"}
    piece = pieces.__getitem__
    assert spelled([1, 2, 3, 4], b"The city wins.<end>", piece) == (4, 14)
    # A reply cut before its last tokens: only those its quoted text holds.
    assert spelled([1, 2, 3, 4], b"The city<end>", piece) == (2, 8)
    assert spelled([2, 3], b"The city", piece) == (0, 0)
    # Never ending inside a character: the rest of the text is tokenized from a whole one.
    assert spelled([1, 5, 6], " ".join(["The", "城x"]).encode(), piece) == (3, 7)
    assert spelled([1, 5], "The 城".encode(), piece) == (1, 3)


# A toy "grammar": the text read so far must be a prefix of one of these replies.
REPLIES = (b'{"score": 7}', b'{"score": 10}', b'{ "win": true}')
VOCAB = [
    *(bytes([b]) for b in range(32, 127)),  # every printable byte is a token
    b'{"',
    b'{ "',
    b'{"s',
    b'"score',
    b"score",
    b'": ',
    b"win",
    b' "w',
    b"10}",
    b"7}",
    b"the",
    b"then",
    b" the",
    b" theory",
    b'{"x',
    b'{"sc',
    b'{"score": 7}',
    b'"}',
    b"\xe4\xb8\xad",
    b"\xe4\xb8\xadx",  # no single-byte token for \xe4: never ruled out
]


def toy_allows(read: bytes):  # type: ignore[no-untyped-def]
    def allows(after: list[int], tokens: list[int]) -> list[bool]:
        done = read + b"".join(VOCAB[t] for t in after)
        return [any(r.startswith(done + VOCAB[t]) for r in REPLIES) for t in tokens]

    return allows


def truly_allowed(read: bytes) -> set[int]:
    return {t for t, piece in enumerate(VOCAB) if any(r.startswith(read + piece) for r in REPLIES)}


def test_prefix_index_keeps_every_allowed_token_and_drops_most_others() -> None:
    index = PrefixIndex(VOCAB)
    for read in (b"", b"{", b'{"', b'{"score', b'{"score": ', b"{ ", b'{ "win": '):
        kept = index.narrow(toy_allows(read), limit=len(VOCAB))
        assert kept is not None
        assert truly_allowed(read) <= set(kept), read
        unprovable = {VOCAB.index(b"\xe4\xb8\xad"), VOCAB.index(b"\xe4\xb8\xadx")}
        assert set(kept) - truly_allowed(read) <= unprovable, read


def test_prefix_index_tests_a_prefix_that_is_no_token_by_its_last_byte() -> None:
    # '{ ' (the start of '{ "') is no token: it is tested as ' ' once '{' is read. ' the'
    # and ' theory' are never tested: ' ' was refused, and everything under it with it.
    index = PrefixIndex(VOCAB)
    calls: list[tuple[list[int], list[int]]] = []
    allows = toy_allows(b"")

    def spy(after: list[int], tokens: list[int]) -> list[bool]:
        calls.append((after, tokens))
        return allows(after, tokens)

    index.narrow(spy, limit=len(VOCAB))
    assert any(after for after, _ in calls)  # some prefix was tested after its parent
    assert all(VOCAB.index(b" the") not in tokens for _, tokens in calls)  # ruled out by ' '


def test_prefix_index_gives_up_where_most_of_the_vocabulary_may_pass() -> None:
    index = PrefixIndex(VOCAB)
    everything = lambda after, tokens: [True] * len(tokens)  # noqa: E731
    assert index.narrow(everything, limit=len(VOCAB)) is not None
    assert index.narrow(everything, limit=3) is None
    assert index.narrow(everything, limit=len(VOCAB), max_tests=10) is None


def test_prefix_index_drops_empty_pieces_and_keeps_the_tokens_it_is_told_to() -> None:
    index = PrefixIndex([b"a", b"", b"\0b", b"ab"], always=[3])
    kept = index.narrow(lambda after, tokens: [True] * len(tokens), limit=10)
    assert kept == [0, 3]  # 3 untested, whatever its text


# -- reasoning: the decode loop keeps thinking within its budget -----------------------------


class FakeRuntime:
    """A vocabulary of whole words and the sequence fed so far: enough of a Runtime for the
    decode loop, with no model."""

    VOCAB = ("<eog>", "<think>", "</think>", "\n\n", "hm ", "Cars ", "pollute. ", "<|channel|>",
             "analysis", "<|message|>", "<|end|>", "<|start|>", "assistant", "final")  # fmt: skip

    def __init__(self) -> None:
        self.fed: list[int] = []
        self.tokens: list[int] = []

    def is_eog(self, token: int) -> bool:
        return token == 0

    def text_piece(self, token: int) -> bytes:
        return self.VOCAB[token].encode()

    def step(self, token: int) -> None:
        self.fed.append(token)

    def tokenize(self, text: str) -> list[int]:
        tokens = []
        while text:
            word = max((w for w in self.VOCAB if text.startswith(w)), key=len)
            tokens.append(self.VOCAB.index(word))
            text = text[len(word) :]
        return tokens


class Ponderer:
    """A sampler for a model that thinks until its block is closed for it, then answers
    `answer` words (forever when None) and ends."""

    def __init__(self, rt: FakeRuntime, *, opens: str = "<think>", answer: int | None = 2):
        self.rt, self.opens, self.answer = rt, opens, answer
        self.learned: list[int] = []
        self.fallbacks = self.closes = 0

    def __call__(self, rt: FakeRuntime, plan: DecodePlan, *, context: object) -> Ponderer:
        return self

    def sample(self) -> int:
        said = [self.rt.VOCAB[t] for t in self.rt.fed]
        if not said and self.opens:
            return self.rt.VOCAB.index(self.opens)
        if "</think>" not in said and "final" not in said:
            return self.rt.VOCAB.index("hm ")
        answered = sum(w in ("Cars ", "pollute. ") for w in said)
        if self.answer is not None and answered >= self.answer:
            return 0
        return self.rt.VOCAB.index("pollute. " if answered % 2 else "Cars ")

    def accept(self, token: int) -> bool:
        return False

    def learn(self, token: int) -> None:
        self.learned.append(token)

    def free(self) -> None:
        pass


def run_decode(
    think_budget: int | None, *, max_tokens: int = 10, opened: str = "", **kw: Any
) -> tuple[str, int, str, FakeRuntime, Ponderer, list[str]]:
    from moot.inference.llama.decode import decode

    rt = FakeRuntime()
    sampler = Ponderer(rt, **kw)
    plan = plan_decode(
        ChatRequest(
            messages=messages(("user", "hi")),
            sampling=Sampling(max_tokens=max_tokens),
            think_budget=think_budget,
        )
    )
    plan = fit_thinking(plan, spare=10_000, opened=opened)
    pieces: list[str] = []
    text, n_out, finish, _ = decode(
        rt,
        plan,
        pieces.append,
        start=0.0,
        deadline=None,
        model_id="m",
        make_sampler=sampler,  # type: ignore[arg-type]
    )
    return text, n_out, finish, rt, sampler, pieces


def test_a_think_block_past_its_budget_is_closed_in_the_sequence_and_the_model_answers() -> None:
    text, n_out, finish, rt, sampler, pieces = run_decode(5)
    reasoning, answer = split(text)
    assert reasoning == "hm hm hm hm"  # <think> and four words: five tokens of reasoning
    assert answer == "Cars pollute."
    closer = rt.tokenize("</think>\n\n")
    assert rt.fed[5:7] == closer and sampler.learned == closer  # fed, not drawn
    assert "".join(pieces) == text and finish == "stop"
    assert n_out == 5 + 2 + 2


def test_the_answer_has_max_tokens_of_its_own_beside_the_reasoning() -> None:
    text, _, finish, *_ = run_decode(30, max_tokens=6, answer=None)
    reasoning, answer = split(text)
    assert len(reasoning.split()) == 29 and len(answer.split()) == 6
    assert finish == "length"


def test_without_a_think_budget_reasoning_shares_max_tokens_as_before() -> None:
    text, n_out, finish, rt, *_ = run_decode(None, max_tokens=8)
    assert split(text) == ("hm hm hm hm hm hm hm", "") and n_out == 8 and finish == "length"
    assert rt.VOCAB.index("</think>") not in rt.fed


def test_a_block_the_prompt_opened_is_told_to_the_listener_and_closed_at_its_budget() -> None:
    text, _, _, rt, _, pieces = run_decode(3, opened="<think>", opens="")
    assert pieces[0] == "<think>"
    assert split(text) == ("hm hm hm", "Cars pollute.")


def test_harmony_reasoning_is_switched_to_the_final_channel_at_its_budget() -> None:
    rt = FakeRuntime()
    seq = [rt.VOCAB.index(w) for w in ("<|channel|>", "analysis", "<|message|>")]

    class Analyst(Ponderer):
        def sample(self) -> int:
            n = len(self.rt.fed)
            return seq[n] if n < len(seq) else super().sample()

    from moot.inference.llama.decode import decode

    sampler = Analyst(rt, opens="", answer=1)
    plan = fit_thinking(
        plan_decode(ChatRequest(messages=messages(("user", "hi")), think_budget=6)), spare=999
    )
    text, *_ = decode(rt, plan, None, start=0.0, deadline=None, model_id="m", make_sampler=sampler)  # type: ignore[arg-type]
    assert split(text) == ("hm hm hm", "Cars")
    assert rt.tokenize(HARMONY_FINAL) == rt.fed[6 : 6 + len(rt.tokenize(HARMONY_FINAL))]


def test_the_think_budget_fits_the_context_and_a_grammar_has_none() -> None:
    plan = plan_decode(ChatRequest(messages=messages(("user", "hi")), think_budget=1000))
    assert (plan.think_budget, plan.think_room) == (1000, 1000 + CLOSE_ROOM)
    tight = fit_thinking(plan, spare=200)
    assert tight.think_budget == 200 - CLOSE_ROOM and tight.think_room == 200
    assert fit_thinking(plan, spare=3).think_budget == 0
    assert plan_decode(request(), grammar='root ::= "x"').think_budget is None
    grammar = plan_decode(
        ChatRequest(messages=messages(("user", "hi")), think_budget=9), grammar='root ::= "x"'
    )
    assert grammar.think_budget is None and grammar.think_room == 0
    budget = ReplyBudget(tight)
    for _ in range(tight.think_budget):
        budget.count(thinking=True)
    assert budget.thought_enough and not budget.spent


# -- reasoning: thinking off, as the chat template is told ---------------------------------

QWEN3 = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}"
    "<think>\n\n</think>\n\n{% endif %}"
)
R1 = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "<|im_start|>assistant\n<think>\n"
)
SOFT = "{% for m in messages %}{{ m.content }}\n{% endfor %}<think>is known</think>>>"


def formatted(template: str, **ask: Any) -> tuple[str, str]:
    from moot.inference.llama import LlamaCppModel
    from moot.inference.llama.model import _TemplateFormatter

    model = LlamaCppModel.__new__(LlamaCppModel)  # the prompt needs no weights
    model._formatter = _TemplateFormatter(template, eos_token="<|im_end|>", bos_token="")
    chat = ChatRequest(messages=messages(("user", "Speak.")), **ask)
    prompt, _, _, opened = model._format_prompt(chat)
    return prompt, opened


def test_thinking_off_is_asked_of_the_template_or_the_block_is_closed_in_the_prompt() -> None:
    on, opened = formatted(QWEN3, think_budget=50)
    assert on.endswith("<|im_start|>assistant\n") and not opened
    off, opened = formatted(QWEN3, think_budget=0)
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n") and not opened
    r1_on, opened = formatted(R1, think_budget=50)
    assert r1_on.endswith("<think>") and opened == "<think>"
    r1_off, opened = formatted(R1, think_budget=0)
    assert r1_off.endswith("assistant\n<think></think>\n\n") and not opened
    assert "/no_think" not in r1_off  # closed in the prompt: the model is told nothing
    # A structured reply's grammar starts at the first token: thinking is off for it too.
    from pydantic import BaseModel

    class Reply(BaseModel):
        x: int

    judged, opened = formatted(R1, reply_schema=Reply)
    assert judged == r1_off and not opened
    # A template that knows think blocks but not enable_thinking: Qwen3's own words.
    soft, _ = formatted(SOFT, think_budget=0)
    assert soft.startswith("Speak.\n/no_think\n")
    assert formatted(SOFT, think_budget=9)[0].startswith("Speak.\n<think>")
