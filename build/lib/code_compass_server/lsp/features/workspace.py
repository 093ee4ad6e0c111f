"""Lifecycle and workspace: initialize, folders as projects, settings, shutdown/exit."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from code_compass_server.settings import SECTION, SettingsChange, parse_settings

if TYPE_CHECKING:
    from code_compass_server.lsp.server import CodeCompassServer

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

    # -- initialize --------------------------------------------------------------------
    async def initialize(self, params: types.InitializeParams) -> None:
        ls = self.ls
        ls.loop = asyncio.get_running_loop()
        raw_opts = params.initialization_options
        opts = raw_opts if isinstance(raw_opts, dict) else {}
        storage = uri_to_path(str(opts.get("storageUri") or opts.get("storage") or ""))
        raw_settings = opts.get("settings")
        self._settings_from_init = raw_settings is not None
        folder_settings, warnings = _by_path(opts.get("folderSettings"))
        settings, parse_warnings = parse_settings(raw_settings, folders=folder_settings)
        self._warn(warnings + parse_warnings)

        folders: list[tuple[str, str | None]] = [
            (f.uri, f.name) for f in params.workspace_folders or []
        ]
        if not folders:
            root_uri = params.root_uri or (
                Path(params.root_path).as_uri() if params.root_path else None
            )
            if root_uri:
                folders = [(root_uri, None)]

        def open_engine() -> None:
            from code_compass_server.engine import Engine

            # It holds the editor's buffers: it publishes them for the MCP server (same storage).
            engine = Engine.open(storage, settings, serves_editor=True)
            engine.settings_store.subscribe(self._settings_changed)
            ls.use_engine(engine)
            for uri, name in folders:
                self._add_folder(uri, name)

        await ls.run_bulk(open_engine)

    async def initialized(self, params: types.InitializedParams) -> None:
        ls = self.ls
        if not self._settings_from_init:
            await self._pull_configuration()
        await ls.run_bulk(lambda: ls.require_engine().schedule_index())

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
            engine.start_watching(project)  # saves, creates, deletes on disk
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
        if added:  # their own settings first, so their first index already honours them
            await self._pull_configuration([uri for uri, _ in added])

        def apply() -> None:
            for uri in removed:
                self._remove_folder(uri)
            new = [p for uri, name in added if (p := self._add_folder(uri, name))]
            for project in new:
                ls.require_engine().schedule_index(project)
            ls.send_index_state()

        await ls.run_bulk(apply)

    # -- settings ----------------------------------------------------------------------
    async def did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        raw = params.settings
        if isinstance(raw, dict) and SECTION in raw:
            raw = raw[SECTION]
        if raw is None or raw == {}:
            await self._pull_configuration()  # pull model (VS Code): settings are null
            return
        engine = self.ls.require_engine()
        await self.ls.run_bulk(lambda: self._warn(engine.settings_store.merge(raw)))

    async def _pull_configuration(self, more_folders: Iterable[str] = ()) -> None:
        """`workspace/configuration`: the window's values, then each folder's (scopeUri)."""
        ls = self.ls
        caps = ls.protocol.client_capabilities
        if not (caps and caps.workspace and caps.workspace.configuration):
            return
        uris = list(dict.fromkeys([*ls.folders, *more_folders]))
        items = [types.ConfigurationItem(section=SECTION)] + [
            types.ConfigurationItem(section=SECTION, scope_uri=uri) for uri in uris
        ]
        try:
            result = await asyncio.wait_for(
                ls.workspace_configuration_async(types.ConfigurationParams(items=items)),
                timeout=5.0,
            )
        except Exception as exc:
            log.info("workspace/configuration failed: %s", exc)
            return
        if not result:
            return
        # Each answer is that scope's whole configuration (null: nothing set for it).
        answers = dict(zip(uris, result[1:], strict=False))
        folders, warnings = _by_path({uri: answers.get(uri) or {} for uri in uris})
        engine = ls.require_engine()
        await ls.run_bulk(
            lambda: self._warn(
                warnings + engine.settings_store.merge(result[0], folders, complete=True)
            )
        )

    def _settings_changed(self, change: SettingsChange) -> None:
        """Settings subscriber, after the engine's own: say what changed and what it did."""
        engine = self.ls.engine
        if engine is None:
            return
        roots = {name: engine.project(name).root for name in engine.projects()}
        keys = change.keys(roots.values())
        rescanned = sorted(name for name, root in roots.items() if change.scan_changed(root))
        message = f"settings changed: {', '.join(keys) or 'none in effect'}"
        if rescanned:
            message += f"; re-indexing {', '.join(rescanned)}"
        if "embeddings" in change.fields:
            message += "; embeddings " + ("on" if change.new.embeddings else "off")
        self._notify(types.MessageType.Info, message)
        if change.new.embeddings and "embeddings" in change.fields and engine.embeddings.error:
            self.ls.messages.show(  # the user must act: install or fix the model
                types.MessageType.Warning,
                f"Code Compass: embeddings could not start ({engine.embeddings.error}); "
                "search stays lexical.",
            )
        self.ls.send_index_state()

    def _warn(self, warnings: list[str]) -> None:
        for message in warnings:
            self._notify(types.MessageType.Warning, message)

    def _notify(self, kind: types.MessageType, message: str) -> None:
        self.ls.messages.log(kind, message)

    # -- shutdown / exit ---------------------------------------------------------------
    async def shutdown(self, params: Any = None) -> None:
        # Not in the request pool: close_all shuts that pool down.
        await asyncio.to_thread(self.ls.close_all)

    def exit(self, params: Any = None) -> None:
        self.ls.exit_code = 0 if self.ls.protocol._shutdown else 1
        self.ls.close_all()  # exit without shutdown: still no half-written index


def _by_path(raw: Any) -> tuple[dict[Path, Any], list[str]]:
    """Per-folder settings keyed by folder URI -> keyed by the folder's path."""
    if raw is None:
        return {}, []
    if not isinstance(raw, Mapping):
        return {}, [f"folderSettings must map folder URIs to settings, got {type(raw).__name__}"]
    out: dict[Path, Any] = {}
    for uri, value in raw.items():
        path = uri_to_path(str(uri))
        if path is not None:
            out[path] = value
    return out, []
