"""A tournament an MCP client started: its arguments checked as `moot tournament` checks its
options, planned in its folder before the tool answers (its id is that folder's name), then
played on the server's desk by `moot.tournament`, and read back as the page reads one."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from moot.api.tournaments import plan_tournament, tournament
from moot.config import RunSettings, tournaments_dir, validate_params
from moot.errors import UsageError
from moot.events import TurnStarted
from moot.inference.human import is_human_ref
from moot.inference.remote import is_remote_ref
from moot.mcp import locks
from moot.mcp.arguments import Args, text, texts
from moot.mcp.desk import Update, Work
from moot.mcp.schemas import TOURNAMENT_RUN, resume_tournament, start_tournament
from moot.records import files
from moot.records.journal import Held
from moot.tournaments.adaptive import check_executor, check_schedule
from moot.tournaments.parallel import check_batch, check_parallel
from moot.tournaments.plan import check_counts
from moot.tournaments.run import (
    PLAN,
    DebateBegun,
    DebateDone,
    DebateFailed,
    InDebate,
    Tournament,
)
from moot.tournaments.settings import BallotSettings, check_ballot, keyword_of

RATINGS = "ratings.json"
# What a server holds while it plays a tournament: a file of its own, never replaced (the
# plan is, as an adaptive schedule grows it, and a hold on the file replaced holds nothing).
PLAYING = "playing.lock"
_naming = threading.Lock()  # two tournaments started in one second get two folders
resuming = threading.Lock()  # a tournament is resumed by one call of a server at a time
# What a JSON Schema type is in Python, for an argument's kind, and the error for another.
_SAID = {
    int: "mcp.tools.not_a_number",
    bool: "mcp.tools.not_a_flag",
    str: "mcp.tools.not_a_string",
    list: "mcp.tools.not_a_list",
}
_KINDS: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "string": (str,),
    "array": (list,),
}


@dataclass(kw_only=True)
class Ranking(Work):
    """One tournament of this server: its debates played, failed and under way."""

    folder: Path
    plan: dict[str, Any]  # what it ranks: format, models, judges, motions
    planned: int
    lang: str = "en"  # its motions' language, when they share one
    parallel: int = 1
    batch: bool = False
    played: int = 0  # debates decided, those of an earlier run included
    failed: list[dict[str, str]] = field(default_factory=list)
    playing: dict[str, dict[str, Any]] = field(default_factory=dict)  # by debate id
    last: dict[str, Any] | None = None  # the last debate decided
    ranking: list[dict[str, Any]] | None = None  # once it has finished

    def play(self, update: Update) -> None:
        def heard(event: object) -> None:
            change = self._change(event)
            if change is not None:
                update(change)

        result = tournament(
            resume=self.folder, parallel=self.parallel, batch=self.batch, on_event=heard
        )
        ranked = [_rated(m.model_dump(mode="json")) for m in result.report.models]
        update(lambda: setattr(self, "ranking", ranked))

    def _change(self, event: object) -> Callable[[], None] | None:
        """What EVENT changes in where the tournament stands (made under the desk's lock)."""
        if isinstance(event, DebateBegun):
            p = event.pairing
            now = {"motion": event.motion, "proposition": p.proposition,
                   "opposition": p.opposition, "speaking": None}  # fmt: skip
            return lambda: self.playing.__setitem__(p.id, now)
        if isinstance(event, InDebate) and isinstance(event.event, TurnStarted):
            label = event.event.label or event.event.role
            return lambda: self.playing.get(event.pairing.id, {}).update(speaking=label)
        if isinstance(event, DebateDone):
            return lambda: self._decided(event)
        if isinstance(event, DebateFailed):
            failed = {"debate": event.pairing.id, "message": event.message, "hint": event.hint}
            return lambda: self._failed(failed)
        return None

    def _decided(self, event: DebateDone) -> None:
        p, v = event.pairing, event.verdict
        self.playing.pop(p.id, None)
        self.played += 1
        self.last = {"debate": p.id, "proposition": p.proposition,
                     "opposition": p.opposition, "winner": v.winner,
                     "p_proposition": v.p_proposition}  # fmt: skip

    def _failed(self, failed: dict[str, str]) -> None:
        self.playing.pop(failed["debate"], None)
        self.failed.append(failed)

    @property
    def language(self) -> str:
        return self.lang

    def done(self) -> float:
        return self.played + 0.5 * bool(self.playing)

    def total(self) -> float | None:
        return float(self.planned)

    def said(self) -> str:
        if self.playing:
            debate, now = next(iter(self.playing.items()))
            who = f": {now['speaking']}" if now.get("speaking") else ""
            return f"debate {self.played + 1} of {self.planned} ({debate}){who}"
        return f"{self.played} of {self.planned} debates decided"

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "state": self.state,
            **self.plan,
            "debates_planned": self.planned,
            "debates_decided": self.played,
            "playing": [{"debate": k, **v} for k, v in self.playing.items()],
            "last_decided": self.last,
            "failed": self.failed,
            "ranking": self.ranking,
            "error": self.error,
            "folder": str(self.folder),
        }


# -- starting --------------------------------------------------------------------------


def start(args: Args, *, allow_remote: bool) -> Ranking:
    """The tournament ARGS ask for, checked as `moot tournament` checks its options and
    planned in a fresh folder; not yet played."""
    schema = start_tournament()["properties"]
    _check_kinds(args, schema)
    models, judges = _refs(args, "models"), _refs(args, "judges", required=False)
    motions = args.get("motions")
    motions = [motions] if isinstance(motions, str) else motions
    if not texts(motions):
        raise UsageError(key="mcp.tools.not_a_list", name="motions")
    for field_, refs in (("models", models), ("judges", judges)):
        for ref in refs:
            if is_human_ref(ref):
                raise UsageError(key="mcp.ranking.no_person_here", field=field_, ref=ref)
            if is_remote_ref(ref) and not allow_remote and not args.get("dry_run"):
                raise UsageError(key="mcp.tools.remote_not_allowed", field=field_, ref=ref)
    got = {k: args.get(k) for k in ("swaps", "seed", "controls", "parallel", "budget")}
    swaps = 1 if got["swaps"] is None else got["swaps"]
    parallel = 1 if got["parallel"] is None else got["parallel"]
    batch = bool(args.get("batch", False))
    schedule = text(args, "schedule", "round-robin")
    check_counts(swaps=swaps, seed=got["seed"], controls=got["controls"])
    ballot = check_ballot(**{k: args[w] for k, w in _BALLOT.items() if args.get(w) is not None})
    check_parallel(parallel)
    check_batch(batch, parallel)
    check_schedule(schedule, got["budget"], len(models))
    run = validate_params(
        RunSettings, **{n: args[n] for n in TOURNAMENT_RUN if args.get(n) is not None}
    )
    params: dict[str, Any] = {
        n: tuple(v) if isinstance(v, list) else v for n, v in args.items() if n not in schema
    }
    with _naming:
        t = plan_tournament(
            models,
            motions,
            format=text(args, "format", "oxford"),
            judges=judges,
            lang=args.get("lang"),
            seed=got["seed"],
            swaps=swaps,
            schedule=schedule,
            budget=got["budget"],
            controls=got["controls"],
            ballot=ballot,
            out=_fresh_folder(),
            run=run,
            **params,
        )
    ranking = ranking_of(t, parallel=parallel, batch=batch)
    ranking.lock = hold(t.folder)  # a fresh folder: no other server holds it
    return ranking


def resume(folder: Path, args: Args, *, allow_remote: bool) -> Ranking:
    """The interrupted tournament in FOLDER, to be finished as `moot tournament --resume`
    finishes it (its plan fixes all but how many debates are played at once): its debates
    decided are kept, the rest played. Refused while another server plays it, once it has
    finished, and where its plan names a model on a server without `allow_remote`."""
    schema = resume_tournament()["properties"]
    for name in args:
        if name not in schema:
            raise UsageError(key="mcp.ranking.resume_takes", name=name, known=", ".join(schema))
    _check_kinds(args, schema)
    parallel = 1 if args.get("parallel") is None else args["parallel"]
    batch = bool(args.get("batch", False))
    check_parallel(parallel)
    check_batch(batch, parallel)
    lock = hold(folder)
    if lock is None:
        raise UsageError(key="mcp.ranking.running_elsewhere", id=folder.name)
    try:
        t = Tournament.open(folder)
        check_executor(t.plan.schedule, "local", parallel)
        dry = bool(t.plan.options.get("dry_run"))
        for field_, refs in (("models", t.plan.models), ("judges", t.plan.judges)):
            for ref in refs:
                if is_remote_ref(ref) and not allow_remote and not dry:
                    raise UsageError(key="mcp.tools.remote_not_allowed", field=field_, ref=ref)
        if (folder / RATINGS).is_file() and not t.pending():
            raise UsageError(key="mcp.ranking.finished_already", id=folder.name)
        ranking = ranking_of(t, parallel=parallel, batch=batch)
    except BaseException:
        locks.release(lock)
        raise
    ranking.lock = lock
    return ranking


def hold(folder: Path) -> Held | None:
    """The tournament in FOLDER held by this server until `locks.release` (None: another
    server holds it)."""
    path = folder / PLAYING
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
    except OSError:
        pass  # a folder moot cannot write in: nothing is held, as for a debate's journal
    return locks.hold(path)


def _check_kinds(args: Args, schema: dict[str, Any]) -> None:
    """Every argument the schema declares is of its kind (null: not given)."""
    for name, value in args.items():
        kinds = _KINDS.get(schema.get(name, {}).get("type", ""))
        if kinds is None or value is None:
            continue
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise UsageError(key=_SAID[kinds[0]], name=name)


# The ballot's settings, by their names in check_ballot and their keywords (the tool's).
_BALLOT = {name: keyword_of(name) for name in BallotSettings.model_fields}


def _refs(args: Args, name: str, *, required: bool = True) -> list[str]:
    value = args.get(name, None if required else [])
    if value == [] and not required:
        return []
    if not texts(value):
        raise UsageError(key="mcp.tools.not_a_list", name=name)
    return [v.strip() for v in value]


def _fresh_folder() -> Path:
    """A tournament folder not taken yet, named by the time as `moot tournament` names one."""
    base = tournaments_dir() / datetime.now().strftime("%Y%m%d-%H%M%S")
    folder, n = base, 1
    while folder.exists():
        n += 1
        folder = base.with_name(f"{base.name}-{n}")
    return folder


def ranking_of(t: Tournament, *, parallel: int = 1, batch: bool = False) -> Ranking:
    plan = t.plan
    dry = bool(plan.options.get("dry_run"))
    languages = {m.language for m in plan.motions}
    return Ranking(
        id=t.folder.name,
        holds=frozenset() if dry else frozenset({*plan.models, *plan.judges}),
        folder=t.folder,
        plan=_planned(t),
        planned=plan.budget or len(plan.debates),
        played=len(t.verdicts()),
        lang=languages.pop() if len(languages) == 1 else "en",
        parallel=parallel,
        batch=batch,
    )


def _planned(t: Tournament) -> dict[str, Any]:
    plan = t.plan
    return {
        "format": plan.format,
        "models": list(plan.models),
        "judges": list(plan.judges),
        "motions": [m.text for m in plan.motions],
        "dry_run": bool(plan.options.get("dry_run")),
    }


def _rated(row: dict[str, Any]) -> dict[str, Any]:
    keep = ("rank", "model", "strength", "ci_low", "ci_high", "wins", "losses", "draws")
    return {k: row[k] for k in keep if k in row}


# -- reading ---------------------------------------------------------------------------


def find(ref: str) -> Path:
    """The tournament folder REF names: its id, a unique prefix of one, or `last`."""
    root = tournaments_dir()
    try:
        found = sorted(p for p in root.iterdir() if (p / PLAN).is_file() and not p.is_symlink())
    except OSError:
        found = []
    if ref == "last" and found:
        return found[-1]
    exact = [p for p in found if p.name == ref]
    matches = exact or [p for p in found if ref and p.name.startswith(ref)]
    if not matches:
        raise UsageError(key="mcp.ranking.no_such_tournament", ref=ref)
    if len(matches) > 1:
        raise UsageError(key="mcp.ranking.several_tournaments", ref=ref, many=len(matches))
    return matches[0]


def read(ref: str, here: Ranking | None) -> tuple[str, dict[str, Any]]:
    """A tournament by REF as it stands (HERE: as this server runs it): its plan, each
    debate's verdict so far, and once it has finished its ratings; a Markdown table of the
    ranking to read, and the whole as data."""
    folder = here.folder if here is not None else find(ref)
    t = Tournament.open(folder)
    verdicts = t.verdicts()
    debates = [
        {
            "debate": p.id,
            "motion": t.plan.motions[p.motion].text,
            "proposition": p.proposition,
            "opposition": p.opposition,
            "winner": verdicts[p.id].winner if p.id in verdicts else None,
            "p_proposition": verdicts[p.id].p_proposition if p.id in verdicts else None,
        }
        for p in t.plan.debates
    ]
    report = None
    if (folder / RATINGS).is_file():
        report = files.read_json(folder / RATINGS, what="ratings", follow_symlinks=False)
    state = here.state if here is not None else ("finished" if report else "interrupted")
    if state == "interrupted" and locks.held_elsewhere(folder / PLAYING):
        state = "running elsewhere"  # another `moot mcp` plays it now
    got = {
        **(here.view() if here is not None else {"id": folder.name, "folder": str(folder)}),
        **_planned(t),
        "state": state,
        "debates": debates,
        "report": report,
    }
    return _table(got, report), got


def _table(got: dict[str, Any], report: Any) -> str:
    """The ranking as a Markdown table; before it ends, how far it has gone."""
    decided = sum(d["winner"] is not None for d in got["debates"])
    head = f"Tournament {got['id']} ({got['format']}): {got['state']}, {decided} of "
    head += f"{len(got['debates'])} debates decided."
    if not isinstance(report, dict) or not report.get("models"):
        return head
    lines = [head, "", "| rank | model | strength | interval | won | lost | drawn |",
             "| --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for m in report["models"]:
        lines.append(
            f"| {m['rank']} | {m['model']} | {m['strength']:+.2f} | "
            f"{m['ci_low']:+.2f} to {m['ci_high']:+.2f} | {m['wins']} | {m['losses']} | "
            f"{m['draws']} |"
        )
    return "\n".join(lines)
