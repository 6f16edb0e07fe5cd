"""A tournament from the page: its form checked as `moot tournament` checks it, then run by
`moot.tournament` in a job whose events fill in the page's table and end in the ratings."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from moot.api import debate_settings, tournament
from moot.debates.settings import format_params
from moot.errors import MootError, concerning
from moot.formats import get_format
from moot.models.labels import model_labels
from moot.tournaments.controls import ControlEvent, ControlFailed, ControlJudged, judges_of
from moot.tournaments.judge import SIDES
from moot.tournaments.plan import checked_identity, dry_identity, make_plan, two_sided, word_motions
from moot.tournaments.run import DebateBegun, DebateDone, DebateFailed, InDebate, TournamentEvent
from moot.tournaments.settings import check_ballot
from moot.web import forms
from moot.web.forms import (
    FieldErrors,
    FormErrors,
    number_of,
    page_problem,
    param_errors,
    problem,
    read_params,
    refuse_repeated,
    text_at,
    text_of,
    texts_at,
)
from moot.web.jobs import Job


@dataclass(frozen=True)
class Choice:
    """A tournament as the form chose it, checked; the plan's debates for the page's table."""

    models: list[str]
    judges: list[str]
    motions: list[str]
    format: str
    lang: str
    seed: int
    swaps: int
    params: dict[str, Any]
    dry_run: bool
    debates: list[dict[str, Any]] = field(default_factory=list)
    # How the judges' ballots are read: `moot.tournament`'s orders, ballot, margin, reasons.
    ballot: dict[str, Any] = field(default_factory=dict)
    # Every judge of the plan's debates (the models themselves where none is named): each
    # decides every control debate, which the page counts.
    panel: list[str] = field(default_factory=list)


def formats() -> list[str]:
    return list(SIDES)


def choose(form: object, *, dry_run: bool) -> Choice:
    """The tournament the form asks for; FormErrors names each problem's field."""
    if not isinstance(form, dict):
        raise FormErrors({"form": problem("the form is not an object", "reload the page")})
    errors: FieldErrors = {}
    refuse_repeated(form, errors)
    models = [m.strip() for m in texts_at(form.get("models", []), "models", errors) if m.strip()]
    judges = [j.strip() for j in texts_at(form.get("judges", []), "judges", errors) if j.strip()]
    text = text_at(form.get("motions", ""), "motions", errors)
    motions = [line for line in text.splitlines() if line.strip()]
    seed = number_of(form.get("seed", ""), "seed", errors, int)
    swaps = number_of(form.get("swaps", ""), "swaps", errors, int)
    orders = number_of(form.get("orders", ""), "orders", errors, int)
    margin = number_of(form.get("margin", ""), "margin", errors, float)
    method = text_at(form.get("ballot", ""), "ballot", errors) or "pairwise"
    name = text_at(form.get("format", ""), "format", errors) or "oxford"
    # The format's parameters as the page offers them; an unknown format is named below.
    params = read_params(get_format(name), form.get("params", {}), errors) if name in SIDES else {}
    lang = text_at(form.get("lang", ""), "lang", errors) or "auto"
    if not motions and "motions" not in errors:
        errors["motions"] = problem("no motions", "write one motion a line")
    # Every value the ballot or the format refuses, each beside its field, all at once.
    for key, value in (("orders", orders), ("method", method), ("margin", margin)):
        if value is not None:
            try:
                check_ballot(api=True, **{key: value})
            except MootError as exc:
                errors.setdefault(_field_of(exc), page_problem(exc))
    if name in SIDES:
        param_errors(get_format(name), params, errors)
    if errors:
        raise FormErrors(errors)
    swaps = swaps if swaps is not None else 1
    given = {"orders": orders, "method": method, "margin": margin}
    try:
        read = check_ballot(api=True, **{k: v for k, v in given.items() if v is not None})
        fmt = get_format(name)
        two_sided(fmt)
        chosen = debate_settings("-", format=name, lang=lang, run={"dry_run": dry_run}, **params)
        seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        with concerning("motions"):
            worded = word_motions(motions, fmt, chosen.lang)
        plan = make_plan(
            fmt,
            models,
            worded,
            params=format_params(fmt, chosen.params),
            seed=seed,
            judges=judges,
            options=chosen.run.model_dump(),
            identify=dry_identity if dry_run else checked_identity,
            swaps=swaps,
        )
    except MootError as exc:
        raise FormErrors({_field_of(exc): page_problem(exc)}) from None
    debates = [
        {
            "debate": p.id,
            "proposition": p.proposition,
            "opposition": p.opposition,
            "motion": plan.motions[p.motion].text,
        }
        for p in plan.debates
    ]
    ballot = {
        "orders": read.orders,
        "ballot": read.method,
        "margin": read.margin,
    }
    return Choice(
        models,
        judges,
        motions,
        fmt.name,
        lang,
        seed,
        swaps,
        params,
        dry_run,
        debates,
        ballot,
        judges_of(plan),
    )


def language_of(form: dict[str, Any], page: str) -> str:
    """The language the form's problems are said in: its tournament's (its language, else its
    first motion's), else the page's (PAGE)."""
    motions = [line for line in text_of(form.get("motions")).splitlines() if line.strip()]
    return forms.language_of(form, page, motion=motions[0] if motions else "")


# The fields of the tournament's form: an error naming another setting is the form's.
_FIELDS = {
    "models",
    "judges",
    "motions",
    "swaps",
    "seed",
    "format",
    "lang",
    "orders",
    "ballot",
    "margin",
}


def _field_of(exc: MootError) -> str:
    """The form's field an error concerns, from the setting it names: a format parameter's
    own field, the list's for one of its items (`models.1`: "models")."""
    field = exc.field or "form"
    head = field.split(".")[0]
    if head == "params":
        return field
    return head if head in _FIELDS else "form"


def tournament_job(choice: Choice, *, parallel: int = 1, batch: bool = False) -> Job:
    """The job that runs CHOICE with `moot.tournament`, PARALLEL debates at once (decoded in
    one batch a step where BATCH), its table filling in as it goes."""

    def work(job: Job) -> None:
        labels = model_labels([*choice.models, *choice.judges])  # short names for the table
        job.publish(
            {"type": "t_plan", "debates": choice.debates, "labels": labels, "panel": choice.panel}
        )

        def on_event(event: TournamentEvent | ControlEvent) -> None:
            if job.stop_requested:
                raise _Stop
            item = tournament_event(event)
            if item is not None:
                job.publish(item)

        result = tournament(
            choice.models,
            choice.motions,
            format=choice.format,
            judges=choice.judges,
            lang=choice.lang,
            seed=choice.seed,
            swaps=choice.swaps,
            **choice.ballot,
            run={"dry_run": choice.dry_run},
            parallel=parallel,
            batch=batch,
            on_event=on_event,
            **choice.params,
        )
        job.update(folder=result.folder.name)
        job.publish(
            {
                "type": "ratings",
                "tournament": result.folder.name,
                "report": result.report.model_dump(mode="json"),
                "failed": [f.pairing.id for f in result.failed],
            }
        )

    return Job(
        work,
        kind="tournament",
        title=" · ".join(choice.motions)[:200],
        holds={*choice.models, *choice.judges},
        language=_language(choice),
        format=choice.format,
        dry_run=choice.dry_run,
    )


def _language(choice: Choice) -> str:
    from moot.prompts import resolve_language

    return resolve_language(choice.lang, choice.motions[0]) if choice.motions else "en"


class _Stop(BaseException):
    """Ends a tournament asked to stop, at its next event; a resume finishes it."""


def tournament_event(event: TournamentEvent | ControlEvent) -> dict[str, Any] | None:
    """A tournament's event as the page's table reads it; a debate's own events are only
    named (the turn now speaking), not streamed, and a control's as a count (a judge's
    verdicts on the controls so far, of how many), the ratings carrying the figures."""
    if isinstance(event, DebateBegun):
        return {"type": "t_begun", "debate": event.pairing.id}
    if isinstance(event, DebateDone):
        v = event.verdict
        return {
            "type": "t_done",
            "debate": event.pairing.id,
            "winner": v.winner,
            "margin": v.margin,
            "votes": v.votes,
            "p_proposition": v.p_proposition,
            "decided_by": v.decided_by,
        }
    if isinstance(event, DebateFailed):
        return {
            "type": "t_failed",
            "debate": event.pairing.id,
            "message": event.message,
            "hint": event.hint,
        }
    if isinstance(event, ControlJudged):
        return {"type": "t_control", "judge": event.judge, "done": event.done, "total": event.total}
    if isinstance(event, ControlFailed):
        return {
            "type": "t_control_failed",
            "judge": event.judge,
            "message": event.message,
            "hint": event.hint,
        }
    if isinstance(event, InDebate):
        from moot.events import TurnStarted

        if isinstance(event.event, TurnStarted):
            return {"type": "t_turn", "debate": event.pairing.id, "label": event.event.label}
    return None
