"""The challenge format's state file: the rulebook's schema written after every exchange,
and a reader of it that also reads the files moot wrote before it kept that schema."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from moot.config import data_dir
from moot.errors import UsageError
from moot.formats.challenge import text
from moot.prompts import detect_language
from moot.records.files import create_atomic, make_private_dir, read_json, write_atomic

# The rulebook's schema, key for key, so that a consumer written to it reads moot's file;
# what moot records beyond it is under the one key `moot`. In the rulebook "tool" is the
# program that played a seat and "model" the model it ran: for moot the tool is the model
# reference the seat was given (`smollm2-135m`, `ollama:qwen3:8b`, a server's URL) and the
# model the GGUF file or the server's model name.

STATE_VERSION = 2  # 1: the files moot wrote before it kept the rulebook's schema


class Side(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    model: str


class Exchange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    round: int
    role: str
    tool: str
    response: str
    duration_ms: int


class StateVerdict(BaseModel):
    """The rulebook's verdict: the winner named by its tool, agreements and disagreements
    as plain strings."""

    model_config = ConfigDict(extra="forbid")

    winner: str
    reasoning: str
    agreements: list[str]
    disagreements: list[str]
    recommendation: str


class MootRecord(BaseModel):
    """What moot records beyond the rulebook's schema."""

    model_config = ConfigDict(extra="forbid")

    version: int = STATE_VERSION
    language: str = "en"
    backends: dict[str, str] = Field(default_factory=dict)  # side → llama.cpp, openai-compatible…
    # The judge's reply as given: the winner as a side, each agreement's point and evidence,
    # each disagreement's point and both sides, the unresolved questions and the ratings.
    verdict: dict[str, Any] | None = None


def _now() -> datetime:
    return datetime.now(UTC)


ID = re.compile(r"debate-\d{8}T\d{6}Z-[0-9a-f]{4}")


def new_id() -> str:
    """`debate-<ISO 8601 timestamp, basic format>-<4 hex>`: sortable, and safe in a file
    name (the extended format's colons are not, on every system)."""
    return f"debate-{_now().strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(2)}"


def state_dir(rehearsal: bool = False) -> Path:
    """The rulebook's `{AI_STATE_DIR}/debate/`: moot's state directory's `debate/`; a dry
    run's (REHEARSAL) its `dry-run/`, so that the tools reading `last-debate.json` keep
    seeing the last real debate."""
    folder = data_dir() / "state" / "debate"
    return folder / "dry-run" if rehearsal else folder


class DebateState(BaseModel):
    """The rulebook's state file, rewritten after every exchange and at the end."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=new_id)
    topic: str
    proposer: Side
    challenger: Side
    effort: str
    rounds_completed: int = 0
    max_rounds: int
    status: str = "running"  # running · completed · incomplete · uncontested · failed
    exchanges: list[Exchange] = Field(default_factory=list)
    verdict: StateVerdict | None = None
    timestamp: str = ""
    moot: MootRecord = Field(default_factory=MootRecord)
    _claimed: bool = PrivateAttr(default=False)
    _rehearsal: bool = PrivateAttr(default=False)

    @property
    def path(self) -> Path:
        return state_dir(self._rehearsal) / f"{self.id}.json"

    def rehearse(self) -> None:
        """Write this dry run's state files apart (`state_dir(rehearsal=True)`)."""
        self._rehearsal = True

    @property
    def claimed(self) -> bool:
        """Whether this debate's `<id>.json` is its own yet."""
        return self._claimed

    def adopt(self, kept: str) -> None:
        """Go on writing the file a debate claimed before it was resumed: KEPT is its id as
        the journal kept it. One that is not an id moot draws (a journal edited by hand) is
        no path to write to: this debate then claims a file of its own."""
        if ID.fullmatch(kept):
            self.id, self._claimed = kept, True

    def save(self) -> Path:
        """Write `<id>.json` and `last-debate.json` atomically; a reader never sees half."""
        self.timestamp = _now().isoformat(timespec="seconds")
        folder = make_private_dir(state_dir(self._rehearsal))
        text = self.model_dump_json(indent=2)
        if self._claimed:
            write_atomic(self.path, text)
        while not self._claimed:
            # Two debates started in the same second may draw one id: the first to create
            # `<id>.json` keeps it, the other draws again.
            self._claimed = create_atomic(self.path, text)
            if not self._claimed:
                self.id = new_id()
                text = self.model_dump_json(indent=2)
        write_atomic(folder / "last-debate.json", text)
        return self.path


# -- reading: either shape --------------------------------------------------------------


def read_state(path: Path) -> DebateState:
    """A state file moot wrote: the rulebook's shape, or the one moot wrote before (sides
    as `{backend, model}`, exchanges with a `model`, the verdict's winner a side and its
    lists structured), which is read into the rulebook's. A file that is neither is a
    UsageError naming the field."""
    data = read_json(path, what="challenge state file")
    if isinstance(data, dict) and _is_first_shape(data):
        data = _from_first_shape(data)
    try:
        return DebateState.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "the file"
        raise UsageError(
            key="formats.challenge.state.not_challenge_state_file",
            path=path,
            where_value=where,
            msg=error["msg"],
        ) from None


def _is_first_shape(data: dict[str, Any]) -> bool:
    side = data.get("proposer")
    return "moot" not in data and isinstance(side, dict) and "backend" in side


def _from_first_shape(data: dict[str, Any]) -> dict[str, Any]:
    """The first shape in the rulebook's: each side's model was its reference, so it names
    the tool as well; what the rulebook has no key for goes under `moot`."""
    sides = {r: _dict(data.get(r)) for r in ("proposer", "challenger")}
    refs = {r: str(side.get("model", "")) for r, side in sides.items()}
    # A server's reference was "URL#name": the URL is its tool, the name its model.
    split = {
        r: ref.partition("#") if ref.startswith("http") else (ref, "", ref)
        for r, ref in refs.items()
    }
    tools = {r: parts[0] for r, parts in split.items()}
    # The first shape did not record the debate's language: it was its topic's, unless
    # the debate was given another (--lang).
    language = detect_language(str(data.get("topic", "")))
    verdict = data.get("verdict")
    exchanges = [
        {k: v for k, v in x.items() if k != "model"} | {"tool": tools.get(str(x.get("role")), "")}
        for x in data.get("exchanges") or []
        if isinstance(x, dict)
    ]
    return {
        **{k: v for k, v in data.items() if k not in ("proposer", "challenger", "verdict")},
        **{r: {"tool": tools[r], "model": split[r][2] or tools[r]} for r in sides},
        "exchanges": exchanges,
        "verdict": _first_verdict(verdict, tools, language) if isinstance(verdict, dict) else None,
        "moot": {
            "version": 1,
            "language": language,
            "backends": {r: str(side.get("backend", "")) for r, side in sides.items()},
            "verdict": verdict,
        },
    }


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _first_verdict(verdict: dict[str, Any], tools: dict[str, str], language: str) -> dict[str, Any]:
    """The first shape's verdict in the rulebook's: its lists as the lines moot now writes
    in LANGUAGE (a disagreement without its point, which that moot did not ask for)."""

    def lines(key: str, line: Callable[[str, dict[str, Any]], str]) -> list[Any]:
        items = verdict.get(key) or []
        return [line(language, i) if isinstance(i, dict) else i for i in items]

    winner = verdict.get("winner")
    return {
        "winner": tools.get(winner, winner) if isinstance(winner, str) else winner,
        "reasoning": verdict.get("reasoning"),
        "agreements": lines("agreements", text.agreement),
        "disagreements": lines("disagreements", text.disagreement),
        "recommendation": verdict.get("recommendation"),
    }
