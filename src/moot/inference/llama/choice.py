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

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from moot.inference.decoding import common_prefix
from moot.inference.llama.context import Runtime


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


def log_softmax(logits: Any) -> Any:
    """The log-probability of every token of the vocabulary, in float64."""
    import numpy as np

    x = np.asarray(logits, dtype=np.float64)
    top = float(x.max())
    return x - (top + math.log(float(np.exp(x - top).sum())))


def score(
    rt: Runtime, root: Node, n_options: int, base: int, rewind: Callable[[int], None]
) -> list[float]:
    """Each option's log-probability of its continuation, the BASE tokens before it already
    evaluated in RT (its logits those of the last). Between branches the cache is cut back to
    the branch point, or, where it cannot be (a sliding window evicted what the branch point
    attends to), REWIND(n) evaluates the first n tokens of the path again."""
    scores = [0.0] * n_options
    _walk(rt, root, base, 0.0, scores, rewind)
    return scores


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
