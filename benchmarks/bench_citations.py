"""How often a real model cites the documents it is shown, and how often its citations hold:
short debates given the test suite's document set (a PDF board pack, a DOCX review, a
Markdown memo, Chinese text, an HTML policy), every turn's evidence ledger counted.

    python benchmarks/bench_citations.py [--model smollm2-135m] [--format oxford] [--seeds 3]

Prints JSON: per debate and in all, the speeches shown passages, how many of those cite at
least one, the citations made and how many check out (ok), name no passage (unknown_id)
or misquote theirs (quote_not_found).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import moot

ROOT = Path(__file__).resolve().parents[1]
MOTIONS = {
    "en": "Northwind Logistics should hedge its diesel purchases",
    "zh": "本公司应当在华东地区新建冷链仓库",
}
SHORT = {  # the fewest rounds each format takes
    "oxford": {"max_rounds": 3},
    "decision": {"rounds": 0, "positions": ["hedge", "wait"]},
    "challenge": {"rounds": 1},
    "adversarial": {"rounds": 1},
}


def documents(folder: Path) -> Path:
    """The test suite's document set, written into FOLDER."""
    sys.path.insert(0, str(ROOT / "tests" / "evidence"))
    import evidence_documents as fixtures

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes").mkdir(exist_ok=True)
    fixtures.write_pdf(folder / "board-pack.pdf", fixtures.PDF_PAGES, chinese=fixtures.ZH_PAGE)
    fixtures.write_docx(folder / "review.docx")
    (folder / "notes" / "memo.md").write_text(fixtures.MEMO_MD, encoding="utf-8")
    (folder / "可行性报告.txt").write_text(fixtures.ZH_TXT, encoding="utf-8")
    (folder / "policy.html").write_text(fixtures.HTML, encoding="utf-8")
    return folder


def ledger(result: Any) -> dict[str, int]:
    """The figures of one finished debate's turns."""
    shown = [t for t in result.turns if t.evidence and t.evidence.shown]
    citing = [t for t in shown if t.evidence.citations]
    cited = [c for t in result.turns if t.evidence for c in t.evidence.citations]
    return {
        "speeches_shown_passages": len(shown),
        "citing_at_least_one": len(citing),
        "citations": len(cited),
        "ok": sum(c.check == "ok" for c in cited),
        "unknown_id": sum(c.check == "unknown_id" for c in cited),
        "quote_not_found": sum(c.check == "quote_not_found" for c in cited),
    }


def measure(
    models: list[str],
    *,
    fmt: str = "decision",
    lang: str = "en",
    seeds: int = 1,
    max_tokens: int | None = 64,
    call_timeout: float = 1800.0,
) -> dict[str, Any]:
    """Debates seeds 1..SEEDS given the document set, and their ledgers' figures."""
    if fmt == "adversarial" and len(models) < 2:
        models = models * 2
    debates, totals = [], dict.fromkeys(ledger_keys(), 0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = documents(Path(tmp) / "documents")
        for seed in range(1, seeds + 1):
            began = time.perf_counter()
            result = moot.debate(
                MOTIONS[lang],
                format=fmt,
                model=models,
                lang=lang,
                seed=seed,
                out=Path(tmp) / f"debate-{seed}",
                run={"max_tokens": max_tokens, "call_timeout_s": call_timeout},
                evidence=[str(folder)],
                **SHORT[fmt],
            )
            figures = ledger(result)
            figures["seconds"] = round(time.perf_counter() - began, 1)
            debates.append({"seed": seed, **figures})
            for key in totals:
                totals[key] += figures[key]
    return {
        "models": models,
        "format": fmt,
        "language": lang,
        "debates": debates,
        "total": totals,
        "share_of_speeches_citing": _share(
            totals["citing_at_least_one"], totals["speeches_shown_passages"]
        ),
        "share_of_citations_ok": _share(totals["ok"], totals["citations"]),
    }


def run(results: dict[str, Any]) -> None:
    """`make bench`'s measure: one short decision (three openings and the judge) on each
    tiny model, as docs/evidence.md reports it."""
    results["citations"] = {m: measure([m]) for m in ("smollm2-135m", "gemma3-270m")}


def summary(results: dict[str, Any]) -> list[str]:
    lines = []
    for model, row in results.get("citations", {}).items():
        total = row["total"]
        lines.append(
            f"citations, {model}: {total['citing_at_least_one']} of "
            f"{total['speeches_shown_passages']} speeches shown passages cite one; "
            f"{total['ok']} of {total['citations']} citations check out"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="model reference (repeatable)")
    parser.add_argument("--format", default="oxford", choices=sorted(SHORT))
    parser.add_argument("--lang", default="en", choices=sorted(MOTIONS))
    parser.add_argument("--seeds", type=int, default=3, help="debates, seeds 1..N")
    parser.add_argument("--max-tokens", type=int, default=None, help="cap on tokens a speech")
    parser.add_argument("--call-timeout", type=float, default=240.0, help="seconds a call")
    args = parser.parse_args()
    figures = measure(
        args.model or ["smollm2-135m"],
        fmt=args.format,
        lang=args.lang,
        seeds=args.seeds,
        max_tokens=args.max_tokens,
        call_timeout=args.call_timeout,
    )
    print(json.dumps(figures, ensure_ascii=False, indent=2))


def ledger_keys() -> tuple[str, ...]:
    return ("speeches_shown_passages", "citing_at_least_one", "citations", "ok",
            "unknown_id", "quote_not_found")  # fmt: skip


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


if __name__ == "__main__":
    main()
