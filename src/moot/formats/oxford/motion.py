"""The Oxford motion: a bare topic, a yes/no question or an imperative worded as "This House
…" (Chinese: "本院认为…"), so that the Proposition has a claim to defend.

A question is turned into the statement it asks about ("Should cities ban cars?" → "cities
should ban cars") by moving its auxiliary after its subject. Finding the subject needs no
tagger: it ends where the predicate opens, and a predicate opens on a word of a few kinds
(a base verb after "should", "does" or "can"; an article, an adjective, a participle or a
comparative after "is"). The word lists below are those kinds as debate motions use them.
An open question ("What is…?", "如何…？") takes no side, so it is refused rather than guessed.
"""

from __future__ import annotations

import re

from moot.errors import UsageError

# Auxiliaries that open a yes/no question, by what follows their subject.
_MODALS = {"should", "must", "can", "could", "will", "would", "may", "might", "shall", "ought"}
_DO = {"do", "does", "did"}
_BE = {"is", "are", "was", "were", "am"}
_HAVE = {"has", "have", "had"}
_AUXILIARIES = _MODALS | _DO | _BE | _HAVE
_NEGATED = {"can't": "can", "won't": "will", "shan't": "shall", "ain't": "is"}
_WH = {"what", "which", "who", "whom", "whose", "how", "when", "where"}

_PRONOUNS = {"i", "we", "you", "they", "he", "she", "it", "there", "one", "this", "that"}
_DETERMINERS = {
    "the", "a", "an", "this", "that", "these", "those", "our", "their", "his", "her", "its",
    "my", "your", "all", "every", "each", "some", "many", "most", "no", "any", "such",
}  # fmt: skip
_ADVERBS = {
    "not", "never", "ever", "really", "still", "always", "also", "actually", "finally",
    "now", "already", "just", "truly", "ultimately", "perhaps", "sometimes",
}  # fmt: skip
# Verbs a motion's predicate opens on (base form); -ise, -ize, -ify and -ate verbs are
# recognised by their ending.
_VERBS = set(
    """abandon abolish accept adopt allow apologise apologize arm ask attack avoid ban be
    become believe benefit block boycott break bring build buy cancel cap care cause censor
    change choose close come compensate compete condemn control cost create cure cut decide
    defend defund deliver deny deploy deserve destroy disarm divest do drive drop eat embrace
    encourage end enforce engage enjoy ensure enter exist expand explore extend face fail fear
    feel fight fix follow forbid force forgive free fund gain get give go govern grant grow
    guarantee halt harm have help hire hold hurt ignore impose improve include increase
    intervene invade invest join judge keep kill know lead learn leave lend let lift limit
    live lose lower make manage mandate matter mean meet move need offer open oppose outlaw
    outweigh own pardon pay permit play pose prefer prevent print prioritise prioritize
    prohibit promote protect provide punish pursue put raise reach read receive recognise
    recognize reduce reform refuse regret reject release remain remove repeal replace require
    resist respect restore restrict return reward rise run sanction save say scrap see seek
    sell send serve set share shift shut sign spend split stand start stay stop suffer
    support survive take tax teach tell thrive tolerate trade treat trust try turn undermine
    unite use value vote wage want wear welcome win work write""".split()
)
# Verbs that open an imperative topic ("Ban cars …" → "This House Would ban cars …"): policy
# verbs that are seldom the noun a statement opens on.
_IMPERATIVE = set(
    """abandon abolish adopt allow apologise apologize arm ban boycott build cancel cap censor
    compensate criminalise criminalize cut decriminalise decriminalize defund deny disarm
    divest end enforce expand extend forbid forgive free fund give grant impose introduce
    invade invest join leave legalise legalize let lift limit lower make mandate nationalise
    nationalize oppose outlaw pay permit privatise privatize prohibit protect punish raise
    recognise recognize reduce reform reject release remove repeal replace require restrict
    return sanction scrap stop subsidise subsidize support tax teach welcome withdraw""".split()
)
_PARTICIPLES = set(
    """been gone done made known seen given taken broken written built paid held kept left
    told sold found thought brought bought taught caught run come become begun beaten won
    lost fallen grown shown spent sent meant led""".split()
)
_ADJECTIVES = set(
    """good bad right wrong fair unfair free real true false dead alive safe worth necessary
    possible likely fit ready enough better worse best worst wise just moral immoral legal
    illegal inevitable obsolete sustainable essential compatible responsible guilty
    superior inferior preferable""".split()
)
_ADJECTIVE_ENDINGS = ("ous", "ful", "less", "ive", "able", "ible", "ic", "al")
_PREPOSITIONS = {"in", "on", "at", "for", "against", "from", "by", "with", "without", "beyond"}
_STATEMENT_VERBS = _AUXILIARIES | {"isn't", "aren't", "doesn't", "don't", "won't", "can't"}

_ABBREVIATIONS = {
    "thbt": "This House Believes That",
    "thw": "This House Would",
    "thr": "This House Regrets",
    "ths": "This House Supports",
    "tho": "This House Opposes",
    "thp": "This House Prefers",
}
_THIS_HOUSE = re.compile(r"^\s*this\s+house\b", re.IGNORECASE)


def normalise_motion(text: str, language: str) -> str:
    """The motion as the Oxford rulebook words it: "This House …" / "本院…" kept, a question
    or an imperative made a grammatical motion, a bare topic prefixed "This House Believes
    That" / "本院认为"."""
    motion = " ".join(text.split())
    if language == "zh":
        return _chinese(motion)
    head, _, rest = motion.partition(" ")
    if head.lower().rstrip(":") in _ABBREVIATIONS and rest:
        return f"{_ABBREVIATIONS[head.lower().rstrip(':')]} {rest}"
    if _THIS_HOUSE.match(motion):
        return motion
    body = motion.rstrip("?？!. ").strip()
    words = body.split()
    if not words:
        return motion
    first = _bare(words[0])
    if first == "whether" and len(words) > 1:  # "Whether cities should ban cars"
        return "This House Believes That " + " ".join(words[1:])
    if first == "why" and len(words) > 2 and _aux(words[1]):
        return "This House Believes That " + _statement_or_self(words[1:], motion)
    asks = motion.endswith(("?", "？")) or (len(words) > 1 and _aux(words[1]) is not None)
    if first in _WH and asks:  # not "When in Rome, do as the Romans do"
        raise UsageError(key="formats.oxford.motion.open_question_motion_takes_side", motion=motion)
    if _aux(words[0]):
        return "This House Believes That " + _statement_or_self(words, motion)
    if first in _IMPERATIVE and len(words) > 1 and not _states(words):
        return "This House Would " + _lower_first(body)
    return "This House Believes That " + motion.rstrip("?？")


def _bare(word: str) -> str:
    return word.lower().replace("’", "'").strip(",;:\"'“”")


def _aux(word: str) -> str | None:
    """The auxiliary WORD is (its negation dropped: a negative question asks the positive
    claim, "Shouldn't we …?" → "we should …"), or None."""
    bare = _bare(word)
    if bare in _NEGATED:
        return _NEGATED[bare]
    if bare.endswith("n't") and bare[:-3] in _AUXILIARIES:
        return bare[:-3]
    return bare if bare in _AUXILIARIES else None


def _states(words: list[str]) -> bool:
    """Whether WORDS, opening on a verb, are a statement all the same: they hold an
    auxiliary ("Work is …"), or a plural noun and a verb follow the first word ("Tax cuts
    help …")."""
    bare = [_bare(w) for w in words]
    if any(w in _STATEMENT_VERBS for w in bare[1:]):
        return True
    return len(bare) > 2 and bare[1].endswith("s") and bare[2] in _VERBS


def _statement_or_self(words: list[str], motion: str) -> str:
    said = _statement(words)
    return said if said else motion.rstrip("?？")


def _statement(words: list[str]) -> str | None:
    """The yes/no question WORDS (auxiliary first) as the statement it asks about."""
    aux = _aux(words[0])
    rest = words[1:]
    if aux is None or len(rest) < 2:
        return None
    split = _subject_end(aux, rest)
    subject, predicate = rest[:split], rest[split:]
    if aux == "does" and predicate and _is_verb(_bare(predicate[0])):
        verb = _third_person(predicate[0])
        return " ".join([*subject, verb, *predicate[1:]])
    if aux == "do" and predicate and _is_verb(_bare(predicate[0])):
        return " ".join([*subject, *predicate])
    if aux == "ought" and predicate and _bare(predicate[0]) != "to":
        aux = "ought to"
    return " ".join([*subject, aux, *predicate])


def _subject_end(aux: str, words: list[str]) -> int:
    """Where the subject of a question's WORDS (after its auxiliary) ends."""
    if _bare(words[0]) in _PRONOUNS:
        return 1
    lowered = [_bare(w) for w in words]
    opens = _opens_verb if aux in _MODALS | _DO else _opens_complement
    for i in range(1, len(words)):
        if _subject_ok(lowered[:i]) and opens(lowered, i, aux):
            return i
    if aux in _BE:
        for i in range(1, len(words)):
            if _subject_ok(lowered[:i]) and lowered[i] in _PREPOSITIONS:
                return i
        return len(words) - 1  # "Is free speech absolute" → "free speech is absolute"
    return 2 if lowered[0] in _DETERMINERS else 1


def _subject_ok(subject: list[str]) -> bool:
    """A subject holds a word that is not a determiner ("the" alone is not one)."""
    return any(w not in _DETERMINERS for w in subject)


def _opens_verb(words: list[str], i: int, aux: str) -> bool:
    """Whether the predicate after a modal or "do" opens at WORDS[i]: a base verb, or an
    adverb before one; not a noun like "use" in "drug use be …"."""
    word = words[i]
    following = words[i + 1] if i + 1 < len(words) else ""
    if word in _ADVERBS:
        return True
    if following in ("be", "been"):
        return word in ("not", "never")
    return _is_verb(word)


def _is_verb(word: str) -> bool:
    """Whether WORD is a base verb a predicate opens on."""
    return word in _VERBS or (len(word) > 5 and word.endswith(("ise", "ize", "ify", "ate")))


def _opens_complement(words: list[str], i: int, aux: str) -> bool:
    """Whether the complement after "is" or "has" opens at WORDS[i]: an article, an adverb,
    a participle, a comparative before "than", a word ending in -ing (not the first of two),
    an adjective before a preposition."""
    word = words[i]
    following = words[i + 1] if i + 1 < len(words) else ""
    if aux in _HAVE:
        return word in _PARTICIPLES or word.endswith("ed") or word in _ADVERBS
    if word in ("a", "an", "the", "more", "less", "too", "so", "very") or word in _ADVERBS:
        return True
    if following == "than" or word in _PARTICIPLES:
        return True
    if word.endswith("ing") and not following.endswith("ing"):
        return True
    if word.endswith(("ed", "en")) and len(word) > 4 and not following.endswith("ing"):
        return word not in ("children", "women", "citizen", "garden", "kitchen")
    adjective = word in _ADJECTIVES or word.endswith(_ADJECTIVE_ENDINGS)
    return adjective and (not following or following in _PREPOSITIONS | {"to", "than"})


def _third_person(verb: str) -> str:
    """VERB as "it …" says it: harm → harms, do → does, have → has, carry → carries."""
    bare = verb.lower()
    irregular = {"have": "has", "be": "is", "do": "does", "go": "goes"}
    if bare in irregular:
        return irregular[bare]
    if bare.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if bare.endswith("y") and len(bare) > 1 and bare[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _lower_first(text: str) -> str:
    """TEXT with its first word lower-cased, unless it is an acronym ("UN")."""
    head, sep, rest = text.partition(" ")
    return (head if head.isupper() and len(head) > 1 else head.lower()) + sep + rest


# -- Chinese ------------------------------------------------------------------------------

# A-not-A questions ("应不应该") ask the positive: the affirmative form replaces them.
_A_NOT_A = (
    ("应不应该", "应该"), ("应不应当", "应当"), ("该不该", "应该"), ("可不可以", "可以"),
    ("需不需要", "需要"), ("要不要", "要"), ("能不能", "能"), ("会不会", "会"),
    ("是不是", "是"), ("有没有", "有"), ("允不允许", "允许"), ("值不值得", "值得"),
    ("能否", "能"), ("可否", "可以"), ("是否", ""),
)  # fmt: skip
_ZH_OPEN = re.compile(r"什么|如何|怎么|怎样|哪|谁|多少|为何")
_ZH_PARTICLE = re.compile(r"(?:吗|呢|(?<![什怎这那多])么)$")


def _chinese(motion: str) -> str:
    if motion.startswith("本院"):
        return motion
    body = motion.rstrip("？?。！! ")
    asked = motion.endswith(("？", "?")) or bool(_ZH_PARTICLE.search(body))
    body = _ZH_PARTICLE.sub("", body)
    if body.startswith("请问"):
        body, asked = body[2:], True
    if body.startswith("难道"):  # a rhetorical question asks the positive: "难道不应…吗"
        body, asked = re.sub(r"不(?=应|该|能|会|是|要|可)", "", body[2:], count=1), True
    for question, affirmative in _A_NOT_A:
        if question in body:
            body, asked = body.replace(question, affirmative, 1), True
    if asked and _ZH_OPEN.search(motion):
        raise UsageError(
            key="formats.oxford.motion.open_question_motion_takes_side_2", motion=motion
        )
    return "本院认为" + (body or motion.rstrip("？?"))
