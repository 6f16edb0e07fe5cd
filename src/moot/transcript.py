"""Debate records: turns, the append-only journal, the transcript file and Markdown rendering."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from moot import __version__

# The file helpers live in moot.files; the runner, history and tournament import them from here.
from moot.files import create_atomic as create_atomic
from moot.files import make_private_dir as make_private_dir
from moot.files import write_atomic as write_atomic

StopReason = Literal[
    "converged", "hard_cap", "resolved", "interrupted", "completed", "cap", "incomplete", "failed"
]


class Turn(BaseModel):
    """One finished step of a debate: who said what, with which model, at what cost."""

    index: int
    round: int
    role: str
    step: str
    model: str
    temperature: float
    seed: int | None = None
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    duration_ms: int = 0
    ttft_ms: int = 0  # to the first token: mostly evaluating the prompt
    finish_reason: str = "stop"
    accepted: bool | None = None  # points of information: accepted or declined
    note: str | None = None  # e.g. "degenerate: the reply is empty"
    data: dict[str, Any] | None = None  # a structured reply, validated


class ModelInfo(BaseModel):
    id: str
    sha256: str | None = None


class Transcript(BaseModel):
    """Everything a debate produced and what is needed to replay it."""

    moot_version: str = __version__
    format: str
    motion: str
    language: str
    seed: int
    models: dict[str, ModelInfo]
    refs: dict[str, str] = Field(default_factory=dict)  # role → the reference as given
    sampling: dict[str, float] = Field(default_factory=dict)  # role → temperature
    prompt_pack: str = ""  # sha256 of the templates
    params: dict[str, Any] = Field(default_factory=dict)
    turns: list[Turn] = Field(default_factory=list)
    scores: dict[str, dict[str, Any]] = Field(default_factory=dict)  # round → score record
    stop_reason: StopReason | None = None
    result: dict[str, Any] | None = None


class Journal:
    """Append-only JSONL: each record is on disk (fsynced) before the debate goes on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._fh = os.fdopen(fd, "a", encoding="utf-8")

    def append(self, kind: str, payload: dict[str, Any]) -> None:
        line = json.dumps({"type": kind, **payload}, ensure_ascii=False)
        self._fh.write(line + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def read_journal(path: Path) -> list[dict[str, Any]]:
    """Records of a journal; a torn last line (crash mid-write) is ignored."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return records


def render_markdown(title: str, sections: list[tuple[str, str]], footer: str = "") -> str:
    """A document of headed sections, in the order given."""
    parts = [f"# {title}", ""]
    for heading, body in sections:
        parts += [f"## {heading}", "", body.strip() or "—", ""]
    if footer:
        parts += ["---", "", footer, ""]
    return "\n".join(parts)
