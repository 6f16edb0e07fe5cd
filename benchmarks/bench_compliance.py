"""Rule-keeping: a seeded debate of each format on each tiny model (and a Chinese debate on
each), checked as `moot check` checks a saved debate. Prints the shares the rulebooks ask
for; the engine's guarantees make some of them certain, the models' manners the rest."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TOPIC = {
    "en": "Should our city ban private cars from its centre?",
    "zh": "城市应当禁止私家车进入市中心吗？",
}
MODELS = ("smollm2-135m", "gemma3-270m")
# Each format as a user would run it, its shortest rulebook-legal length.
RUNS: dict[str, dict[str, Any]] = {
    "oxford": {"max_rounds": 3},
    "challenge": {"rounds": 2, "effort": "low"},
    "decision": {"positions": ("ban cars", "keep cars")},
    "adversarial": {"rounds": 2},
}
LANGUAGES = {"oxford": ("en", "zh"), "challenge": ("en",), "decision": ("en",),
             "adversarial": ("en",)}  # fmt: skip


def one(fmt: str, model: str, lang: str, *, seed: int = 7) -> dict[str, Any]:
    import moot
    from moot.debates.runner import saved_sides
    from moot.engine.audit import check_debate
    from moot.records.journal import load

    options = dict(RUNS[fmt])
    if fmt == "adversarial":
        options["model"] = (model, model)
    else:
        options["model"] = model
    keep = os.environ.get("MOOT_BENCH_OUT")  # a folder to keep the debates in, to read them
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(keep or tmp) / f"{fmt}-{lang}-{model}"
        start = time.perf_counter()
        moot.debate(TOPIC[lang], format=fmt, lang=lang, seed=seed, out=out, **options)
        wall = time.perf_counter() - start
        transcript, data = load(out / "transcript.json")
    report = check_debate(transcript, saved_sides(data))
    return {"wall_s": round(wall, 1), **report.summary()}


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def run(results: dict[str, Any], *, models: tuple[str, ...] = MODELS) -> None:
    debates: dict[str, Any] = {}
    for fmt, langs in LANGUAGES.items():
        for lang in langs:
            for model in models:
                key = f"{fmt}/{lang}/{model}"
                print(f"compliance: {key}", file=sys.stderr)
                debates[key] = one(fmt, model, lang)
    total = {k: sum(d[k] for d in debates.values()) for k in next(iter(debates.values()))}
    zh = [d for key, d in debates.items() if "/zh/" in key]
    zh_turns = sum(d["turns"] for d in zh)
    results["compliance"] = {
        "debates": debates,
        # Targets: 1.0; >= 0.95; 0; 0; 1.0.
        "within_limit_share": share(total["within_limit"], total["limited_turns"]),
        "ending_on_a_sentence_share": share(total["ending_on_a_sentence"], total["limited_turns"]),
        "preambles_or_echoes_shown": total["preamble"]
        + total["echoed_labels"]
        + total["placeholder"],
        "one_word_judge_reasons_shown": total["hollow"],
        "narration_shown": total["narration"],
        "copied_shown": total["copied"],
        "chinese_turns_in_chinese_share": share(
            zh_turns - sum(d["language"] for d in zh), zh_turns
        ),
        "undeclared_problems": total["undeclared"],
        "flagged_turns": total["flagged"],
        "cut_to_fit_share": share(total["cut_to_fit"], total["limited_turns"]),
    }


if __name__ == "__main__":
    out: dict[str, Any] = {}
    run(out, models=tuple(sys.argv[1:]) or MODELS)
    print(json.dumps(out, indent=2, ensure_ascii=False))
