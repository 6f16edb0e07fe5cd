"""The MCP server over stdio: the tools, their schemas and words, each call's work done in a
worker thread, a mistake handed back as the tool's error (the words `moot run` prints),
never a crashed server."""

from __future__ import annotations

import functools
import json
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from moot._version import __version__
from moot.errors import MootError
from moot.mcp import schemas
from moot.mcp.arguments import Args
from moot.mcp.desk import Desk, Work
from moot.mcp.tools import URI, Tools, language_of
from moot.words import words

if TYPE_CHECKING:
    from moot.mcp.http import Bound

INSTRUCTIONS = (
    "moot runs structured debates between local language models on this machine. "
    "start_debate returns an id at once; call wait_debate with that id in a loop until its "
    "state is finished, stopped or failed; get_debate then gives the outcome, the document "
    "(brief, decision, verdict) and every speech. Debates are saved as `moot run` saves "
    "them: list_debates finds them later, resume_debate goes on with an interrupted one. "
    "start_tournament ranks models as debaters, in the same way: wait_tournament in a loop, "
    "then get_tournament; resume_tournament goes on with an interrupted one."
)
PROGRESS_STEP = 1.0  # seconds between looks at a debate while wait_debate waits


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    schema: Callable[[], dict[str, Any]]


TOOLS = (
    Tool(
        "start_debate",
        "Start a debate on a motion (or a decision on a topic) with local models; returns its "
        "id at once while it runs here. Formats: oxford (proposition against opposition, "
        "judged for completeness), decision (positions argued, a decision document), "
        "challenge (a proposer's plan, a challenger's objections, a verdict), adversarial "
        "(participants review each other). dry_run: scripted models, nothing loads.",
        schemas.start_debate,
    ),
    Tool(
        "wait_debate",
        "Wait up to `seconds` for a debate to end; returns its state (queued, running, "
        "finished, stopped, failed), its turns so far, the last speech and the turn under "
        "way. Call it again while the state is queued or running.",
        schemas.wait_debate,
    ),
    Tool(
        "get_debate",
        "A saved debate: its outcome, its document (the brief, decision or verdict) and "
        "every speech, as Markdown.",
        schemas.get_debate,
    ),
    Tool(
        "list_debates",
        "The saved debates, the most recent first: id, format, motion, turns, state.",
        schemas.list_debates,
    ),
    Tool(
        "stop_debate",
        "Stop a debate this server runs, at its next word; its finished turns stay saved, "
        "and resume_debate goes on from them.",
        schemas.by_id,
    ),
    Tool(
        "resume_debate",
        "Go on with an interrupted debate from its saved turns (reused as they were); "
        "returns at once, as start_debate does.",
        schemas.by_id,
    ),
    Tool(
        "list_models",
        "The models that can debate here: moot's own and those other tools keep (Ollama, "
        "LM Studio, llama.cpp).",
        schemas.list_models,
    ),
    Tool(
        "judge_debate",
        "Judge a finished debate again with other judge models; no speech is generated. "
        "Returns each judge's agreement with the original judge.",
        schemas.judge_debate,
    ),
    Tool(
        "start_tournament",
        "Rank models as debaters: every pair debates every motion twice, sides swapped, "
        "judges who took no part decide each debate, and the models are rated "
        "(Bradley-Terry). Returns its id at once while it runs here. dry_run: scripted "
        "models, nothing loads.",
        schemas.start_tournament,
    ),
    Tool(
        "wait_tournament",
        "Wait up to `seconds` for a tournament to end; returns its state, the debates "
        "decided so far, those under way and, once finished, the ranking. Call it again "
        "while the state is queued or running.",
        schemas.wait_tournament,
    ),
    Tool(
        "resume_tournament",
        "Go on with an interrupted tournament: its debates decided are kept, a debate cut "
        "off goes on from its saved turns, the rest are played as planned, then the models "
        "are rated. Its plan fixes everything but how many debates are played at once. "
        "Returns at once, as start_tournament does; wait_tournament follows it.",
        schemas.resume_tournament,
    ),
    Tool(
        "get_tournament",
        "A tournament: each debate's winner so far and, once finished, the ratings report; "
        "the ranking as a Markdown table.",
        schemas.get_tournament,
    ),
)


def tool_list() -> list[dict[str, Any]]:
    """Each tool's name, description and input schema."""
    return [
        {"name": t.name, "description": t.description, "inputSchema": t.schema()} for t in TOOLS
    ]


def refusal(error: MootError, language: str) -> dict[str, str]:
    """ERROR's message and hint as the command line shows them, in LANGUAGE."""
    return words(language).error(error)


def refusal_text(shown: dict[str, str], language: str) -> str:
    said = words(language)
    lines = [f"{said.say('error')} {shown['message']}"]
    if shown.get("hint"):
        lines.append(f"{said.say('hint')} {shown['hint']}")
    return "\n".join(lines)


def serve(desk: Desk, *, allow_remote: bool, http: Bound | None = None) -> None:
    """Serve the tools on standard input and output until the client closes them, then
    wait for the debates started here to end (they outlive the client); or, given HTTP (a
    loopback socket and its token), over streamable HTTP until Ctrl-C."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = protocol(desk, allow_remote=allow_remote)
    # A client (or a service manager) ending the server: as Ctrl-C. Over HTTP, uvicorn
    # stops serving first, then hands the signal on to this.
    signal.signal(signal.SIGTERM, _ended)
    if http is not None:
        try:
            http.run(server)
        finally:
            desk.abandon()
        return

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
        desk.close()
    finally:
        desk.abandon()


def protocol(desk: Desk, *, allow_remote: bool) -> Any:
    """The MCP server of DESK's tools and resources, over whichever transport."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tools = Tools(desk, allow_remote=allow_remote)
    listed = [
        types.Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"])
        for t in tool_list()
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        args: Args = params.arguments or {}
        language = language_of(args) if params.name.startswith("start_") else "en"
        try:
            if params.name in ("wait_debate", "wait_tournament"):
                find = tools.run_of if params.name == "wait_debate" else tools.ranking_of
                text, data = await _wait(tools, args, ctx.session.report_progress, find)
            else:
                text, data = await anyio.to_thread.run_sync(_call, tools, params.name, args)
        except MootError as exc:
            shown = refusal(exc, language)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=refusal_text(shown, language))],
                structured_content={"error": shown},
                is_error=True,
            )
        except Exception as exc:  # moot's own bug: said, and the server goes on
            shown = refusal(
                MootError(key="mcp.server.unexpected", kind=type(exc).__name__, why=str(exc)),
                language,
            )
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=refusal_text(shown, language))],
                structured_content={"error": shown},
                is_error=True,
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=data
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        found = await anyio.to_thread.run_sync(tools.resources)
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=r["uri"], name=r["name"], description=r["description"], mime_type=r["mime"]
                )
                for r in found
            ]
        )

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template=f"{URI}{{id}}/{{file}}",
            name="saved debate",
            description="a saved debate's transcript.json, or its document (debate.md, "
            "decision.md, …)",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(ctx: Any, params: Any) -> types.ReadResourceResult:
        from mcp.shared.exceptions import MCPError

        uri = str(params.uri)
        try:
            text, mime = await anyio.to_thread.run_sync(tools.read_resource, uri)
        except MootError as exc:
            shown = refusal_text(refusal(exc, "en"), "en")
            raise MCPError(code=types.INVALID_PARAMS, message=shown) from None
        contents = types.TextResourceContents(uri=uri, mime_type=mime, text=text)
        return types.ReadResourceResult(contents=[contents])

    server: Server[Any] = Server(
        "moot",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )
    return server


def _ended(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _call(tools: Tools, name: str, args: Args) -> tuple[str, dict[str, Any]]:
    """The tool NAME's work on ARGS: the text it answers, and the same as data."""
    from moot.errors import UsageError

    if name == "get_debate":
        return tools.get_debate(args)
    if name == "get_tournament":
        return tools.get_tournament(args)
    work = {
        "start_debate": tools.start_debate,
        "stop_debate": tools.stop_debate,
        "resume_debate": tools.resume_debate,
        "list_debates": tools.list_debates,
        "list_models": tools.list_models,
        "judge_debate": tools.judge_debate,
        "start_tournament": tools.start_tournament,
        "resume_tournament": tools.resume_tournament,
    }.get(name)
    if work is None:
        known = ", ".join(t.name for t in TOOLS)
        raise UsageError(key="mcp.server.unknown_tool", name=name, known=known)
    data = work(args)
    return json.dumps(data, ensure_ascii=False, indent=1), data


async def _wait(
    tools: Tools, args: Args, progress: Callable[..., Any], find: Callable[[Args], Work]
) -> tuple[str, dict[str, Any]]:
    """wait_debate, wait_tournament: look at the work FIND names every PROGRESS_STEP seconds
    until it is over or the time is up, telling the client each step as it starts and ends."""
    import anyio

    seconds = tools.wait_seconds(args)
    run: Work = await anyio.to_thread.run_sync(find, args)
    deadline = time.monotonic() + seconds
    seen, sent = run.changes, -1.0
    while not run.over:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        look = functools.partial(tools.desk.wait, run, min(left, PROGRESS_STEP), seen=seen)
        now = await anyio.to_thread.run_sync(look)
        if now != seen:
            seen = now
            done = run.done()
            if done > sent:
                sent = done
                await progress(done, run.total(), run.said())
    data = run.view()
    return json.dumps(data, ensure_ascii=False, indent=1), data
