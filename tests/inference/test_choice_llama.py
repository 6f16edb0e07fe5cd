"""A decision's probabilities read from llama.cpp's logits, checked against brute force."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import pytest

from moot.errors import ModelNotFoundError
from moot.inference.choice import (
    Choice,
    ChoiceRequest,
    LikelihoodRequest,
    choose,
    likelihood,
    schema_for,
)
from moot.inference.decoding import common_prefix
from moot.inference.llama import LlamaCppModel
from moot.inference.llama import choice as llama_choice
from moot.inference.llama.choice import split_point, trie
from moot.inference.pool import OWN_CONTEXT, BatchPool, ModelPool
from moot.inference.protocol import ChatRequest, ResolvedModel, messages
from moot.models import store

WINNER = ("proposition", "opposition", "draw")
DEBATE = (
    "Motion: cities should ban cars.\n"
    "Proposition: Cars kill forty thousand people a year; buses and bikes move more people "
    "in less space, and cities that closed their centres to cars saw shops thrive.\n"
    "Opposition: I have nothing to add.\n"
    "Which side won the debate?"
)


def resolve_installed(model_id: str) -> ResolvedModel:
    try:
        return store.resolve(model_id)
    except ModelNotFoundError as exc:
        pytest.fail(f"model {model_id} is not installed ({exc.message}): run `make install`")


@pytest.fixture(scope="module", params=["smollm2-135m", "gemma3-270m"])
def model(request: pytest.FixtureRequest) -> Iterator[LlamaCppModel]:
    loaded = LlamaCppModel(resolve_installed(request.param), n_ctx=2048)
    yield loaded
    loaded.close()


def ask(text: str, field: str, options: tuple[str | int, ...], **kw: object) -> ChoiceRequest:
    return ChoiceRequest(
        messages=messages(("user", text)),
        field=field,
        options=options,
        **kw,  # type: ignore[arg-type]
    )


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return x - (x.max() + np.log(np.exp(x - x.max()).sum()))


def brute_force(model: LlamaCppModel, request: ChoiceRequest) -> dict[str, float]:
    """Each option's whole reply tokenized on its own and scored from a fresh cache: the chat
    prompt and the reply's prefix evaluated afresh for every option (up to where the option's
    tokens part from the prefix's), then the reply's tokens one at a time, as generation
    evaluates them, each scored over the whole vocabulary: no trie, no cut back."""
    chat = ChatRequest(messages=request.messages, reply_schema=schema_for(request))
    prompt, _, added_special, _ = model._format_prompt(chat)
    llm, rt = model._llm, model.runtime

    def tokenize(text: str) -> list[int]:
        return list(llm.tokenize(text.encode(), add_bos=not added_special, special=True))

    head = tokenize(prompt + request.prefix())
    replies = [tokenize(prompt + request.prefix() + request.spelled(o)) for o in request.options]
    start = min(common_prefix(head, reply) for reply in replies)
    scores = []
    for reply in replies:
        rt.eval_from(0, reply[:start])
        total = 0.0
        for k in range(start, len(reply)):
            total += float(log_softmax(np.array(rt.logits()))[reply[k]])
            rt.step(reply[k])
        scores.append(total)
    p = np.exp(np.array(scores) - max(scores))
    model.forget()
    return {str(o): float(q) for o, q in zip(request.options, p / p.sum(), strict=True)}


def assert_agrees(model: LlamaCppModel, request: ChoiceRequest) -> dict[str, float]:
    choice = model.choose(request)
    assert choice.method == "logits"
    assert list(choice.probabilities) == [str(o) for o in request.options]
    assert sum(choice.probabilities.values()) == pytest.approx(1.0, abs=1e-9)
    expected = brute_force(model, request)
    for option, p in expected.items():
        assert choice.probabilities[option] == pytest.approx(p, abs=1e-3), (option, choice)
    assert choice.prompt_tokens > 0
    return choice.probabilities


@pytest.mark.real
def test_the_probabilities_agree_with_brute_force(model: LlamaCppModel) -> None:
    assert_agrees(model, ask(DEBATE, "winner", WINNER))


@pytest.mark.real
def test_an_obvious_prompt_puts_most_on_the_obvious_value(model: LlamaCppModel) -> None:
    request = ask('Reply yes. Answer with {"answer": "yes"}.', "answer", ("yes", "no"))
    assert assert_agrees(model, request)["yes"] > 0.5


@pytest.mark.real
def test_values_that_share_a_first_token_are_told_apart(model: LlamaCppModel) -> None:
    # "1" and "10" begin with the same token on both tokenizers: their later tokens and the
    # closing brace tell them apart.
    replies = [model._llm.tokenize(f'{{"score": {v}}}'.encode(), add_bos=False) for v in (1, 10)]
    shared = common_prefix(replies[0], replies[1])
    assert model.runtime.piece(replies[0][shared - 1]) == b"1"
    assert_agrees(model, ask("Give the number ten.", "score", (1, 10, 7)))


@pytest.mark.real
def test_a_score_from_zero_to_ten(model: LlamaCppModel) -> None:
    choice = model.choose(ask("Give the number seven.", "score", tuple(range(11))))
    assert list(choice.probabilities) == [str(n) for n in range(11)]
    assert sum(choice.probabilities.values()) == pytest.approx(1.0)
    assert choice.best() == "7"
    assert 0 < choice.probabilities["10"] < choice.probabilities["7"]


@pytest.mark.real
def test_the_prefix_merges_with_the_value_and_is_scored_as_the_whole_reply(
    model: LlamaCppModel,
) -> None:
    """`": ` then `"yes"` is tokenized `":`, ` "`, `yes`…: the prefix's own last token is no
    prefix of the reply's, so the scored tokens start where they part."""
    request = ask("Reply yes.", "answer", ("yes", "no"))
    chat = ChatRequest(messages=request.messages, reply_schema=schema_for(request))
    prompt, _, added_special, _ = model._format_prompt(chat)
    base = model._tokenize(prompt + request.prefix(), added_special)
    replies = [
        model._tokenize(prompt + request.prefix() + request.spelled(o), added_special)
        for o in request.options
    ]
    assert all(reply[: len(base)] != base for reply in replies)  # the merge happens
    n = split_point(base, replies)
    assert n == len(base) - 1 and all(reply[:n] == base[:n] for reply in replies)


@pytest.mark.real
def test_a_chinese_prompt_on_gemma(model: LlamaCppModel) -> None:
    if "gemma" not in model.model_id:
        pytest.skip("the Chinese model is Gemma")
    request = ask('请回答"是"。只回答 {"回答": "是"}。', "回答", ("是", "否"))
    assert assert_agrees(model, request)["是"] > 0.5


@pytest.mark.real
def test_a_session_keeps_its_prompt_for_the_next_choice(model: LlamaCppModel) -> None:
    choice = model.choose(ask(DEBATE, "winner", WINNER, session="judge"))
    snapshot, shared = model._sessions.best(list(model.runtime.tokens), None)
    assert snapshot is not None and len(snapshot.tokens) == shared == choice.prompt_tokens
    model.forget()


@pytest.mark.real
def test_where_the_cache_cannot_be_cut_back_the_path_is_evaluated_again(
    model: LlamaCppModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sliding window (Gemma-3) may have evicted what a branch point attends to: the cut
    back then fails, and the path to the branch point is evaluated afresh."""
    rt = model.runtime
    cut, refused = rt.truncate, []

    def truncate(n_past: int) -> bool:
        cut(n_past)
        refused.append(n_past)
        return False

    monkeypatch.setattr(rt, "truncate", truncate)
    request = ask(DEBATE, "winner", WINNER)
    choice = model.choose(request)
    monkeypatch.undo()
    assert refused  # every branch was evaluated again from the start
    expected = brute_force(model, request)
    for option, p in expected.items():
        assert choice.p(option) == pytest.approx(p, abs=1e-3)


SPEECH = (
    "Cars in city centres poison the air that children breathe. Buses, trams and bicycles "
    "move more people through a street than cars ever can, and shops on car-free streets "
    "sell more."
)


@pytest.mark.real
def test_a_replys_likelihood_read_in_chunks_is_its_tokens_read_one_at_a_time(
    model: LlamaCppModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = LikelihoodRequest(
        messages=messages(("user", "Give a short debate speech for the motion: ban cars")),
        reply=SPEECH,
    )
    model.forget()
    fast = likelihood(model, asked)
    model.forget()
    monkeypatch.setattr(llama_choice, "_single_path", lambda root: None)  # the trie's walk
    slow = likelihood(model, asked)
    monkeypatch.undo()
    assert fast is not None and slow is not None
    assert fast.tokens == slow.tokens > 20
    # A batch and single tokens differ in llama.cpp's last digits, not more.
    assert fast.logprob == pytest.approx(slow.logprob, rel=0.01)
    # The request explains the reply: it is likelier after it than after one on nothing.
    neutral = asked.model_copy(update={"messages": messages(("user", "Give a short speech."))})
    alone = likelihood(model, neutral)
    assert alone is not None and fast.logprob > alone.logprob + 2
    # The next test reads a prompt longer than Gemma's window from a fresh cache, as it did.
    model.forget()


@pytest.mark.real
def test_a_long_prompt_on_gemma(model: LlamaCppModel) -> None:
    if "gemma" not in model.model_id:
        pytest.skip("the sliding window is Gemma-3's")
    filler = "The proposition spoke at length about buses, bikes and trams. " * 45
    assert_agrees(model, ask(filler + DEBATE, "winner", WINNER))


@pytest.mark.real
def test_a_model_seated_on_a_batch_lane_reads_the_same() -> None:
    direct = LlamaCppModel(resolve_installed("smollm2-135m"), n_ctx=1024)
    requests = [
        ask(DEBATE, "winner", WINNER),
        ask("Give the number seven.", "score", tuple(range(11))),
    ]
    try:
        wanted = [direct.choose(r) for r in requests]
    finally:
        direct.close()
    pool = BatchPool(ModelPool(resolve=store.resolve, n_ctx=OWN_CONTEXT), lanes=2, n_ctx=1024)
    try:
        seated = [pool.model_for(slot)("smollm2-135m") for slot in (0, 1)]
        got: list[Choice | None] = [None, None]

        def run(slot: int) -> None:
            got[slot] = choose(seated[slot], requests[slot])

        threads = [threading.Thread(target=run, args=(slot,)) for slot in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert pool.batcher.stats.together > 0  # the two lanes were decoded in one batch
        alone = choose(seated[0], requests[1])  # the other lane idle
    finally:
        pool.close()
    for choice, want in zip([*got, alone], [*wanted, wanted[1]], strict=True):
        assert choice is not None and choice.method == "logits"
        for option, p in want.probabilities.items():
            assert choice.p(option) == pytest.approx(p, abs=1e-3)


def test_the_continuations_share_their_leading_tokens_in_a_trie() -> None:
    root = trie([[5, 7, 9], [5, 8, 9], [6, 9]])
    assert list(root.children) == [5, 6]
    assert list(root.children[5].children) == [7, 8]
    assert root.children[5].children[7].children[9].ends == [0]
    assert root.children[6].children[9].ends == [2]


def test_the_split_point_never_leaves_a_continuation_empty() -> None:
    assert split_point([1, 2, 3], [[1, 2, 4, 5], [1, 2, 6]]) == 2
    assert split_point([1, 2, 3], [[1, 2, 3, 4], [1, 2, 3, 5]]) == 3
    assert split_point([1, 2], [[1, 2]]) == 1
