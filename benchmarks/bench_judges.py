"""The tiny judges on the labelled example set (examples/labelled/debates.jsonl): each model
alone and the two as a jury, for each ballot method, with the seconds a ballot takes.

Each judge reads each debate as a tournament would (`tournaments.labelled.ballot_judgement`:
its probabilities read from the logits, pairwise in both orders by default), and the figures
are `moot calibrate --labelled`'s: accuracy among the debates decided, coverage, position
bias, each with its 95 % Wilson interval.

    PYTHONPATH=src python benchmarks/bench_judges.py [pairwise pointwise blend ...]
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


def measure(method: str, models: dict[str, Any]) -> dict[str, Any]:
    """Every judge on every labelled debate by METHOD, then the figures and the seconds."""
    from moot.tournaments.labelled import ballot_judgement, measure, read_labelled
    from moot.tournaments.settings import BallotSettings

    debates = read_labelled(SET)
    ballot = BallotSettings(method=method)
    seconds: dict[str, float] = {}
    judges = {}
    for ref in models:
        judge = ballot_judgement(ref, models.__getitem__, ballot)

        def timed(shown: Any, seed: int, judge: Any = judge, ref: str = ref) -> Any:
            start = time.perf_counter()
            said = judge(shown, seed)
            seconds[ref] = seconds.get(ref, 0.0) + time.perf_counter() - start
            return said

        judges[ref] = timed
    report = measure(debates, judges, seed=SEED)
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


def run(results: dict[str, Any], methods: tuple[str, ...] = METHODS) -> None:
    from moot.inference.llama import LlamaCppModel
    from moot.models import store

    models = {ref: LlamaCppModel(store.resolve(ref), n_ctx=4096) for ref in MODELS}
    try:
        results["judges_labelled"] = {m: measure(m, models) for m in methods}
    finally:
        for model in models.values():
            model.close()


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
    results: dict[str, Any] = {}
    run(results, tuple(sys.argv[1:]) or METHODS)
    print(json.dumps(results, indent=2, ensure_ascii=False))
    print("\n".join(summary(results)), file=sys.stderr)
