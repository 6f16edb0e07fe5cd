"""What a GGUF's header says it is: a model the bundled llama.cpp can load, and one that can
debate (not an embedding model, a vision projector, an adapter or a later part of a split)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from moot.errors import Phrase
from moot.models.gguf_check import GGUFInfo

# The architectures libllama (llama-cpp-python 0.3.36, the version pyproject pins) registers;
# tests/models/test_stores.py checks each is named in the installed library.
LLAMA_CPP_ARCHITECTURES = frozenset(
    """
    afmoe apertus arcee arctic arwkv7 baichuan bailingmoe bailingmoe2 bailingmoe3 bert
    bitnet bloom chameleon chatglm clip codeshell cogvlm cohere2 cohere2moe command-r dbrx
    deci deepseek deepseek2 deepseek2-ocr deepseek32 deepseek4 dflash dots1 dots3note dream
    eagle3 ernie4_5 ernie4_5-moe eurobert exaone exaone-moe exaone4 falcon falcon-h1 gemma
    gemma-embedding gemma2 gemma3 gemma3n gemma4 gemma4-assistant glm-dsa glm4 glm4moe
    glm5-next gpt-oss gpt2 gptj gptneox granite granite_swa granitehybrid granitemoe
    graniteswitch grok grovemoe hrm_text hunyuan-dense hunyuan-moe hunyuan_vl hy_v3 hy_v4
    internlm2 jais jais2 jamba jina-bert-v2 jina-bert-v3 kimi-k3 kimi-linear laguna lfm2
    lfm2moe llada llada-moe llama llama-embed llama4 maincoder mamba mamba2 maple mellum
    mimo2 minicpm minicpm3 minimax-01 minimax-m2 minimax-m3 mistral3 mistral4 modern-bert
    mpt muse-glimmer nanbeige nemotron nemotron_h nemotron_h_moe neo-bert nomic-bert
    nomic-bert-moe olmo olmo2 olmoe openelm orion paddleocr pangu-embedded phi2 phi3 phimoe
    plamo plamo2 plamo3 plm pockettts qwen qwen2 qwen2moe qwen2vl qwen3 qwen35 qwen35moe
    qwen3moe qwen3next qwen3tts qwen3vl qwen3vlmoe qwen4exp refact rnd1 rwkv6 rwkv6qwen2
    rwkv7 seed_oss smallthinker smollm3 spark2_5 stablelm starcoder starcoder2 step35 t5
    t5encoder talkie wavtokenizer-dec xverse
    """.split()
)
# Encoders: they turn text into vectors and never write a reply.
EMBEDDING_ARCHITECTURES = frozenset(
    "bert modern-bert nomic-bert nomic-bert-moe neo-bert jina-bert-v2 jina-bert-v3 eurobert "
    "t5encoder gemma-embedding llama-embed".split()
)
SPEECH_ARCHITECTURES = frozenset("wavtokenizer-dec qwen3tts pockettts".split())
PROJECTOR = "clip"  # llama.cpp's mmproj files: the image encoder of a vision model


@dataclass(frozen=True)
class Unfit:
    """Why a GGUF is not offered as a debater. A PART (a projector, an adapter, a later split
    part) belongs to another model and is left out of listings; anything else is shown."""

    reason: Phrase  # its English is str(reason)
    part: bool = False


def loadable(architecture: str | None) -> bool | None:
    """Whether the bundled llama.cpp knows ARCHITECTURE; None when the header names none."""
    return None if architecture is None else architecture in LLAMA_CPP_ARCHITECTURES


def unfit(header: GGUFInfo) -> Unfit | None:
    """Why the model in HEADER cannot take a seat in a debate, or None when it can."""
    meta = header.metadata
    arch = header.architecture
    kind = meta.get("general.type")
    if kind == "mmproj" or arch == PROJECTOR:
        return Unfit(Phrase("models.architectures.projector"), part=True)
    if kind == "adapter":
        return Unfit(Phrase("models.architectures.adapter"), part=True)
    part = _count(meta.get("split.no"))
    if part:
        if header.split_count:
            said = Phrase(
                "models.architectures.split_part_of", part=part + 1, count=header.split_count
            )
            return Unfit(said, part=True)
        return Unfit(Phrase("models.architectures.split_part", part=part + 1), part=True)
    if arch in EMBEDDING_ARCHITECTURES or _count(meta.get(f"{arch}.pooling_type")):
        return Unfit(Phrase("models.architectures.embedding"))
    if arch in SPEECH_ARCHITECTURES:
        return Unfit(Phrase("models.architectures.speech", arch=arch))
    return None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
