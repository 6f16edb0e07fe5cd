"""Deterministic checks on speeches that sit beside a small model's rubric.

A 135M judge's yes/no answers are noisy; an empty speech, one that shares nothing with
the motion, or one phrase repeated can be told apart for sure in code.
"""

from __future__ import annotations

import re

from moot.inference.protocol import degeneracy

_EN_STOP = frozenset(
    """a an the this that these those house believes believe will would should be is are was
    were has have had of to in on for and or not no with by as at it its from than then
    it's be been being do does did can could may might must shall we our us you your they
    their them he she his her i me my more most less much many very""".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def content_terms(text: str) -> set[str]:
    """Content words (English, crude stem) and Chinese character bigrams of a text."""
    words = {w.lower().rstrip("s") for w in _WORD.findall(text)}
    terms = {w for w in words if w not in _EN_STOP and len(w) > 2}
    han = "".join(_HAN.findall(text.replace("本院认为", "")))
    terms |= {han[i : i + 2] for i in range(len(han) - 1)}
    return terms


def length_units(text: str) -> int:
    """Words in English, characters (字) in Chinese, as the rulebooks count them."""
    return len(_WORD.findall(text)) + len(_HAN.findall(text))


def speech_checks(text: str, motion: str, *, min_units: int = 25) -> dict[str, bool]:
    """Is a speech substantial, on the motion, and not a repeated phrase?"""
    return {
        "substantial": length_units(text) >= min_units,
        "on_topic": bool(content_terms(text) & content_terms(motion)),
        "not_repetitive": bool(text.strip()) and degeneracy(text) is None,
    }
