"""The stream filter: what of a streamed reply is shown, and when its model is stopped.

A `Reply` tells a reply's reasoning from its answer; a `Stream` holds a speech's answer to its
limit and the rulebooks' voice as it streams, so that nothing the live view shows is ever
taken back, says when a draw must be made again (`rejected`), and fits the finished turn to
its limit (`finish`). `token_budget`: the tokens a speech of a limit is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from moot.engine.rules import (
    PLAIN_VOICE,
    QUOTED_AT_LENGTH,
    Fitted,
    Voice,
    clean_voice,
    complete_prefix,
    drift_point,
    first_question,
    first_sentence_end,
    fit,
    fit_question,
    foreign,
    foreign_opening,
    length_units,
    opening_problem,
    quoted_at_length,
)
from moot.events import Event, Token
from moot.inference.protocol import ChatModel, Completion
from moot.inference.reasoning import Splitter

# Text whose tokens per word (per 字) tell how a model's tokenizer counts a language.
_SAMPLES = {
    "en": "We hold that cities should ban private cars from their centres. Streets would be "
    "safer, the air cleaner, and buses faster; shops gain when people walk past them.",
    "zh": "我们认为城市中心应当禁止私家车。街道会更安全，空气更干净，公交更快；"
    "行人经过时，商店也会受益。",
}
_DEFAULT_TOKENS_PER_UNIT = {"en": 1.5, "zh": 2.0}


def token_budget(model: ChatModel, limit: int, language: str) -> int:
    """Tokens enough for LIMIT words (字) in LANGUAGE with MODEL's tokenizer, with room to
    finish the sentence; generation stops at the limit anyway, so room costs nothing."""
    count = getattr(model, "text_tokens", None)
    sample = _SAMPLES.get(language, _SAMPLES["en"])
    if callable(count):
        per_unit = max(1.0, count(sample) / length_units(sample))
    else:
        per_unit = _DEFAULT_TOKENS_PER_UNIT.get(language, 1.5)
    return math.ceil(limit * per_unit * 1.3) + 16


class Stream:
    """A speech's text on its way to the live view. Without a limit it passes through; with
    one it is held back to whole sentences within the limit, cleaned of what the rulebooks
    forbid (a chatbot's preamble, echoed labels, placeholders, narration, the other side's
    words), so nothing shown is ever taken back; it tells the model to stop once the limit is
    passed, or once the speech changes language (it ends before that sentence). With VET, a
    reply that opens wrongly is stopped at its first sentence (`rejected` says why) to be
    drawn again."""

    def __init__(
        self,
        show: Callable[[str], None],
        limit: int | None,
        question: bool = False,
        *,
        vet: bool = False,
        voice: Voice = PLAIN_VOICE,
    ) -> None:
        self._show = show
        self._limit = limit
        self._question = question  # held back whole: the question may not be its first sentence
        self._vet = self._vetting = vet
        self._voice = voice
        self._units = "字" if voice.language == "zh" else "words"
        self._text = ""
        self._shown = 0
        self.rejected: str | None = None
        self.rejected_kind: str | None = None  # which redraw reminder fits: prompts' REDRAW_KINDS

    def restart(self) -> None:
        """What the stream took for the speech was the model's reasoning after all (a think
        block the chat template opened, found closed only now): the speech starts afresh."""
        self._text, self._shown, self.rejected, self._vet = "", 0, None, self._vetting

    def _view(self, text: str, *, final: bool = False) -> tuple[str, list[str], bool]:
        """What of TEXT may be shown, what was cleaned out, and whether it was cut where the
        speech changed language (after its first sentence)."""
        view, cleaned = clean_voice(text, final=final, voice=self._voice)
        opening = foreign_opening(view, self._voice.language, final=final)
        if opening:
            rest = view[opening[0] :].lstrip()
            if not rest and not final:
                return "", cleaned, False  # held back: the turn may yet change language
            if rest:  # a clean cut: the turn goes on in its own language
                view = rest
                cleaned.append(f"an opening in {opening[1]} removed")
        drift = drift_point(view, self._voice.language, final=final)
        if drift and drift[0] > 0:
            cleaned.append(f"changed into {drift[1]}: ended before it did")
            return view[: drift[0]].rstrip(), cleaned, True
        return view, cleaned, False

    def __call__(self, piece: str) -> bool:
        if self._limit is None:
            self._show(piece)
            return False
        self._text += piece
        # Vetted once its first sentence, or its first line, is complete: a reply of label
        # lines ("Question: …") may end no sentence before its limit.
        if self._vet and (first_sentence_end(self._text) or "\n" in self._text.lstrip()):
            self._vet = False
            fault = opening_problem(self._text, self._voice)
            if fault:
                self.rejected_kind, self.rejected = fault
                return True
        view, _, drifted = self._view(self._text)
        over = length_units(view) > self._limit
        if self._question:
            asked = first_question(view, self._limit) is not None
            if not asked and (over or drifted) and self._vetting:
                self.rejected = f"it asked no question within {self._limit} {self._units}"
                self.rejected_kind = "question"
            return asked or drifted or over
        end = complete_prefix(view, self._limit)
        if over and not end and not self._shown and self._vetting:
            # Nothing shown yet, and no sentence ends within the limit: draw again rather
            # than cut the one sentence in the middle.
            self.rejected = f"its first sentence ran past the limit of {self._limit}"
            self.rejected_kind = "long"
            return True
        if end > self._shown:
            self._show(view[self._shown : end])
            self._shown = end
        return drifted or over

    def asked_nothing(self, completion: Completion) -> str | None:
        """A point of information whose whole reply asks no question within its limit, on a
        draw that may be made again (nothing of it was shown: it is held back whole)."""
        if not (self._question and self._vetting and self._limit is not None):
            return None
        view = self._view(completion.text, final=True)[0]
        if first_question(view, self._limit, final=True) is None:
            return f"it asked no question within {self._limit} {self._units}"
        return None

    def finish(self, completion: Completion) -> tuple[Fitted, list[str]]:
        """The turn's text cleaned and fitted to the limit, and what was cleaned out or is
        wrong with it; what was held back of it is shown now."""
        if self._limit is None:
            return Fitted(completion.text.strip(), length_units(completion.text)), []
        view, cleaned, drifted = self._view(completion.text, final=True)
        if not length_units(view) and length_units(completion.text):
            # Every sentence broke a rule: nothing was shown, so the turn is kept as said.
            view = completion.text.strip()
            cleaned = ["every sentence broke the rulebook's voice rules: kept as said"]
        language = foreign(view, self._voice.language)
        if language:
            cleaned.append(f"in {language}, not the debate's language")
        ended = drifted or completion.finish_reason == "stop" and length_units(view) <= self._limit
        fitter = fit_question if self._question else fit
        fitted = fitter(view, self._limit, ended=ended)
        if quoted_at_length(fitted.text, self._voice):  # kept whole, never cut mid-quote
            cleaned.append(QUOTED_AT_LENGTH)
        shown = self._view(self._text)[0][: self._shown].strip()
        if fitted.text.startswith(shown) and len(fitted.text) > len(shown):
            self._show(fitted.text[len(shown) :])
        return fitted, cleaned


class Reply:
    """A reply's stream told apart: its reasoning goes to the live view flagged as such and
    nowhere else; its answer goes on to the speech's stream, which may stop the model."""

    def __init__(self, role: str, emit: Callable[[Event], None], answer: Stream) -> None:
        self._role, self._emit, self._answer = role, emit, answer
        self._splitter = Splitter()

    def __call__(self, piece: str) -> bool:
        for kind, text in self._splitter.feed(piece):
            if kind == "retract":
                self._answer.restart()
            if kind != "answer":
                self._emit(Token(self._role, text, reasoning=True))
            elif self._answer(text):
                return True
        return False
