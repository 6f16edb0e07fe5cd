"""The decode loop: one reply sampled token by token, streamed, stopped, timed."""

from __future__ import annotations

import logging
import time

from moot.errors import CallTimeoutError
from moot.inference.decoding import DecodePlan, TextStream
from moot.inference.llama.context import Runtime
from moot.inference.llama.sampler import Sampler
from moot.inference.protocol import FinishReason, OnText

log = logging.getLogger("moot.inference.llama")


def decode(
    rt: Runtime,
    plan: DecodePlan,
    on_text: OnText | None,
    *,
    start: float,
    deadline: float | None,
    model_id: str,
) -> tuple[str, int, FinishReason, float]:
    """Sample until end of generation, a stop string, a complete grammar, or max_tokens.

    Returns the text, the number of tokens generated, why it stopped and the time to the
    first token. The prompt must already be evaluated in `rt`.
    """
    sampler = Sampler(rt, plan, context=rt.llm._input_ids)
    stream = TextStream(plan.stop, on_text)
    finish: FinishReason = "length"
    n_out, ttft = 0, 0.0
    try:
        while n_out < plan.max_tokens:
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
            if stream.feed(rt.piece(token)) or complete:
                finish = "stop"
                break
            rt.step(token)
    finally:
        sampler.free()
    if sampler.fallbacks:
        log.debug("grammar rejected %d of %d draws", sampler.fallbacks, n_out)
    return stream.finish(), n_out, finish, ttft
