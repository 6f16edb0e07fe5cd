"""Deterministic checks on speeches that sit beside a small model's rubric.

A 135M judge's yes/no answers are noisy; an empty speech, one that shares nothing with
the motion, or one phrase repeated can be told apart for sure in code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from moot.inference.protocol import PROSE_CHARS, degeneracy

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


# A unit of length as the rulebooks count it: a word (letters or digits, with inner
# apostrophes or hyphens) or one Chinese character (字).
_UNIT = re.compile(r"[\u4e00-\u9fff]|[^\W_\u4e00-\u9fff]+(?:['’-][^\W_\u4e00-\u9fff]+)*")
# Where a sentence ends: . ! ? … followed by space or the end (closing quotes allowed), or
# a Chinese full stop, exclamation or question mark.
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)|[。！？]+[”’」』）]*")
ELLIPSIS = "…"

# Quotation marks and brackets, by the mark that closes each: a sentence end inside them is
# not one ("You said, "Cars kill. People die." That is false." is two sentences, not three).
_CLOSER = {"“": "”", "‘": "’", "「": "」", "『": "』", "(": ")", "[": "]", "（": "）", "【": "】"}
_QUOTE_CLOSERS = frozenset("\"'”’」』")
_NESTING = re.compile(r"[\"'“”‘’「」『』()\[\]（）【】\n]")
_SCAN = re.compile(rf"(?P<end>{_SENTENCE_END.pattern})|{_NESTING.pattern}")


def _nest(text: str, i: int, stack: list[str]) -> None:
    """Open or close the quotation or bracket whose mark is TEXT[I] on STACK (the marks that
    close what is open). An apostrophe (between letters) is no mark; a closing mark with
    nothing of its kind open is a stray one, and ignored."""
    mark = text[i]
    before = text[i - 1] if i else " "
    after = text[i + 1] if i + 1 < len(text) else " "
    if mark in "'’" and before.isalnum() and after.isalnum():
        return  # don't, Proposition's, 反方’s
    if mark == '"':
        if stack and stack[-1] == '"':
            stack.pop()
        else:
            stack.append('"')
    elif mark == "'":
        if stack and stack[-1] == "'" and not after.isalnum():
            stack.pop()
        elif (before.isspace() or before in '([“‘"—:,') and not after.isspace():
            stack.append("'")
    elif mark in _CLOSER:
        stack.append(_CLOSER[mark])
    elif mark in stack:  # a closing mark: what was opened inside it and left open closes too
        del stack[len(stack) - 1 - stack[::-1].index(mark) :]


def sentence_ends(text: str, *, final: bool = False) -> list[int]:
    """Where each complete sentence of TEXT ends. A sentence ends at . ! ? … (or 。！？), its
    closing marks included, but never inside a quotation or brackets: a quoted sentence is
    part of the one that quotes it. A mark left open at the end of a line is a stray one (a
    quotation does not run on past its paragraph): the ends it held back are ends again,
    as they are at the end of a FINAL text. Each end depends only on the text before it and
    the character after, so a prefix of a text ends its sentences where the text does."""
    ends: list[int] = []
    held: list[int] = []  # ends inside what is open
    stack: list[str] = []
    for m in _SCAN.finditer(text):
        if m.group("end") is None:
            if m.group() == "\n":
                if stack:
                    ends.extend(held)
                held, stack = [], []
                continue
            _nest(text, m.start(), stack)
            if not stack:
                held = []
            continue
        for i in range(m.start(), m.end()):
            if text[i] in _QUOTE_CLOSERS or text[i] in ")]）】":
                _nest(text, i, stack)
        if stack:
            held.append(m.end())
        else:
            held = []
            ends.append(m.end())
    if final and stack:
        ends.extend(held)
    return ends


def length_units(text: str) -> int:
    """Words in English, characters (字) in Chinese, as the rulebooks count them."""
    return len(_UNIT.findall(text))


def ends_sentence(text: str) -> bool:
    """Does TEXT end with a complete sentence?"""
    text = text.rstrip()
    return len(text) in sentence_ends(text)


@dataclass(frozen=True)
class Fitted:
    """A turn's text fitted to its limit: what is shown, its length, whether it was cut."""

    text: str
    length: int
    cut: bool = False
    flag: str | None = None  # why the cut is not a clean one


def complete_prefix(text: str, limit: int, *, final: bool = False) -> int:
    """The end of the longest run of complete sentences of TEXT within LIMIT units; 0 if
    the first sentence is already longer. FINAL: TEXT is all said (`sentence_ends`)."""
    units = list(_UNIT.finditer(text))
    bound = units[limit].start() if len(units) > limit else len(text)
    ends = [end for end in sentence_ends(text, final=final) if end <= bound]
    return ends[-1] if ends else 0


def first_question(text: str, limit: int, *, final: bool = False) -> str | None:
    """The first sentence of TEXT that is a question (ends with ? or ？) and ends within
    LIMIT units, or None."""
    bound = complete_prefix(text, limit, final=final)
    start = 0
    for end in sentence_ends(text, final=final):
        if end > bound:
            break
        sentence = text[start:end].strip()
        if sentence.rstrip("\"'”’)]」』）").endswith(("?", "？")):
            return sentence
        start = end
    return None


# A word as _UNIT counts one, in GBNF: letters or digits, with at most two inner
# apostrophes or hyphens (a small model otherwise strings a whole clause into one "word").
_GBNF_WORD = r"part (['\u2019-] part){0,2}"
_GBNF_PART = r"[A-Za-z0-9\u00C0-\u024F]{1,16}"
# How a question opens, so that it is one from its first word (a model left to itself
# states its case and has to be cut off at the limit).
_QUESTION_OPENERS = {
    "en": (
        "Is", "Isn't", "Are", "Aren't", "Does", "Doesn't", "Do", "Don't", "Did", "Can",
        "Can't", "Could", "Will", "Won't", "Would", "Wouldn't", "Should", "Shouldn't", "Has",
        "Have", "How", "Why", "What", "Which", "Who", "Where", "When",
    ),
    "zh": ("请问", "难道", "为什么", "如何", "是否", "贵方", "对方"),
}  # fmt: skip


# A question's token budget under its grammar, per unit of its limit: generation ends at
# the question mark, so a generous budget costs nothing and never cuts a question short.
QUESTION_TOKENS_PER_UNIT = 4
# The mark a question grammar ends on, by language.
QUESTION_MARKS = {"en": "?", "zh": "？"}


def question_grammar(limit: int, language: str) -> str:
    """A GBNF grammar for one question of at most LIMIT units (words; 字 in Chinese): it
    opens as a question does and ends with its question mark, with no full stop and no
    second sentence. A backend that decodes with it can only give what `fit_question`
    keeps whole."""
    if language == "zh":
        openers = [o for o in _QUESTION_OPENERS["zh"] if len(o) < limit]
        if not openers:
            raise ValueError(f"a Chinese question needs a limit of at least 3 字, not {limit}")
        room = limit - max(len(o) for o in openers)
        choice = " | ".join(f'"{o}"' for o in openers)
        return (
            f'root ::= " "? ({choice}) (han [，、]?){{1,{room}}} "{QUESTION_MARKS["zh"]}"\n'
            "han ::= [\\u4e00-\\u9fff]\n"
        )
    if limit < 2:
        raise ValueError(f"a question needs a limit of at least 2 words, not {limit}")
    choice = " | ".join(f'"{o}"' for o in _QUESTION_OPENERS["en"])
    return (
        f'root ::= " "? ({choice}) (sep word){{1,{limit - 1}}} "{QUESTION_MARKS["en"]}"\n'
        f"word ::= {_GBNF_WORD}\n"
        f"part ::= {_GBNF_PART}\n"
        'sep ::= [,;:]? " "\n'
    )


def fit_question(text: str, limit: int, *, ended: bool) -> Fitted:
    """A point of information: one question within LIMIT units — the first the speaker
    asked; a reply that asks none is fitted as any turn and flagged."""
    text = text.strip()
    question = first_question(text, limit, final=True)
    if question is not None:
        return Fitted(question, length_units(question), cut=question != text)
    fitted = fit(text, limit, ended=ended)
    flag = "; ".join(f for f in (fitted.flag, "not a question") if f)
    return Fitted(fitted.text, fitted.length, fitted.cut, flag)


def fit(text: str, limit: int, *, ended: bool) -> Fitted:
    """TEXT within LIMIT units, ending on a complete sentence. ENDED: the speaker finished
    the reply itself (its last sentence may then lack a full stop); otherwise it was stopped
    (by the limit or the token budget) and a half-said sentence is dropped. A first sentence
    longer than the limit is cut at the limit, marked with an ellipsis, and flagged."""
    text = text.strip()
    units = list(_UNIT.finditer(text))
    if len(units) <= limit and (ended or ends_sentence(text)):
        return Fitted(text, len(units))
    # A quotation still open where the speaker was stopped was cut off, not a stray mark:
    # the cut falls before the sentence that quotes, never inside the quotation.
    end = complete_prefix(text, limit, final=ended)
    if end:
        kept = text[:end].rstrip()
        return Fitted(kept, length_units(kept), cut=True)
    if not units:
        return Fitted(text, 0)
    stop = units[min(limit, len(units)) - 1].end()
    kept = text[:stop].rstrip(" ,;:—-") + ELLIPSIS
    reason = (
        f"one sentence longer than the limit of {limit}: cut at the limit"
        if len(units) > limit
        else "stopped in the middle of its first sentence"
    )
    return Fitted(kept, length_units(kept), cut=True, flag=reason)


def speech_checks(text: str, motion: str, *, min_units: int = 25) -> dict[str, bool]:
    """Is a speech substantial, on the motion, and not a repeated phrase?"""
    return {
        "substantial": length_units(text) >= min_units,
        "on_topic": bool(content_terms(text) & content_terms(motion)),
        "not_repetitive": bool(text.strip()) and degeneracy(text) is None,
    }


# -- voice: what the rulebooks forbid a speaker to say ----------------------------------

# A speech opening with a chatbot's manners rather than the speaker's case.
_PREAMBLE = re.compile(
    r"^\W*(?:as an? (?:ai|artificial|language model|assistant)|i(?:'m| am) an? (?:ai|language)"
    r"|sure\b|certainly\b|of course\b|absolutely\b|okay\b|ok\b|great question|here(?:'s| is)\b"
    r"|i apologi[sz]e|i'm sorry|sorry\b|作为一?(?:个|名)?(?:人工智能|ai|语言模型|助手)"
    r"|好的|当然|抱歉|对不起|以下是)",
    re.IGNORECASE,
)
# The prompt's own scaffolding echoed: "Proposition's speech this round:", "Rebuttal:".
_LABEL_TEXT = (
    r"\W*(?:the )?(?:proposition|opposition|devil'?s advocate|chair|speaker|participant \d+)"
    r"(?:'s)?[^.:\n]{0,40}?(?:speech|rebuttal|summary|attack|answer|question|response)"
    r"[^.:\n]{0,30}:[ \t]*|\W*(?:speech|rebuttal|summary|answer|question|response|opening)"
    r"[ \t]*:[ \t]*|\W*(?:正方|反方|主席|魔鬼辩手|魔鬼代言人)[^。：:\n]{0,12}?"
    r"(?:发言|陈词|反驳|总结|提问|回答)[ \t]*[:：][ \t]*"
)
_LABEL = re.compile(r"^" + _LABEL_TEXT, re.IGNORECASE)
# The same label at the start of a later line: the record's layout copied into the speech.
_LINE_LABEL = re.compile(r"(?<=\n)[ \t]*(?:" + _LABEL_TEXT + r")", re.IGNORECASE)
# A line that is only a stage direction: "*clears throat*", "(Applause)", "[pauses]".
_STAGE = re.compile(r"(?m)^[ \t]*(?:\*[^*\n]{1,60}\*|\([^)\n]{1,60}\)|\[[^\]\n]{1,60}\])[ \t]*$")
# Template placeholders: "[Your Name]", "[Insert point]", "[Opponent's name]"; never a
# passage's id cited ("[topic-notes.md ¶2]": an id holds a ¶).
_PLACEHOLDER = re.compile(
    r"\[(?![^\]\n]*¶)(?:your|my|insert|speaker|opponent|name|date|topic)[^\]\n]{0,40}\]",
    re.IGNORECASE,
)
# A speaker describing the debate instead of speaking in it.
_ABOUT_DEBATE = re.compile(
    r"^\W*(?:(?:in|throughout|during) (?:this|the|today's) debate\b|(?:this|the|today's) debate"
    r" (?:is|was|will|has|had|centers|centres|revolves|begins|began|continues|ends|ended|focuses"
    r"|opens|opened)\b|(?:在)?(?:这场|本场|本次|今天的)辩论(?:中|里|上)?[，,])",
    re.IGNORECASE,
)
_NARRATING_VERBS = (
    r"(?:argues|argued|says|said|states|stated|will|would|responds|responded|begins|began|"
    r"claims|claimed|opens|opened|concludes|concluded|notes|noted|points out|pointed out|"
    r"presents|presented|rebuts|rebutted|counters|countered|believes|maintains|asserts)\b"
)
COPY_SPAN = {"en": 10, "zh": 20}  # words (字) in a row taken from another speaker: copying


@dataclass(frozen=True)
class Voice:
    """What a turn may not say beyond what no turn may: a seat that speaks for a side
    (OWN: what it is called) narrates when it speaks of the debate or of itself in the third
    person; COPIED: the spans of COPY_SPAN units of what the other seats said."""

    language: str = "en"
    own: tuple[str, ...] = ()
    copied: frozenset[tuple[str, ...]] = frozenset()

    @property
    def speaks_for_a_side(self) -> bool:
        return bool(self.own)


PLAIN_VOICE = Voice()  # an English turn of a seat that speaks for no side, after no one


def voice_for(
    side: tuple[str, ...], language: str, others: Sequence[str] = (), motion: str = ""
) -> Voice:
    """The voice rules of a turn in a debate in LANGUAGE, after the OTHERS' turns, of a seat
    whose SIDE names are what it is called in the third person (the format's cast declares
    them: `Cast.sides`); none: it speaks for no side."""
    if not side:  # a chair, judge or summariser may quote any speaker: that is its job
        return Voice(language)
    return Voice(language, side, copy_spans(others, language, motion))


def shared_text(motion: str, evidence: object = ()) -> str:
    """What every seat is given alike: the motion and the shared evidence (each a mapping
    with a `text`, as a step's `evidence` variable and a saved debate's params hold it).
    Words copied from it are nobody's: the copying rule passes them, as it does the motion."""
    texts = [motion]
    if isinstance(evidence, list | tuple):
        texts += [
            e["text"] for e in evidence if isinstance(e, dict) and isinstance(e.get("text"), str)
        ]
    return "\n".join(texts)


def _units(text: str) -> list[str]:
    return [u.lower() for u in _UNIT.findall(text)]


def _spans(units: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(units[i : i + n]) for i in range(len(units) - n + 1)}


def copy_spans(texts: Sequence[str], language: str, motion: str = "") -> frozenset[tuple[str, ...]]:
    """Every run of COPY_SPAN units in TEXTS, but those the motion holds (quoting the motion
    is not copying a speaker)."""
    n = COPY_SPAN.get(language, COPY_SPAN["en"])
    spans: set[tuple[str, ...]] = set()
    for text in texts:
        spans |= _spans(_units(text), n)
    return frozenset(spans - _spans(_units(motion), n))


_LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}
_CITED = re.compile(r"\[[^\[\]\n]*¶[^\[\]\n]*\]|【[^【】\n]*¶[^【】\n]*】")


def foreign(sentence: str, language: str) -> str | None:
    """The language a SENTENCE of a debate in LANGUAGE is in instead, when it is mostly in
    another: Latin-script words in a Chinese debate, Chinese characters in an English one.
    A term or two (a name, "AI", "GDP") is not a change of language, nor is a passage's id
    cited (`[board-pack.pdf p.2 ¶2]`: a file's name, in whatever language it has)."""
    sentence = _CITED.sub(" ", sentence)
    han = len(_HAN.findall(sentence))
    latin = len(re.findall(r"[A-Za-z]{2,}", sentence))
    if language == "zh" and latin >= 3 and latin > han:
        return "English"
    if language == "en" and han >= 3 and han > latin:
        return "Chinese"
    return None


def sentence_problem(sentence: str, voice: Voice) -> str | None:
    """Why a complete SENTENCE may not stand in a turn with VOICE, or None."""
    if _PLACEHOLDER.search(sentence):
        return "placeholder"
    if voice.speaks_for_a_side:
        if _ABOUT_DEBATE.match(sentence):
            return "narration"
        own = "|".join(re.escape(name) for name in voice.own)
        third_person = rf"^\W*(?:the |this )?(?:{own})(?: speaker| side| team| bench)?,? "
        if re.match(third_person + _NARRATING_VERBS, sentence, re.IGNORECASE) or any(
            re.match(rf"^\W*{re.escape(name)}(?:认为|指出|表示|将会|辩手)", sentence)
            for name in voice.own
            if _HAN.search(name)
        ):
            return "narration"
    if voice.copied:
        n = COPY_SPAN.get(voice.language, COPY_SPAN["en"])
        # An attributed quotation is kept as said; the rest of its sentence is the speaker's.
        if any(_spans(_units(part), n) & voice.copied for part in _unquoted(sentence)):
            return "copied"
    return None


_REMOVED = {
    "placeholder": "placeholder removed",
    "narration": "narration removed",
    "copied": "the other side's words removed",
}


def opening_problem(text: str, voice: Voice = PLAIN_VOICE) -> tuple[str, str] | None:
    """What is wrong with how TEXT opens, once its first sentence is complete: its kind
    ("voice", or "language": the redraw reminders' kinds) and what to say of it."""
    head = text.lstrip()
    if _LABEL.match(head):
        return "voice", "it echoed the prompt's labels"
    if _PREAMBLE.match(head):
        return "voice", "it opened with a chatbot's preamble"
    end = next(iter(sentence_ends(head)), len(head))
    first = head[:end]
    problem = sentence_problem(first, voice)
    if problem:
        return "voice", {
            "placeholder": "it opened with a template placeholder",
            "narration": "it narrated the debate instead of speaking in it",
            "copied": "it opened with the other side's words",
        }[problem]
    drift = foreign(first, voice.language)
    if drift:
        return "language", f"it opened in {drift}"
    return None


def opening_manner(text: str) -> str | None:
    """How TEXT opens when it is not with the speaker's case: "labels" (the prompt's own,
    echoed) or "preamble" (a chatbot's manners); None when neither."""
    head = text.lstrip()
    if _LABEL.match(head):
        return "labels"
    if _PREAMBLE.match(head):
        return "preamble"
    return None


def labelled_line(text: str) -> bool:
    """Does a later line of TEXT open with the prompt's labels (the record's layout copied)?"""
    return _LINE_LABEL.search(text) is not None


def first_sentence_end(text: str) -> int:
    """Where the first sentence of TEXT ends; 0 while it is not complete."""
    return next(iter(sentence_ends(text)), 0)


def clean_voice(
    text: str, *, final: bool = False, voice: Voice = PLAIN_VOICE
) -> tuple[str, list[str]]:
    """TEXT with what the rulebooks forbid cut out where a clean cut exists: echoed labels
    and preamble sentences at the start, labels and stage directions on lines of their own,
    and whole sentences that hold a placeholder, narrate (a seat speaking for a side) or copy
    the other side. Returns the text and what was cut. Only whole sentences (lines) are
    dropped, so a prefix of a text cleans to a prefix; FINAL: the text is all said, its last
    fragment is judged too."""
    cut: list[str] = []

    def note(what: str) -> None:
        if what not in cut:
            cut.append(what)

    text = text.lstrip()
    label = _LABEL.match(text)
    if label:
        text = text[label.end() :]
        note("echoed prompt labels removed")
    while _PREAMBLE.match(text):
        end = next(iter(sentence_ends(text, final=final)), 0)
        if not end and final:  # all the rest is the preamble, never finished
            text = ""
            note("preamble removed")
        if not end:
            break  # the sentence is not complete yet
        text = text[end:].lstrip()
        note("preamble removed")
    text, labels = _LINE_LABEL.subn("", text)
    if labels:
        note("echoed prompt labels removed")
    # A stage direction is judged once its line has ended (or the text has).
    complete = text if final else text[: text.rfind("\n") + 1]
    stripped, stages = _STAGE.subn("", complete)
    if stages:
        text = stripped + text[len(complete) :]
        note("stage directions removed")
    kept, start = [], 0
    for end in sentence_ends(text, final=final):  # whole sentences, their quotations whole
        sentence = text[start:end]
        problem = sentence_problem(sentence, voice)
        if problem:
            note(_REMOVED[problem])
        else:
            kept.append(sentence)
        start = end
    rest = text[start:]  # the sentence still being said: judged once it is complete
    if final and rest.strip():
        problem = sentence_problem(rest, voice)
        if problem:
            rest = ""
            note(_REMOVED[problem])
    kept.append(rest)
    return "".join(kept).lstrip(), cut


def foreign_opening(text: str, language: str, *, final: bool = False) -> tuple[int, str] | None:
    """Where the run of complete sentences in another language that opens TEXT ends, and
    which language it is; None when TEXT opens in LANGUAGE (or has no sentence yet)."""
    end, drift = 0, None
    for stop in sentence_ends(text, final=final):
        found = foreign(text[end:stop], language)
        if not found:
            break
        end, drift = stop, found
    return (end, drift) if drift else None


def drift_point(text: str, language: str, *, final: bool = False) -> tuple[int, str] | None:
    """Where TEXT, a turn of a debate in LANGUAGE, first changes language in a complete
    sentence, and into which; None if it never does."""
    start = 0
    for end in sentence_ends(text, final=final):
        drift = foreign(text[start:end], language)
        if drift:
            return start, drift
        start = end
    return None


# -- quotation: the other side's words, quoted and said to be theirs ---------------------

# Who a quotation is said to be from: the other side, a seat by its name, "you".
_SPEAKER = (
    r"(?:you|your (?:side|team|bench)|they|he|she|(?:my|our) (?:learned |honou?rable )?"
    r"(?:opponents?|friends?|colleagues?)|(?:the |our |my )?(?:other side|other team|opposing"
    r" (?:side|team|bench)|opposition|proposition|government|devil'?s advocate|proposer|"
    r"challenger|(?:previous|last|first) speaker|chair|judge|summari[sz]er|synthesi[sz]er|"
    r"(?:participant|debater) \w+))"
)
_SAYS = (
    r"(?:said|says?|told us|tells us|told|claimed|claims?|argued|argues?|stated|states?|"
    r"asserted|asserts?|insisted|insists?|maintained|maintains?|suggested|suggests?|wrote|"
    r"writes?|puts? it|put this|called it|calls? it|contended|contends?|declared|declares?|"
    r"admitted|admits?|conceded|concedes?|asked|asks?|warned|warns?|promised|promises?|"
    r"described|describes?|believes?|believed|thinks?|thought|holds?|held|noted|notes?|"
    r"points? out|pointed out|quoted|quotes?|insisted|reminded us|reminds us)"
)
_ZH_SPEAKER = (
    r"(?:对方辩友|对方|你方|贵方|您|你们|你|正方|反方|提议方|挑战方|魔鬼辩手|魔鬼代言人|主席|"
    r"评委|裁判|参与者\s*\d+|辩手\s*\w|(?:前|上)一位(?:发言者|辩手)|他们|他|她)"
)
_ZH_SAYS = (
    r"(?:所说|所言|所讲|说|讲|认为|指出|表示|声称|提到|主张|强调|坚持|承认|宣称|断言|问道|"
    r"提出|写道|称|的原话|的话|的说法|的观点)"
)
_ATTRIBUTION = re.compile(
    rf"\b{_SPEAKER}(?:'s)?(?:\s+\w+){{0,3}}?\s+{_SAYS}\b|\b{_SAYS}\s+(?:by\s+)?{_SPEAKER}\b"
    rf"|\baccording to {_SPEAKER}\b|\bin {_SPEAKER}(?:'s?|r)? (?:own )?words\b"
    r"|\bwe (?:were|have been|are being) told\b"
    rf"|{_ZH_SPEAKER}[^，,。；;：:！？]{{0,6}}?{_ZH_SAYS}|(?:正如|如|按照|根据|用){_ZH_SPEAKER}",
    re.IGNORECASE,
)
# A quotation's bound: each at most this many words (字); past it, or past a third of the
# turn all together (or one bound's worth in a shorter turn), the turn is flagged.
QUOTE_BOUND = {"en": 30, "zh": 60}
QUOTED_AT_LENGTH = "quoted at length"


def _quoted(sentence: str) -> list[tuple[int, int]]:
    """Where the text inside each outermost pair of quotation marks of SENTENCE lies."""
    spans: list[tuple[int, int]] = []
    stack: list[str] = []
    start = 0
    for m in _NESTING.finditer(sentence):
        before = sum(c in _QUOTE_CLOSERS for c in stack)
        _nest(sentence, m.start(), stack)
        after = sum(c in _QUOTE_CLOSERS for c in stack)
        if not before and after:
            start = m.end()
        elif before and not after:
            spans.append((start, m.start()))
    return spans


def quotations(sentence: str) -> list[tuple[int, int]]:
    """Where the quotations of SENTENCE lie, when it says whose words they are ("you said",
    "as the Opposition put it", 对方说, 正方认为): a quotation kept as said, not copying.
    Empty when it quotes nothing, or says of no one that the words are theirs."""
    spans = _quoted(sentence)
    if not spans:
        return []
    rest, at = [], 0
    for start, end in spans:
        rest.append(sentence[at:start])
        at = end
    rest.append(sentence[at:])
    return spans if _ATTRIBUTION.search(" … ".join(rest)) else []


def _unquoted(sentence: str) -> list[str]:
    """SENTENCE in the parts outside its attributed quotations (all of it when none)."""
    parts, at = [], 0
    for start, end in quotations(sentence):
        parts.append(sentence[at:start])
        at = end
    parts.append(sentence[at:])
    return parts


def sentences(text: str, *, final: bool = True) -> list[str]:
    """TEXT in its sentences (`sentence_ends`), the words after the last end as one more."""
    found, start = [], 0
    for end in sentence_ends(text, final=final):
        found.append(text[start:end])
        start = end
    if text[start:].strip():
        found.append(text[start:])
    return found


def quoted_at_length(text: str, voice: Voice) -> bool:
    """Does TEXT, a turn of a seat that speaks for a side, quote past the bound: one
    quotation of more than QUOTE_BOUND words (字), or all of them together more than a
    third of the turn (one bound's worth in a shorter turn)? It is kept, and flagged."""
    return over_quoted(text, voice) is not None


def over_quoted(text: str, voice: Voice) -> str | None:
    """`quoted_at_length`'s finding as `moot check` words it ("quoted at length: …", the
    longest quotation and all of them against the turn's length), or None within bounds."""
    if not voice.speaks_for_a_side:
        return None
    bound = QUOTE_BOUND.get(voice.language, QUOTE_BOUND["en"])
    quoted = [
        length_units(sentence[start:end])
        for sentence in sentences(text)
        for start, end in quotations(sentence)
    ]
    length = length_units(text)
    if not (any(n > bound for n in quoted) or sum(quoted) > max(bound, length // 3)):
        return None
    return f"{QUOTED_AT_LENGTH}: {max(quoted)} in one quotation, {sum(quoted)} of {length} in all"


# -- substance: a structured reply's prose must say something ---------------------------

MIN_PROSE_UNITS = {"en": 2, "zh": 3}  # words (字): "yes", "ok", "同意" say nothing


def hollow(reply: BaseModel) -> str | None:
    """What of a structured REPLY says nothing: a prose field (a reason, a summary, a point)
    of one word (or two 字), or one phrase repeated. None when every one says
    something."""
    schema = reply.model_json_schema()
    return _hollow(reply.model_dump(), schema, schema.get("$defs", {}), "")


def _hollow(value: Any, node: dict[str, Any], defs: dict[str, Any], where: str) -> str | None:
    if "$ref" in node:
        node = defs.get(node["$ref"].split("/")[-1], {})
    for option in node.get("anyOf", ()):
        if option.get("type") == _json_type(value):
            node = option
    if isinstance(value, dict):
        props = node.get("properties", {})
        for key, item in value.items():
            found = _hollow(item, props.get(key, {}), defs, f"{where}.{key}".lstrip("."))
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _hollow(item, node.get("items", {}), defs, f"{where}.{i}")
            if found:
                return found
    elif isinstance(value, str) and node.get("maxLength", 0) > PROSE_CHARS:
        if says_nothing(value):
            return f"{where} says nothing: {value!r}"
        if degeneracy(value):
            return f"{where} repeats one phrase"
    return None


def says_nothing(text: str) -> bool:
    """Is TEXT, a prose field, too short to say anything: fewer than MIN_PROSE_UNITS words
    (字) that hold a letter?"""
    return words_said(text) < MIN_PROSE_UNITS["zh" if _HAN.search(text) else "en"]


def words_said(text: str) -> int:
    """TEXT's units of length that hold a letter (or are 字): "1,2,4,8" says nothing."""
    return sum(1 for unit in _UNIT.findall(text) if any(c.isalpha() for c in unit))


def _json_type(value: Any) -> str:
    return {str: "string", list: "array", dict: "object", bool: "boolean"}.get(
        type(value), "number"
    )
