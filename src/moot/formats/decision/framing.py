"""Phase 0 of the decision format: positions read off the topic, the seats, the proposal
shown to the user, and the corrections they type back.

Reading "X vs Y vs Z" or "X 还是 Y" needs no model; only freer phrasing is left to one.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace

from moot.engine.turns import Engine
from moot.errors import Phrase, UsageError
from moot.formats.decision.document import PROPOSAL, SEAT_MARKS, label
from moot.formats.decision.schemas import (
    MAX_POSITIONS,
    MAX_ROUNDS,
    POSITION_CHARS,
    PRESET_ROUNDS,
    PRESETS,
    SCOPE_CHARS,
    TIE,
    DecisionParams,
    Framing,
    token_budget,
)
from moot.words import words

SLOTS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class Plan:
    """What the debate will be: the user confirms it (or corrects it) before any speech."""

    topic: str
    positions: tuple[str, ...]
    out_of_scope: tuple[str, ...]
    preset: str
    rounds: int


@dataclass(frozen=True)
class Seat:
    """One debater's slot, pinned to one position for the whole run."""

    slot: str  # "A" … "D"
    role: str  # "debater_a" …
    position: str
    pragmatist: bool = False

    def name(self, language: str) -> str:
        mark = SEAT_MARKS[self.slot]
        who = label(language, "debater", slot=self.slot)
        side = label(language, "pragmatist") if self.pragmatist else self.position
        return f"{mark} {who} · {side}"


def seats(plan: Plan, language: str) -> list[Seat]:
    """A, B, … one per position; a binary question gets the Pragmatist as slot C."""
    out = [Seat(s, f"debater_{s.lower()}", p) for s, p in zip(SLOTS, plan.positions, strict=False)]
    if len(plan.positions) == 2:
        a, b = plan.positions
        middle = label(language, "middle_ground", a=a, b=b)
        out.append(Seat("C", "debater_c", middle, pragmatist=True))
    return out


# -- checks -----------------------------------------------------------------------------


def count_problem(positions: tuple[str, ...]) -> Phrase | None:
    """Why these positions cannot be debated (wrong count, empty, duplicates), or None."""
    n = len(positions)
    named = ", ".join(positions)
    if n == 0:
        return Phrase("formats.decision.framing.no_positions")
    if n == 1:
        return Phrase("formats.decision.framing.one_position", positions=named)
    if n > MAX_POSITIONS:
        return Phrase("formats.decision.framing.too_many_positions", n=n, positions=named)
    if any(not p for p in positions):
        return Phrase("formats.decision.framing.position_empty")
    if len({p.casefold() for p in positions}) < n:
        return Phrase("formats.decision.framing.positions_repeat", positions=named)
    if any(p.casefold() == TIE for p in positions):
        return Phrase("formats.decision.framing.position_is_tie", tie=repr(TIE))
    if any(len(p) > POSITION_CHARS for p in positions):
        return Phrase("formats.decision.framing.position_too_long", n=POSITION_CHARS)
    return None


def refuse(problem: Phrase) -> UsageError:
    return UsageError(key="formats.decision.framing.refused", problem=problem)


def clean(items: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(" ".join(i.split()) for i in items if i.strip())


def plan_rounds(preset: str | None, rounds: int | None) -> tuple[str, int]:
    """The preset and the number of rebuttal rounds from --preset and --rounds.

    --rounds alone is the rulebook's custom length; with deep it sets deep's N; quick and
    standard have a fixed length, so a different --rounds with them is a contradiction.
    """
    if preset is not None and preset not in PRESETS:
        raise UsageError(
            key="formats.decision.framing.preset_not_one",
            field="params.preset",
            preset=preset,
            presets=", ".join(PRESETS),
        )
    if rounds is None:
        chosen = preset or "standard"
        return chosen, PRESET_ROUNDS[chosen]
    if preset is None:
        return "custom", rounds
    if preset in ("quick", "standard") and rounds != PRESET_ROUNDS[preset]:
        raise UsageError(
            key="formats.decision.framing.preset_has_rebuttal_round_s",
            field="params.rounds",
            preset=preset,
            preset_rounds=PRESET_ROUNDS[preset],
            rounds=rounds,
        )
    return preset, rounds


# -- positions from the topic's own words -----------------------------------------------

_EN_STRONG = re.compile(r"\s+(?:vs\.?|versus)\s+", re.IGNORECASE)
_EN_OR = re.compile(r"\s+or\s+", re.IGNORECASE)
_EN_BETWEEN = re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+)$", re.IGNORECASE)
# Where the context after the last option starts ("SQLite for a small app").
_EN_TAIL = re.compile(
    r"\s+(?:for|in|when|as|at|on|to|given|if|because|so|with|which|that|under)\b|[,;:?!(]"
)
# Where the context before the first option ends ("Should we use Postgres"); commas are
# left alone, since "React, Vue or Svelte" lists options with them.
_EN_HEAD = re.compile(
    r"^.*(?:[:;?]|\b(?:use|using|choose|choosing|pick|adopt|prefer|between|better to|"
    r"go with|switch to|move to|is it|should (?:we|i|you)))\s+",
    re.IGNORECASE,
)
# 或 alone, but not inside 或许 (perhaps) or 不可或缺 (indispensable).
_ZH_STRONG = re.compile(
    r"\s*(?:还是|或者|或是|对比|对阵|(?<![不可])或(?![许缺])|\bvs\.?|versus)\s*"
)
_ZH_WEAK = re.compile(r"\s*(?:与|和|跟|及)\s*")
_ZH_ASKS = re.compile(r"哪|谁|之间")
_ZH_TAIL = re.compile(r"哪|更|适合|用于|对于|作为|比较|好|的|，|,|？|\?|：|:|。|！")
_ZH_HEAD = re.compile(r"^.*(?:应该|应当|选择|采用|使用|[用选是要在：:，,])")
_LATIN_HEAD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 .+#_/-]*")
_LATIN_TAIL = re.compile(r"[A-Za-z0-9][A-Za-z0-9 .+#_/-]*$")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def parse_positions(text: str, language: str) -> tuple[str, ...] | None:
    """Options named in "X vs Y", "X or Y or Z", "X 还是 Y", "A和B哪个"; None if unsure."""
    topic = " ".join(text.split()).strip(" ?？!！.。")
    pieces = _zh_pieces(topic) if language == "zh" else _en_pieces(topic)
    if pieces is None or len(pieces) < 2:
        return None
    if language == "zh":
        found = _zh_trim(pieces)
        longest = 20 if all(_CJK.search(p) for p in found) else 40
        ok = all(0 < len(p) <= longest for p in found)
    else:
        found = _en_trim(pieces)
        ok = all(0 < len(p.split()) <= 6 for p in found)
    return found if ok and len({p.casefold() for p in found}) == len(found) else None


def _en_pieces(topic: str) -> list[str] | None:
    between = _EN_BETWEEN.search(topic)
    if between:
        return [*re.split(r"\s*,\s*", between.group(1)), between.group(2)]
    for sep in (_EN_STRONG, _EN_OR):
        pieces = sep.split(topic)
        if len(pieces) >= 2:
            # "React, Vue or Svelte": the commas before the last "or" list options too.
            head = [p for p in re.split(r"\s*,\s*", _EN_HEAD.sub("", pieces[0])) if p]
            return [*head, *pieces[1:]] if head else None
    return None


def _en_trim(pieces: list[str]) -> tuple[str, ...]:
    first, last = _EN_HEAD.sub("", pieces[0]), _EN_TAIL.split(pieces[-1])[0]
    out = [first, *pieces[1:-1], last]
    # Symmetry: an option is about as long as its neighbour ("Should we finally go monorepo").
    words = first.split()
    if len(words) > len(out[1].split()) + 2:
        out[0] = " ".join(words[-len(out[1].split()) :])
    return tuple(p.strip(" ,.;:\"'") for p in out)


def _zh_pieces(topic: str) -> list[str] | None:
    pieces = _ZH_STRONG.split(topic)
    if len(pieces) < 2:
        weak = _ZH_WEAK.split(topic)
        # 与/和 also join words inside one option ("分析和报表应用的数据库"): trust them only
        # when the topic asks which one, or is nothing but the two options.
        if len(weak) != 2:
            return None
        if not _ZH_ASKS.search(weak[1]) and _zh_trim(weak)[-1] != weak[1].strip():
            return None
        pieces = weak
    head = [p for p in re.split(r"\s*[、，,]\s*", pieces[0]) if p]
    return [*head, *pieces[1:]]


def _zh_trim(pieces: list[str]) -> tuple[str, ...]:
    first, last = pieces[0], pieces[-1]
    latin = _LATIN_TAIL.search(first)
    first = latin.group() if latin else _ZH_HEAD.sub("", first) or first
    latin = _LATIN_HEAD.match(last)
    last = latin.group() if latin else _ZH_TAIL.split(last)[0]
    return tuple(p.strip(" ,.;:，。；：\"'“”") for p in [first, *pieces[1:-1], last])


# -- the proposal and its corrections ---------------------------------------------------


def protocol(plan: Plan, language: str) -> str:
    words = PROPOSAL[language]
    steps = [words["openings"]]
    if plan.rounds:
        steps += [words["rebuttal"].format(n=plan.rounds), words["swap"]]
    return " → ".join([*steps, words["judge"]])


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def proposal(
    plan: Plan, team: list[Seat], models: dict[str, str], *, saved: bool, language: str
) -> str:
    """The Markdown the user confirms: positions, scope, team, preset, rounds, protocol, output."""
    w = PROPOSAL[language]
    rows = [
        f"| {_cell(s.name(language))} | "
        f"{_cell(label(language, 'pinned', position=s.position))} | {models.get(s.role, '?')} |"
        for s in team
    ]
    judge = f"| ⚖️ {label(language, 'judge')} | {label(language, 'judge_role')} |"
    rows.append(f"{judge} {models.get('judge', '?')} |")
    scope = "; ".join(plan.out_of_scope) or w["none"]
    return "\n".join(
        [
            f"## {w['title']}",
            "",
            f"- **{w['topic']}:** {plan.topic}",
            f"- **{w['positions']}:** {' | '.join(plan.positions)}",
            f"- **{w['scope']}:** {scope}",
            f"- **{w['preset']}:** {plan.preset} · **{w['rounds']}:** {plan.rounds}",
            f"- **{w['protocol']}:** {protocol(plan, language)}",
            f"- **{w['output']}:** {w['saved'] if saved else w['ephemeral']}",
            "",
            f"**{w['team']}**",
            "",
            w["columns"],
            "| --- | --- | --- |",
            *rows,
            "",
            w["help"],
        ]
    )


_FIELDS = {
    "positions": ("positions", "position", "立场", "选项"),
    "out_of_scope": ("out of scope", "out-of-scope", "out_of_scope", "scope", "范围外", "不讨论"),
    "preset": ("preset", "预设"),
    "rounds": ("rounds", "轮数"),
}
_CLEARS = {"none", "-", "—", "无", "没有"}


def apply_corrections(plan: Plan, reply: str) -> Plan:
    """The plan with the user's `field: value` corrections applied; UsageError if unreadable."""
    for part in re.split(r"[;\n；]", reply):
        if not part.strip():
            continue
        match = re.match(r"\s*([^:：]+)[:：](.*)$", part, re.DOTALL)
        field = _field(match.group(1)) if match else None
        if match is None or field is None:
            raise UsageError(
                key="formats.decision.framing.cannot_read_correction", part=part.strip()
            )
        plan = _apply(plan, field, match.group(2).strip())
    return plan


def _field(key: str) -> str | None:
    name = " ".join(key.split()).lower()
    return next((f for f, names in _FIELDS.items() if name in names), None)


def _apply(plan: Plan, field: str, value: str) -> Plan:
    items = clean(re.split(r"\s*[|｜]\s*", value)) if value.lower() not in _CLEARS else ()
    if field == "positions":
        positions = items
        if len(positions) == 1 and "," in value:  # "A, B, C" typed without bars
            positions = clean(value.split(","))
        problem = count_problem(positions)
        if problem:
            raise refuse(problem)
        return replace(plan, positions=positions)
    if field == "out_of_scope":
        if any(len(i) > SCOPE_CHARS for i in items):
            raise UsageError(
                key="formats.decision.framing.out_scope_item_longer_than", scope_chars=SCOPE_CHARS
            )
        return replace(plan, out_of_scope=items)
    if field == "preset":
        preset, rounds = plan_rounds(value.lower(), None)
        return replace(plan, preset=preset, rounds=rounds)
    if not value.isdigit() or int(value) > MAX_ROUNDS:
        raise UsageError(
            key="formats.decision.framing.rounds_not_number_from_0",
            value=value,
            max_rounds=MAX_ROUNDS,
        )
    preset = "deep" if plan.preset == "deep" and int(value) else "custom"
    return replace(plan, preset=preset, rounds=int(value))


# -- Phase 0 as a whole ------------------------------------------------------------------

MAX_ASKS = 5
ACCEPT = {"y", "yes", "ok", "accept", "是", "好", "确认"}


def frame(engine: Engine, topic: str, params: DecisionParams) -> Plan:
    """Phase 0: positions (given, read off the topic, or from the model), then confirmation."""
    lang = engine.language
    positions = params.positions or parse_positions(topic, lang)
    scope, doubt = params.out_of_scope, None
    if not positions:
        framing, _ = engine.structured(
            "judge",
            "framing",
            Framing,
            round=0,
            label=label(lang, "framing"),
            max_tokens=token_budget(Framing),
            topic=topic,
            language=lang,
        )
        positions = clean(framing.positions)
        scope = scope + tuple(s for s in clean(framing.out_of_scope) if s not in scope)
        if not framing.contested:
            doubt = UsageError(key="formats.decision.framing.not_contested", topic=topic)
    plan = Plan(topic, positions, scope, params.preset, params.rounds)
    # The plan as the user confirmed or corrected it is journaled: a resumed debate goes on
    # with it, without asking again.
    kept = engine.keep("decision_plan", lambda: asdict(confirm(engine, plan, doubt)))
    return Plan(
        topic=kept["topic"],
        positions=tuple(kept["positions"]),
        out_of_scope=tuple(kept["out_of_scope"]),
        preset=kept["preset"],
        rounds=kept["rounds"],
    )


def confirm(engine: Engine, plan: Plan, doubt: UsageError | None = None) -> Plan:
    """Show the proposal until the user accepts it ("" when unattended or --yes).

    Positions that cannot be debated (a doubtful framing, too few or too many) are refused
    unless the user corrects them here.
    """
    lang = engine.language
    models = {name: role.model.model_id for name, role in engine.roles.items()}
    for _ in range(MAX_ASKS):
        problem = count_problem(plan.positions)
        refusal = doubt or (refuse(problem) if problem else None)
        if refusal:
            said = words(lang).error(refusal)["message"]
            engine.notice(label(lang, "correct", problem=said), "warn")
        shown = proposal(
            plan, seats(plan, lang), models, saved=engine.journal is not None, language=lang
        )
        reply = engine.ask(shown).strip()
        if not reply or reply.lower() in ACCEPT:
            if refusal:
                raise refusal
            return plan
        try:
            corrected = apply_corrections(plan, reply)
        except UsageError as exc:
            wrong = words(lang).error(exc)  # the correction's problem, in the debate's language
            engine.notice(f"{wrong['message']} ({wrong['hint']})", "warn")
            continue
        if corrected.positions != plan.positions:
            doubt = None  # the user named the positions: the framing's doubt is settled
        plan = corrected
    raise UsageError(
        key="formats.decision.framing.proposal_was_not_accepted_after", max_asks=MAX_ASKS
    )
