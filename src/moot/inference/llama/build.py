"""Which llama.cpp this process runs: the backends it was built with, whether it can
offload layers to a GPU (`make install GPU=cuda|metal|vulkan` builds one that can), and
whether its CPU backend repacks weights, which decides how a model's file is loaded
(`map_weights`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

# llama_print_system_info(): `CPU : SSE3 = 1 | AVX = 1 | … | CUDA : ARCHS = 890 | …`, each
# backend's name before its own ` : `.
_BACKEND = re.compile(r"(?:^|\|)\s*([A-Za-z][A-Za-z0-9_-]*) : ")
_REPACK = re.compile(r"\bREPACK = 1\b")


@dataclass(frozen=True)
class Build:
    """The llama.cpp build: VERSION of llama-cpp-python (None: not installed), whether it
    can offload layers to a GPU, and the backends its system information names."""

    version: str | None
    gpu_offload: bool
    backends: tuple[str, ...]
    repacks: bool = False  # its CPU backend copies weights into its own layout at load

    @property
    def backend(self) -> str:
        """`cuda`, `metal`, `vulkan` (the GPU backends it has, joined by +), else `cpu`;
        `none` without llama-cpp-python."""
        if self.version is None:
            return "none"
        gpus = [b.lower() for b in self.backends if b.upper() not in ("CPU", "BLAS")]
        return "+".join(gpus) or "cpu"

    def as_dict(self) -> dict[str, object]:
        return {
            "backend": self.backend,
            "gpu_offload": self.gpu_offload,
            "backends": list(self.backends),
            "llama_cpp_python": self.version,
        }


def backends(system_info: str) -> tuple[str, ...]:
    """The backends SYSTEM_INFO (llama.cpp's llama_print_system_info) names, in order."""
    return tuple(dict.fromkeys(_BACKEND.findall(system_info)))


def repacks(system_info: str) -> bool:
    """Whether SYSTEM_INFO says `REPACK = 1`: the CPU backend copies the weights of the types
    it has faster kernels for (Q4_0, Q4_K, IQ4_NL on x86 with AVX2) into a buffer of its own
    when the model loads."""
    return bool(_REPACK.search(system_info))


def map_weights(gpu_layers: int, built: Build | None = None) -> bool:
    """Whether to map the model's file (llama.cpp's `use_mmap`) rather than read it, with
    GPU_LAYERS of its layers offloaded (0: none), on BUILT (this process's by default).

    Not on the CPU of a build that repacks: there the weights llama.cpp repacks are copied
    out of the mapping at load and the mapped pages stay resident beside the copy, so the
    process holds them twice (measured at the Llama-3.2-3B shape, Q4_0: 3,751 MiB resident
    mapped, 2,249 MiB read, the same kernels; docs/performance.md). Read, each
    tensor is copied once into the buffer it runs from, and the plan (`models.memory`)
    counts the weights once. Mapped otherwise: on a GPU the offloaded layers are copied to
    the device, and without repacking the mapping is the only copy."""
    built = build() if built is None else built
    return gpu_layers != 0 or not built.repacks


@cache
def build() -> Build:
    """This process's llama.cpp build (read once)."""
    try:
        import llama_cpp
    except ImportError:
        return Build(version=None, gpu_offload=False, backends=())
    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    return Build(
        version=llama_cpp.__version__,
        gpu_offload=bool(llama_cpp.llama_supports_gpu_offload()),
        backends=backends(info),
        repacks=repacks(info),
    )
