"""What each tool does, apart from the protocol: its arguments checked as `moot run` checks
its options, a debate started, stopped or resumed on the server's desk, a saved one read
back as `moot history` reads it. A mistake raises a MootError, whose words the server
hands back as the tool's error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from moot import history
from moot.config import RunSettings, validate_params
from moot.debates.runner import DebateRun as Runner
from moot.debates.settings import (
    DebateSetup,
    check_motion,
    keyed,
    prepare,
    read_defaults,
    settings,
    with_defaults,
)
from moot.errors import UsageError
from moot.formats import get_format
from moot.inference.human import is_human_ref
from moot.inference.remote import is_remote_ref
from moot.mcp import locks
from moot.mcp.arguments import Args, flag, number, text, texts
from moot.mcp.desk import Desk, Run, Work
from moot.mcp.schemas import MAX_WAIT, RUN_FIELDS
from moot.prompts import LANGUAGES, resolve_language
from moot.records import files
from moot.records.journal import read_transcript

WAIT = 20.0  # seconds wait_debate waits when not told
LISTED = 50  # saved debates list_debates lists when not told
RESOURCES = 200  # the most recent saved debates whose files are listed as resources
URI = "moot://debates/"  # a saved debate's file: moot://debates/ID/FILE
# start_debate's own arguments; the rest are the formats' parameters.
SETTINGS = ("motion", "format", "model", "roles", "temperatures", "lang", "seed", *RUN_FIELDS)


@dataclass(frozen=True)
class Tools:
    """The tools' work, over one server's desk of debates."""

    desk: Desk
    allow_remote: bool = False

    # -- starting -------------------------------------------------------------------------

    def start_debate(self, args: Args) -> dict[str, Any]:
        setup = self.setup(args)
        run = self.desk.start(setup)
        return run.view()

    def setup(self, args: Args) -> DebateSetup:
        """The debate ARGS ask for, checked as `moot run` checks its options, in its order:
        the format, the motion, the settings, the models."""
        fmt = get_format(text(args, "format", "oxford"))
        motion = text(args, "motion", "")
        check_motion(motion)
        given = {name: args[name] for name in RUN_FIELDS if args.get(name) is not None}
        params = {
            name: tuple(value) if isinstance(value, list) else value
            for name, value in args.items()
            if name not in SETTINGS
        }
        model = args.get("model")
        if not (model is None or isinstance(model, str) or texts(model)):
            raise UsageError(key="mcp.tools.not_models", name="model")
        chosen = settings(
            hint="see moot run --help",
            options=True,
            motion=motion,
            format=fmt.name,
            models=(model,) if isinstance(model, str) else tuple(model or ()),
            roles=keyed(args.get("roles"), field="roles", option="--role"),
            temperatures=keyed(args.get("temperatures"), field="temperatures"),
            lang=args.get("lang", "auto"),
            seed=args.get("seed"),
            params=params,
            run=validate_params(RunSettings, **given),
        )
        chosen = with_defaults(chosen, read_defaults(), lang_given="lang" in args)
        setup = prepare(chosen)
        self.check_seats(setup)
        return setup

    def check_seats(self, setup: DebateSetup) -> None:
        """Every seat is a model this server may call: never a person (no one here answers
        for one), a server URL only where the user allowed it (`--allow-remote`)."""
        for role, ref in Runner(setup).refs().items():
            if is_human_ref(ref):
                raise UsageError(key="mcp.tools.no_person_here", field=f"roles.{role}", role=role)
            if is_remote_ref(ref) and not self.allow_remote and not setup.run.dry_run:
                raise UsageError(key="mcp.tools.remote_not_allowed", field="models", ref=ref)

    # -- following ------------------------------------------------------------------------

    def debate(self, ref: str) -> Run | None:
        """The debate of this server whose id is REF, if any."""
        found = self.desk.get(ref)
        return found if isinstance(found, Run) else None

    def run_of(self, args: Args) -> Run:
        """The debate of this server ARGS name by its id (or a prefix, or `last`)."""
        ref = text(args, "id", "")
        found = self.debate(ref)
        if found is not None:
            return found
        saved = history.find(ref, readable=False)
        found = self.debate(saved.id)
        if found is None:
            raise UsageError(key="mcp.tools.not_started_here", id=saved.id)
        return found

    def stop_debate(self, args: Args) -> dict[str, Any]:
        run = self.run_of(args)
        if run.over:
            raise UsageError(key="mcp.tools.not_running", id=run.id, state=run.state)
        self.desk.stop(run)
        return run.view()

    def resume_debate(self, args: Args) -> dict[str, Any]:
        saved = history.find(text(args, "id", ""))
        if self.desk.live(saved.id) is not None:
            raise UsageError(key="mcp.tools.running_already", id=saved.id)
        run = self.desk.resume(saved, check=self.check_seats)
        return run.view()

    # -- tournaments ----------------------------------------------------------------------

    def start_tournament(self, args: Args) -> dict[str, Any]:
        from moot.mcp import ranking

        return self.desk.add(ranking.start(args, allow_remote=self.allow_remote)).view()

    def resume_tournament(self, args: Args) -> dict[str, Any]:
        from moot.mcp import ranking

        folder = ranking.find(text(args, "id", ""))
        with ranking.resuming:  # two calls at once resume it once
            if self.desk.live(folder.name) is not None:
                raise UsageError(key="mcp.ranking.running_already", id=folder.name)
            found = ranking.resume(folder, args, allow_remote=self.allow_remote)
            return self.desk.add(found).view()

    def ranking_of(self, args: Args) -> Work:
        """The tournament of this server ARGS name by its id (or a prefix, or `last`)."""
        from moot.mcp import ranking

        folder = ranking.find(text(args, "id", ""))
        found = self.desk.get(folder.name)
        if not isinstance(found, ranking.Ranking):
            raise UsageError(key="mcp.ranking.not_started_here", id=folder.name)
        return found

    def get_tournament(self, args: Args) -> tuple[str, dict[str, Any]]:
        from moot.mcp import ranking

        ref = text(args, "id", "")
        here = self.desk.get(ref) or self.desk.get(ranking.find(ref).name)
        return ranking.read(ref, here if isinstance(here, ranking.Ranking) else None)

    # -- reading --------------------------------------------------------------------------

    def get_debate(self, args: Args) -> tuple[str, dict[str, Any]]:
        """The debate's state, outcome and document, and its speeches as Markdown: the
        Markdown to read, and the whole as data."""
        ref = text(args, "id", "")
        run = self.debate(ref)
        saved = history.find(run.id if run is not None else ref)
        run = run or self.debate(saved.id)
        document = history.document(saved)
        speeches = history.full_markdown(saved) if flag(args, "speeches", True) else None
        got: dict[str, Any] = {
            **_row(saved, run),
            "language": run.setup.language if run is not None else saved.language,
            "folder": str(saved.path),
            "outcome": _outcome(saved),
            "document": document,
            "markdown": speeches,
            "error": run.error if run is not None else None,
        }
        shown = speeches if speeches is not None else document or ""
        return shown or f"({saved.status}: {saved.turns} turns, no document yet)", got

    def list_debates(self, args: Args) -> dict[str, Any]:
        limit = number(args, "limit", LISTED, low=1, high=1000)
        saved = history.list_debates(elsewhere=True)[-limit:]
        # The most recent first; one queued here is listed as this server knows it.
        return {"debates": [_row(d, self.debate(d.id)) for d in reversed(saved)]}

    def list_models(self, args: Args) -> dict[str, Any]:
        from moot.models import listing

        every = flag(args, "all", False)
        return {
            "models": [
                {
                    "id": m.id,
                    "name": m.name,
                    "kind": m.kind,
                    "ready": m.ready,
                    "installed": m.installed,
                    "default": m.is_default,
                    "size": m.size,
                    "architecture": m.architecture,
                    "context_length": m.context_length,
                    "why_not": m.reason or None,
                }
                for m in listing.list_models(installed=not every)
            ]
        }

    def judge_debate(self, args: Args) -> dict[str, Any]:
        from moot.debates.rejudge import rejudge

        transcript = history.transcript(text(args, "id", ""))
        judges = args.get("judges")
        if not texts(judges):
            raise UsageError(key="mcp.tools.not_a_list", name="judges")
        dry_run = flag(args, "dry_run", False)
        for ref in judges:
            if is_remote_ref(ref.strip()) and not self.allow_remote and not dry_run:
                raise UsageError(key="mcp.tools.remote_not_allowed", field="judges", ref=ref)
        results = rejudge(transcript, judges, dry_run=dry_run)
        return {"judged": [r.model_dump(mode="json", exclude={"turns"}) for r in results]}

    # -- resources ------------------------------------------------------------------------

    def resources(self) -> list[dict[str, str]]:
        """Each finished debate's transcript.json and document, the most recent first."""
        listed = []
        for d in reversed(history.list_debates(elsewhere=True)[-RESOURCES:]):
            if not d.finished or d.problem is not None:
                continue
            for name, mime in _files_of(d):
                listed.append(
                    {
                        "uri": _uri(d.id, name),
                        "name": f"{d.id}/{name}",
                        "mime": mime,
                        "description": f"{d.format}: {d.motion}"[:300],
                    }  # fmt: skip
                )
        return listed

    def read_resource(self, uri: str) -> tuple[str, str]:
        """The text of the file URI names (moot://debates/ID/FILE), and its media type."""
        debate_id, _, name = uri.removeprefix(URI).partition("/")
        if not uri.startswith(URI) or not debate_id or debate_id.startswith((".", "~")):
            raise UsageError(key="mcp.tools.no_such_resource", uri=uri)
        saved = history.find(debate_id)
        mime = dict(_files_of(saved)).get(name)
        path = saved.path / name
        if mime is None or not path.is_file():
            raise UsageError(key="mcp.tools.no_such_resource", uri=uri)
        text = files.read_text(path, what=name, limit=files.RECORD_LIMIT, follow_symlinks=False)
        return text, mime

    def wait_seconds(self, args: Args) -> float:
        return float(number(args, "seconds", WAIT, low=0, high=MAX_WAIT, kind=(int, float)))


def _files_of(saved: history.SavedDebate) -> list[tuple[str, str]]:
    """The files of a saved debate offered as resources, with their media types."""
    from moot.formats import NAMES

    offered = [(history.TRANSCRIPT, "application/json")]
    if saved.format in NAMES:
        offered.append((get_format(saved.format).document, "text/markdown"))
    return offered


def _uri(debate_id: str, name: str) -> str:
    return f"{URI}{debate_id}/{name}"


def _row(saved: history.SavedDebate, run: Run | None) -> dict[str, Any]:
    """A saved debate as the tools list it; one this server runs, as it stands here (a
    queued one's folder holds nothing yet)."""
    if run is None:
        state = saved.status
        if state == "running" or (
            state == "interrupted" and locks.held_elsewhere(saved.path / history.JOURNAL)
        ):
            state = "running elsewhere"  # another process (a `moot mcp`, `moot run`) runs it
        return {
            "id": saved.id,
            "format": saved.format,
            "motion": saved.motion,
            "turns": saved.turns,
            "state": state,
        }
    return {
        "id": saved.id,
        "format": run.setup.format.name,
        "motion": run.setup.motion,
        "turns": max(run.turns, saved.turns),
        "state": run.state,
    }


def _outcome(saved: history.SavedDebate) -> dict[str, Any] | None:
    """A finished debate's result as its transcript records it: why its rounds ended and the
    format's structured result (the verdict, the decision, the answer)."""
    if not saved.finished or saved.problem is not None:
        return None
    transcript, _ = read_transcript(
        saved.path / history.TRANSCRIPT, follow_symlinks=False, versioned=False
    )
    return {"stop_reason": transcript.stop_reason, "result": transcript.result}


def language_of(args: Args) -> str:
    """The language a tool's error is said in: the debate's or tournament's it asks for (its
    language, else its (first) motion's), else English."""
    lang, motion, motions = args.get("lang"), args.get("motion"), args.get("motions")
    if motion is None and isinstance(motions, list) and motions:  # a tournament's first
        motion = motions[0]
    if not isinstance(motion, str) or not motion.strip():
        return "en"
    return resolve_language(lang if lang in LANGUAGES else "auto", motion)
