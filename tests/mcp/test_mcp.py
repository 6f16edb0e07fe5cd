"""`moot mcp` driven by the MCP SDK's own client over stdio: the tools and their schemas,
a dry-run debate of each format followed in short waits and read back, a debate stopped
and resumed by a later server, bad input refused with the command line's words while the
server goes on, and two debates at once each in its own journal."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from conftest import REPO, Cli
from mcp_client import served
from moot.formats import NAMES, get_format, parameters

TOOLS = {
    "start_debate",
    "wait_debate",
    "get_debate",
    "list_debates",
    "stop_debate",
    "resume_debate",
    "list_models",
    "judge_debate",
    "start_tournament",
    "wait_tournament",
    "get_tournament",
    "resume_tournament",
}
MOTION = "cities should ban cars"
# What each format is asked in its test: a decision is a choice between named positions.
ASKED = {
    "decision": {"motion": "which database for a small app", "positions": ["Postgres", "SQLite"]}
}


def journal(home: Path, debate_id: str) -> list[dict]:
    path = home / "debates" / debate_id / "journal.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def turns_of(records: list[dict]) -> list[dict]:
    return [r for r in records if r.get("type") == "turn"]


def no_traceback(home: Path) -> None:
    log = home.parent / "mcp-stderr.txt"
    assert "Traceback" not in (log.read_text(encoding="utf-8") if log.exists() else "")


def test_the_tools_take_every_format_parameter_as_declared(moot_home: Path) -> None:
    async def main() -> None:
        async with served(moot_home) as client:
            listed = (await client.session.list_tools()).tools
            assert {t.name for t in listed} == TOOLS
            start = next(t for t in listed if t.name == "start_debate").input_schema
            props = start["properties"]
            for name, shared in parameters().items():
                assert name in props, name
                assert shared.help() in props[name]["description"]
            # One format declares it: its range is the tool's. Several differ: each refuses
            # what is out of its own, so the tool states none.
            assert (props["max_rounds"]["minimum"], props["max_rounds"]["maximum"]) == (3, 8)
            assert "maximum" not in props["rounds"]
            assert props["format"]["enum"] == list(NAMES)
            (effort,) = [p for p in get_format("challenge").parameters if p.name == "effort"]
            assert props["effort"]["enum"] == list(effort.choices)
            assert props["dry_run"]["type"] == "boolean"
            assert start["required"] == ["motion"]
            assert not any(k in json.dumps(start) for k in ('"page"', '"label"', '"null"'))

    anyio.run(main)


@pytest.mark.parametrize("fmt", NAMES)
def test_a_dry_run_debate_of_each_format_is_followed_and_read_back(
    moot_home: Path, fmt: str, dry_models: tuple[str, str]
) -> None:
    async def main() -> None:
        async with served(moot_home, "--pace", "0.001") as client:
            asked = ASKED.get(fmt, {"motion": MOTION})
            if fmt == "adversarial":  # one participant for each model named
                asked = {**asked, "model": list(dry_models)}
            started = await client.ok("start_debate", format=fmt, dry_run=True, **asked)
            assert started["state"] in ("queued", "running")
            assert started["format"] == fmt and started["dry_run"] is True
            state = await client.until_over(started["id"], step=0.5)
            assert state["state"] == "finished", state
            assert state["turns"] == len(turns_of(journal(moot_home, started["id"]))) > 0
            assert state["last_speech"]["text"]
            assert client.progress, "no progress notification while waiting"
            told = [p for p, _ in client.progress]
            assert told == sorted(told)  # progress only grows
            got = await client.call("get_debate", id=started["id"])
            assert not got.error
            assert got.data["state"] == "finished"
            assert got.data["outcome"]["stop_reason"]
            assert got.data["document"]
            assert got.text == got.data["markdown"]
            assert (moot_home / "debates" / started["id"] / "transcript.json").is_file()
        # A later server lists it and reads it, as `moot history` does.
        async with served(moot_home) as later:
            listed = await later.ok("list_debates")
            assert [d["id"] for d in listed["debates"]] == [started["id"]]
            assert listed["debates"][0]["state"] == "finished"
            again = await later.call("get_debate", id=started["id"])
            assert again.data["document"] == got.data["document"]
        no_traceback(moot_home)

    anyio.run(main)


def test_a_stopped_debate_is_resumed_by_a_later_server(moot_home: Path, cli: Cli) -> None:
    async def main() -> tuple[str, list[dict]]:
        async with served(moot_home, "--pace", "0.02") as client:
            started = await client.ok("start_debate", motion=MOTION, dry_run=True, seed=7)
            debate_id = started["id"]
            for _ in range(200):
                state = await client.ok("wait_debate", id=debate_id, seconds=0.2)
                if state["turns"] >= 2:
                    break
            stopped = await client.ok("stop_debate", id=debate_id)
            assert stopped["id"] == debate_id
            state = await client.until_over(debate_id, step=0.5)
            assert state["state"] == "stopped"
            again = await client.call("stop_debate", id=debate_id)
            assert again.error and "not running" in again.text
            kept = turns_of(journal(moot_home, debate_id))
            assert 2 <= len(kept)
            assert not (moot_home / "debates" / debate_id / "transcript.json").exists()
        async with served(moot_home) as later:
            listed = await later.ok("list_debates")
            assert listed["debates"][0]["state"] == "interrupted"
            resumed = await later.ok("resume_debate", id=debate_id)
            assert resumed["id"] == debate_id
            state = await later.until_over(debate_id, step=0.5)
            assert state["state"] == "finished", state
            done = await later.ok("get_debate", id=debate_id)
            assert done["turns"] > len(kept)
        return debate_id, kept

    debate_id, kept = anyio.run(main)
    saved = json.loads((moot_home / "debates" / debate_id / "transcript.json").read_text())
    # The turns before the stop are reused verbatim...
    assert [t["text"] for t in saved["turns"][: len(kept)]] == [t["text"] for t in kept]
    # ...and the resumed debate is the uninterrupted one.
    whole = cli("run", MOTION, "--dry-run", "--seed", "7", "-y", "--quiet", home=moot_home)
    assert whole.returncode == 0, whole.stderr
    last = sorted((moot_home / "debates").iterdir())[-1]
    uninterrupted = json.loads((last / "transcript.json").read_text())
    assert [t["text"] for t in saved["turns"]] == [t["text"] for t in uninterrupted["turns"]]
    no_traceback(moot_home)


BAD = [
    ({"motion": ""}, ("", "--dry-run")),
    ({"motion": MOTION, "format": "nope"}, (MOTION, "--format", "nope", "--dry-run")),
    ({"motion": MOTION, "max_rounds": 99}, (MOTION, "--max-rounds", "99", "--dry-run")),
    ({"motion": MOTION, "model": "no-such-model"}, (MOTION, "--model", "no-such-model")),
    ({"motion": MOTION, "max_tokens": 0}, (MOTION, "--max-tokens", "0", "--dry-run")),
    ({"motion": MOTION, "temperatures": {"nobody": 0.5}}, (MOTION, "--temperature", "nobody=0.5")),
    ({"motion": MOTION, "rounds": 2}, (MOTION, "--rounds", "2", "--dry-run")),
    # A Chinese motion's mistakes are said in Chinese, as at the command line.
    ({"motion": "城市应该禁止汽车", "format": "nope"}, ("城市应该禁止汽车", "--format", "nope")),
    ({"motion": "城市应该禁止汽车", "max_rounds": 1}, ("城市应该禁止汽车", "--max-rounds", "1")),
]


def test_bad_input_is_a_tool_error_in_the_command_line_s_words(moot_home: Path, cli: Cli) -> None:
    async def main() -> list[str]:
        shown = []
        async with served(moot_home) as client:
            for args, _ in BAD:
                called = await client.call("start_debate", **args)
                assert called.error, args
                shown.append(called.text)
            # The server goes on: a good debate after all of them.
            good = await client.ok("start_debate", motion=MOTION, dry_run=True)
            assert (await client.until_over(good["id"]))["state"] == "finished"
        return shown

    shown = anyio.run(main)
    for (args, argv), text in zip(BAD, shown, strict=True):
        said = cli("run", *argv, "-y", home=moot_home)
        assert said.returncode == 2, argv
        message, hint = text.splitlines()
        english = args["motion"].isascii()
        assert message.startswith("error: " if english else "错误： ")
        assert hint.startswith("hint: " if english else "提示： ")
        if args["motion"]:  # the command line's own hint for an empty motion shows a command
            assert said.stderr.strip() == text, argv
        else:
            assert said.stderr.splitlines()[0] == message
    no_traceback(moot_home)


def test_a_model_on_a_server_needs_allow_remote(moot_home: Path) -> None:
    url = "http://127.0.0.1:9/v1"  # loopback's discard port: nothing answers there

    async def main() -> None:
        async with served(moot_home) as client:
            refused = await client.call("start_debate", motion=MOTION, model=url)
            assert refused.error
            assert url in refused.text and "--allow-remote" in refused.text
            assert refused.data["error"]["hint"].endswith("`moot mcp --allow-remote`")
            assert not list(moot_home.glob("debates/*"))  # nothing claimed for it
            judged = await client.call("judge_debate", id="last", judges=[url])
            assert judged.error
        async with served(moot_home, "--allow-remote") as allowed:
            started = await allowed.ok("start_debate", motion=MOTION, model=url, max_tokens=8)
            state = await allowed.until_over(started["id"])
            # Let through, and the debate's own error says the server is not there.
            assert state["state"] == "failed"
            assert "127.0.0.1:9" in state["error"]["message"]

    anyio.run(main)
    no_traceback(moot_home)


def test_arguments_of_the_wrong_kind_and_unknown_tools_are_errors(moot_home: Path) -> None:
    async def main() -> None:
        async with served(moot_home) as client:
            for tool, args, words in [
                ("start_debate", {"motion": 3}, "motion must be a string"),
                ("start_debate", {"motion": MOTION, "format": ["oxford"]}, "format must be"),
                ("start_debate", {"motion": MOTION, "no_such": 1}, "no_such"),
                ("start_debate", {"motion": MOTION, "model": 5}, "model must be"),
                ("start_debate", {"motion": MOTION, "model": [1, 2]}, "model must be"),
                # said whole in the motion's language
                ("start_debate", {"motion": "城市应该禁止汽车", "model": 5}, "必须是字符串或"),
                ("judge_debate", {"id": "last", "judges": "x"}, "no saved debate"),
                ("start_debate", {"motion": MOTION, "roles": {"judge": "human"}}, "person"),
                ("wait_debate", {"id": "nothing-here"}, "no saved debate"),
                ("wait_debate", {"id": "x", "seconds": 10_000}, "out of range"),
                ("get_debate", {"id": ""}, "name a saved debate"),
                ("resume_debate", {"id": "nothing-here"}, "no saved debate"),
                ("no_such_tool", {}, "unknown tool"),
            ]:
                called = await client.call(tool, **args)
                assert called.error, (tool, args)
                assert words in called.text, called.text
                assert set(called.data["error"]) == {"message", "hint"}

    anyio.run(main)
    no_traceback(moot_home)


@pytest.mark.parametrize("parallel", [1, 2])
def test_two_debates_started_at_once_keep_their_own_journals(
    moot_home: Path, parallel: int
) -> None:
    motions = ("cities should ban cars", "schools should start later")

    async def main() -> list[str]:
        async with served(moot_home, "--pace", "0.005", "--parallel", str(parallel)) as client:
            first, second = [
                # challenge's scripted speeches quote the topic: each journal shows its own
                await client.ok("start_debate", motion=m, format="challenge", dry_run=True, seed=3)
                for m in motions
            ]
            if parallel == 1:  # one at a time: the second waits for the first
                assert second["state"] == "queued"
            else:
                assert second["state"] == "running"
            listed = (await client.ok("list_debates"))["debates"]
            assert [d["id"] for d in listed] == [second["id"], first["id"]]
            assert listed[0]["state"] == ("queued" if parallel == 1 else "running")
            assert listed[0]["format"] == "challenge"  # as asked, though nothing is saved yet
            for started in (first, second):
                assert (await client.until_over(started["id"]))["state"] == "finished"
        return [first["id"], second["id"]]

    ids = anyio.run(main)
    assert len(set(ids)) == 2
    texts = []
    for debate_id, motion, other in zip(ids, motions, reversed(motions), strict=True):
        records = journal(moot_home, debate_id)
        assert records[0]["type"] == "debate" and motion in records[0]["motion"]
        turns = turns_of(records)
        assert [t["index"] for t in turns] == list(range(len(turns)))
        assert any(motion in t["text"] for t in turns)
        assert not any(other in t["text"] for t in turns)  # nothing of the other debate
        texts.append([t["text"] for t in turns])
    assert len(texts[0]) == len(texts[1])
    no_traceback(moot_home)


def test_a_finished_debate_is_judged_again(moot_home: Path, dry_models: tuple[str, str]) -> None:
    async def main() -> None:
        async with served(moot_home) as client:
            started = await client.ok("start_debate", motion=MOTION, dry_run=True)
            await client.until_over(started["id"])
            judged = await client.ok(
                "judge_debate", id=started["id"], judges=[dry_models[0]], dry_run=True
            )
            assert [j["judge"] for j in judged["judged"]] == [dry_models[0]]
            assert (moot_home / "debates" / started["id"] / "judged").is_dir()

    anyio.run(main)
    no_traceback(moot_home)


def test_a_debate_goes_on_when_the_client_closes_the_connection(moot_home: Path, cli: Cli) -> None:
    """A client that closes the server's input (and leaves its process be) finds the debate
    finished later: the server ends the debates it was asked for, then exits."""
    from mcp_types import LATEST_PROTOCOL_VERSION

    proc = cli.popen("mcp", "--pace", "0.01", home=moot_home, stdin=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "start_debate", "arguments": {"motion": MOTION, "dry_run": True}}},
    ):  # fmt: skip
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
    answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
    started = answers[1]["result"]["structuredContent"]
    assert started["state"] == "running"
    proc.stdin.close()  # the client leaves while the debate runs
    proc.wait(timeout=300)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    folder = moot_home / "debates" / started["id"]
    assert (folder / "transcript.json").is_file()


def test_the_docs_name_every_tool_and_option() -> None:
    from moot.mcp.server import TOOLS as DECLARED

    page = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert {t.name for t in DECLARED} == TOOLS
    for name in TOOLS:
        assert f"### `{name}`" in page, name
    options = ("--parallel", "--allow-remote", "--pace", "--http", "--port", "--token",
               "--keep-token", "--new-token")  # fmt: skip
    for option in options:
        assert f"`{option}" in page
    for snippet in re.findall(r"```json\n(.*?)```", page, re.DOTALL):
        json.loads(snippet)  # every snippet a client is given is JSON as written


def test_a_finished_debate_s_files_are_resources(moot_home: Path) -> None:
    async def main() -> None:
        async with served(moot_home) as client:
            started = await client.ok("start_debate", motion=MOTION, dry_run=True)
            await client.until_over(started["id"])
            listed = (await client.session.list_resources()).resources
            uris = {str(r.uri): r.mime_type for r in listed}
            folder = moot_home / "debates" / started["id"]
            for name, mime in (
                ("transcript.json", "application/json"),
                ("debate.md", "text/markdown"),
            ):
                uri = f"moot://debates/{started['id']}/{name}"
                assert uris[uri] == mime
                read = await client.session.read_resource(uri)
                assert read.contents[0].text == (folder / name).read_text(encoding="utf-8")
            for uri in (
                f"moot://debates/{started['id']}/journal.jsonl",  # not offered
                f"moot://debates/{started['id']}/../../config.toml",
                "moot://debates/../transcript.json",
                "file:///etc/passwd",
            ):
                with pytest.raises(Exception, match="no such resource|no saved debate"):
                    await client.session.read_resource(uri)

    anyio.run(main)
    no_traceback(moot_home)


def test_the_command_line_loads_no_mcp_library_until_the_server_runs() -> None:
    probe = (
        "import sys, moot, moot.cli; moot.cli._register(); "
        "print(sorted(m for m in ('mcp', 'mcp_types', 'moot.mcp') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]"
