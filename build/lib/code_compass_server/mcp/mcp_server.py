"""`code-compass mcp`: the tools served over stdio with the official MCP SDK.

Workspaces come from --workspace; without it, from the client's roots (when the client offers
them on this connection), else the current directory. Indexing runs in the background and the
tools answer meanwhile; engine calls run in worker threads so the protocol loop never waits.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import anyio
from anyio.abc import TaskGroup
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from code_compass_server import __version__
from code_compass_server.constants import MCP_ROOTS_WAIT_S
from code_compass_server.engine import Engine
from code_compass_server.errors import InputError
from code_compass_server.mcp.calls import CodeTools, ToolOutput
from code_compass_server.mcp.result_redaction import redact_output
from code_compass_server.mcp.stdio_guard import guarded_stdio
from code_compass_server.mcp.tools import SERVER_INSTRUCTIONS, TOOL_SPECS, TOOLS_BY_NAME, ToolSpec
from code_compass_server.settings import EngineSettings

log = logging.getLogger(__name__)

SERVER_NAME = "code-compass"


def sdk_tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema,
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=False,
            idempotent_hint=spec.idempotent,
            open_world_hint=spec.open_world,
        ),
    )


def _root_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


class WorkspaceRoots:
    """Decides the workspaces once: given ones, else the client's roots, else the cwd.

    A 2025-era client is asked with a roots/list request after `initialized`. The 2026 protocol
    has no server-to-client requests: there the first tool call answers "input required" with
    a roots request, and the client repeats the call with its roots attached.
    """

    ROOTS_KEY = "roots"

    def __init__(self, tools: CodeTools, given: bool) -> None:
        self._tools = tools
        self._given = given
        self._ready = anyio.Event()
        self._started = given
        if given:
            self._ready.set()

    def start(self, session: ServerSession, tg: TaskGroup) -> None:
        if not self._started:
            self._started = True
            tg.start_soon(self._resolve, session)

    async def before_call(
        self, session: ServerSession, params: types.CallToolRequestParams, tg: TaskGroup
    ) -> types.InputRequiredResult | None:
        """None once the workspaces are known; else the roots request to send back."""
        if not self._ready.is_set() and not self._started and _asks_inline(session):
            answer = (params.input_responses or {}).get(self.ROOTS_KEY)
            if not isinstance(answer, types.ListRootsResult):
                return types.InputRequiredResult(
                    input_requests={self.ROOTS_KEY: types.ListRootsRequest()}
                )
            self._started = True
            await self._adopt(_paths(answer))
        self.start(session, tg)
        with anyio.move_on_after(MCP_ROOTS_WAIT_S):
            await self._ready.wait()
        return None

    async def refresh(self, session: ServerSession) -> None:
        """The client's roots changed: index the new ones (removed ones keep their index)."""
        if not self._given and self._ready.is_set():
            roots = await self._client_roots(session)
            if roots:
                await anyio.to_thread.run_sync(self._tools.add_workspaces, roots)

    async def _resolve(self, session: ServerSession) -> None:
        await self._adopt(await self._client_roots(session))

    async def _adopt(self, roots: list[Path]) -> None:
        try:
            folders = roots or [Path.cwd()]
            added = await anyio.to_thread.run_sync(self._tools.add_workspaces, folders)
            log.info("workspaces: %s", ", ".join(added))
        except Exception:
            log.exception("could not open the workspaces")
        finally:
            self._ready.set()

    async def _client_roots(self, session: ServerSession) -> list[Path]:
        if not _offers_roots(session) or not session.can_send_request:
            return []
        try:
            with anyio.fail_after(MCP_ROOTS_WAIT_S), warnings.catch_warnings():
                # Deprecated from protocol 2026-07-28 on, but it is how the 2025-era clients
                # in use today tell a server its workspace.
                warnings.simplefilter("ignore")
                result = await session.list_roots()
        except Exception as exc:
            log.warning("roots/list failed (%s); using the current directory", exc)
            return []
        return _paths(result)


def _offers_roots(session: ServerSession) -> bool:
    caps = session.client_capabilities
    return caps is not None and caps.roots is not None


def _asks_inline(session: ServerSession) -> bool:
    """A 2026-era connection: roots can only come back inside a repeated tool call."""
    return _offers_roots(session) and not session.can_send_request


def _paths(result: types.ListRootsResult) -> list[Path]:
    paths = [_root_path(str(root.uri)) for root in result.roots]
    return [p for p in paths if p is not None and p.is_dir()]


class CompassMcpServer:
    """The SDK server: tools/list, tools/call, and the roots handshake."""

    def __init__(self, tools: CodeTools, given_workspaces: bool) -> None:
        self._tools = tools
        self._roots = WorkspaceRoots(tools, given_workspaces)
        self._tg: TaskGroup | None = None
        self.sdk: Server[dict[str, Any]] = Server(
            SERVER_NAME,
            version=__version__,
            title="Code Compass",
            instructions=SERVER_INSTRUCTIONS,
            lifespan=self._lifespan,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self.sdk.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self._initialized
        )
        self.sdk.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, self._roots_changed
        )

    @asynccontextmanager
    async def _lifespan(self, _server: Server[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield {}
            finally:
                tg.cancel_scope.cancel()

    def _task_group(self) -> TaskGroup:
        if self._tg is None:
            raise RuntimeError("the server is not running")
        return self._tg

    async def _initialized(
        self, ctx: ServerRequestContext[dict[str, Any]], _params: types.NotificationParams
    ) -> None:
        # Never await a client request inside a notification handler: start a task instead.
        self._roots.start(ctx.session, self._task_group())

    async def _roots_changed(
        self, ctx: ServerRequestContext[dict[str, Any]], _params: types.NotificationParams
    ) -> None:
        self._task_group().start_soon(self._roots.refresh, ctx.session)

    async def _list_tools(
        self,
        _ctx: ServerRequestContext[dict[str, Any]],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[sdk_tool(spec) for spec in TOOL_SPECS])

    async def _call_tool(
        self, ctx: ServerRequestContext[dict[str, Any]], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.name not in TOOLS_BY_NAME:
            known = ", ".join(TOOLS_BY_NAME)
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; tools: {known}")
        need_roots = await self._roots.before_call(ctx.session, params, self._task_group())
        if need_roots is not None:
            return need_roots
        try:
            out = await anyio.to_thread.run_sync(self._call_redacted, params.name, params.arguments)
        except InputError as err:  # the CLI prints "code-compass: <field>: <message>"
            return _error(f"{err.field}: {err.message}")
        except Exception as exc:
            log.exception("%s failed", params.name)
            return _error(f"{params.name} failed inside the server: {type(exc).__name__}: {exc}")
        return types.CallToolResult(
            content=[types.TextContent(text=out.text)], structured_content=out.data
        )

    def _call_redacted(self, name: str, arguments: dict[str, Any] | None) -> ToolOutput:
        return redact_output(self._tools.call(name, arguments))


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def run_stdio(
    workspaces: Sequence[Path], storage: Path | None, settings: EngineSettings | None = None
) -> None:
    """Serve until the client closes stdin. A bad --workspace raises InputError first."""
    settings = settings or EngineSettings()
    engine = Engine.open(storage, settings)
    try:
        tools = CodeTools(engine, settings.scan.max_file_bytes)
        tools.add_workspaces(workspaces)
        server = CompassMcpServer(tools, given_workspaces=bool(workspaces))

        async def serve() -> None:
            async with guarded_stdio() as (read, write):
                await server.sdk.run(read, write, server.sdk.create_initialization_options())

        anyio.run(serve)
    finally:
        engine.close()
