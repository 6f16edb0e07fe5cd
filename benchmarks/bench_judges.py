"""The tiny judges on the labelled example set (examples/labelled/debates.jsonl): each model
alone and the two as a jury, for each ballot method, with the seconds a ballot takes.

Each judge reads each debate as a tournament would (`tournaments.labelled.ballot_judgement`:
its probabilities read from the logits, pairwise in both orders by default), and the figures
are `moot calibrate --labelled`'s: accuracy among the debates decided, coverage, position
bias, each with its 95 % Wilson interval.

    PYTHONPATH=src python benchmarks/bench_judges.py [pairwise pointwise blend ...] \
        [--margins 0.1,0.02]

Each judge reads each debate once a method; the figures are then given at each margin (the
default 0.1 first), since a margin changes which readings are decided, not the readings.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

MODELS = ("smollm2-135m", "gemma3-270m")
METHODS = ("pairwise", "pointwise")
SET = Path(__file__).resolve().parents[1] / "examples" / "labelled" / "debates.jsonl"
SEED = 7


def _figure(f: Any) -> dict[str, Any]:
    return {"share": f.share, "low": f.low, "high": f.high, "n": f.n}


def measure(
    method: str, models: dict[str, Any], margin: float = 0.1, readings: dict[Any, Any] | None = None
) -> dict[str, Any]:
    """Every judge on every labelled debate by METHOD, undecided within MARGIN of even, then
    the figures and the seconds; READINGS keeps each judge's reading of each debate, so a
    second margin reads nothing again."""
    from moot.prompts import load_pack
    from moot.tournaments.ballots import judgement_of, read_judge
    from moot.tournaments.labelled import measure, read_labelled
    from moot.tournaments.settings import BallotSettings

    debates = read_labelled(SET)
    ballot = BallotSettings(method=method, margin=margin)
    kept = {} if readings is None else readings
    seconds: dict[str, float] = {}
    judges = {}
    for ref in models:

        def timed(shown: Any, seed: int, ref: str = ref) -> Any:
            key = (ref, method, shown.motion, seed)
            if key not in kept:
                start = time.perf_counter()
                pack = load_pack(shown.language, "tournament")
                kept[key] = read_judge(models[ref], pack, shown, ballot, seed=seed)
                kept[key, "s"] = time.perf_counter() - start
            seconds[ref] = seconds.get(ref, 0.0) + kept[key, "s"]
            return judgement_of(kept[key], margin)

        judges[ref] = timed
    report = measure(debates, judges, seed=SEED, margin=margin)
    out: dict[str, Any] = {"debates": report.debates}
    for row in [*report.judges, *([report.jury] if report.jury else [])]:
        out[row.judge] = {
            "accuracy": {k: _figure(v) for k, v in row.accuracy.items()},
            "coverage": _figure(row.coverage),
            "position_bias": _figure(row.position_bias),
            "seconds_per_ballot": round(seconds[row.judge] / len(debates), 2)
            if row.judge in seconds
            else None,
        }
    return out


def run(
    results: dict[str, Any], methods: tuple[str, ...] = METHODS, margins: tuple[float, ...] = (0.1,)
) -> None:
    from moot.inference.llama import LlamaCppModel
    from moot.models import store

    models = {ref: LlamaCppModel(store.resolve(ref), n_ctx=4096) for ref in MODELS}
    readings: dict[Any, Any] = {}
    try:
        results["judges_labelled"] = {
            _name(m, margin): measure(m, models, margin, readings)
            for m in methods
            for margin in margins
        }
    finally:
        for model in models.values():
            model.close()


def _name(method: str, margin: float) -> str:
    return method if margin == 0.1 else f"{method}, margin {margin}"


def summary(results: dict[str, Any]) -> list[str]:
    lines = []
    for method, rows in results.get("judges_labelled", {}).items():
        for judge, row in rows.items():
            if judge == "debates":
                continue
            acc, cov, bias = row["accuracy"]["all"], row["coverage"], row["position_bias"]
            right = "—" if acc["share"] is None else f"{acc['share']:.0%}"
            lines.append(
                f"labelled set, {method}, {judge}: decided {cov['share']:.0%} of "
                f"{cov['n']}, right on {right} of the {acc['n']} decided, position bias "
                f"{'—' if bias['share'] is None else bias['share']}"
                + (f", {row['seconds_per_ballot']} s a ballot" if row["seconds_per_ballot"] else "")
            )
    return lines


if __name__ == "__main__":
    args = sys.argv[1:]
    margins = (0.1,)
    if "--margins" in args:
        at = args.index("--margins")
        margins = tuple(float(m) for m in args[at + 1].split(","))
        del args[at : at + 2]
    results: dict[str, Any] = {}
    run(results, tuple(args) or METHODS, margins)
    print(json.dumps(results, indent=2, ensure_ascii=False))
    print("\n".join(summary(results)), file=sys.stderr)
