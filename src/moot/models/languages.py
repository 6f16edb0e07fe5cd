"""Whether a debate's models were made for its language, as the catalog says: a word before
the debate, never a refusal (offline, nothing loaded or hashed)."""

from __future__ import annotations

from collections.abc import Iterable

from moot.errors import MootError
from moot.models import locate
from moot.models.catalog import ModelCard, load_catalog
from moot.words import words

UNKNOWN_SIZE = 2**63  # a card that gives no size is offered after those that do
NAMES = {"en": "English", "zh": "Chinese"}  # a catalog language, as a debate's words name it


def unsuited(refs: Iterable[str], language: str) -> list[ModelCard]:
    """The catalog models among REFS whose languages lack LANGUAGE, each once, in order. A
    model the catalog does not hold (a path, hf:…, another tool's, a server) is not judged:
    what it speaks is not known."""
    cards = load_catalog().cards
    found = [cards[ref] for ref in dict.fromkeys(refs) if ref in cards]
    return [card for card in found if language not in card.languages]


def suited(language: str) -> ModelCard | None:
    """The catalog model to offer for LANGUAGE: an installed one first, then the smallest."""
    speakers = [c for c in load_catalog().cards.values() if language in c.languages]
    return min(speakers, key=_preference, default=None)


def _preference(card: ModelCard) -> tuple[bool, int]:
    return not _installed(card), sum(card.size) or UNKNOWN_SIZE


def notices(refs: Iterable[str], language: str) -> list[str]:
    """A line in LANGUAGE for each model of REFS not made for it, naming one that is."""
    lacking = unsuited(refs, language)
    if not lacking:  # the usual case: no installed model is looked for
        return []
    said = words(language)
    other = suited(language)
    lines = []
    for card in lacking:
        instead = said.say("made_for", other=other.id) if other else ""
        speaks = said.say("seat_list").join(said.shown(NAMES.get(c, c)) for c in card.languages)
        lines.append(said.say("not_made_for", model=card.id, speaks=speaks, instead=instead))
    return lines


def _installed(card: ModelCard) -> bool:
    try:
        locate.find(locate.Target(id=card.id, card=card))
    except (MootError, OSError):
        return False
    return True
