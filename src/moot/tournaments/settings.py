"""A tournament's settings, declared once: what each is, its default and its range. The
command line (`moot tournament`), `moot.tournament(**kwargs)` and the page's form check
what they are given against this one model, and a test holds the three to its fields."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from moot.config import MAX_PARALLEL, Seed
from moot.errors import Phrase, UsageError, invalid
from moot.tournaments.jury import MARGIN

__all__ = ["MARGIN", "BallotSettings", "TournamentSettings", "check_ballot"]

BallotMethod = Literal["pairwise", "pointwise", "blend", "likelihood"]
BALLOT_METHODS: tuple[BallotMethod, ...] = ("pairwise", "pointwise", "blend", "likelihood")
# The methods that show the two sides together, and so read them in one order or two.
PAIRWISE_METHODS: tuple[BallotMethod, ...] = ("pairwise", "blend")
MAX_SWAPS = 50
MAX_JUDGES = 20


def setting(
    default: Any,
    help: str,  # noqa: A002
    *,
    option: str = "",
    keyword: str = "",
    page: bool = True,
    **range_: Any,
) -> Any:
    """One setting's declaration: its default, its help (the CLI's, the API's docstring),
    its command-line option where it is not --field-name, its keyword (Python's and the
    form's) where it is not the field's name, and whether the page offers it."""
    extra: dict[str, Any] = {"option": option, "keyword": keyword, "page": page}
    return Field(default, description=help, json_schema_extra=extra, **range_)


class BallotSettings(BaseModel):
    """How each judge's ballot is read: kept in the plan, so a resume judges alike."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    orders: int = setting(
        2,
        "Orders each judge reads the two sides in (1 or 2; 2): with 2 the sides are shown "
        "both ways round and a judge whose two orders name different sides abstains.",
        ge=1,
        le=2,
    )
    method: BallotMethod = setting(
        "pairwise",
        "How a judge decides (pairwise, pointwise, blend or likelihood; pairwise): pairwise: "
        "which side won, read as a probability; pointwise: yes/no questions of each side "
        "alone, calibrated on a content-free speech; blend: the mean of the two; likelihood: "
        "how much likelier the model finds each side's speeches as written for its side of "
        "the motion (a model moot runs itself).",
        option="--ballot",
        keyword="ballot",
    )
    margin: float = setting(
        MARGIN,
        "A verdict within this of even (P(proposition) between ½−m and ½+m) is undecided "
        "(0–0.45; 0.1).",
        ge=0.0,
        le=0.45,
    )
    reasons: bool = setting(
        False,
        "Ask each judge for its reasons after its verdict (one more short call a judge).",
        page=False,
    )


class TournamentSettings(BallotSettings):
    """Every setting of a tournament a caller chooses beside its models and motions."""

    judges: list[str] = setting(
        [],
        "A judge model (repeatable). Default: the ranked models, each judging only debates "
        "it took no part in while another judge is left.",
        option="--judge",
        keyword="judges",
        max_length=MAX_JUDGES,
    )
    swaps: int = setting(1, "Swap pairs per pair of models and motion.", ge=1, le=MAX_SWAPS)
    schedule: Literal["round-robin", "adaptive"] = setting(
        "round-robin",
        "round-robin: every pair on every motion; adaptive: where least certain.",
        page=False,
    )
    budget: int | None = setting(
        None, "With an adaptive schedule: at most this many debates.", page=False
    )
    # Its upper bound is calibration.MAX_CONTROLS, checked by plan.check_counts.
    controls: int | None = setting(
        None, "Control debates of each kind (0: none).", ge=0, page=False
    )
    seed: Seed | None = setting(None, "The tournament's seed.")
    parallel: int = setting(1, "Debates played at once.", ge=1, le=MAX_PARALLEL, page=False)
    batch: bool = setting(False, "One batch a step for parallel debates.", page=False)


def _extra(name: str, key: str) -> Any:
    extra = TournamentSettings.model_fields[name].json_schema_extra
    return extra.get(key) if isinstance(extra, dict) else None


def option_of(name: str) -> str:
    """The command-line option of setting NAME."""
    return str(_extra(name, "option") or "--" + name.replace("_", "-"))


def keyword_of(name: str) -> str:
    """The keyword of setting NAME in `moot.tournament` and the page's form."""
    return str(_extra(name, "keyword") or name)


def on_page(name: str) -> bool:
    return bool(_extra(name, "page"))


def help_of(name: str) -> str:
    return TournamentSettings.model_fields[name].description or ""


def check_ballot(*, api: bool = False, **given: Any) -> BallotSettings:
    """The ballot settings GIVEN (orders, method, margin, reasons) checked, or a one-line
    UsageError naming the first wrong one as the command line (or, API, Python) spells it."""
    try:
        return BallotSettings(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else "ballot"
        spelled = keyword_of(name) if api else option_of(name)
        value = given.get(name)
        field = TournamentSettings.model_fields.get(name)
        hint = (field.description or "").split(":")[0] if field else ""
        about = _ABOUT.get(name)  # the description's words, in each language
        raise UsageError(
            key="tournaments.settings.ballot_not_allowed",
            field=keyword_of(name),
            option=spelled,
            value=repr(value),
            why=invalid(first, first["msg"].lower()),
            fix=about if about is not None and str(about) == hint else hint,
        ) from None


_ABOUT = {
    "orders": Phrase("tournaments.settings.about_orders"),
    "method": Phrase("tournaments.settings.about_method"),
    "margin": Phrase("tournaments.settings.about_margin"),
    "reasons": Phrase("tournaments.settings.about_reasons"),
}
