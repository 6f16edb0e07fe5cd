"""A small realistic document set, written by the tests (the `documents` fixture): a board
pack as a multi-page PDF (reportlab), a design review as DOCX (python-docx), a Markdown memo
with headings, a Chinese report as text, and an HTML page."""

from __future__ import annotations

from pathlib import Path

import pytest

# Sentences the tests find again by their page, section and paragraph.
PDF_PAGES = [
    [
        "Quarterly board pack: Northwind Logistics.",
        "Revenue for the third quarter was 41.2 million euros, up 12 percent on the same "
        "quarter last year, driven by the new cold-chain contracts in the Benelux region.",
        "Operating margin fell to 6.1 percent because diesel prices rose and two depots "
        "were refitted.",
    ],
    [
        "Risks and mitigations.",
        "The largest customer accounts for 23 percent of revenue; losing it would cut the "
        "operating profit by about half.",
        "The board approved a hedging programme covering 60 percent of next year's diesel "
        "purchases at a fixed price.",
    ],
    [
        "Outlook.",
        "Management expects revenue of 165 million euros for the full year and proposes "
        "a dividend of 0.42 euros per share.",
    ],
]
ZH_PAGE = [
    "本公司计划在华东地区新建两座冷链仓库，总投资约为三点五亿元。",
    "董事会认为，新仓库投入运营后，区域配送时间可以缩短百分之三十。",
]
MEMO_MD = """# Remote work memo

This memo sets out the case for keeping three office days a week.

## Evidence from the pilot

During the six-month pilot, teams that met in person three days a week shipped 18% more
features than fully remote teams.

Staff surveys showed that 64% of employees preferred a hybrid arrangement.

## Costs

Keeping the London office costs 2.3 million pounds a year in rent and services.

```
# not a heading: a line of code
rent = 2.3
```
"""
ZH_TXT = """城市轨道交通扩建项目可行性报告

根据测算，项目总投资约为一百二十亿元，其中政府资本金占百分之四十。

客流预测显示，开通后第三年日均客流将达到二十五万人次。票价收入预计可以覆盖运营成本的百分之六十五。

风险方面，主要包括建设成本超支、客流不及预期以及利率上升。建议设立风险准备金。
"""
HTML = """<!doctype html><html><head><title>Policy</title><style>p{color:red}</style>
<script>var secret = "not text";</script></head><body>
<h1>Data retention policy</h1>
<p>Customer records are kept for <b>seven years</b> after the last transaction.</p>
<h2>Exceptions</h2>
<ul><li>Payment card numbers are never stored.</li><li>Logs are deleted after 90 days.</li></ul>
</body></html>
"""


def write_pdf(path: Path, pages: list[list[str]], *, chinese: list[str] | None = None,
              password: str | None = None) -> Path:  # fmt: skip
    """PAGES as a PDF, a page each (the first paragraph a heading), CHINESE on a last page."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()
    flow: list[object] = []
    for page in pages:
        flow.append(Paragraph(page[0], styles["Heading1"]))
        flow += [Paragraph(text, styles["BodyText"]) for text in page[1:]]
        flow.append(PageBreak())
    if chinese:
        pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
        zh = ParagraphStyle("zh", fontName="STSong-Light", fontSize=11, leading=16,
                            wordWrap="CJK", spaceAfter=10)  # fmt: skip
        flow += [Paragraph(text, zh) for text in chinese]
    else:
        flow.pop()
    SimpleDocTemplate(str(path), pagesize=A4, encrypt=password).build(flow)
    return path


def write_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.add_heading("Design review: billing service", level=1)
    document.add_paragraph("The billing service handles 1,200 invoices a minute at peak.")
    document.add_heading("Findings", level=2)
    document.add_paragraph(
        "The review found that the retry queue can deliver the same invoice twice when a "
        "worker restarts during a payment."
    )
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Component", "Owner"
    table.cell(1, 0).text, table.cell(1, 1).text = "Retry queue", "Payments team"
    document.add_heading("结论", level=2)
    document.add_paragraph("评审建议在下一季度之前为重试队列加上幂等键。")
    document.save(str(path))
    return path


@pytest.fixture
def documents(tmp_path: Path) -> Path:
    """The document set in a folder of its own (a subfolder for the memo)."""
    folder = tmp_path / "documents"
    (folder / "notes").mkdir(parents=True)
    write_pdf(folder / "board-pack.pdf", PDF_PAGES, chinese=ZH_PAGE)
    write_docx(folder / "review.docx")
    (folder / "notes" / "memo.md").write_text(MEMO_MD, encoding="utf-8")
    (folder / "可行性报告.txt").write_text(ZH_TXT, encoding="utf-8")
    (folder / "policy.html").write_text(HTML, encoding="utf-8")
    return folder
