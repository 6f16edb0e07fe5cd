"""A decision's probabilities read from the logits: each option's whole continuation scored.

The prompt and the reply's prefix are evaluated once; each option's continuation is then
scored token by token, the log-probability of each token taken over the whole vocabulary
(a log-softmax of the position's logits). The continuations are walked as a trie, so the
tokens that several options begin with are evaluated once, and the cache is cut back to the
branch point between branches. Only the last position's logits are ever read: nothing needs
llama-cpp-python's `logits_all` (a context's length times the vocabulary in floats).

Tokenizers merge across the boundary between the prefix and a value: `": "` then `"yes"`
is often `":`, ` "`, `yes`, `"}` and not `": ` then `"yes"}`. The tokens scored are therefore
those of the whole reply, prompt + prefix + value, after the longest run of leading tokens
that every option's reply and the prompt + prefix share: each option is scored in its own
canonical tokenization, and what the options share cancels out when they are normalised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from moot.inference.decoding import common_prefix
from moot.inference.llama.context import Runtime, log_softmax


@dataclass
class Node:
    """The continuations that go through one token: those that end here, and the rest."""

    children: dict[int, Node] = field(default_factory=dict)
    ends: list[int] = field(default_factory=list)  # the options whose continuation ends here


def split_point(prefix: Sequence[int], replies: Sequence[Sequence[int]]) -> int:
    """How many leading tokens PREFIX (prompt + reply prefix) and every option's REPLIES
    share, less one where that would leave an option's continuation empty."""
    n = len(prefix)
    for reply in replies:
        n = min(n, common_prefix(prefix, reply))
    shortest = min(len(reply) for reply in replies)
    return max(0, min(n, shortest - 1))


def trie(continuations: Sequence[Sequence[int]]) -> Node:
    root = Node()
    for i, tokens in enumerate(continuations):
        node = root
        for token in tokens:
            node = node.children.setdefault(token, Node())
        node.ends.append(i)
    return root


def score(
    rt: Runtime, root: Node, n_options: int, base: int, rewind: Callable[[int], None]
) -> list[float]:
    """Each option's log-probability of its continuation, the BASE tokens before it already
    evaluated in RT (its logits those of the last). Between branches the cache is cut back to
    the branch point, or, where it cannot be (a sliding window evicted what the branch point
    attends to), REWIND(n) evaluates the first n tokens of the path again."""
    scores = [0.0] * n_options
    path = _single_path(root)
    if path is not None:  # one continuation: scored in chunks, not a token at a time
        scores[path[1]] = sum(rt.path_logprobs(path[0]))
        return scores
    _walk(rt, root, base, 0.0, scores, rewind)
    return scores


def _single_path(root: Node) -> tuple[list[int], int] | None:
    """The tokens of the trie's only continuation and its option, or None where it has more."""
    tokens: list[int] = []
    node = root
    while len(node.children) == 1 and not node.ends:
        token, node = next(iter(node.children.items()))
        tokens.append(token)
    if node.children or len(node.ends) != 1 or not tokens:
        return None
    return tokens, node.ends[0]


def _walk(
    rt: Runtime,
    node: Node,
    depth: int,
    so_far: float,
    scores: list[float],
    rewind: Callable[[int], None],
) -> None:
    logp = log_softmax(rt.logits())
    children = list(node.children.items())
    # Each child's score is read before any of them is evaluated: the logits change then.
    taken = [(token, child, so_far + float(logp[token])) for token, child in children]
    for token, child, total in taken:
        for option in child.ends:
            scores[option] = total
        if not child.children:
            continue
        rt.step(token)
        _walk(rt, child, depth + 1, total, scores, rewind)
        if not rt.truncate(depth):
            rewind(depth)
