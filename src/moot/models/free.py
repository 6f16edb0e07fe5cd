"""Memory free on this machine now: system memory, and GPU memory where nvidia-smi can say.

What cannot be read is None (unknown), never an error: a planner holding a debate against
these figures lets an unknown one pass.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from moot.errors import MootError
from moot.records import files

MiB = 1 << 20
NVIDIA_SMI_TIMEOUT_S = 5.0
MEMINFO = Path("/proc/meminfo")
MEMINFO_LIMIT = 1 << 16


@dataclass(frozen=True)
class Free:
    """Memory free now, in bytes; None where it cannot be read."""

    ram: int | None
    gpu: int | None = None  # all the GPUs nvidia-smi lists (those CUDA_VISIBLE_DEVICES keeps)


def free_memory(*, gpu: bool = True) -> Free:
    """What this machine has free now; GPU memory only when GPU is asked for."""
    return Free(ram=available_ram(), gpu=free_gpu() if gpu else None)


def available_ram(meminfo: Path = MEMINFO) -> int | None:
    """MemAvailable from /proc/meminfo (Linux: free memory and the cache it can drop), else
    the free pages os.sysconf reports; None when neither can be read."""
    try:
        text = files.read_text(meminfo, what="the memory report", limit=MEMINFO_LIMIT)
    except MootError:
        text = ""
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        fields = rest.split()
        if key == "MemAvailable" and fields and fields[0].isascii() and fields[0].isdigit():
            return int(fields[0]) * (1024 if fields[1:] == ["kB"] else 1)
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def free_gpu() -> int | None:
    """Free GPU memory from nvidia-smi (a few seconds at most); None without one."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        done = subprocess.run(
            [exe, "--query-gpu=memory.free", "--format=csv,noheader,nounits"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=NVIDIA_SMI_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return parse_gpu_free(
        done.stdout.decode("utf-8", "replace"), os.environ.get("CUDA_VISIBLE_DEVICES")
    )


def parse_gpu_free(text: str, visible: str | None = None) -> int | None:
    """Bytes free on the GPUs of nvidia-smi's TEXT (MiB, one line per GPU) that VISIBLE
    (CUDA_VISIBLE_DEVICES) keeps: llama.cpp spreads the layers over all of them. None when a
    line is not a number, or VISIBLE hides every GPU."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines or not all(line.isascii() and line.isdigit() for line in lines):
        return None
    mib = [int(line) for line in lines]
    if visible is not None:
        wanted = [v.strip() for v in visible.split(",") if v.strip()]
        if not wanted:
            return None
        if all(
            v.isascii() and v.isdigit() for v in wanted
        ):  # indices; UUIDs and MIG names keep them all
            mib = [mib[int(v)] for v in wanted if int(v) < len(mib)]
            if not mib:
                return None
    return sum(mib) * MiB
