"""moot beside the plain procedure: the Oxford rulebook's steps as stateless chat calls.

The peer is what anyone would write from the rulebook (docs/formats/oxford.md): one
`create_chat_completion` call per step, the KV cache reset before each, the persona as a
system prompt where the rulebook gives one, and each step shown only what the rulebook
says it sees, in the rulebook's words. Both run the same motion, model, seed and rounds;
the points of information are accepted by the same seeded draw, so both run the same
steps. Prints tokens, wall and seconds per generated token for each, and moot/peer ratios.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

MODELS = ("smollm2-135m", "gemma3-270m")
MOTION = "This House Believes That remote work is better than office work"
SEED = 7
ROUNDS = 3
MIN_SCORE = 10  # so every round runs: moot's score reaches 10 only on a perfect round
N_CTX = 4096  # as moot loads these models

# What the rulebook gives each role: its temperature and, for the debaters, a persona.
TEMPERATURES = {"proposition": 0.3, "opposition": 0.3, "devil": 0.7, "chair": 0.4, "judge": 0.2}
PERSONAS = {
    "proposition": (
        "You are a skilled Oxford Union debater FOR the motion. You make the strongest "
        "philosophical, empirical and practical case: precise, structured, persuasive. You "
        "stay in character: no filler, no AI preamble, no apology."
    ),
    "opposition": (
        "You are a skilled Oxford Union debater AGAINST the motion. You make the strongest "
        "philosophical, empirical and practical case: precise, structured, persuasive. You "
        "stay in character: no filler, no AI preamble, no apology."
    ),
    "devil": (
        "You are the Devil's Advocate. You find which side is currently dominant and attack "
        "that side's weakest point relentlessly. You hold no permanent position. You stay in "
        "character."
    ),
}
# Token budgets per step: the ones moot gives the same steps, so neither side is cut sooner.
TOKENS = {
    "speech": 260,
    "poi_question": 40,
    "poi_answer": 60,
    "devil_attack": 210,
    "round_summary": 210,
    "judge": 220,
    "rebuttal": 210,
    "verdict": 180,
    "brief": 900,
}
SPEECH_REPEAT_PENALTY = 1.03  # moot's light penalty on free text; create_chat_completion has it
SCORE_SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 10},
        "reasoning": {"type": "string"},
    },
    "required": ["score", "reasoning"],
}
BRIEF_SCHEMA = {
    "type": "object",
    "properties": {
        key: {"type": "string"} for key in ("pro", "con", "rebuttals", "attacks", "balance")
    },
    "required": ["pro", "con", "rebuttals", "attacks", "balance"],
}
SIDE = {"proposition": "Proposition", "opposition": "Opposition"}
OTHER = {"proposition": "opposition", "opposition": "proposition"}


# -- the rulebook's steps as prompts -----------------------------------------------------


def shown(motion: str, *parts: tuple[str, str | None]) -> str:
    """The motion, then each (heading, text) the step sees; empty ones are left out."""
    blocks = [f'The motion: "{motion}"']
    blocks += [f"{heading}:\n{text}" for heading, text in parts if text]
    return "\n\n".join(blocks)


def speech_prompt(
    motion: str, side: str, rnd: int, *, summary: str | None, prop: str | None
) -> str:
    """a / c: round 1 the opening speech; later rounds the summary so far, develop further.
    The Opposition also sees the Proposition's speech."""
    stance = "FOR" if side == "proposition" else "AGAINST"
    seen = shown(
        motion,
        ("The round summary so far", summary if rnd > 1 else None),
        ("The Proposition's speech", prop if side == "opposition" else None),
    )
    task = (
        f"Find the single strongest principled argument {stance} the motion, build evidence "
        "around it, pre-empt the most obvious counter-argument, and open with a memorable line."
    )
    if rnd == 1:
        return f"{seen}\n\n{task} This is your opening speech. Maximum 150 words."
    return f"{seen}\n\n{task} Develop your case further. Maximum 150 words."


def poi_question_prompt(motion: str, target: str, speech: str) -> str:
    """b / d: one sharp probing question at the weakest claim of the speech just given."""
    seen = shown(motion, (f"The {SIDE[target]}'s speech just given", speech))
    return (
        f"{seen}\n\nDevise one sharp probing question of at most 15 words aimed at the weakest "
        "claim of this speech, as a Point of Information. Return only the question."
    )


def poi_answer_prompt(motion: str, side: str, speech: str, question: str) -> str:
    """b′ / d′: the accepted question, answered confidently."""
    asker = SIDE[OTHER[side]]
    seen = shown(motion, ("Your speech", speech), (f"The {asker}'s Point of Information", question))
    return f"{seen}\n\nYou accept the point. Answer it confidently in at most 25 words."


def devil_prompt(motion: str, rnd: int, *, summary: str | None, prop: str, opp: str) -> str:
    """e: the previous summary (round ≥ 2) and this round's two speeches."""
    seen = shown(
        motion,
        ("The previous summary", summary if rnd > 1 else None),
        ("The Proposition's speech", prop),
        ("The Opposition's speech", opp),
    )
    return (
        f"{seen}\n\nIn one sentence, say why a side feels dominant; then make a devastating "
        "contrarian attack on that side's most vulnerable assumption. Maximum 120 words."
    )


def summary_prompt(motion: str, *, prop: str, opp: str, devil: str) -> str:
    """f: this round's three speeches, by the neutral President of the Union."""
    seen = shown(
        motion,
        ("The Proposition's speech", prop),
        ("The Opposition's speech", opp),
        ("The Devil's Advocate's speech", devil),
    )
    return (
        f"{seen}\n\nYou are the Chair, the neutral Union President. Summarise this round: which "
        "side has the stronger case and why, the key unanswered questions, and what both sides "
        "must address next. Maximum 120 words."
    )


def judge_prompt(motion: str, *, prop: str, opp: str) -> str:
    """g: argument completeness 0–10 from this round's two speeches, as JSON."""
    seen = shown(motion, ("The Proposition's speech", prop), ("The Opposition's speech", opp))
    return (
        f"{seen}\n\nScore argument completeness from 0 to 10: have the strongest arguments on "
        "BOTH sides been raised and the key objections addressed? Reply with JSON: "
        '{"score": number 0-10, "reasoning": string}.'
    )


def rebuttal_prompt(motion: str, side: str, *, summary: str | None, prop: str | None) -> str:
    """Closing 1 / 2: the final summary; the Opposition also counters the Proposition's."""
    seen = shown(
        motion,
        ("The final summary", summary),
        ("The Proposition's rebuttal", prop if side == "opposition" else None),
    )
    counter = " Counter the Proposition's rebuttal." if side == "opposition" else ""
    return (
        f"{seen}\n\nClose for the {SIDE[side]}. No new arguments: synthesise your side's "
        f"strongest points, dismantle the other side's best argument, and end on a memorable "
        f"line.{counter} Maximum 120 words."
    )


def verdict_prompt(motion: str, *, prop: str, opp: str) -> str:
    """Closing 3: both rebuttals; no outright winner, the House votes."""
    seen = shown(motion, ("The Proposition's rebuttal", prop), ("The Opposition's rebuttal", opp))
    return (
        f"{seen}\n\nYou are the Chair. Say who made the stronger closing case and why, and the "
        "key rhetorical and logical moments. Do NOT declare an outright winner: the House "
        "votes. Maximum 100 words."
    )


def brief_prompt(
    motion: str, *, summary: str | None, prop: str, opp: str, attacks: Sequence[str]
) -> str:
    """The brief: final summary, both rebuttals, every attack joined by ---, as JSON."""
    seen = shown(
        motion,
        ("The final summary", summary),
        ("The Proposition's rebuttal", prop),
        ("The Opposition's rebuttal", opp),
        ("The Devil's Advocate's attacks", "\n---\n".join(attacks)),
    )
    return (
        f"{seen}\n\nWrite the debate brief as JSON with five string fields: pro (numbered "
        "strongest pro arguments), con (numbered con arguments), rebuttals (sharpest closing "
        "lines of each side), attacks (each floor attack → a suggested rebuttal), balance (one "
        "paragraph, honest assessment of which side has the stronger case)."
    )


def chat_messages(system: str | None, user: str, *, system_role: bool) -> list[dict[str, str]]:
    """The call's messages; a chat format without a system role (Gemma's) gets the persona
    at the start of the user turn, where Gemma's own template puts it."""
    if not system:
        return [{"role": "user", "content": user}]
    if not system_role:
        return [{"role": "user", "content": f"{system}\n\n{user}"}]
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def accepted(seed: int, rnd: int, asker: str) -> bool:
    """The point of information's 60/40 draw: moot's own, from the seed, round and asker."""
    from moot.engine.turns import derive_seed

    return random.Random(derive_seed(seed, "draw", "poi", rnd, asker)).random() < 0.6


@cache
def resolved_model(model_id: str) -> Any:
    """The model's file and chat format, looked up once for every script that loads it."""
    from moot.models import resolve

    return resolve(model_id)


# -- running the peer --------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One stateless call: every prompt token is evaluated."""

    round: int | None
    role: str
    step: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    text: str


def load_as_moot(model_id: str, *, flash_attn: bool | None = None, **extra: Any) -> Any:
    """MODEL_ID in llama-cpp-python, loaded as moot loads it (threads, context, batch,
    flash attention unless FLASH_ATTN says), so what is measured beside moot differs in
    procedure only."""
    from llama_cpp import Llama

    from moot.config import physical_cores
    from moot.inference.attention import flash_attention

    threads = physical_cores()
    resolved = resolved_model(model_id)
    return Llama(
        model_path=str(resolved.path),
        n_ctx=N_CTX,
        n_threads=threads,
        n_threads_batch=threads,
        n_batch=512,
        flash_attn=flash_attention(resolved.head_dim, 0) if flash_attn is None else flash_attn,
        verbose=False,
        **extra,
    )


class Peer:
    """llama-cpp-python's create_chat_completion, the KV cache reset before every call."""

    def __init__(self, model_id: str, *, seed: int) -> None:
        resolved = resolved_model(model_id)
        chat_format = None if resolved.chat_format == "template" else resolved.chat_format
        self.llm = load_as_moot(model_id, chat_format=chat_format)
        self.system_role = chat_format != "gemma"  # llama-cpp-python's gemma drops it
        self.seed = seed
        self.calls: list[Call] = []

    def ask(
        self,
        rnd: int | None,
        role: str,
        step: str,
        user: str,
        *,
        schema: dict[str, Any] | None = None,
    ) -> str:
        from moot.engine.turns import derive_seed

        messages = chat_messages(PERSONAS.get(role), user, system_role=self.system_role)
        start = time.perf_counter()
        self.llm.reset()  # stateless: nothing of an earlier call is reused
        out: Any = self.llm.create_chat_completion(
            messages=messages,  # type: ignore[arg-type]
            temperature=TEMPERATURES[role],
            top_p=0.95,
            max_tokens=TOKENS[step],
            seed=derive_seed(self.seed, "peer", len(self.calls)),
            repeat_penalty=1.0 if schema else SPEECH_REPEAT_PENALTY,
            response_format={"type": "json_object", "schema": schema} if schema else None,
        )
        seconds = time.perf_counter() - start
        text = (out["choices"][0]["message"]["content"] or "").strip()
        usage = out["usage"]
        self.calls.append(
            Call(rnd, role, step, usage["prompt_tokens"], usage["completion_tokens"], seconds, text)
        )
        return text

    def close(self) -> None:
        self.llm.close()


def plain_oxford(peer: Peer, motion: str, *, rounds: int) -> None:
    """The rulebook's rounds, then its closing and brief, one call per step. The rounds
    are held to `rounds` (moot's count), the judge asked from round 2 all the same."""
    summary: str | None = None
    attacks: list[str] = []
    for rnd in range(1, rounds + 1):
        prop = peer.ask(
            rnd,
            "proposition",
            "speech",
            speech_prompt(motion, "proposition", rnd, summary=summary, prop=None),
        )
        point(peer, motion, rnd, asker="opposition", speech=prop)
        opp = peer.ask(
            rnd,
            "opposition",
            "speech",
            speech_prompt(motion, "opposition", rnd, summary=summary, prop=prop),
        )
        point(peer, motion, rnd, asker="proposition", speech=opp)
        devil = peer.ask(
            rnd,
            "devil",
            "devil_attack",
            devil_prompt(motion, rnd, summary=summary, prop=prop, opp=opp),
        )
        attacks.append(devil)
        summary = peer.ask(
            rnd, "chair", "round_summary", summary_prompt(motion, prop=prop, opp=opp, devil=devil)
        )
        if rnd >= 2:
            peer.ask(
                rnd, "judge", "judge", judge_prompt(motion, prop=prop, opp=opp), schema=SCORE_SCHEMA
            )
    prop_close = peer.ask(
        None,
        "proposition",
        "rebuttal",
        rebuttal_prompt(motion, "proposition", summary=summary, prop=None),
    )
    opp_close = peer.ask(
        None,
        "opposition",
        "rebuttal",
        rebuttal_prompt(motion, "opposition", summary=summary, prop=prop_close),
    )
    peer.ask(None, "chair", "verdict", verdict_prompt(motion, prop=prop_close, opp=opp_close))
    peer.ask(
        None,
        "judge",
        "brief",
        brief_prompt(motion, summary=summary, prop=prop_close, opp=opp_close, attacks=attacks),
        schema=BRIEF_SCHEMA,
    )


def point(peer: Peer, motion: str, rnd: int, *, asker: str, speech: str) -> None:
    target = OTHER[asker]
    question = peer.ask(rnd, asker, "poi_question", poi_question_prompt(motion, target, speech))
    if accepted(peer.seed, rnd, asker):
        peer.ask(rnd, target, "poi_answer", poi_answer_prompt(motion, target, speech, question))


# -- the figures -------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One debate's turns (moot's Turn records, or the peer's Calls) and its wall time."""

    turns: tuple[Any, ...]
    wall_s: float

    @property
    def rounds(self) -> int:
        return max((t.round for t in self.turns if t.round is not None), default=0)


@cache
def moot_debate(model_id: str) -> Run:
    """The seeded debate every speed figure of `model_id` reads: run once, shared."""
    print(f"speed: a seeded Oxford debate on {model_id}", file=sys.stderr)
    return seeded_debate(model_id)


def seeded_debate(model_id: str, **options: Any) -> Run:
    """moot's seeded Oxford debate on MODEL_ID (OPTIONS: more of `moot.debate`'s), timed."""
    import moot

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = moot.debate(
            MOTION,
            model=model_id,
            lang="en",
            seed=SEED,
            min_score=MIN_SCORE,
            max_rounds=ROUNDS,
            out=Path(tmp) / "out",
            **options,
        )
        wall = time.perf_counter() - start
    return Run(tuple(result.turns), wall)


def peer_debate(model_id: str, *, rounds: int) -> Run:
    print(f"speed: the plain procedure on {model_id}", file=sys.stderr)
    start = time.perf_counter()  # the load counts, as it does in moot's wall
    peer = Peer(model_id, seed=SEED)
    try:
        plain_oxford(peer, MOTION, rounds=rounds)
    finally:
        peer.close()
    return Run(tuple(peer.calls), time.perf_counter() - start)


def side_figures(
    *, turns: int, prompt: int, evaluated: int, completion: int, turn_s: float, wall_s: float
) -> dict[str, Any]:
    """What both sides report: tokens, wall, seconds per generated token. `turn_s` is the
    time inside the model calls; the rest of the wall is loading, prompts, checks, files."""
    return {
        "turns": turns,
        "prompt_tokens": prompt,
        "evaluated_tokens": evaluated,
        "completion_tokens": completion,
        "turn_s": round(turn_s, 1),
        "wall_s": round(wall_s, 1),
        "s_per_token": round(wall_s / completion, 4) if completion else None,
    }


def spent(turn: Any, key: str) -> int:
    """TURN's figure KEY over every draw it took: the kept one's and the refused draws'."""
    discarded = getattr(turn, "discarded", None) or {}
    return int(getattr(turn, key)) + int(discarded.get(key, 0))


def moot_figures(run: Run) -> dict[str, Any]:
    """moot's side: only what its cache did not serve was evaluated."""
    t = run.turns
    return side_figures(
        turns=len(t),
        prompt=sum(spent(x, "prompt_tokens") for x in t),
        evaluated=sum(spent(x, "prompt_tokens") - spent(x, "cached_tokens") for x in t),
        completion=sum(x.completion_tokens for x in t),
        turn_s=sum(spent(x, "duration_ms") for x in t) / 1000,
        wall_s=run.wall_s,
    )


def peer_figures(run: Run) -> dict[str, Any]:
    """The peer's side: stateless, so every prompt token was evaluated."""
    t = run.turns
    prompt = sum(x.prompt_tokens for x in t)
    return side_figures(
        turns=len(t),
        prompt=prompt,
        evaluated=prompt,
        completion=sum(x.completion_tokens for x in t),
        turn_s=sum(x.seconds for x in t),
        wall_s=run.wall_s,
    )


def peer_side(results: dict[str, Any], model_id: str) -> dict[str, Any]:
    """The plain procedure's figures for MODEL_ID in RESULTS ({} where bench_peer has not
    run for it)."""
    return ((results.get("peer") or {}).get(model_id) or {}).get("peer") or {}


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a and b else None


def compare(ours: dict[str, Any], peer: dict[str, Any]) -> dict[str, Any]:
    """moot beside the peer, with moot/peer ratios (below 1: moot is faster)."""
    return {
        "moot": ours,
        "peer": peer,
        "spt_ratio": ratio(ours["s_per_token"], peer["s_per_token"]),
        "wall_ratio": ratio(ours["wall_s"], peer["wall_s"]),
    }


def run(results: dict[str, Any], *, models: Sequence[str] = MODELS) -> None:
    for model_id in models:  # a model that does not resolve stops the bench before it runs
        resolved_model(model_id)
    table: dict[str, Any] = results.setdefault("peer", {})
    for model_id in models:
        ours = moot_debate(model_id)
        theirs = peer_debate(model_id, rounds=ours.rounds)
        table[model_id] = {
            "rounds": ours.rounds,
            **compare(moot_figures(ours), peer_figures(theirs)),
        }


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out)
    print(json.dumps(out, indent=2))
