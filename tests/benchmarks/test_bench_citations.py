"""benchmarks/bench_citations.py's plumbing, on dry runs: its document set, its debates and
the figures make bench prints (the real models' figures are docs/evidence.md's)."""

from __future__ import annotations

from typing import Any

import pytest

import bench_citations
import bench_evidence


def test_the_measure_counts_a_dry_runs_citations_and_summarises_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = bench_citations.moot.debate

    def dry(*args: Any, run: dict[str, Any], **kwargs: Any) -> Any:
        return real(*args, run={**run, "dry_run": True}, **kwargs)

    monkeypatch.setattr(bench_citations.moot, "debate", dry)
    figures = bench_citations.measure(["smollm2-135m"], seeds=1)
    total = figures["total"]
    # The dry run's speakers cite the first passage each is shown, and each holds.
    assert total["speeches_shown_passages"] == 3  # three openings; the judge is shown none
    assert total["citing_at_least_one"] == total["citations"] == total["ok"] == 3
    assert figures["share_of_citations_ok"] == 1.0
    [line] = bench_citations.summary({"citations": {"smollm2-135m": figures}})
    assert line == (
        "citations, smollm2-135m: 3 of 3 speeches shown passages cite one; "
        "3 of 3 citations check out"
    )


def test_the_evidence_bench_summary_names_its_figures() -> None:
    figures = {
        "pages": 500,
        "passages": 3965,
        "index_cold_cpu_s": 11.6,
        "index_cold_s": 12.2,
        "open_cached_s": 0.15,
        "retrieval_ms_median": 1.3,
        "check_ms_median": 0.37,
    }
    [line] = bench_evidence.summary({"evidence": figures})
    assert line.startswith("evidence: 500 pages (3965 passages) read and indexed in 11.6 s CPU")
    assert bench_evidence.summary({}) == []
