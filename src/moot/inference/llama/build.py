"""Which llama.cpp this process runs: the backends it was built with and whether it can
offload layers to a GPU (`make install GPU=cuda|metal|vulkan` builds one that can)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

# llama_print_system_info(): `CPU : SSE3 = 1 | AVX = 1 | … | CUDA : ARCHS = 890 | …`, each
# backend's name before its own ` : `.
_BACKEND = re.compile(r"(?:^|\|)\s*([A-Za-z][A-Za-z0-9_-]*) : ")


@dataclass(frozen=True)
class Build:
    """The llama.cpp build: VERSION of llama-cpp-python (None: not installed), whether it
    can offload layers to a GPU, and the backends its system information names."""

    version: str | None
    gpu_offload: bool
    backends: tuple[str, ...]

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
    )
