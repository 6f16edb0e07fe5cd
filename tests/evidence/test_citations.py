"""Citations checked against the passages: an id that exists, a quotation that is in the
passage it is attributed to — in English and Chinese, through the ways text is copied."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.evidence import Check, Library, open_library, parse


@pytest.fixture
def library(documents: Path) -> Library:
    return open_library([documents])


def _checks(library: Library, speech: str) -> list[tuple[str, Check]]:
    return [(r.citation.written, r.check) for r in library.check(speech)]


def test_a_correct_quote_holds_a_planted_quote_and_id_do_not(library: Library):
    speech = (
        'The board has already acted: it "approved a hedging programme covering 60 percent '
        "of next year's diesel purchases\" [board-pack.pdf p.2 ¶2]. Yet the pack also says "
        '"the hedging programme removes all fuel risk" [board-pack.pdf p.1 ¶2], and the '
        "auditors agree [board-pack.pdf p.9 ¶1]."
    )
    assert _checks(library, speech) == [
        ("board-pack.pdf p.2 ¶2", Check.OK),
        ("board-pack.pdf p.1 ¶2", Check.QUOTE_NOT_FOUND),
        ("board-pack.pdf p.9 ¶1", Check.UNKNOWN_ID),
    ]
    results = library.check(speech)
    assert results[0].ok and results[0].passage == library.get("board-pack.pdf p.2 ¶2")
    assert results[2].passage is None


def test_chinese_quotes_in_any_mark_are_checked(library: Library):
    speech = (
        "报告指出「客流预测显示，开通后第三年日均客流将达到二十五万人次」【可行性报告.txt ¶3】。"
        "董事会认为“区域配送时间可以缩短百分之五十”[board-pack.pdf p.4 ¶2]。"
        "评审建议『加上幂等键』[review.docx §3 ¶1]。"
    )
    assert _checks(library, speech) == [
        ("可行性报告.txt ¶3", Check.OK),
        ("board-pack.pdf p.4 ¶2", Check.QUOTE_NOT_FOUND),  # 五十 for 三十: invented
        ("review.docx §3 ¶1", Check.OK),
    ]


@pytest.mark.parametrize(
    "quote",
    [
        "operating margin fell to 6.1 percent",  # case
        "Operating  margin fell\nto 6.1 percent",  # whitespace, a line break
        "diesel prices rose … two depots were refitted",  # an ellipsis for words left out
        "diesel prices rose ... were refitted.",
        "Operating margin fell to 6.1 percent,",  # a comma the speaker added at the end
    ],
)
def test_a_quote_copied_with_other_spacing_case_or_an_ellipsis_holds(library: Library, quote):
    assert _checks(library, f'"{quote}" [board-pack.pdf p.1 ¶2]') == [
        ("board-pack.pdf p.1 ¶2", Check.OK)
    ]


@pytest.mark.parametrize(
    "quote",
    [
        "operating margin rose to 6.1 percent",
        "two depots were refitted ... diesel prices rose",  # the parts out of order
        "...",
    ],
)
def test_a_quote_changed_or_reordered_does_not_hold(library: Library, quote):
    assert _checks(library, f'"{quote}" [board-pack.pdf p.1 ¶2]') == [
        ("board-pack.pdf p.1 ¶2", Check.QUOTE_NOT_FOUND)
    ]


def test_curly_quotes_and_apostrophes_match_straight_ones(library: Library):
    speech = "“covering 60 percent of next year’s diesel purchases” [board-pack.pdf p.2 ¶2]"
    assert _checks(library, speech) == [("board-pack.pdf p.2 ¶2", Check.OK)]


def test_a_quote_is_attributed_to_the_citation_beside_it_before_or_after():
    speech = (
        'The memo [memo.md §2 ¶1]: "shipped 18% more features". Elsewhere "a quotation '
        'with no source" is only a quotation. "kept for seven years", [policy.html §1 ¶1].'
    )
    found = parse(speech)
    assert [(c.written, c.quote) for c in found] == [
        ("memo.md §2 ¶1", "shipped 18% more features"),
        ("policy.html §1 ¶1", "kept for seven years"),
    ]


def test_a_citation_without_a_quote_holds_when_its_passage_exists(library: Library):
    speech = "Hybrid work is preferred [notes/memo.md, §2, ¶2] and costs rent [memo.md §3 ¶1]."
    assert _checks(library, speech) == [
        ("notes/memo.md, §2, ¶2", Check.OK),
        ("memo.md §3 ¶1", Check.OK),
    ]


def test_several_ids_in_one_bracket_each_count_and_share_the_quote(library: Library):
    speech = '"seven years" [policy.html §1 ¶1; policy.html §2 ¶1; policy.html §7 ¶1]'
    assert _checks(library, speech) == [
        ("policy.html §1 ¶1", Check.OK),
        ("policy.html §2 ¶1", Check.OK),  # the quote is in one of the passages cited together
        ("policy.html §7 ¶1", Check.UNKNOWN_ID),
    ]


def test_brackets_that_are_not_citations_are_left_alone(library: Library):
    speech = "Costs [in pounds] rose [sic]; see [1]. A list: [a, b]."
    assert library.check(speech) == []


def test_a_hostile_speech_is_checked_quickly():
    import time

    speech = ('"' + "x" * 5000 + " [" * 3000 + "¶" * 100) * 3
    started = time.perf_counter()
    parse(speech)
    assert time.perf_counter() - started < 2


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("board-pack.pdf  p.2 ¶ 2", "board-pack.pdf p.2 ¶2"),  # two spaces, one after ¶
        ("board-pack.pdf\u3000p.2\u3000¶2", "board-pack.pdf p.2 ¶2"),  # full-width spaces
        ("board-pack. pdf p.3 ¶1", "board-pack.pdf p.3 ¶1"),  # inside the file's name
        ("board-pack.pdf p. 2¶2", "board-pack.pdf p.2 ¶2"),  # one missing, one too many
        ("board-pack.pdf p.2\u200b ¶\u00a02", "board-pack.pdf p.2 ¶2"),  # zero-width, no-break
        ("可行性报告 .txt\u3000¶ 3", "可行性报告.txt ¶3"),
        ("memo .md §3 ¶1", "notes/memo.md §3 ¶1"),  # its folder left out too
    ],
)
def test_an_id_with_stray_spaces_inside_names_its_passage(library: Library, written, meant):
    assert library.get(meant) is not None
    assert library.get(written) == library.get(meant)


def test_stray_spaces_in_a_chinese_speech_s_citation_are_normalised_before_checking(
    library: Library,
):
    speech = (
        "报告指出「客流预测显示，开通后第三年日均客流将达到二十五万人次」"
        "【可行性报告.txt\u3000¶ 3】。"
    )
    [result] = library.check(speech)
    assert result.check is Check.OK
    assert result.passage == library.get("可行性报告.txt ¶3")
    assert result.citation.written == "可行性报告.txt\u3000¶ 3"  # kept as the speech wrote it


def test_squeezing_spaces_out_never_joins_two_passages_into_one(tmp_path: Path):
    # "a b.txt" and "ab.txt" squeeze alike: an id written with a space between is no
    # guess at either, though each id as written is found.
    (tmp_path / "a b.txt").write_text("Alpha paragraph.\n", encoding="utf-8")
    (tmp_path / "ab.txt").write_text("Beta paragraph.\n", encoding="utf-8")
    library = open_library([tmp_path])
    assert library.get("a b.txt ¶1").text == "Alpha paragraph."
    assert library.get("ab.txt ¶1").text == "Beta paragraph."
    assert library.get("a  b .txt ¶1") is None
    assert library.get("ab. txt ¶1") is None
