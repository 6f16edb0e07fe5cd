"""Model-free parts of local decoding: sampler plans, range rules, text streams, KV snapshots."""

from __future__ import annotations

import codecs
import ctypes
import os
import re
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from moot.inference.protocol import ChatRequest, OnText
from moot.inference.spill import RestoreCosts, disk_has_room

RANDOM_SEED = 0xFFFFFFFF  # LLAMA_DEFAULT_SEED: llama.cpp draws a fresh random seed
TOP_K = 40  # llama.cpp's default; it also spares top-p a sort over 262k-token vocabularies
MAX_ENUMERATED_RANGE = 100


# A draw that would open another word or sentence (a space and a letter, a full stop, a
# line break; in Chinese another character or a full stop): where a free-text grammar
# with a closer refuses it, the reply is over, and the closer is taken instead (a question
# at its word limit ends with its mark rather than gluing its next words onto its last).
OPENS_MORE = re.compile(r"\s+\w|[.!。！\n]|[\u4e00-\u9fff]")


@dataclass(frozen=True)
class DecodePlan:
    """What the decode loop needs from a request, in llama.cpp's terms."""

    temperature: float  # 0 means greedy
    top_p: float
    top_k: int
    seed: int
    max_tokens: int
    stop: tuple[str, ...]
    grammar: str | None  # GBNF: a reply schema's, or the request's own (one question)
    closer: str | None = None  # the request's: what ends the grammar where it refuses to go on
    repeat_penalty: float = 1.0
    dry: float = 0.0
    # Reasoning: tokens it may take beside max_tokens (None: it shares max_tokens), what the
    # reply may take beyond max_tokens in all (the reasoning and closing it), and the think
    # tag the prompt ends with, if it opened the block.
    think_budget: int | None = None
    think_room: int = 0
    opened: str = ""

    @property
    def penalises(self) -> bool:
        """Repeat penalty and prompt-primed DRY, for free text only."""
        return self.grammar is None and (self.repeat_penalty > 1.0 or self.dry > 0.0)

    @property
    def dry_in_json(self) -> bool:
        """DRY on a structured reply's own text. A plain repeat penalty would tilt true/false
        choices; DRY does not reach past `"` and `:`, so it only stops runaway strings."""
        return self.grammar is not None and self.dry > 0.0


def plan_decode(
    request: ChatRequest, *, format_stops: Sequence[str] = (), grammar: str | None = None
) -> DecodePlan:
    """Translate a request (plus the chat format's own stop strings) into sampler settings."""
    s = request.sampling
    stops = tuple(dict.fromkeys(x for x in (*s.stop, *format_stops) if x))
    # Modulo keeps a user's seed off RANDOM_SEED, which would mean "random".
    seed = RANDOM_SEED if s.seed is None else s.seed % RANDOM_SEED
    # A grammar holds the reply from its first token: there is no reasoning to budget.
    think = None if grammar is not None else request.think_budget
    return DecodePlan(
        temperature=s.temperature,
        top_p=s.top_p,
        top_k=TOP_K,
        seed=seed,
        max_tokens=s.max_tokens,
        stop=stops,
        grammar=grammar,
        closer=request.closer if grammar is not None else None,
        repeat_penalty=s.repeat_penalty,
        dry=s.dry,
        think_budget=think,
        think_room=0 if think is None else think + CLOSE_ROOM,
    )


# Tokens kept for closing a think block the budget cut short ("</think>" and a blank line, or
# Harmony's switch to the final channel).
CLOSE_ROOM = 16


def fit_thinking(plan: DecodePlan, *, spare: int, opened: str = "") -> DecodePlan:
    """PLAN with its reasoning kept within SPARE tokens (the context left beyond the prompt and
    max_tokens), and the think tag the prompt opened."""
    if plan.think_budget is None:
        return replace(plan, opened=opened)
    budget = min(plan.think_budget, max(0, spare - CLOSE_ROOM))
    return replace(plan, think_budget=budget, think_room=min(plan.think_room, spare), opened=opened)


@dataclass
class ReplyBudget:
    """What a reply has spent: answer tokens against max_tokens, reasoning tokens against the
    think budget (with no think budget every token is the answer's)."""

    plan: DecodePlan
    answer: int = 0
    thought: int = 0

    def count(self, *, thinking: bool) -> None:
        if thinking and self.plan.think_budget is not None:
            self.thought += 1
        else:
            self.answer += 1

    @property
    def spent(self) -> bool:
        """The reply must end: its answer is as long as allowed, or it has taken all its room."""
        total = self.answer + self.thought
        return self.answer >= self.plan.max_tokens or total >= self.plan.max_tokens + (
            self.plan.think_room
        )

    @property
    def thought_enough(self) -> bool:
        """The reasoning has used its budget: the block is to be closed."""
        return self.plan.think_budget is not None and self.thought >= self.plan.think_budget


def range_rule(schema: dict[str, Any]) -> str | None:
    """A GBNF rule for a number between two small whole bounds (a 0-10 score); else None.

    llama-cpp-python's schema converter ignores minimum/maximum, so a judge could
    answer 15 out of 10; enumerating the whole part keeps it in range.
    """
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if lo is None or hi is None or not float(lo).is_integer() or not float(hi).is_integer():
        return None
    lo, hi = int(lo), int(hi)
    if not 0 <= lo < hi <= lo + MAX_ENUMERATED_RANGE:
        return None
    if schema.get("type") == "integer":
        return "(" + " | ".join(f'"{i}"' for i in range(lo, hi + 1)) + ") space"
    whole = " | ".join(f'"{i}"' for i in range(lo, hi))
    return f'(({whole}) ("." [0-9] [0-9]?)? | "{hi}" ("." "0" "0"?)?) space'


def fold_system(msgs: list[dict[str, str]]) -> list[dict[str, str]]:
    """Move system messages into the first user turn, for formats that would drop them."""
    system = "\n\n".join(m["content"] for m in msgs if m["role"] == "system")
    rest = [dict(m) for m in msgs if m["role"] != "system"]
    first_user = next((m for m in rest if m["role"] == "user"), None)
    if first_user is None:
        return [{"role": "user", "content": system}, *rest]
    first_user["content"] = f"{system}\n\n{first_user['content']}"
    return rest


class TextStream:
    """Token bytes in, text out: whole UTF-8 characters only, stop strings cut and never shown.

    A model reading bytes can sample ones that form no character (a character's first
    bytes, then another's); those are dropped, never shown as U+FFFD."""

    def __init__(self, stops: Sequence[str], on_text: OnText | None) -> None:
        # A token may end inside a multi-byte character (CJK); the decoder holds it back.
        self._decoder = codecs.getincrementaldecoder("utf-8")("ignore")
        self._stops = [s for s in stops if s]
        self._on_text = on_text
        self._pending = ""  # text that may be the start of a stop string
        self._parts: list[str] = []
        self.stopped = False

    def feed(self, data: bytes) -> bool:
        """Take one token's bytes; True once a stop string is reached."""
        return self._push(self._decoder.decode(data))

    def finish(self) -> str:
        """Emit what was held back and return the whole text.

        Bytes of a character cut off by max_tokens are dropped rather than shown as U+FFFD.
        """
        if not self.stopped:
            self._emit(self._pending)
        self._pending = ""
        return "".join(self._parts)

    def _push(self, text: str) -> bool:
        if self.stopped or not text:
            return self.stopped
        if not self._stops:
            self._emit(text)
            return self.stopped
        # Only the new text, plus a held-back tail shorter than a stop string, is searched.
        buf = self._pending + text
        hits = [i for s in self._stops if (i := buf.find(s)) >= 0]
        if hits:
            self._emit(buf[: min(hits)])
            self._pending, self.stopped = "", True
            return True
        keep = partial_stop(buf, self._stops)
        self._emit(buf[: len(buf) - keep])
        self._pending = buf[len(buf) - keep :]
        return self.stopped

    def _emit(self, text: str) -> None:
        """Pass TEXT on; a listener that has heard enough stops the stream."""
        if text:
            self._parts.append(text)
            if self._on_text and self._on_text(text):
                self.stopped = True


def partial_stop(text: str, stops: Sequence[str]) -> int:
    """Length of the longest end of `text` that begins some stop string."""
    for n in range(min(len(text), max(len(s) for s in stops) - 1), 0, -1):
        if any(s.startswith(text[-n:]) for s in stops):
            return n
    return 0


def common_prefix(cached: Any, tokens: Sequence[int]) -> int:
    """How many leading tokens two token sequences share."""
    import numpy as np  # llama-cpp-python's dependency; imported when a model is used

    n = min(len(cached), len(tokens))
    diff = np.nonzero(np.asarray(cached[:n]) != np.asarray(tokens[:n], dtype=np.intc))[0]
    return int(diff[0]) if diff.size else n


def same_pattern(held: Sequence[bool], wanted: Sequence[bool], n: int) -> int:
    """How many of the first N positions were evaluated (HELD) as WANTED asks: alone, or in
    a batch."""
    return common_prefix(held[:n], wanted[:n])


def spelled(tokens: Sequence[int], text: bytes, piece: Callable[[int], bytes]) -> tuple[int, int]:
    """How many of TOKENS, from the first, spell the start of TEXT, and how many bytes they
    spell; never ending inside a UTF-8 character, which the text after them would split."""
    n = used = 0
    ends = [0]
    for token in tokens:
        data = piece(token)
        if text[used : used + len(data)] != data:
            break
        n, used = n + 1, used + len(data)
        ends.append(used)
    while n and used < len(text) and text[used] & 0xC0 == 0x80:
        n -= 1
        used = ends[n]
    return n, used


@dataclass(frozen=True)
class Snapshot:
    """A KV cache after a call: the tokens it holds, which of them were evaluated alone (as
    generated) rather than in a batch, and the state (a ctypes byte buffer), held in memory
    or, once spilled, in the file `path`."""

    tokens: tuple[int, ...]
    state: Any
    nbytes: int
    path: Path | None = None
    alone: tuple[bool, ...] = ()

    def common_prefix(self, tokens: Sequence[int], alone: Sequence[bool] | None = None) -> int:
        """How many leading tokens it shares with TOKENS, evaluated as ALONE says (by
        default: every one in a batch)."""
        held = self.alone or (False,) * len(self.tokens)
        wanted = (False,) * len(tokens) if alone is None else alone
        return same_pattern(held, wanted, common_prefix(self.tokens, tokens))

    def data(self) -> Any:
        """The state's bytes as a ctypes buffer, read back from its file when spilled."""
        if self.path is None:
            return self.state
        buffer = (ctypes.c_uint8 * self.nbytes)()
        with self.path.open("rb") as f:
            if f.readinto(buffer) != self.nbytes:
                raise OSError(f"{self.path} is shorter than the {self.nbytes} bytes written")
        return buffer

    def spill(self, path: Path) -> Snapshot:
        """The same snapshot with its state written to PATH and no longer held in memory."""
        with path.open("wb") as f:
            f.write(memoryview(self.state).cast("B")[: self.nbytes])
        return replace(self, state=None, path=path)


class SessionCache:
    """Snapshots per session, least recently used first out, within a byte budget of memory.

    With SPILL_TO (a callable giving the folder) a snapshot the budget cannot hold is
    written to a file there instead of dropped, when reading it back would cost less than
    evaluating its tokens again (COSTS, `inference.spill`); one that would not is dropped.
    `dropped` and `spilled` count what the budget pushed out.
    """

    def __init__(
        self,
        budget: int,
        *,
        spill_to: Callable[[], Path] | None = None,
        costs: RestoreCosts | None = None,
    ) -> None:
        self.budget = budget
        self.spill_to = spill_to
        self.costs = costs or RestoreCosts()
        self.dropped = self.spilled = 0
        self._items: OrderedDict[str, Snapshot] = OrderedDict()

    @property
    def enabled(self) -> bool:
        return self.budget > 0 or self.spill_to is not None

    def emptied(self) -> SessionCache:
        """A cache like this one (budget, folder, rates), holding nothing."""
        return SessionCache(self.budget, spill_to=self.spill_to, costs=self.costs)

    def __contains__(self, name: str) -> bool:
        return name in self._items

    def best(
        self, tokens: Sequence[int], alone: Sequence[bool] | None = None
    ) -> tuple[Snapshot | None, int]:
        """The snapshot sharing the longest prefix with `tokens` (evaluated as `alone` says),
        from any session.

        Speakers whose prompts open on the same record (the motion, then the speeches so
        far) share that prefix whoever spoke last.
        """
        found, length = None, 0
        for name in reversed(self._items):  # the most recently used first on a tie
            n = self._items[name].common_prefix(tokens, alone)
            if n > length:
                found, length = name, n
        if found is None:
            return None, 0
        self._items.move_to_end(found)
        return self._items[found], length

    def discard(self, name: str) -> None:
        _forget(self._items.pop(name, None))

    def put(self, name: str, snap: Snapshot) -> None:
        self.discard(name)
        self._items[name] = snap
        if snap.nbytes > self.budget:  # larger than the whole budget: the others stay
            self._push_out(name)
            return
        while self.nbytes > self.budget:
            oldest = next(n for n, s in self._items.items() if s.path is None)
            self._push_out(oldest)

    def _push_out(self, name: str) -> None:
        """NAME's snapshot out of memory: to a file where keeping it pays, else dropped."""
        snap = self._items[name]
        tokens = len(snap.tokens)
        if self.spill_to is not None and self.costs.reading_pays(snap.nbytes, tokens):
            folder = self.spill_to()
            if disk_has_room(folder, snap.nbytes):
                try:
                    self._items[name] = self._write(snap, folder)
                except OSError:  # a disk that fails to take it: dropped, as with no room
                    pass
                else:
                    self.spilled += 1
                    return
        del self._items[name]
        self.dropped += 1

    def _write(self, snap: Snapshot, directory: Path) -> Snapshot:
        directory.mkdir(parents=True, exist_ok=True)
        fd, where = tempfile.mkstemp(suffix=".kv", dir=directory)
        os.close(fd)
        start = time.perf_counter()
        spilled = snap.spill(Path(where))
        self.costs.written(snap.nbytes, time.perf_counter() - start)
        return spilled

    @property
    def nbytes(self) -> int:
        """The memory the snapshots hold (those spilled to files hold none)."""
        return sum(s.nbytes for s in self._items.values() if s.path is None)

    @property
    def on_disk(self) -> int:
        """The bytes of the snapshots spilled to files."""
        return sum(s.nbytes for s in self._items.values() if s.path is not None)

    def clear(self) -> None:
        for snap in self._items.values():
            _forget(snap)
        self._items.clear()

    def spill(self, directory: Path) -> SessionCache:
        """This cache with every state written to a file in DIRECTORY and freed from memory:
        what a model unloaded for another's turns keeps, so its speakers do not start cold
        when it is loaded again. The files are read back only when a snapshot is used."""
        directory.mkdir(parents=True, exist_ok=True)
        kept = self.emptied()
        for name, snap in self._items.items():
            if snap.path is None:  # one read back from its file is still there, unused
                snap = self._write(snap, directory)
            kept._items[name] = snap
        self._items.clear()
        return kept


def _forget(snap: Snapshot | None) -> None:
    """Remove a dropped snapshot's file, if it was spilled to one."""
    if snap is not None and snap.path is not None:
        snap.path.unlink(missing_ok=True)


class PrefixIndex:
    """A vocabulary's token pieces arranged by their first bytes, to find every token a
    grammar allows without testing the whole vocabulary.

    A character grammar that rejects some bytes rejects everything that starts with them
    (llama.cpp reads a token's bytes in order, and a cut-off UTF-8 character is refused
    only when no character it could become fits). So the one-, two- and three-byte
    prefixes of the vocabulary are tested first, and only tokens under the prefixes that
    pass are tested themselves: a few hundred tests rule out most of a 262k vocabulary
    when few tokens fit. A prefix that is a token is tested as that token; any other as
    its last byte after its parent's bytes (`allows(after, tokens)`, `after` spelled in
    single-byte tokens). A prefix that cannot be tested either way is kept, untested.
    Tokens whose text does not decide (`always`: end of generation) are always kept.
    """

    def __init__(self, pieces: Sequence[bytes], *, always: Sequence[int] = (), depth: int = 3):
        self.depth = depth
        self.always = list(always)
        self.exact: dict[bytes, list[int]] = {}  # piece of at most `depth` bytes -> tokens
        self.deep: dict[bytes, list[int]] = {}  # first `depth` bytes -> longer tokens
        skipped = set(always)
        for token, piece in enumerate(pieces):
            if b"\0" in piece:
                piece = piece.split(b"\0", 1)[0]  # what C sees
            if not piece or token in skipped:  # an empty piece is never allowed
                continue
            if len(piece) <= depth:
                self.exact.setdefault(piece, []).append(token)
            else:
                self.deep.setdefault(piece[:depth], []).append(token)
        kids: dict[bytes, set[bytes]] = {}
        for prefix in self.exact.keys() | self.deep.keys():
            for d in range(len(prefix)):
                kids.setdefault(prefix[:d], set()).add(prefix[: d + 1])
        self.children = {prefix: sorted(found) for prefix, found in kids.items()}
        self.byte_token = {
            piece[0]: tokens[0] for piece, tokens in self.exact.items() if len(piece) == 1
        }

    def narrow(self, allows: Any, *, limit: int, max_tests: int = 2048) -> list[int] | None:
        """Tokens that may be allowed: every allowed token is among them.

        Returns None when a level would test more than `max_tests` prefixes or more than
        `limit` tokens would be left: where most of the vocabulary may pass, testing all of
        it costs no more.
        """
        found: list[int] = []
        untested: list[bytes] = []  # prefixes kept without a test: all below them stays
        frontier = [b""]
        for _ in range(self.depth):
            nodes = [
                (parent, child) for parent in frontier for child in self.children.get(parent, ())
            ]
            if len(nodes) > max_tests:
                return None
            passed = self._test(nodes, allows)
            frontier = []
            for (_, node), ok in zip(nodes, passed, strict=True):
                if ok is None:
                    untested.append(node)
                elif ok:
                    found.extend(self.exact.get(node, ()))
                    frontier.append(node)
        left = [token for node in frontier for token in self.deep.get(node, ())]
        left += [token for node in untested for token in self._all_below(node)]
        return None if len(left) > limit else found + left + self.always

    def _test(self, nodes: list[tuple[bytes, bytes]], allows: Any) -> list[bool | None]:
        """Whether the grammar allows each (parent, node) prefix; None: cannot tell."""
        verdicts: list[bool | None] = [None] * len(nodes)
        by_context: dict[bytes, list[int]] = {}  # what the grammar reads first -> nodes
        for i, (parent, node) in enumerate(nodes):
            if node in self.exact:
                by_context.setdefault(b"", []).append(i)
            elif node[-1] in self.byte_token and all(b in self.byte_token for b in parent):
                by_context.setdefault(parent, []).append(i)
        for context, members in by_context.items():
            tokens = [
                self.exact[nodes[i][1]][0] if not context else self.byte_token[nodes[i][1][-1]]
                for i in members
            ]
            after = [self.byte_token[b] for b in context]
            for i, ok in zip(members, allows(after, tokens), strict=True):
                verdicts[i] = ok
        return verdicts

    def _all_below(self, node: bytes) -> list[int]:
        """Every token whose piece starts with `node` and is longer than it."""
        tokens: list[int] = []
        stack = [node]
        while stack:
            prefix = stack.pop()
            tokens.extend(self.deep.get(prefix, ()))
            for child in self.children.get(prefix, ()):
                tokens.extend(self.exact.get(child, ()))
                stack.append(child)
        return tokens
