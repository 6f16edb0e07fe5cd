"""Documents read into passages with stable ids: a page of a PDF, a section of Markdown,
HTML and DOCX, a paragraph of text; Chinese cut at its sentences, without spaces."""

from __future__ import annotations

from pathlib import Path

from evidence_documents import ZH_TXT
from moot.evidence import approx_tokens, open_library
from moot.evidence.passages import cut, number, tidy


def _by_id(folder: Path) -> dict[str, str]:
    return {p.id: p.text for p in open_library([folder]).passages}


def test_each_kind_is_read_into_passages_named_by_file_page_or_section(documents: Path):
    found = _by_id(documents)
    # PDF: pages; the heading and first paragraph share a text box, the others are their own
    assert found["board-pack.pdf p.2 ¶2"].startswith("The board approved a hedging programme")
    assert "up 12 percent" in found["board-pack.pdf p.1 ¶1"]
    assert found["board-pack.pdf p.3 ¶1"].endswith("0.42 euros per share.")
    # its Chinese page (a CID font, as Chinese PDFs often have), lines joined without spaces
    assert (
        found["board-pack.pdf p.4 ¶2"]
        == "董事会认为，新仓库投入运营后，区域配送时间可以缩短百分之三十。"
    )
    # DOCX: a heading opens a section; a table row is a passage
    assert found["review.docx §2 ¶1"].startswith("The review found that the retry queue")
    assert found["review.docx §2 ¶3"] == "Retry queue | Payments team"
    assert found["review.docx §3 ¶1"] == "评审建议在下一季度之前为重试队列加上幂等键。"
    # Markdown in a subfolder: named by its path; `#` inside a code fence opens no section
    assert found["notes/memo.md §2 ¶2"].startswith("Staff surveys showed that 64%")
    assert "not a heading" in found["notes/memo.md §3 ¶2"]
    assert not any(i.startswith("notes/memo.md §4") for i in found)
    # HTML: headings are sections, list items paragraphs, scripts and styles no text
    assert found["policy.html §2 ¶2"] == "Logs are deleted after 90 days."
    assert found["policy.html §1 ¶1"] == (
        "Customer records are kept for seven years after the last transaction."
    )
    assert not any("secret" in text or "color" in text for text in found.values())
    # text: blank-line paragraphs
    assert found["可行性报告.txt ¶3"].startswith("客流预测显示")


def test_a_passage_keeps_its_section_heading(documents: Path):
    library = open_library([documents / "notes" / "memo.md"])
    assert [p.heading for p in library.passages][:3] == [
        "Remote work memo", "Evidence from the pilot", "Evidence from the pilot"
    ]  # fmt: skip
    assert library.files == ["memo.md"]  # a file named alone is cited by its own name


def test_ids_are_the_same_when_read_again(documents: Path):
    assert _by_id(documents) == _by_id(documents)


def test_a_long_chinese_paragraph_is_cut_after_its_sentences_within_the_cap():
    paragraph = ZH_TXT.split("\n\n")[2].strip() * 6  # about 270 characters, no spaces
    pieces = cut(paragraph, cap=60)
    assert len(pieces) > 3
    assert all(approx_tokens(p) <= 60 for p in pieces)
    assert all(p.endswith("。") for p in pieces)
    assert "".join(pieces) == paragraph  # nothing lost, no space added


def test_a_long_english_paragraph_is_cut_at_sentences_and_numbered_on():
    sentence = "The depot in Ghent was refitted to hold chilled goods for two customers. "
    passages = number("pack.pdf", [("p.3", "", sentence * 12)], cap=40)
    assert [p.id for p in passages][:3] == ["pack.pdf p.3 ¶1", "pack.pdf p.3 ¶2", "pack.pdf p.3 ¶3"]
    assert all(approx_tokens(p.text) <= 40 for p in passages)
    assert all(p.text.endswith("customers.") for p in passages)


def test_a_sentence_longer_than_the_cap_is_cut_at_a_space_and_a_run_anywhere():
    words = " ".join(["word"] * 200)
    assert all(approx_tokens(p) <= 20 for p in cut(words, cap=20))
    assert "".join(cut("字" * 100, cap=30)) == "字" * 100


def test_page_numbers_and_rules_are_not_passages_and_lines_join_as_their_language_does():
    passages = number("x.pdf", [("p.1", "", "12"), ("p.1", "", "-----"), ("p.1", "", "ok")], cap=50)
    assert [p.text for p in passages] == ["ok"]
    assert tidy("二十\n亿元，其中\n  政府") == "二十亿元，其中政府"
    assert tidy("two\nlines  here") == "two lines here"


def test_tokens_are_counted_about_right_in_both_languages():
    assert approx_tokens("董事会认为") == 5
    assert 8 <= approx_tokens("The board approved a hedging programme.") <= 12
