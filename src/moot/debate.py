"""One debate wired end to end: models resolved and loaded, pack checked, run, files saved."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moot import store
from moot.catalog import default_model_id
from moot.config import OxfordParams
from moot.engine import Engine, Listener, Role
from moot.formats import oxford
from moot.llm import ChatModel
from moot.prompts import Language, PromptPack, load_pack
from moot.scripted import EchoModel
from moot.transcript import Journal, ModelInfo, Transcript, make_private_dir, write_atomic


@dataclass
class DebateSetup:
    """Everything the user chose, validated by the CLI."""

    format: str
    motion: str
    language: Language
    seed: int
    params: OxfordParams
    out_dir: Path
    default_model: str | None = None
    role_models: dict[str, str] = field(default_factory=dict)
    temperatures: dict[str, float] = field(default_factory=dict)
    prompts_root: Path | None = None
    gpu_layers: int = 0
    n_ctx: int = 4096
    max_tokens: int | None = None
    dry_run: bool = False


@dataclass
class DebateResult:
    transcript: Transcript
    out_dir: Path
    markdown: str


def _is_url(ref: str) -> bool:
    return ref.startswith(("http://", "https://"))


def sample_variables() -> dict[str, dict[str, Any]]:
    """Variables that exercise every step of the Oxford pack (used to validate a pack)."""
    base = {
        "motion": "This House Believes That tests matter",
        "language": "en",
        "limits": oxford.LIMITS,
        "summary": "s",
        "round": 2,
    }
    speeches = {"proposition_speech": "p", "opposition_speech": "o"}
    return {
        "persona_proposition": base,
        "persona_opposition": base,
        "persona_devil": base,
        "speech": {**base, "side": "opposition", **speeches},
        "poi_question": {**base, "side": "opposition", "target": "proposition", "speech": "p"},
        "poi_answer": {**base, "side": "proposition", "asker": "opposition", "question": "q"},
        "devil_attack": {**base, **speeches},
        "round_summary": {**base, **speeches, "devil_attack": "d"},
        "judge": {**base, **speeches},
        "rebuttal": {**base, "side": "opposition", "other_rebuttal": "r"},
        "verdict": {**base, "proposition_rebuttal": "a", "opposition_rebuttal": "b"},
        "brief": {**base, "proposition_rebuttal": "a", "opposition_rebuttal": "b", "attacks": "x"},
    }


class Debate:
    """Resolves models offline, checks the pack, runs the format, writes the files."""

    def __init__(
        self,
        setup: DebateSetup,
        *,
        listeners: list[Listener] | None = None,
        model_factory: Callable[[str], ChatModel] | None = None,
    ) -> None:
        self.setup = setup
        self.listeners = listeners or []
        self._factory = model_factory

    def refs(self) -> dict[str, str]:
        default = self.setup.default_model or default_model_id()
        return {r: self.setup.role_models.get(r, default) for r in oxford.ROLES}

    def _models(self, refs: dict[str, str]) -> tuple[dict[str, ChatModel], dict[str, ModelInfo]]:
        if self.setup.dry_run or self._factory:
            make = self._factory or (lambda ref: EchoModel(model_id=f"echo:{ref}"))
            models = {r: make(ref) for r, ref in refs.items()}
            return models, {r: ModelInfo(id=m.model_id) for r, m in models.items()}
        infos = {}
        for r, ref in refs.items():  # resolve every model first: a missing one fails fast
            if _is_url(ref):
                infos[r] = ModelInfo(id=ref)
            else:
                resolved = store.resolve(ref)
                infos[r] = ModelInfo(id=resolved.id, sha256=resolved.sha256)
        factory = self._pool_factory()
        return {r: factory(ref) for r, ref in refs.items()}, infos

    def _pool_factory(self) -> Callable[[str], ChatModel]:
        from moot.pool import ModelPool

        pool = ModelPool(n_gpu_layers=self.setup.gpu_layers, n_ctx=self.setup.n_ctx)
        return pool.get

    def pack(self) -> PromptPack:
        pack = load_pack(self.setup.language, self.setup.format, root=self.setup.prompts_root)
        pack.validate(oxford.STEPS, sample_variables())
        return pack

    def run(self) -> DebateResult:
        s = self.setup
        pack = self.pack()
        models, infos = self._models(self.refs())
        temps = {r: s.temperatures.get(r, t) for r, t in oxford.TEMPERATURES.items()}
        roles = {
            r: Role(
                r, models[r], temps[r], persona=oxford.PERSONAS.get(r), memory=r in oxford.MEMORY
            )
            for r in oxford.ROLES
        }
        transcript = Transcript(
            format=s.format,
            motion=s.motion,
            language=s.language,
            seed=s.seed,
            models=infos,
            sampling=temps,
            prompt_pack=pack.digest,
            params={**s.params.model_dump(), "max_tokens": s.max_tokens, "n_ctx": s.n_ctx},
        )
        make_private_dir(s.out_dir)
        journal = Journal(s.out_dir / "journal.jsonl")
        journal.append("debate", transcript.model_dump(exclude={"turns", "scores", "result"}))
        engine = Engine(
            pack=pack,
            roles=roles,
            transcript=transcript,
            journal=journal,
            listeners=self.listeners,
            max_tokens_cap=s.max_tokens,
        )
        try:
            transcript.result = oxford.run(engine, s.motion, s.params)
        finally:
            journal.close()
        markdown = oxford.render_brief(
            s.motion, s.language, transcript.result, transcript.stop_reason or "hard_cap"
        )
        write_atomic(s.out_dir / "transcript.json", transcript.model_dump_json(indent=2))
        write_atomic(s.out_dir / "debate.md", markdown)
        return DebateResult(transcript, s.out_dir, markdown)
