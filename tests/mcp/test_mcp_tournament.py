"""Tournaments over MCP, driven by the SDK's own client over stdio: the tools' schema made
from the tournament's one declaration of its settings, a dry-run tournament started, followed
in short waits with progress, and read back (by this server and a later one), and bad input
refused in `moot tournament`'s words."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from mcp_client import served
from moot.formats import parameters
from moot.tournaments.judge import SIDES
from moot.tournaments.settings import TournamentSettings, help_of, keyword_of

MOTIONS = ["cities should ban cars", "schools should start later"]


def test_start_tournament_takes_every_tournament_setting_as_declared(moot_home: Path) -> None:
    async def main() -> None:
        async with served(moot_home) as client:
            listed = {t.name: t for t in (await client.session.list_tools()).tools}
            assert {"start_tournament", "wait_tournament", "get_tournament"} <= set(listed)
            schema = listed["start_tournament"].input_schema
            props = schema["properties"]
            declared = TournamentSettings.model_json_schema()["properties"]
            for name in TournamentSettings.model_fields:
                spec = props[keyword_of(name)]  # by its keyword in moot.tournament
                assert spec["description"] == help_of(name)
                typed = [c for c in declared[name].get("anyOf", []) if c["type"] != "null"]
                wanted = {**declared[name], **(typed[0] if typed else {})}
                for key in ("type", "minimum", "maximum", "maxItems", "enum"):
                    assert spec.get(key) == wanted.get(key), (name, key)
            assert props["ballot"]["enum"] == ["pairwise", "pointwise", "blend", "likelihood"]
            assert props["format"]["enum"] == list(SIDES)
            for name, shared in parameters().items():  # the two-sided formats' parameters
                assert (name in props) == bool(set(shared.formats) & set(SIDES)), name
            assert schema["required"] == ["models", "motions"]
            assert not any(k in json.dumps(schema) for k in ('"page"', '"keyword"', '"null"'))

    anyio.run(main)


def test_a_dry_run_tournament_is_followed_and_read_back(
    moot_home: Path, dry_models: tuple[str, str]
) -> None:
    models = list(dry_models)

    async def main() -> str:
        async with served(moot_home) as client:
            started = await client.ok(
                "start_tournament", models=models, motions=MOTIONS, dry_run=True, seed=5,
                controls=0,
            )  # fmt: skip
            assert started["state"] in ("queued", "running")
            assert started["models"] == models and started["dry_run"] is True
            planned = started["debates_planned"]
            assert planned == 4  # one pair, two motions, both sides
            assert (moot_home / "tournaments" / started["id"] / "tournament.json").is_file()
            for _ in range(600):
                state = await client.ok("wait_tournament", id=started["id"], seconds=0.5)
                if state["state"] not in ("queued", "running"):
                    break
            assert state["state"] == "finished", state
            assert state["debates_decided"] == planned and not state["failed"]
            assert {m["model"] for m in state["ranking"]} == set(models)
            assert sorted(m["rank"] for m in state["ranking"])[0] == 1
            told = [p for p, _ in client.progress]
            assert told and told == sorted(told) and told[-1] <= planned
            got = await client.call("get_tournament", id=started["id"])
            assert not got.error, got.text
            assert got.data["state"] == "finished"
            assert len(got.data["debates"]) == planned
            assert all(d["winner"] is not None for d in got.data["debates"])
            assert got.data["report"]["debates_planned"] == planned
            assert "| rank | model |" in got.text
            for model in models:
                assert f"| {model} |" in got.text
        # A later server reads it, by `last`, from its folder.
        async with served(moot_home) as later:
            again = await later.call("get_tournament", id="last")
            assert again.data["id"] == started["id"]
            assert again.data["state"] == "finished"
            assert again.data["report"] == got.data["report"]
            gone = await later.call("wait_tournament", id=started["id"], seconds=0)
            assert gone.error and "not running here" in gone.text
        return started["id"]

    tournament_id = anyio.run(main)
    folder = moot_home / "tournaments" / tournament_id
    assert (folder / "ratings.json").is_file()
    assert len(list((folder / "debates").glob("*/verdict.json"))) == 4


BAD = [
    ({"models": "a", "motions": MOTIONS}, "models must be a list"),
    ({"models": ["a", "b"], "motions": MOTIONS, "swaps": 0}, "--swaps"),
    ({"models": ["a", "b"], "motions": MOTIONS, "margin": 0.9}, "--margin 0.9 is not allowed"),
    ({"models": ["a", "b"], "motions": MOTIONS, "ballot": "vibes"}, "--ballot"),
    ({"models": ["a", "b"], "motions": MOTIONS, "format": "decision"}, "decision"),
    ({"models": ["a", "b"], "motions": MOTIONS, "no_such": 1}, "no_such"),
    ({"models": ["a", "b"], "motions": MOTIONS, "batch": True}, "--batch"),
    (
        {"models": ["a", "http://127.0.0.1:9/v1"], "motions": MOTIONS, "dry_run": False},
        "--allow-remote",
    ),
    ({"models": ["a", "human"], "motions": MOTIONS}, "is a person"),
    ({"models": ["a", "b"], "motions": ["城市应该禁止汽车"], "swaps": 0}, "--swaps"),
]


def test_bad_input_is_a_tool_error_and_nothing_is_planned(moot_home: Path) -> None:
    async def main() -> None:
        async with served(moot_home) as client:
            for args, words in BAD:
                called = await client.call("start_tournament", **{"dry_run": True, **args})
                assert called.error, args
                assert words in called.text, (args, called.text)
                english = args["motions"][0].isascii()
                assert called.text.startswith("error: " if english else "错误： "), called.text
            missing = await client.call("get_tournament", id="nothing-here")
            assert missing.error and "no tournament" in missing.text
        assert not list(moot_home.glob("tournaments/*/tournament.json"))

    anyio.run(main)


class CutOff(Exception):
    """The tournament's process ended here (as a kill would end it)."""


def _interrupted(models: list[str]) -> Path:
    """A dry-run tournament planned in moot's data directory and cut off after its first
    debate was decided: what a server killed mid-tournament leaves."""
    from moot.api.tournaments import plan_tournament, tournament
    from moot.tournaments.run import DebateDone

    t = plan_tournament(models, MOTIONS, seed=5, controls=0, run={"dry_run": True})

    def heard(event: object) -> None:
        if isinstance(event, DebateDone):
            raise CutOff

    try:
        tournament(resume=t.folder, on_event=heard)
    except CutOff:
        pass
    return t.folder


def test_an_interrupted_tournament_is_resumed_and_its_decided_debates_kept(
    moot_home: Path, dry_models: tuple[str, str]
) -> None:
    from moot.mcp import locks, ranking
    from moot.records.files import write_atomic

    folder = _interrupted(list(dry_models))
    decided = {p.parent.name: p.read_bytes() for p in folder.glob("debates/*/verdict.json")}
    assert len(decided) == 1 and not (folder / "ratings.json").exists()

    async def main() -> None:
        async with served(moot_home) as client:
            # While another process holds it (a server playing it), it is not resumed here.
            held = ranking.hold(folder)
            try:
                got = await client.call("get_tournament", id=folder.name)
                assert got.data["state"] == "running elsewhere", got.data
                # Its plan replaced, as an adaptive schedule grows it: held still.
                plan = folder / "tournament.json"
                write_atomic(plan, plan.read_text(encoding="utf-8"))
                got = await client.call("get_tournament", id=folder.name)
                assert got.data["state"] == "running elsewhere", got.data
                refused = await client.call("resume_tournament", id=folder.name)
                assert refused.error and "running in another moot mcp" in refused.text
            finally:
                locks.release(held)
            got = await client.call("get_tournament", id="last")
            assert got.data["state"] == "interrupted" and got.data["id"] == folder.name
            assert sum(d["winner"] is not None for d in got.data["debates"]) == 1
            for args, words in (
                ({"models": ["x", "y"]}, "its plan fixes models"),
                ({"parallel": 0}, "--parallel 0"),
                ({"batch": True}, "--batch"),
                ({"parallel": "2"}, "parallel must be a number"),
            ):
                bad = await client.call("resume_tournament", id=folder.name, **args)
                assert bad.error and bad.text.startswith("error: "), bad.text
                assert words in bad.text, (args, bad.text)
            missing = await client.call("resume_tournament", id="nothing-here")
            assert missing.error and "no tournament" in missing.text
            resumed = await client.ok("resume_tournament", id=folder.name)
            assert resumed["id"] == folder.name and resumed["state"] in ("queued", "running")
            assert resumed["debates_decided"] == 1 and resumed["debates_planned"] == 4
            again = await client.call("resume_tournament", id=folder.name)
            assert again.error, again.text  # running here already, or finished meanwhile
            assert "running already" in again.text or "has finished" in again.text
            for _ in range(600):
                state = await client.ok("wait_tournament", id=folder.name, seconds=0.5)
                if state["state"] not in ("queued", "running"):
                    break
            assert state["state"] == "finished", state
            assert state["debates_decided"] == 4 and not state["failed"]
            assert {m["model"] for m in state["ranking"]} == set(dry_models)
            done = await client.call("resume_tournament", id=folder.name)
            assert done.error and "has finished" in done.text

    anyio.run(main)
    assert (folder / "ratings.json").is_file()
    for debate, verdict in decided.items():  # decided before: kept as they were
        assert (folder / "debates" / debate / "verdict.json").read_bytes() == verdict
    assert len(list(folder.glob("debates/*/verdict.json"))) == 4
