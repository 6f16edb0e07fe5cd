"""The model-free parts of local decoding: request translation, range rules, text streams."""

from __future__ import annotations

from moot.inference.decoding import (
    RANDOM_SEED,
    TOP_K,
    PrefixIndex,
    SessionCache,
    Snapshot,
    TextStream,
    common_prefix,
    fold_system,
    partial_stop,
    plan_decode,
    range_rule,
)
from moot.inference.protocol import ChatRequest, Sampling, messages


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


def test_prompt_batches_never_leave_a_lone_token_when_avoidable() -> None:
    from moot.inference.llama.context import batches

    assert batches(0, 10, 512) == [(0, 10)]
    assert batches(0, 513, 512) == [(0, 511), (511, 513)]
    assert batches(5, 1030, 512) == [(5, 517), (517, 1028), (1028, 1030)]
    assert batches(0, 1, 512) == [(0, 1)]  # a one-token prompt has no choice
    assert batches(3, 3, 512) == []


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
