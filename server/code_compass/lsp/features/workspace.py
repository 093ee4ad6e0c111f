"""Lifecycle and workspace: initialize, folders as projects, settings, shutdown/exit."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from code_compass.lsp.settings import INDEX_FIELDS, SECTION, Settings

if TYPE_CHECKING:
    from code_compass.lsp.server import CodeCompassServer

log = logging.getLogger(__name__)


def uri_to_path(uri: str) -> Path | None:
    """file:// URI (or a plain path, as some clients send for storageUri) -> Path."""
    if not uri:
        return None
    if "://" not in uri:
        return Path(uri)
    fs = to_fs_path(uri)
    return Path(fs) if fs else None


class WorkspaceFeature:
    def __init__(self, ls: CodeCompassServer) -> None:
        self.ls = ls
        self._settings_from_init = False
        ls.settings.on_change(self._settings_changed)

    # -- initialize --------------------------------------------------------------------
    async def initialize(self, params: types.InitializeParams) -> None:
        ls = self.ls
        ls.loop = asyncio.get_running_loop()
        raw_opts = params.initialization_options
        opts = raw_opts if isinstance(raw_opts, dict) else {}
        storage = uri_to_path(str(opts.get("storageUri") or opts.get("storage") or ""))
        raw_settings = opts.get("settings")
        self._settings_from_init = raw_settings is not None
        self._warn(ls.settings.update(raw_settings))

        folders: list[tuple[str, str | None]] = [
            (f.uri, f.name) for f in params.workspace_folders or []
        ]
        if not folders:
            root_uri = params.root_uri or (
                Path(params.root_path).as_uri() if params.root_path else None
            )
            if root_uri:
                folders = [(root_uri, None)]
        settings = ls.settings.current

        def open_engine() -> None:
            from code_compass.engine import Engine

            ls.use_engine(Engine.open(storage, engine_settings(settings)))
            for uri, name in folders:
                self._add_folder(uri, name)

        await ls.run_blocking(open_engine)

    async def initialized(self, params: types.InitializedParams) -> None:
        ls = self.ls
        if not self._settings_from_init:
            await self._pull_configuration()
        await ls.run_blocking(lambda: ls.require_engine().schedule_index())

    # -- folders -----------------------------------------------------------------------
    def _add_folder(self, uri: str, name: str | None) -> str | None:
        """Blocking: register one workspace folder as a project; returns its name."""
        path = uri_to_path(uri)
        if path is None or not path.is_dir():
            self._warn([f"workspace folder {uri} is not a local directory; skipped"])
            return None
        if uri in self.ls.folders:
            return self.ls.folders[uri]
        engine = self.ls.require_engine()
        project = engine.add_project(path, name or None)
        self.ls.folders[uri] = project
        try:
            engine.start_watching(project)  # saves, creates, deletes on disk (issue 5)
        except Exception:
            log.exception("could not watch %s; changes on disk need a reindex", path)
        self.ls.roots[project] = path
        return project

    def _remove_folder(self, uri: str) -> str | None:
        project = self.ls.folders.pop(uri, None)
        if project is None:
            return None
        self.ls.require_engine().remove_project(project)  # cancels its index jobs first
        self.ls.roots.pop(project, None)
        return project

    async def did_change_folders(self, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls = self.ls
        removed = [f.uri for f in params.event.removed or []]
        added = [(f.uri, f.name) for f in params.event.added or []]

        def apply() -> None:
            for uri in removed:
                self._remove_folder(uri)
            new = [p for uri, name in added if (p := self._add_folder(uri, name))]
            for project in new:
                ls.require_engine().schedule_index(project)
            ls.send_index_state()

        await ls.run_blocking(apply)

    # -- settings ----------------------------------------------------------------------
    async def did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        raw = params.settings
        if isinstance(raw, dict) and SECTION in raw:
            raw = raw[SECTION]
        if raw is None or raw == {}:
            await self._pull_configuration()  # VS Code's pull model: settings are null
            return
        await self.ls.run_blocking(lambda: self._warn(self.ls.settings.update(raw)))

    async def _pull_configuration(self) -> None:
        ls = self.ls
        caps = ls.protocol.client_capabilities
        if not (caps and caps.workspace and caps.workspace.configuration):
            return
        try:
            result = await asyncio.wait_for(
                ls.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                ),
                timeout=5.0,
            )
        except Exception as exc:
            log.info("workspace/configuration failed: %s", exc)
            return
        if result:
            await ls.run_blocking(lambda: self._warn(ls.settings.update(result[0])))

    def _settings_changed(self, old: Settings, new: Settings, changed: frozenset[str]) -> None:
        """Runs in the request pool (SettingsStore.update is always called there)."""
        engine = self.ls.engine
        if engine is None:
            return  # initialize: the engine is opened with the merged settings
        if changed & INDEX_FIELDS:
            engine.update_settings(engine_settings(new))  # a running full run starts over
            engine.schedule_index()

    def _warn(self, warnings: list[str]) -> None:
        for message in warnings:
            log.warning("%s", message)
            self.ls.notify_threadsafe(
                types.WINDOW_LOG_MESSAGE,
                types.LogMessageParams(type=types.MessageType.Warning, message=message),
            )

    # -- shutdown / exit ---------------------------------------------------------------
    async def shutdown(self, params: Any = None) -> None:
        # Not in the request pool: close_all shuts that pool down.
        await asyncio.to_thread(self.ls.close_all)

    def exit(self, params: Any = None) -> None:
        self.ls.exit_code = 0 if self.ls.protocol._shutdown else 1
        self.ls.close_all()  # exit without shutdown: still no half-written index


def engine_settings(settings: Settings) -> Any:
    """Client settings -> the engine's EngineSettings (what to index and how)."""
    from code_compass.lsp.engine_settings import to_engine_settings

    return to_engine_settings(settings)
