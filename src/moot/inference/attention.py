"""Whether llama.cpp computes a model's attention with its flash-attention kernel.

The choice follows the model's shape and where it runs, never a measurement at load, so a
debate resumed or replayed on the same machine computes its turns the same way.

- On a GPU (any layer offloaded) flash attention is on: llama.cpp's own default there.
- On the CPU it is on for heads 128 or more wide and off for narrower ones. llama.cpp's CPU
  kernel walks the KV cache one position at a time for each head, and at a 64-wide head
  that walk costs more than the two matrix products it replaces. Measured on an AVX-512
  Xeon, 2 threads: SmolLM2-135M (64 wide) decoded 2.0x faster without it at 2,048 tokens of
  context and 1.4x at 512, a 1B shape with 32 heads of 64 1.3x at 1,024 and 2.0x at 3,072,
  while a 256-token batch lost at most 15 %. At 128 wide the two are within about 10 % up
  to 2,048 tokens; at 256 wide (Gemma 3) flash attention decodes faster at every context.
  `benchmarks/bench_attention.py` measures both ways on the tiny models (`make bench`).
- A head width the header does not give: on, llama.cpp's default.

CPUs differ in this (llama.cpp's CPU kernel is slower still on some Arm cores, and on
some x86 ones faster), so `MOOT_FLASH_ATTENTION=on` or `off` sets it for every model;
`benchmarks/bench_attention.py` shows which is faster on a machine. The setting changes
the numbers a model computes: a seeded debate resumed or replayed under another one says
different things from there on.

Without flash attention llama.cpp's compute buffer holds a batch's attention scores, n_ctx
floats for each head and batch token; `models.memory` plans for it.
"""

from __future__ import annotations

import os

from moot.errors import UsageError

FLASH_MIN_HEAD_DIM = 128  # on the CPU, heads narrower than this attend without it
OVERRIDE = "MOOT_FLASH_ATTENTION"
_CHOICES = {"on": True, "off": False, "auto": None, "": None}


def flash_attention(head_dim: int | None, gpu_layers: int) -> bool:
    """Whether to load a model whose heads are HEAD_DIM wide with flash attention, with
    GPU_LAYERS of its layers offloaded (0: none, negative: all)."""
    said = os.environ.get(OVERRIDE, "").strip().lower()
    if said not in _CHOICES:
        raise UsageError(key="inference.attention.not_on_off_auto", override=OVERRIDE, said=said)
    chosen = _CHOICES[said]
    if chosen is not None:
        return chosen
    if gpu_layers != 0 or head_dim is None:
        return True
    return head_dim >= FLASH_MIN_HEAD_DIM
