"""pytest-lsp harness: the real `code-compass serve` over stdio, fixture workspaces in tmp_path.

Every test gets its own storage folder (initializationOptions.storageUri and
CODE_COMPASS_HOME in tmp_path) and a server without an API key (extractive answers).
Embeddings are off unless a test turns them on: it keeps the suite fast.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import make_test_lsp_client

from code_compass_server.lsp.server import converter_factory

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = REPO / ".venv" / "bin"
SERVER = [str(VENV_BIN / "code-compass"), "serve"]
if not (VENV_BIN / "code-compass").exists():  # running outside the repo venv
    SERVER = [sys.executable, "-m", "code_compass_server", "serve"]

NO_EMBED = {"embeddings": {"enabled": False}}
CAPABILITIES = types.ClientCapabilities(
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(configuration=True, workspace_folders=True),
    text_document=types.TextDocumentClientCapabilities(
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
        code_lens=types.CodeLensClientCapabilities(),
    ),
)


async def poll_until(check: Callable[[], Awaitable[bool]], timeout: float) -> None:
    """Poll `check` until it holds; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


@dataclass
class Session:
    client: LanguageClient
    process_pid: int
    notifications: dict[str, list[Any]] = field(default_factory=dict)
    capabilities: types.ServerCapabilities | None = None  # from the initialize result

    def seen(self, method: str) -> list[Any]:
        return self.notifications.setdefault(method, [])

    async def request(self, method: str, params: Any = None, timeout: float = 20.0) -> Any:
        return await asyncio.wait_for(
            self.client.protocol.send_request_async(method, params), timeout
        )

    async def wait_indexed(self, timeout: float = 30.0) -> dict[str, Any]:
        """Poll codeCompass/status until no project is indexing or queued."""
        deadline = time.monotonic() + timeout
        while True:
            status = await self.request("codeCompass/status", {})
            if not status["indexing"] and all(p["state"] == "ready" for p in status["projects"]):
                return status  # type: ignore[no-any-return]
            if time.monotonic() > deadline:
                raise AssertionError(f"index not ready in {timeout}s: {status}")
            await asyncio.sleep(0.05)

    def open(self, path: Path, text: str | None = None, language: str = "python") -> str:
        uri = path.as_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri,
                    language_id=language,
                    version=1,
                    text=path.read_text() if text is None else text,
                )
            )
        )
        return uri


def _client_factory(session_box: dict[str, Session]) -> Callable[[], LanguageClient]:
    def factory() -> LanguageClient:
        client = make_test_lsp_client()
        # Custom results and notifications as plain JSON (the default makes namedtuples).
        client.protocol._converter = converter_factory()
        for method in ("codeCompass/indexState", "codeCompass/answerDelta"):

            def record(params: Any, method: str = method) -> None:
                session_box["s"].seen(method).append(params)

            client.feature(method)(record)
        return client

    return factory


def server_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["CODE_COMPASS_HOME"] = str(home)
    return env


@pytest_asyncio.fixture
async def start(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """`await start([folders], settings=...)` -> an initialized Session; shut down after."""
    sessions: list[Session] = []

    async def _start(
        folders: list[Path],
        settings: dict[str, Any] | None = NO_EMBED,
        *,
        root_uri_only: bool = False,
        root_path_only: bool = False,
        capabilities: types.ClientCapabilities = CAPABILITIES,
        init_options: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
    ) -> Session:
        box: dict[str, Session] = {}
        config = ClientServerConfig(
            server_command=SERVER,
            client_factory=_client_factory(box),
            server_env={**server_env(tmp_path / "home"), **(env or {})},
        )
        client = await config.start()
        assert client._server is not None
        session = Session(client, client._server.pid)
        box["s"] = session
        sessions.append(session)
        options: dict[str, Any] = {"storageUri": (tmp_path / "storage").as_uri()}
        if settings is not None:
            options["settings"] = settings
        if init_options is not None:
            options = init_options
        params = types.InitializeParams(
            capabilities=capabilities,
            initialization_options=options,
        )
        if root_uri_only:
            params.root_uri = folders[0].as_uri()
        elif root_path_only:  # what clients older than LSP 3.0 send
            params.root_path = str(folders[0])
        else:
            params.workspace_folders = [
                types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders
            ]
        result = await asyncio.wait_for(client.initialize_session(params), 30)
        session.capabilities = result.capabilities
        return session

    yield _start
    for s in sessions:
        if s.client._server is not None and s.client._server.returncode is None:
            try:
                await asyncio.wait_for(s.client.shutdown_session(), 15)
            except Exception:
                s.client._server.kill()
        await s.client.stop()


# --- fixture workspaces ----------------------------------------------------------------

PRICING = '''"""Pricing rules for the shop."""


def compute_discount(order_total, customer_tier):
    """Return the discount for a customer tier."""
    if customer_tier == "gold":
        return order_total * 0.2
    return 0.0


class InvoiceBuilder:
    """Builds invoices; the quokka ledger format."""

    def build(self, order):
        rate = compute_discount(order.total, order.tier)
        return {"total": order.total, "discount": rate}
'''

CHECKOUT = """from pricing import compute_discount


def checkout(cart):
    total = sum(item.price for item in cart.items)
    return total - compute_discount(total, cart.tier)
"""

PRICING_DOC = """# Pricing

Gold customers get 20% off. The `compute_discount` function applies the rate
before taxes are added to the invoice.
"""

WEATHER = '''def forecast_rainfall(region):
    """Zanzibar monsoon model."""
    return {"region": region, "mm": 12}
'''

WEATHER_DOC = """# Weather

`forecast_rainfall` predicts the zanzibar monsoon.
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.fixture
def alpha(tmp_path: Path) -> Path:
    return write(
        tmp_path / "alpha",
        {"pricing.py": PRICING, "checkout.py": CHECKOUT, "docs/pricing.md": PRICING_DOC},
    )


@pytest.fixture
def beta(tmp_path: Path) -> Path:
    return write(tmp_path / "beta", {"weather.py": WEATHER, "README.md": WEATHER_DOC})
