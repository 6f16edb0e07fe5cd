"""Benchmark a debate's evidence on a generated corpus of about 500 pages (PDFs, DOCX,
Markdown, Chinese text): reading and indexing it cold, opening it again from its cache,
again after one file changed, the memory that takes, and retrieval and citation checks per
query. Prints JSON; `python benchmarks/bench_evidence.py`."""

from __future__ import annotations

import json
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from moot.evidence import open_library

PDFS, PDF_PAGES = 10, 45  # 450 pages of PDF
WORDS_PER_PAGE = 420
QUERIES = 60
BUDGET = 1200  # tokens of passages for one speaker's turn
VOCABULARY = """revenue margin customer contract depot diesel hedging board risk audit
forecast growth capital investment warehouse logistics freight route delivery fleet driver
pricing discount tender cost inflation wage pension lease property insurance claim safety
regulation emission carbon electric battery charging network software platform outage
retry queue invoice payment settlement liquidity covenant dividend share quarter annual
region benelux germany france poland port rail terminal customs tariff supplier""".split()
ZH = "公司收入利润客户合同仓库冷链运输车队司机成本风险审计预测增长投资董事会监管排放电池网络"


def _sentence(rng: random.Random) -> str:
    words = rng.choices(VOCABULARY, k=rng.randint(9, 18))
    return " ".join(words).capitalize() + f" by {rng.randint(2, 60)} percent."


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(3, 6)))


def _zh_paragraph(rng: random.Random) -> str:
    return "".join(
        "".join(rng.choices(ZH, k=rng.randint(12, 30))) + "。" for _ in range(rng.randint(3, 6))
    )


def make_corpus(folder: Path, seed: int = 7) -> int:
    """About 500 pages of documents in FOLDER; returns the pages (of ~420 words) written."""
    import docx
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    rng = random.Random(seed)
    styles = getSampleStyleSheet()
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(PDFS):
        flow: list[Any] = []
        for page in range(PDF_PAGES):
            flow.append(Paragraph(f"Section {page + 1}", styles["Heading2"]))
            written = 0
            while written < WORDS_PER_PAGE - 60:
                text = _paragraph(rng)
                written += len(text.split())
                flow.append(Paragraph(text, styles["BodyText"]))
            flow.append(PageBreak())
        SimpleDocTemplate(str(folder / f"report-{n}.pdf"), pagesize=A4).build(flow)
    for n in range(2):  # two DOCX of about 10 pages each
        document = docx.Document()
        for section in range(10):
            document.add_heading(f"Part {section + 1}", level=1)
            for _ in range(6):
                document.add_paragraph(_paragraph(rng))
        document.save(str(folder / f"review-{n}.docx"))
    memo = [f"## Topic {i}\n\n" + "\n\n".join(_paragraph(rng) for _ in range(6)) for i in range(15)]
    (folder / "memo.md").write_text("# Memo\n\n" + "\n\n".join(memo), encoding="utf-8")
    zh = "\n\n".join(_zh_paragraph(rng) for _ in range(150))  # about 15 pages of Chinese
    (folder / "报告.txt").write_text(zh, encoding="utf-8")
    return PDFS * PDF_PAGES + 20 + 15 + 15


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(results: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder, cache = Path(tmp) / "documents", Path(tmp) / "debate" / "evidence"
        pages = make_corpus(folder)
        size = sum(p.stat().st_size for p in folder.iterdir())
        rss_before = _peak_rss_mb()
        started, cpu = time.perf_counter(), time.process_time()
        library = open_library([folder], cache=cache)
        cold, cold_cpu = time.perf_counter() - started, time.process_time() - cpu
        rss_after = _peak_rss_mb()
        started = time.perf_counter()
        open_library([folder], cache=cache)
        warm = time.perf_counter() - started
        memo = folder / "memo.md"
        memo.write_text(memo.read_text(encoding="utf-8") + "\n\nOne more line.\n")
        started = time.perf_counter()
        library = open_library([folder], cache=cache)
        one_changed = time.perf_counter() - started

        rng = random.Random(11)
        queries = [" ".join(rng.choices(VOCABULARY, k=12)) for _ in range(QUERIES // 2)]
        queries += ["".join(rng.choices(ZH, k=16)) for _ in range(QUERIES // 2)]
        times, found = [], []
        for query in queries:
            started = time.perf_counter()
            passages = library.search(query, budget=BUDGET)
            times.append(time.perf_counter() - started)
            found.append(passages)
        speech = (
            " ".join(f'"{p.text.split(".")[0]}" [{p.id}]' for p in found[0][:5])
            + ' "an invented claim" [report-0.pdf p.3 ¶2] [nowhere.pdf p.1 ¶1]'
        )
        checks = []
        for _ in range(20):
            started = time.perf_counter()
            library.check(speech)
            checks.append(time.perf_counter() - started)

    results["evidence"] = {
        "pages": pages,
        "files": len(library.files),
        "bytes": size,
        "passages": len(library),
        "index_cold_s": round(cold, 2),
        "index_cold_cpu_s": round(cold_cpu, 2),
        "open_cached_s": round(warm, 3),
        "open_one_file_changed_s": round(one_changed, 3),
        "peak_rss_mb": round(rss_after, 1),
        "peak_rss_growth_mb": round(rss_after - rss_before, 1),
        "retrieval_ms_median": round(statistics.median(times) * 1000, 2),
        "retrieval_ms_max": round(max(times) * 1000, 2),
        "passages_per_query": round(statistics.mean(len(f) for f in found), 1),
        "check_ms_median": round(statistics.median(checks) * 1000, 2),
    }


def summary(results: dict[str, Any]) -> list[str]:
    e = results.get("evidence")
    if not e:
        return []
    return [
        f"evidence: {e['pages']} pages ({e['passages']} passages) read and indexed in "
        f"{e['index_cold_cpu_s']} s CPU ({e['index_cold_s']} s wall), opened again from the "
        f"cache in {e['open_cached_s']} s; search {e['retrieval_ms_median']} ms a query "
        f"(median), check {e['check_ms_median']} ms a speech"
    ]


def main() -> None:
    results: dict[str, Any] = {}
    run(results)
    json.dump(results, sys.stdout, indent=2, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
