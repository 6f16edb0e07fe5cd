"""The decode loop: one reply sampled token by token, streamed, stopped, timed; a think block
that outruns its budget closed by the loop itself."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from moot.errors import CallTimeoutError
from moot.inference.decoding import DecodePlan, ReplyBudget, TextStream
from moot.inference.llama.context import Runtime
from moot.inference.llama.sampler import Sampler
from moot.inference.protocol import FinishReason, OnText
from moot.inference.reasoning import Splitter

log = logging.getLogger("moot.inference.llama")


def decode(
    rt: Runtime,
    plan: DecodePlan,
    on_text: OnText | None,
    *,
    start: float,
    deadline: float | None,
    model_id: str,
    make_sampler: Callable[..., Any] = Sampler,
) -> tuple[str, int, FinishReason, float]:
    """Sample until end of generation, a stop string, a complete grammar, or the budget.

    Returns the text as written (reasoning marked), the number of tokens generated, why it
    stopped and the time to the first token. The prompt must already be evaluated in `rt`.
    Free text is read as it comes: once its reasoning has taken the plan's think budget,
    the tokens that close the block are fed into the sequence and the model answers; the
    answer has max_tokens of its own.
    """
    sampler = make_sampler(rt, plan, context=rt.tokens)
    splitter = Splitter() if plan.grammar is None else None

    def heard(text: str) -> bool | None:
        if splitter is not None:
            splitter.feed(text)
        return on_text(text) if on_text else None

    stream = TextStream(plan.stop, heard)
    budget = ReplyBudget(plan)
    finish: FinishReason = "length"
    n_out, ttft = 0, 0.0
    try:
        if plan.opened and stream.feed(plan.opened.encode()):  # the prompt opened the block
            return stream.finish(), 0, "stop", 0.0
        while not budget.spent:
            if deadline is not None and time.perf_counter() > deadline:
                raise CallTimeoutError(seconds=deadline - start, model=model_id)
            token = sampler.sample()
            if not n_out:
                ttft = time.perf_counter() - start
            if rt.is_eog(token):
                finish = "stop"
                break
            n_out += 1
            complete = sampler.accept(token)
            if stream.feed(rt.text_piece(token)) or complete:
                finish = "stop"
                break
            thinking = splitter is not None and splitter.thinking
            budget.count(thinking=thinking)
            rt.step(token)
            if splitter is not None and thinking and budget.thought_enough:
                closer = splitter.closer()
                for forced in rt.tokenize(closer):
                    rt.step(forced)
                    sampler.learn(forced)
                    budget.count(thinking=True)
                    n_out += 1
                if stream.feed(closer.encode()):
                    finish = "stop"
                    break
    finally:
        sampler.free()
    if sampler.fallbacks or sampler.closes:
        log.debug(
            "grammar rejected %d of %d draws (%d ended it with its closer)",
            sampler.fallbacks + sampler.closes,
            n_out,
            sampler.closes,
        )
    return stream.finish(), n_out, finish, ttft
