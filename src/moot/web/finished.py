"""Finished tournaments read back for the page: listed beside the saved debates, and each
shown again as it ended (its table of debates, each winner, the ratings)."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from moot.config import tournaments_dir
from moot.errors import MootError
from moot.models.labels import model_labels
from moot.records import files

Wire = dict[str, Any]
_ID = re.compile(r"[\w-][\w.-]*")  # a folder name moot made; never a path
_STAMP = re.compile(r"(\d{8}-\d{6})")
PLAN, RATINGS, VERDICT = "tournament.json", "ratings.json", "verdict.json"


def when(ident: str) -> str | None:
    """The time a debate's or tournament's folder name starts with, as ISO 8601 (local
    time, as it was named); None when it starts with none."""
    m = _STAMP.match(ident)
    if m is None:
        return None
    try:
        return datetime.strptime(m.group(1), "%Y%m%d-%H%M%S").isoformat()
    except ValueError:
        return None


def _folders() -> list[Path]:
    root = tournaments_dir()
    try:
        found = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []
    return sorted((p for p in found if _ID.fullmatch(p.name)), key=lambda p: p.name)


def _json(path: Path, what: str) -> dict[str, Any]:
    data = files.read_json(path, what=what, follow_symlinks=False)
    return data if isinstance(data, dict) else {}


def listed() -> list[Wire]:
    """Every finished tournament (its ratings written), newest first: its date, format,
    motions, models and the model(s) ranked first. One whose files cannot be read is left
    out: `moot tournament --resume` names its problem."""
    out = []
    for folder in reversed(_folders()):
        if not (folder / RATINGS).is_file():
            continue
        try:
            plan, report = _json(folder / PLAN, "tournament"), _json(folder / RATINGS, "ratings")
        except MootError:
            continue
        out.append(_summary(folder.name, plan, report))
    return out


def _summary(ident: str, plan: dict[str, Any], report: dict[str, Any]) -> Wire:
    models = [str(m) for m in plan.get("models", []) if isinstance(m, str)]
    motions = [m.get("text", "") for m in plan.get("motions", []) if isinstance(m, dict)]
    ranked = [m for m in report.get("models", []) if isinstance(m, dict)]
    first = [str(m.get("model")) for m in ranked if m.get("rank") == 1]
    return {
        "id": ident,
        "date": when(ident),
        "format": plan.get("format"),
        "motions": motions,
        "models": models,
        "labels": model_labels(models),
        "debates": len(plan.get("debates", []) or []),
        "first": first,
    }


def shown(ident: str) -> Wire | None:
    """A finished tournament as the page shows it again; None when there is none by IDENT."""
    folder = next((p for p in _folders() if p.name == ident), None)
    if folder is None or not (folder / RATINGS).is_file():
        return None
    plan, report = _json(folder / PLAN, "tournament"), _json(folder / RATINGS, "ratings")
    motions = [m for m in plan.get("motions", []) if isinstance(m, dict)]
    debates = []
    for d in plan.get("debates", []) or []:
        if not isinstance(d, dict) or not _ID.fullmatch(str(d.get("id", ""))):
            continue
        number = d.get("motion")
        motion = (
            motions[number].get("text", "")
            if isinstance(number, int) and number < len(motions)
            else ""
        )
        verdict = _verdict(folder / "debates" / str(d["id"]) / VERDICT)
        debates.append(
            {
                "debate": d["id"],
                "motion": motion,
                "proposition": d.get("proposition", ""),
                "opposition": d.get("opposition", ""),
                **verdict,
            }
        )
    language = next((m.get("language") for m in motions if m.get("language")), "en")
    summary = _summary(ident, plan, report)
    judges = [str(j) for j in plan.get("judges", []) if isinstance(j, str)]
    return {
        **summary,
        "labels": model_labels([*summary["models"], *judges]),
        "language": language if language in ("en", "zh") else "en",
        "title": " · ".join(m.get("text", "") for m in motions)[:200],
        "list": debates,
        "report": report,
    }


def _verdict(path: Path) -> Wire:
    """A debate's verdict as the page's table shows it; none yet: no winner."""
    if not path.is_file():
        return {"winner": None, "margin": None}
    try:
        data = _json(path, "verdict")
    except MootError:
        return {"winner": None, "margin": None}
    return {
        "winner": data.get("winner"),
        "margin": data.get("margin"),
        "p_proposition": data.get("p_proposition"),
        "decided_by": data.get("decided_by"),
    }
