"""A judge's decision read as probabilities, against today's sampled tournament ballot.

On one finished debate, for each tiny model: the seconds of one tournament ballot
(`moot.tournaments.judge.judge_debate`, one judge: the structured `Ballot` reply, its
strings and its winner sampled under a grammar) beside the seconds of reading the winner's
probabilities (`moot.inference.choice.choose`: three options, asked in both orders of the
sides, so two choices). Every measurement starts from a cold cache (`forget`).

    PYTHONPATH=src python benchmarks/bench_choice.py
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

MODELS = ("smollm2-135m", "gemma3-270m")
REPEATS = 3
MOTION = "This House Believes That cities should ban private cars from their centres"
SPEECHES = {
    "proposition": [
        "Cars kill tens of thousands of people every year and poison the air of every street "
        "they use. A bus carries fifty people in the space of two cars; a bike lane moves five "
        "times the people of a car lane. Cities that closed their centres to cars, such as "
        "Oslo and Pontevedra, saw traffic deaths fall to zero and their shops thrive.",
        "The Opposition says deliveries will stop. They did not in Oslo: deliveries run "
        "early in the morning and disabled drivers keep their permits. A ban is not a ban "
        "on moving, it is a choice of how.",
    ],
    "opposition": [
        "A ban punishes those who have no other way in: night workers, tradespeople with "
        "tools, parents with three children. Buses do not run at three in the morning. The "
        "shops that thrived in Oslo were cafes; hardware stores moved to the ring road.",
        "The Proposition picked the two cities where it worked. In smaller towns centre "
        "bans emptied the high street. Charge for congestion instead, and let people choose.",
    ],
}
OPTIONS = ("proposition", "opposition", "draw")
SIDE = {"proposition": "Proposition", "opposition": "Opposition"}


def transcript() -> Any:
    from moot.records.transcript import Transcript, Turn

    turns = []
    for n in range(2):
        for role in ("proposition", "opposition"):
            step = "speech" if n == 0 else "rebuttal"
            turns.append(
                Turn(
                    index=len(turns),
                    round=1 if n == 0 else None,
                    role=role,
                    step=step,
                    model="bench",
                    temperature=0.3,
                    text=SPEECHES[role][n],
                )
            )
    return Transcript(format="oxford", motion=MOTION, language="en", seed=7, models={}, turns=turns)


def choice_request(first: str) -> Any:
    """The winner asked of the same speeches, the side FIRST shown first."""
    from moot.inference.choice import ChoiceRequest
    from moot.inference.protocol import messages

    second = "opposition" if first == "proposition" else "proposition"
    parts = [
        "You judge one debate. Decide which side argued the motion better.",
        f"Motion: {MOTION}",
    ]
    for side in (first, second):
        stance = "for" if side == "proposition" else "against"
        speeches = "\n".join(f'"""\n{s}\n"""' for s in SPEECHES[side])
        parts.append(f"The {SIDE[side]} argued {stance} the motion:\n{speeches}")
    parts.append(
        'Reply in JSON: {"winner": "proposition"}, {"winner": "opposition"} or '
        '{"winner": "draw"} if neither argued better.'
    )
    return ChoiceRequest(
        messages=messages(("user", "\n\n".join(parts))), field="winner", options=OPTIONS
    )


def measure(model_id: str) -> dict[str, Any]:
    from moot.inference.choice import choose
    from moot.inference.llama import LlamaCppModel
    from moot.models import store
    from moot.tournaments.judge import judge_debate

    model = LlamaCppModel(store.resolve(model_id), n_ctx=2048)
    debate = transcript()
    try:
        ballots, choices, readings = [], [], []
        for _ in range(REPEATS):
            model.forget()
            start = time.perf_counter()
            verdict = judge_debate(
                "bench", debate, [model_id], self_judged=False, model_for=lambda ref: model
            )
            ballots.append(time.perf_counter() - start)
            winner = verdict.ballots[0].ballot.winner
            model.forget()
            start = time.perf_counter()
            pair = [choose(model, choice_request(first)) for first in ("proposition", "opposition")]
            choices.append(time.perf_counter() - start)
            readings.append(
                {
                    "ballot_winner": winner,
                    "p_proposition_by_order": [round(c.p("proposition"), 3) for c in pair],
                    "method": pair[0].method,
                    "prompt_tokens": pair[0].prompt_tokens,
                }
            )
    finally:
        model.close()
    ballot_s, choice_s = statistics.median(ballots), statistics.median(choices)
    return {
        "ballot_s": round(ballot_s, 3),
        "choice_pair_s": round(choice_s, 3),
        "choice_s": round(choice_s / 2, 3),
        "speedup": round(ballot_s / choice_s, 1),
        "readings": readings,
    }


def run(results: dict[str, Any]) -> None:
    results["choice"] = {model_id: measure(model_id) for model_id in MODELS}


def summary(results: dict[str, Any]) -> list[str]:
    lines = []
    for model_id, got in results.get("choice", {}).items():
        lines.append(
            f"{model_id}: a sampled ballot {got['ballot_s']:.2f} s; the winner read in both "
            f"orders {got['choice_pair_s']:.2f} s ({got['choice_s']:.2f} s a choice), "
            f"{got['speedup']}x faster"
        )
    return lines


if __name__ == "__main__":
    found: dict[str, Any] = {}
    run(found)
    print(json.dumps(found, indent=2, ensure_ascii=False))
    print("\n".join(summary(found)))
