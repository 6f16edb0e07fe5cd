"""`make bench`: every figure in one run, printed as one JSON object (no timed assertions)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import bench_attention  # noqa: E402
import bench_choice  # noqa: E402
import bench_citations  # noqa: E402
import bench_compliance  # noqa: E402
import bench_evidence  # noqa: E402
import bench_formats  # noqa: E402
import bench_inference  # noqa: E402
import bench_judges  # noqa: E402
import bench_memory  # noqa: E402
import bench_oxford  # noqa: E402
import bench_parallel  # noqa: E402
import bench_peer  # noqa: E402
import bench_roofline  # noqa: E402
import bench_schedule  # noqa: E402
import bench_stores  # noqa: E402
import bench_terse  # noqa: E402
import bench_tournament_parallel  # noqa: E402


def main() -> None:
    results: dict[str, Any] = {}
    bench_inference.run(results)
    bench_oxford.run(results)
    bench_formats.run(results)
    bench_compliance.run(results)
    bench_stores.run(results)
    # moot beside the plain procedure and at llama.cpp's raw rates: one debate per model.
    bench_peer.run(results)
    bench_roofline.run(results)
    bench_parallel.run(results)
    bench_attention.run(results)
    bench_terse.run(results)
    bench_memory.run(results)
    bench_schedule.run(results)  # a simulation: no model runs
    bench_tournament_parallel.run(results)  # a tournament's debates one by one and at once
    bench_choice.run(results)  # a judge's decision read, against a sampled ballot
    bench_judges.run(results)  # each tiny judge and their jury on the labelled set
    bench_evidence.run(results)  # documents read, indexed, searched, citations checked
    bench_citations.run(results)  # how often each tiny model cites, and how it checks
    results["speed_summary"] = (
        bench_roofline.summary(results)
        + bench_parallel.summary(results)
        + bench_attention.summary(results)
        + bench_terse.summary(results)
        + bench_tournament_parallel.summary(results)
        + bench_choice.summary(results)
        + bench_judges.summary(results)
        + bench_evidence.summary(results)
        + bench_citations.summary(results)
    )
    print(json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
