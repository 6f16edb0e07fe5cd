"""A tournament's plan: the motions, the models, and the schedule of debates: every
pair of models on every motion twice, sides swapped, each judged by outsiders."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from moot import __version__
from moot.engine import derive_seed
from moot.errors import UsageError
from moot.formats.base import Format
from moot.prompts import Language, load_pack, resolve_language
from moot.tournaments.judge import SIDES


class Motion(BaseModel):
    text: str  # as the format words it ("This House Believes That …")
    language: Language


class Pairing(BaseModel):
    """One scheduled debate: who sits where, on which motion, judged by whom."""

    id: str  # its folder under debates/
    motion: int  # index into the plan's motions
    proposition: str  # model references
    opposition: str
    swap: str  # shared by the two debates of a swap pair
    seed: int  # shared by a swap pair too: the pair differs only in who sits where
    judges: list[str]
    self_judged: bool  # every judge debated in it: no other judge was available


class TournamentPlan(BaseModel):
    moot_version: str = __version__
    format: str
    models: list[str]
    motions: list[Motion]
    judges: list[str]
    # What each reference named when planned: a model file's sha256, or a server URL.
    identities: dict[str, str] = Field(default_factory=dict)
    seed: int
    params: dict[str, Any]  # the format's validated parameters
    options: dict[str, Any] = Field(default_factory=dict)  # max_tokens, n_ctx, gpu_layers, …
    debates: list[Pairing]


def two_sided(fmt: Format) -> tuple[str, str]:
    """The format's two opposing seats, or a usage error for a format without them."""
    if fmt.name not in SIDES:
        raise UsageError(
            f"the {fmt.name} format has no two opposing sides to seat models in",
            hint=f"a tournament runs {' or '.join(SIDES)}",
        )
    return SIDES[fmt.name][0]


def _slug(ref: str) -> str:
    tail = ref.rstrip("/").split("/")[-1].split("#")[-1].removesuffix(".gguf")
    return "".join(c if c.isalnum() or c in "-._" else "-" for c in tail)[:32] or "model"


def schedule(
    models: Sequence[str],
    n_motions: int,
    *,
    seed: int,
    judges: Sequence[str] = (),
    identity: Callable[[str], str] = str,
    swaps: int = 1,
) -> list[Pairing]:
    """Every motion × every pair of models × `swaps` swap pairs: two debates each, the
    same seed, sides swapped.

    A debate's judges are those of `judges` (default: the models themselves) that took
    no part in it; when none is left, all of them judge and the debate is self-judged.
    `identity` maps a reference to what it names, so two spellings of one file match.
    """
    panel = list(judges) or list(models)
    out: list[Pairing] = []
    for m in range(n_motions):
        for i, j in combinations(range(len(models)), 2):
            a, b = models[i], models[j]
            seats = {identity(a), identity(b)}
            outside = [ref for ref in panel if identity(ref) not in seats]
            for s in range(swaps):
                swap = f"m{m + 1}-{i + 1}-{j + 1}" + (f"-{s + 1}" if swaps > 1 else "")
                out += [
                    Pairing(
                        id=f"{len(out) + k + 1:03d}-motion{m + 1}-{_slug(p)}-vs-{_slug(o)}",
                        motion=m,
                        proposition=p,
                        opposition=o,
                        swap=swap,
                        seed=derive_seed(seed, "tournament", swap),
                        judges=outside or panel,
                        self_judged=not outside,
                    )
                    for k, (p, o) in enumerate(((a, b), (b, a)))
                ]
    return out


def read_motions(path: Path, fmt: Format, lang: str = "auto") -> list[Motion]:
    """The motions of a file, one a line (blank lines and # comments skipped), each worded
    by the format in its own language (by its script, unless `lang` names one)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"cannot read the motions file {path}: {getattr(exc, 'strerror', None) or exc}",
            hint="--motions FILE: a UTF-8 text file with one motion a line",
        ) from None
    texts = [t for t in lines if t.strip() and not t.lstrip().startswith("#")]
    if not texts:
        raise UsageError(f"{path} holds no motion", hint="write one motion a line")
    return word_motions(texts, fmt, lang)


def word_motions(texts: Sequence[str], fmt: Format, lang: str = "auto") -> list[Motion]:
    """Each motion worded by the format in its own language (by its script, unless `lang`
    names one)."""
    motions = []
    for text in (" ".join(t.split()) for t in texts):
        if not text:
            raise UsageError("a motion is empty", hint="give each motion some words")
        language = resolve_language(lang, text)
        motions.append(Motion(text=fmt.motion(text, language), language=language))
    return motions


def identity(ref: str) -> str:
    """What a reference names, offline: a server URL as given, else the file's sha256."""
    from moot.inference.remote import is_remote_ref
    from moot.models import store

    if is_remote_ref(ref):
        return ref
    resolved = store.resolve(ref)
    return resolved.sha256 or str(resolved.path.resolve())


def make_plan(
    fmt: Format,
    models: Sequence[str],
    motions: list[Motion],
    *,
    params: BaseModel,
    seed: int,
    judges: Sequence[str] = (),
    options: dict[str, Any] | None = None,
    identify: Callable[[str], str] = str,
    swaps: int = 1,
) -> TournamentPlan:
    """The whole schedule; refuses fewer than two distinct models or a one-sided format."""
    two_sided(fmt)
    if swaps < 1:
        raise UsageError(f"--swaps {swaps} is less than 1", hint="e.g. --swaps 2")
    keys = {ref: identify(ref) for ref in dict.fromkeys([*models, *judges])}
    if len(models) < 2:
        raise UsageError("a tournament needs two or more --model", hint="--model A --model B")
    seen: dict[str, str] = {}
    for ref in models:
        if keys[ref] in seen:
            raise UsageError(
                f"--model {ref} names the same model as --model {seen[keys[ref]]}",
                hint="give each model once",
            )
        seen[keys[ref]] = ref
    for language in sorted({m.language for m in motions}):
        check_packs(fmt, language)
    return TournamentPlan(
        format=fmt.name,
        models=list(models),
        motions=motions,
        judges=list(judges),
        identities=keys,
        seed=seed,
        params=params.model_dump(mode="json"),
        options=options or {},
        debates=schedule(
            models, len(motions), seed=seed, judges=judges, identity=keys.__getitem__, swaps=swaps
        ),
    )


def check_packs(fmt: Format, language: Language) -> None:
    """The format's pack and the verdict step render, before any model is loaded."""
    from moot.tournaments.judge import STEP, sample_variables

    load_pack(language, fmt.name).validate(fmt.steps, fmt.sample_variables())
    load_pack(language, "tournament").validate((STEP,), {STEP: sample_variables()})
